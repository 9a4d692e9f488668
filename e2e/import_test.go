package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/cpqportal/portal/internal/i18n"
)

// Customer import (issue 34): a spreadsheet's dry run shows each line as new, duplicate, possible
// duplicate or invalid, and the person includes or skips lines. Every test makes its own customers
// (unique names and tax ids), so it does not depend on what else the v2 service holds.

var importPageURL = regexp.MustCompile(`/customers/import/[0-9a-f]{32}$`)

// importCreateCustomer creates a customer with a known tax id through the portal's customer form
// endpoint (no configurator chosen: every configurator offers it, A8).
func importCreateCustomer(t *testing.T, page playwright.Page, name, taxID, city string) int {
	t.Helper()
	fields := url.Values{"name": {name}, "taxId": {taxID}, "segment": {"BUSINESS"}, "city": {city}, "country": {"IT"},
		"email": {"ufficio@example.com"}}
	created, err := page.Request().Post(portalURL("/customers"), playwright.APIRequestContextPostOptions{
		Data:    fields.Encode(),
		Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
	})
	check(t, err, "create customer "+name)
	m := regexp.MustCompile(`/customers/(\d+)$`).FindStringSubmatch(created.URL())
	if created.Status() != 200 || m == nil {
		text, _ := created.Text()
		t.Fatalf("creating customer %q ended at %s with %d: %.300s", name, created.URL(), created.Status(), text)
	}
	id, _ := strconv.Atoi(m[1])
	return id
}

// importTaxID is a tax id nobody else has (the run's prefix and a number).
func importTaxID(run, n int) string { return fmt.Sprintf("IT%05d%06d", run, n) }

// importUpload opens the import page, uploads the file, confirms the mapping proposed and waits
// for its dry run's page.
func importUpload(t *testing.T, page playwright.Page, name, mime string, data []byte) {
	t.Helper()
	importUploadToMapping(t, page, name, mime, data)
	check(t, page.GetByTestId("import-mapping-confirm").Click(), "confirm the proposed mapping")
	check(t, suite.expect.Locator(page.GetByTestId("import-summary")).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(60_000)}), "the dry run")
}

// importUploadToMapping opens the import page, uploads the file and waits for its mapping step.
func importUploadToMapping(t *testing.T, page playwright.Page, name, mime string, data []byte) {
	t.Helper()
	visit(t, page, "/customers/import", `[data-testid="import-form"]`)
	check(t, page.GetByTestId("import-file").SetInputFiles([]playwright.InputFile{{Name: name, MimeType: mime, Buffer: data}}), "choose "+name)
	check(t, page.GetByTestId("import-check").Click(), "check the file")
	check(t, page.WaitForURL(importPageURL, playwright.PageWaitForURLOptions{Timeout: playwright.Float(60_000)}), "the import's page")
	check(t, suite.expect.Locator(page.GetByTestId("import-mapping-form")).ToBeVisible(), "the mapping step")
}

func importExpectCount(t *testing.T, page playwright.Page, verdict string, n int) {
	t.Helper()
	check(t, suite.expect.Locator(page.GetByTestId("import-count-"+verdict)).ToHaveText(strconv.Itoa(n)), fmt.Sprintf("%d lines %s", n, verdict))
}

// importShownTaxIDs opens the filter of a verdict and returns the tax ids of its lines (one page).
func importShownRows(t *testing.T, page playwright.Page, verdict string, want int) (rows, taxIDs []string) {
	t.Helper()
	check(t, page.GetByTestId("import-filter-"+verdict).Click(), "show the lines: "+verdict)
	lines := page.Locator(`[data-testid="import-line"]`)
	check(t, suite.expect.Locator(page.Locator(`[data-testid="import-filter-`+verdict+`"][aria-current="page"]`)).ToBeVisible(), "the filter is on")
	check(t, suite.expect.Locator(lines).ToHaveCount(want), fmt.Sprintf("%d lines shown: %s", want, verdict))
	n, err := lines.Count()
	check(t, err, "count the lines")
	for i := range n {
		row, _ := lines.Nth(i).GetAttribute("data-row")
		tax, _ := lines.Nth(i).GetAttribute("data-tax-id")
		v, _ := lines.Nth(i).GetAttribute("data-verdict")
		if v != verdict {
			t.Errorf("row %s is %s under the filter %s", row, v, verdict)
		}
		rows, taxIDs = append(rows, row), append(taxIDs, tax)
	}
	return rows, taxIDs
}

// TestCustomerImportItalianCSVDryRun: a CSV in the Italian convention (";" separated, a byte-order
// mark, Italian headings, segment names and decimal commas) of 200 lines, 5 of them with the tax id
// of an existing customer and 3 invalid, shows exactly those 5 as duplicates and those 3 as invalid
// (with why), the other 192 as new and included; skipping a line is kept; the pages are axe clean
// and fit a phone.
func TestCustomerImportItalianCSVDryRun(t *testing.T) {
	page := newPageWith(t, pageOptions{locale: "it-IT"})
	check(t, page.Context().AddCookies([]playwright.OptionalCookie{{
		Name: i18n.CookieName, Value: "it", URL: playwright.String(suite.portalURL),
	}}), "choose Italian")
	login(t, page, backofficeUser, backofficePass)
	run := rand.IntN(100_000)
	var existing []string
	for i := range 5 {
		tax := importTaxID(run, 900_000+i)
		importCreateCustomer(t, page, fmt.Sprintf("Esistente %05d-%d S.r.l.", run, i), tax, "Torino")
		existing = append(existing, tax)
	}

	var csv bytes.Buffer
	csv.WriteString("\xef\xbb\xbfid;nome;partita IVA;e-mail;segmento;città;paese;fatturato\r\n")
	dupRows := map[int]string{20: existing[0], 57: existing[1], 99: existing[2], 150: existing[3], 201: existing[4]}
	invalidRows := map[int]string{10: "partita IVA", 120: "nome", 180: "e-mail"}
	var wantDupRows, wantInvalidRows []string
	for row := 2; row <= 201; row++ {
		name := fmt.Sprintf("Import %05d Cliente %03d S.p.A.", run, row)
		tax, email := importTaxID(run, row), fmt.Sprintf("cliente%d@example.com", row)
		if d, ok := dupRows[row]; ok {
			tax = d
			wantDupRows = append(wantDupRows, strconv.Itoa(row))
		}
		switch invalidRows[row] {
		case "partita IVA":
			tax = "12345"
		case "nome":
			name = ""
		case "e-mail":
			email = "non-un-indirizzo"
		}
		if invalidRows[row] != "" {
			wantInvalidRows = append(wantInvalidRows, strconv.Itoa(row))
		}
		fmt.Fprintf(&csv, ";%s;%s;%s;Aziende;Città %d;IT;%d,%02d\r\n", name, tax, email, row%17, row*1000, row%100)
	}
	importUpload(t, page, "clienti fiera.csv", "text/csv", csv.Bytes())
	check(t, suite.expect.Locator(page.Locator("html")).ToHaveAttribute("lang", "it"), "the dry run in Italian")
	check(t, suite.expect.Locator(page.GetByTestId("import-dry-run-note")).ToContainText("non è stato creato nulla"), "nothing was created")
	importExpectCount(t, page, "new", 192)
	importExpectCount(t, page, "duplicate", 5)
	importExpectCount(t, page, "invalid", 3)
	importExpectCount(t, page, "possible", 0)
	importExpectCount(t, page, "included", 192)
	// The first page: 100 lines, with a link to the next.
	check(t, suite.expect.Locator(page.Locator(`[data-testid="import-line"]`)).ToHaveCount(100), "a page of 100 lines")
	check(t, suite.expect.Locator(page.GetByTestId("import-next")).ToBeVisible(), "a next page")

	rows, taxIDs := importShownRows(t, page, "duplicate", 5)
	if !slices.Equal(rows, wantDupRows) || !slices.Equal(taxIDs, existing) {
		t.Errorf("duplicates: rows %v tax ids %v, want rows %v tax ids %v", rows, taxIDs, wantDupRows, existing)
	}
	check(t, suite.expect.Locator(page.Locator(`[data-testid="import-reason"]`).First()).ToContainText("Partita IVA già usata dal cliente Esistente"), "why: the tax id")
	check(t, suite.expect.Locator(page.GetByTestId("import-match").First()).ToHaveAttribute("href", regexp.MustCompile(`^/customers/\d+$`)), "a link to the customer")
	checkAxe(t, page, axeSource(t), "the import's duplicates")

	rows, _ = importShownRows(t, page, "invalid", 3)
	if !slices.Equal(rows, wantInvalidRows) {
		t.Errorf("invalid rows %v, want %v", rows, wantInvalidRows)
	}
	reasons := page.Locator(`[data-testid="import-reason"]`)
	check(t, suite.expect.Locator(reasons.Nth(0)).ToContainText("partita IVA"), "why row 10: the tax id's form")
	check(t, suite.expect.Locator(reasons.Nth(1)).ToContainText("Inserisci il nome"), "why row 120: no name")
	check(t, suite.expect.Locator(reasons.Nth(2)).ToContainText("indirizzo e-mail"), "why row 180: the e-mail")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="import-line"] [data-testid="import-include"]`)).ToHaveCount(0), "invalid lines cannot be included")

	// Skip one new line: the count follows, and the choice is kept.
	_, _ = importShownRows(t, page, "new", 100)
	first := page.Locator(`[data-testid="import-include"]`).First()
	check(t, suite.expect.Locator(first).ToBeChecked(), "new lines are included")
	check(t, first.Uncheck(), "skip the first new line")
	check(t, page.GetByTestId("import-save").Click(), "save the choices")
	check(t, suite.expect.Locator(page.GetByTestId("import-saved")).ToBeVisible(), "saved")
	importExpectCount(t, page, "included", 191)
	check(t, suite.expect.Locator(page.Locator(`[data-testid="import-include"]`).First()).Not().ToBeChecked(), "the skipped line stays skipped")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="import-filter-new"][aria-current="page"]`)).ToBeVisible(), "still on the new lines")
	checkAxe(t, page, axeSource(t), "the import's new lines")

	// On a phone: the page fits, its controls can be hit with a finger.
	phone := newPageWith(t, pageOptions{width: 375, height: 812, locale: "it-IT", touch: true})
	check(t, phone.Context().AddCookies([]playwright.OptionalCookie{{
		Name: i18n.CookieName, Value: "it", URL: playwright.String(suite.portalURL),
	}}), "choose Italian on the phone")
	_, err := phone.Goto(page.URL())
	check(t, err, "open the import on the phone")
	signIn(t, phone, backofficeUser, backofficePass)
	check(t, suite.expect.Locator(phone.GetByTestId("import-count-duplicate")).ToHaveText("5"), "the phone shows the dry run")
	importCheckFits(t, phone, "the dry run on a phone")
	phoneCheckTargets(t, phone, "the dry run on a phone")
	visit(t, phone, "/customers/import", `[data-testid="import-list-item"]`)
	check(t, suite.expect.Locator(phone.GetByTestId("import-list-item").First()).ToContainText("righe: 200"), "the import is listed with its lines")
	importCheckFits(t, phone, "the import form on a phone")
	checkAxe(t, phone, axeSource(t), "the import form on a phone")

	// Include the skipped line again and run the import: exactly the 192 other lines become customers.
	check(t, page.Locator(`[data-testid="import-include"]`).First().Check(), "include the line again")
	check(t, page.GetByTestId("import-save").Click(), "save the choices")
	importExpectCount(t, page, "included", 192)
	importRunAndCheck(t, page, run, existing, wantInvalidRows)
	_, err = phone.Goto(page.URL())
	check(t, err, "open the run on the phone")
	check(t, suite.expect.Locator(phone.GetByTestId("import-run-created")).ToHaveText("192"), "the phone shows the run")
	importCheckFits(t, phone, "the import's run on a phone")
	phoneCheckTargets(t, phone, "the import's run on a phone")
	checkAxe(t, phone, axeSource(t), "the import's run on a phone")
	visit(t, phone, "/customers/import", `[data-testid="import-runs-item"]`)
	check(t, suite.expect.Locator(phone.GetByTestId("import-runs-item").First()).ToContainText("192 creati"), "the run is listed with its counts")
	importCheckFits(t, phone, "the import form with its runs on a phone")
	checkAxe(t, phone, axeSource(t), "the import form with its runs on a phone")
}

var importRunURL = regexp.MustCompile(`/customers/import-runs/[0-9a-f]+$`)

// importRunAndCheck runs the import on the dry run's page (accepting the confirmation, which names
// the count) and checks its result: the included lines created (each linked to its new customer,
// which exists), the duplicates and invalid lines skipped, nothing failed; the result downloads as
// CSV and XLSX.
func importRunAndCheck(t *testing.T, page playwright.Page, run int, duplicates, invalidRows []string) {
	t.Helper()
	var question string
	page.OnDialog(func(d playwright.Dialog) {
		question = d.Message()
		_ = d.Accept()
	})
	check(t, suite.expect.Locator(page.GetByTestId("import-run-button")).ToHaveText("Importa 192 clienti"), "the run button names the count")
	check(t, page.GetByTestId("import-run-button").Click(), "run the import")
	check(t, page.WaitForURL(importRunURL), "the run's page")
	if !strings.Contains(question, "192 clienti") {
		t.Errorf("the confirmation %q does not name the count", question)
	}
	progress := page.GetByTestId("import-run-progress")
	check(t, suite.expect.Locator(progress).ToHaveAttribute("data-active", "false", playwright.LocatorAssertionsToHaveAttributeOptions{Timeout: playwright.Float(120_000)}), "the run ends")
	check(t, suite.expect.Locator(page.GetByTestId("import-run-created")).ToHaveText("192"), "192 created")
	check(t, suite.expect.Locator(page.GetByTestId("import-run-skipped")).ToHaveText("8"), "8 skipped")
	check(t, suite.expect.Locator(page.GetByTestId("import-run-failed")).ToHaveText("0"), "none failed")
	rows := page.Locator(`[data-testid="import-run-row"]`)
	check(t, suite.expect.Locator(rows).ToHaveCount(200), "every line listed")
	ids := map[string]string{}
	n, err := rows.Count()
	check(t, err, "count the run's lines")
	for i := range n {
		tax, _ := rows.Nth(i).GetAttribute("data-tax-id")
		id, _ := rows.Nth(i).GetAttribute("data-customer-id")
		row, _ := rows.Nth(i).GetAttribute("data-row")
		skipped := slices.Contains(duplicates, tax) || slices.Contains(invalidRows, row)
		switch {
		case skipped && id != "":
			t.Errorf("row %s (%s) was skipped in the dry run but created customer %s", row, tax, id)
		case !skipped && id == "":
			t.Errorf("row %s (%s) created no customer", row, tax)
		case id != "":
			if other, seen := ids[id]; seen {
				t.Errorf("customer %s created for %s and %s", id, other, tax)
			}
			ids[id] = tax
		}
	}
	if len(ids) != 192 {
		t.Fatalf("%d customers created, want 192", len(ids))
	}
	// Every new customer exists on the v2 service with its line's tax id.
	for id, tax := range ids {
		resp, err := page.Request().Get(portalURL("/customers/" + id))
		check(t, err, "open customer "+id)
		body, _ := resp.Text()
		if resp.Status() != 200 || !strings.Contains(body, tax) {
			t.Fatalf("customer %s (%s): %d", id, tax, resp.Status())
		}
	}
	// And the person's customer list finds them by the run's tax ids.
	visit(t, page, "/customers?q="+url.QueryEscape(importTaxID(run, 2)), `[data-testid="customer-row"]`)
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-row"]`)).ToHaveCount(1), "the list finds a created customer")
	_, err = page.GoBack()
	check(t, err, "back to the run")
	check(t, suite.expect.Locator(page.GetByTestId("import-run-download-csv")).ToBeVisible(), "the result's download")
	for _, format := range []string{"csv", "xlsx"} {
		dl, err := page.ExpectDownload(func() error { return page.GetByTestId("import-run-download-" + format).Click() })
		check(t, err, "download the result as "+format)
		path, err := dl.Path()
		check(t, err, "the downloaded "+format)
		if !strings.HasSuffix(dl.SuggestedFilename(), "."+format) {
			t.Errorf("the %s result is named %q", format, dl.SuggestedFilename())
		}
		data, err := os.ReadFile(path)
		check(t, err, "read the "+format)
		if format == "csv" && (!strings.Contains(string(data), importTaxID(run, 2)) || strings.Count(string(data), "creato") != 192) {
			t.Errorf("the CSV result: %.500s", data)
		}
		if format == "xlsx" && !bytes.HasPrefix(data, []byte("PK")) {
			t.Errorf("the XLSX result is not a workbook")
		}
	}
	checkAxe(t, page, axeSource(t), "the import's run")
}

// importCheckFits fails when the page scrolls sideways.
func importCheckFits(t *testing.T, page playwright.Page, what string) {
	t.Helper()
	wide, err := page.Evaluate(`() => {
		const w = document.documentElement.clientWidth;
		if (document.documentElement.scrollWidth <= w) return "";
		const out = [];
		for (const el of document.querySelectorAll("body *")) {
			const r = el.getBoundingClientRect();
			if (r.right > w + 0.5 && !el.closest(".table-wrap, .site-nav")) out.push(el.tagName.toLowerCase() + "." + el.className + " right " + Math.round(r.right));
		}
		return "by " + (document.documentElement.scrollWidth - w) + " px: " + out.slice(0, 5).join("; ");
	}`)
	check(t, err, "measure "+what)
	if wide != "" {
		t.Errorf("%s scrolls sideways %v", what, wide)
	}
}

// TestCustomerImportXLSXExportReimported: the customer export as XLSX, uploaded again, finds every
// line a duplicate of the customer it was exported from.
func TestCustomerImportXLSXExportReimported(t *testing.T) {
	page := newPage(t)
	login(t, page, backofficeUser, backofficePass)
	run := rand.IntN(100_000)
	prefix := fmt.Sprintf("Riesporta%05d", run)
	var want []string
	for i := range 4 {
		tax := importTaxID(run, 800_000+i)
		importCreateCustomer(t, page, fmt.Sprintf("%s Cliente %d", prefix, i), tax, "Bari")
		want = append(want, tax)
	}
	export, err := page.Request().Get(portalURL("/customers/export?format=xlsx&sort=name&q=" + url.QueryEscape(prefix)))
	check(t, err, "export the customers as XLSX")
	body, err := export.Body()
	check(t, err, "read the export")
	if export.Status() != 200 || !bytes.HasPrefix(body, []byte("PK")) {
		t.Fatalf("the export answered %d with %.100q", export.Status(), body)
	}
	importUpload(t, page, "customers.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", body)
	importExpectCount(t, page, "duplicate", 4)
	importExpectCount(t, page, "new", 0)
	importExpectCount(t, page, "invalid", 0)
	importExpectCount(t, page, "possible", 0)
	importExpectCount(t, page, "included", 0)
	_, taxIDs := importShownRows(t, page, "duplicate", 4)
	if !slices.Equal(taxIDs, want) {
		t.Errorf("duplicates %v, want %v", taxIDs, want)
	}
	text, err := page.Locator(`[data-testid="import-reason"]`).AllInnerTexts()
	check(t, err, "read the reasons")
	for i, r := range text {
		if !strings.Contains(r, prefix) {
			t.Errorf("line %d: %q does not name the customer it duplicates", i, r)
		}
	}
	// Deleted (after saying what), it is gone: its page answers 404.
	asked := make(chan string, 1)
	page.OnDialog(func(d playwright.Dialog) {
		select {
		case asked <- d.Message():
		default:
		}
		_ = d.Accept()
	})
	imported := page.URL()
	check(t, page.GetByTestId("import-delete").Click(), "delete the import")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`/customers/import$`)), "back on the form")
	if q := <-asked; !strings.Contains(q, "customers.xlsx") {
		t.Errorf("the question before deleting: %q", q)
	}
	gone, err := page.Goto(imported)
	check(t, err, "open the deleted import")
	if gone.Status() != 404 {
		t.Errorf("a deleted import answers %d", gone.Status())
	}
}

// TestCustomerImportRefusesAFileItCannotRead: a file without the name and tax id headings is refused
// with a translated message, and nothing is stored.
func TestCustomerImportRefusesAFileItCannotRead(t *testing.T) {
	page := newPage(t)
	login(t, page, backofficeUser, backofficePass)
	visit(t, page, "/customers/import", `[data-testid="import-form"]`)
	check(t, page.GetByTestId("import-file").SetInputFiles([]playwright.InputFile{{Name: "list.csv", MimeType: "text/csv",
		Buffer: []byte("a;b\n1;2\n")}}), "choose a file without headings")
	check(t, page.GetByTestId("import-check").Click(), "check the file")
	check(t, suite.expect.Locator(page.GetByTestId("import-file-error")).ToContainText("name and a tax id column"), "why it is refused")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`/customers/import$`)), "still on the form")
}
