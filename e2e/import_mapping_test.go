package e2e

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
	"github.com/xuri/excelize/v2"
)

// The import's mapping step (issue 41): a file's columns are matched to fields by their headings
// and confirmed by the person before the dry run; invalid cells are fixed in the dry run.

const xlsxMIME = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

// importMappingXLSX is a workbook of rows under headers, written by excelize as Excel writes it:
// numbers as numbers, a time.Time as a date cell shown as a German Excel shows it (dd.mm.yyyy).
func importMappingXLSX(t *testing.T, headers []string, rows [][]any) []byte {
	t.Helper()
	book := excelize.NewFile()
	for i, h := range headers {
		cell, _ := excelize.CoordinatesToCellName(i+1, 1)
		check(t, book.SetCellValue("Sheet1", cell, h), "xlsx heading")
	}
	german := "dd.mm.yyyy"
	dateStyle, err := book.NewStyle(&excelize.Style{CustomNumFmt: &german})
	check(t, err, "xlsx date style")
	for r, row := range rows {
		for i, v := range row {
			cell, _ := excelize.CoordinatesToCellName(i+1, r+2)
			check(t, book.SetCellValue("Sheet1", cell, v), "xlsx cell")
			if _, ok := v.(time.Time); ok {
				check(t, book.SetCellStyle("Sheet1", cell, cell, dateStyle), "xlsx date cell")
			}
		}
	}
	var out bytes.Buffer
	_, err = book.WriteTo(&out)
	check(t, err, "write the xlsx")
	return out.Bytes()
}

// importMappingProposed is the field each column of the mapping step proposes, by heading.
func importMappingProposed(t *testing.T, page playwright.Page) map[string]string {
	t.Helper()
	cols := page.Locator(`[data-testid="import-mapping-column"]`)
	n, err := cols.Count()
	check(t, err, "count the columns")
	out := map[string]string{}
	for i := range n {
		h, _ := cols.Nth(i).GetAttribute("data-header")
		v, err := cols.Nth(i).Locator(`select`).InputValue()
		check(t, err, "read the field of "+h)
		out[h] = v
	}
	return out
}

// TestImportMappingGermanXLSXImportsEveryPostalCodeAndCountry: an XLSX as a German CRM exports it
// (German headings, "Deutschland" and "Italia", postal codes Excel stored as numbers, a date
// cell in a column the portal has no field for, and one in the postal code column) shows its
// mapping step with every column's field proposed and the date column named as matched to
// nothing; once the person confirms, the dry run's postal code column shows the codes with their
// leading zeros and the date as the file shows it ("14.03.2019", not 43538), its line invalid as a
// date, not a postal code; fixed in place, every line is new, and the run creates every customer
// with its postal code and its country.
func TestImportMappingGermanXLSXImportsEveryPostalCodeAndCountry(t *testing.T) {
	page := newPage(t)
	login(t, page, backofficeUser, backofficePass)
	run := rand.IntN(100_000)
	headers := []string{"Firmenname", "USt-IdNr.", "Straße", "Postleitzahl", "Ort", "Land", "Kundentyp", "Kunde seit"}
	type want struct{ tax, postal, country string }
	wants := []want{
		{fmt.Sprintf("DE%05d0001", run), "01067", "DE"},
		{fmt.Sprintf("DE%05d0002", run), "80331", "DE"},
		{importTaxID(run, 3), "00187", "IT"},
		{importTaxID(run, 4), "20121", "IT"},
		{fmt.Sprintf("DE%05d0005", run), "10115", "DE"},
	}
	since := time.Date(2019, 3, 14, 0, 0, 0, 0, time.UTC)
	data := importMappingXLSX(t, headers, [][]any{
		{fmt.Sprintf("Mapping %05d Eins GmbH", run), wants[0].tax, "Hauptstraße 1", 1067, "Dresden", "Deutschland", "Geschäftskunde", since},
		{fmt.Sprintf("Mapping %05d Zwei GmbH", run), wants[1].tax, "Marienplatz 2", 80331, "München", "Deutschland", "Geschäftskunde", since},
		{fmt.Sprintf("Mapping %05d Tre S.r.l.", run), "IT" + wants[2].tax[2:], "Via del Corso 3", 187, "Roma", "Italia", "Geschäftskunde", since},
		{fmt.Sprintf("Mapping %05d Quattro S.p.A.", run), wants[3].tax, "Via Dante 4", 20121, "Milano", "Italia", "Geschäftskunde", since},
		// A date typed into the postal code column: Excel keeps it as a date cell (dd.mm.yyyy).
		{fmt.Sprintf("Mapping %05d Fünf GmbH", run), wants[4].tax, "Unter den Linden 5", since, "Berlin", "Deutschland", "Geschäftskunde", since},
	})
	importUploadToMapping(t, page, "kunden.xlsx", xlsxMIME, data)
	proposed := importMappingProposed(t, page)
	for h, f := range map[string]string{"Firmenname": "name", "USt-IdNr.": "taxId", "Straße": "street", "Postleitzahl": "postalCode",
		"Ort": "city", "Land": "country", "Kundentyp": "segment", "Kunde seit": ""} {
		if proposed[h] != f {
			t.Errorf("column %q proposed %q, want %q", h, proposed[h], f)
		}
	}
	check(t, suite.expect.Locator(page.GetByTestId("import-mapping-unmatched-column")).ToHaveText([]string{"Kunde seit"}), "the date column is named")
	check(t, page.GetByTestId("import-mapping-confirm").Click(), "confirm the proposed mapping")
	check(t, suite.expect.Locator(page.GetByTestId("import-summary")).ToBeVisible(), "the dry run")
	importExpectCount(t, page, "new", 4)
	importExpectCount(t, page, "invalid", 1)
	postal := func(row int) playwright.Locator {
		return page.Locator(fmt.Sprintf(`[data-testid="import-line"][data-row="%d"] [data-testid="import-line-postal-code"]`, row))
	}
	check(t, suite.expect.Locator(postal(2)).ToHaveText("01067"), "row 2's postal code with its leading zero")
	check(t, suite.expect.Locator(postal(4)).ToHaveText("00187"), "row 4's postal code with its leading zeros")
	check(t, suite.expect.Locator(postal(6)).ToHaveText("14.03.2019"), "the date as the file shows it")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="import-line"][data-row="6"] [data-testid="import-reason"]`)).
		ToContainText("is a date, not a postal code"), "the date is no postal code")
	fix := page.Locator(`[data-testid="import-fix"][data-row="6"]`)
	check(t, fix.GetByTestId("import-fix-open").Click(), "open the fix of row 6")
	check(t, suite.expect.Locator(fix.GetByTestId("import-fix-postalCode")).ToHaveAttribute("aria-invalid", "true"), "the postal code is marked")
	check(t, suite.expect.Locator(fix.GetByTestId("import-fix-postalCode")).ToHaveValue("14.03.2019"), "the fix shows the date")
	check(t, fix.GetByTestId("import-fix-postalCode").Fill("10115"), "fix the postal code")
	check(t, fix.GetByTestId("import-fix-save").Click(), "check the line again")
	importExpectCount(t, page, "new", 5)
	importExpectCount(t, page, "invalid", 0)
	importExpectCount(t, page, "included", 5)

	ids := importMappingRun(t, page, 5)
	for _, w := range wants {
		id := ids[w.tax]
		if id == "" {
			t.Errorf("no customer created for %s", w.tax)
			continue
		}
		visit(t, page, "/customers/"+id+"/edit", `input[name="postalCode"]`)
		postal, err := page.Locator(`input[name="postalCode"]`).InputValue()
		check(t, err, "read the postal code")
		country, err := page.Locator(`select[name="country"]`).InputValue()
		check(t, err, "read the country")
		if postal != w.postal || country != w.country {
			t.Errorf("customer %s (%s): postal code %q, country %q; want %q, %q", id, w.tax, postal, country, w.postal, w.country)
		}
	}
	// The list of imports names the run by its file.
	visit(t, page, "/customers/import", `[data-testid="import-form"]`)
	check(t, suite.expect.Locator(page.GetByTestId("import-runs-item").First()).ToContainText("kunden.xlsx"), "the run named by its file")
}

// importMappingRun runs the import on its dry run's page and returns the created customers' ids by
// tax id, once want lines are created.
func importMappingRun(t *testing.T, page playwright.Page, want int) map[string]string {
	t.Helper()
	page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
	check(t, page.GetByTestId("import-run-button").Click(), "run the import")
	check(t, page.WaitForURL(importRunURL), "the run's page")
	check(t, suite.expect.Locator(page.GetByTestId("import-run-progress")).ToHaveAttribute("data-active", "false",
		playwright.LocatorAssertionsToHaveAttributeOptions{Timeout: playwright.Float(120_000)}), "the run ends")
	check(t, suite.expect.Locator(page.GetByTestId("import-run-created")).ToHaveText(fmt.Sprint(want)), "every line created")
	rows := page.Locator(`[data-testid="import-run-row"]`)
	n, err := rows.Count()
	check(t, err, "count the run's lines")
	ids := map[string]string{}
	for i := range n {
		tax, _ := rows.Nth(i).GetAttribute("data-tax-id")
		id, _ := rows.Nth(i).GetAttribute("data-customer-id")
		if id != "" {
			ids[tax] = id
		}
	}
	return ids
}

// TestImportMappingFixInPlaceCreatesTheFixedLine: an invalid e-mail and an unknown segment are
// fixed in the dry run (the cell edited, the segment treated as a known one for every line) and
// checked again without a new upload; the run creates the line as fixed.
func TestImportMappingFixInPlaceCreatesTheFixedLine(t *testing.T) {
	page := newPage(t)
	login(t, page, backofficeUser, backofficePass)
	run := rand.IntN(100_000)
	csv := fmt.Sprintf("Firmenname;USt-IdNr.;Kundentyp;Ort;Land;E-Mail\n"+
		"Fix %05d Eins GmbH;DE%05d0011;Stammkunde;Berlin;Deutschland;eins@example.com\n"+
		"Fix %05d Zwei GmbH;DE%05d0012;Stammkunde;Bonn;Deutschland;keine-adresse\n", run, run, run, run)
	importUpload(t, page, "fix.csv", "text/csv", []byte(csv))
	importExpectCount(t, page, "invalid", 2)
	choice := page.Locator(`[data-testid="import-value-choice"][data-value="Stammkunde"]`)
	_, err := choice.Locator(`select`).SelectOption(playwright.SelectOptionValues{Values: &[]string{"BUSINESS"}})
	check(t, err, "treat Stammkunde as business")
	check(t, choice.GetByTestId("import-value-apply").Click(), "apply it to every line")
	importExpectCount(t, page, "new", 1)
	importExpectCount(t, page, "invalid", 1)

	fix := page.Locator(`[data-testid="import-fix"][data-row="3"]`)
	check(t, fix.GetByTestId("import-fix-open").Click(), "open the fix of row 3")
	check(t, suite.expect.Locator(fix.GetByTestId("import-fix-email")).ToHaveAttribute("aria-invalid", "true"), "the e-mail is marked")
	check(t, fix.GetByTestId("import-fix-email").Fill("zwei@example.com"), "fix the e-mail")
	check(t, fix.GetByTestId("import-fix-save").Click(), "check the line again")
	check(t, suite.expect.Locator(page.GetByTestId("import-saved")).ToBeVisible(), "saved")
	importExpectCount(t, page, "new", 2)
	importExpectCount(t, page, "invalid", 0)
	importExpectCount(t, page, "included", 2)
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`/customers/import/[0-9a-f]{32}`)), "no new upload")

	ids := importMappingRun(t, page, 2)
	id := ids[fmt.Sprintf("DE%05d0012", run)]
	if id == "" {
		t.Fatalf("the fixed line created no customer: %v", ids)
	}
	visit(t, page, "/customers/"+id+"/edit", `input[name="email"]`)
	var email string
	email, err = page.Locator(`input[name="email"]`).InputValue()
	check(t, err, "read the e-mail")
	segment, err := page.Locator(`select[name="segment"]`).InputValue()
	check(t, err, "read the segment")
	if email != "zwei@example.com" || segment != "BUSINESS" {
		t.Errorf("the fixed customer has e-mail %q and segment %q", email, segment)
	}
}

// TestImportMappingPortalExportsProposedUnchanged: the portal's customer export, as CSV and as
// XLSX, uploaded again, is proposed the mapping of the export's own columns (each field to its
// column, the columns without a field named), and confirmed as proposed it finds every line a
// duplicate of the customer it was exported from.
func TestImportMappingPortalExportsProposedUnchanged(t *testing.T) {
	page := newPage(t)
	login(t, page, backofficeUser, backofficePass)
	run := rand.IntN(100_000)
	prefix := fmt.Sprintf("Rimappa%05d", run)
	for i := range 3 {
		importCreateCustomer(t, page, fmt.Sprintf("%s Cliente %d", prefix, i), importTaxID(run, 700_000+i), "Bari")
	}
	for _, format := range []string{"csv", "xlsx"} {
		export, err := page.Request().Get(portalURL("/customers/export?format=" + format + "&sort=name&q=" + url.QueryEscape(prefix)))
		check(t, err, "export the customers as "+format)
		body, err := export.Body()
		check(t, err, "read the export")
		if export.Status() != 200 {
			t.Fatalf("the %s export answered %d", format, export.Status())
		}
		mime := map[string]string{"csv": "text/csv", "xlsx": xlsxMIME}[format]
		importUploadToMapping(t, page, "customers."+format, mime, body)
		proposed := importMappingProposed(t, page)
		mapped := map[string]bool{}
		for _, f := range proposed {
			if f != "" {
				mapped[f] = true
			}
		}
		for _, f := range []string{"name", "taxId", "email", "segment", "city", "country"} {
			if !mapped[f] {
				t.Errorf("%s: the export's %s column is not proposed (%v)", format, f, proposed)
			}
		}
		unmatched, err := page.GetByTestId("import-mapping-unmatched-column").AllInnerTexts()
		check(t, err, "read the unmatched columns")
		if len(unmatched) != len(proposed)-len(mapped) {
			t.Errorf("%s: unmatched columns named %v of %v", format, unmatched, proposed)
		}
		check(t, page.GetByTestId("import-mapping-confirm").Click(), "confirm the mapping as proposed")
		check(t, suite.expect.Locator(page.GetByTestId("import-summary")).ToBeVisible(), "the dry run")
		importExpectCount(t, page, "duplicate", 3)
		importExpectCount(t, page, "new", 0)
		importExpectCount(t, page, "invalid", 0)
		page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
		check(t, page.GetByTestId("import-delete").Click(), "delete the import")
		check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`/customers/import$`)), "back on the form")
	}
}

// TestImportMappingReopenedFromTheDryRun: from the dry run the person goes back to the mapping
// step without a new upload and finds the mapping they confirmed (not the proposed one); "back"
// returns unchanged; a column then left out is read so in every line, and the segment they
// treated as a known one stays treated.
func TestImportMappingReopenedFromTheDryRun(t *testing.T) {
	page := newPage(t)
	login(t, page, backofficeUser, backofficePass)
	run := rand.IntN(100_000)
	csv := fmt.Sprintf("Firmenname;USt-IdNr.;Bemerkung;Kundentyp;Ort;Land\n"+
		"Reopen %05d Eins GmbH;DE%05d0021;Hauptstr. 1;Stammkunde;Berlin;Deutschland\n"+
		"Reopen %05d Zwei GmbH;DE%05d0022;Ring 2;Stammkunde;Bonn;Deutschland\n", run, run, run, run)
	importUploadToMapping(t, page, "reopen.csv", "text/csv", []byte(csv))
	column := func(header string) playwright.Locator {
		return page.Locator(fmt.Sprintf(`[data-testid="import-mapping-column"][data-header="%s"] select`, header))
	}
	_, err := column("Bemerkung").SelectOption(playwright.SelectOptionValues{Values: &[]string{"street"}})
	check(t, err, "map Bemerkung to the street")
	check(t, page.GetByTestId("import-mapping-confirm").Click(), "confirm the mapping")
	importExpectCount(t, page, "invalid", 2)
	dryRun := page.URL()
	choice := page.Locator(`[data-testid="import-value-choice"][data-value="Stammkunde"]`)
	_, err = choice.Locator(`select`).SelectOption(playwright.SelectOptionValues{Values: &[]string{"BUSINESS"}})
	check(t, err, "treat Stammkunde as business")
	check(t, choice.GetByTestId("import-value-apply").Click(), "apply it to every line")
	importExpectCount(t, page, "new", 2)
	city := page.Locator(`[data-testid="import-line"][data-row="2"] td[data-label="City"]`)
	check(t, suite.expect.Locator(city).ToHaveText("Berlin"), "the city read from Ort")

	check(t, page.GetByTestId("import-mapping-reopen").Click(), "back to the mapping step")
	check(t, suite.expect.Locator(page.GetByTestId("import-mapping-form")).ToBeVisible(), "the mapping step again")
	check(t, suite.expect.Locator(column("Bemerkung")).ToHaveValue("street"), "the mapping confirmed, not the proposed one")
	check(t, suite.expect.Locator(column("Ort")).ToHaveValue("city"), "Ort still the city")
	check(t, page.GetByTestId("import-mapping-back").Click(), "back to the dry run unchanged")
	importExpectCount(t, page, "new", 2)

	check(t, page.GetByTestId("import-mapping-reopen").Click(), "back to the mapping step")
	_, err = column("Ort").SelectOption(playwright.SelectOptionValues{Values: &[]string{""}})
	check(t, err, "leave Ort out")
	check(t, page.GetByTestId("import-mapping-confirm").Click(), "confirm the new mapping")
	check(t, suite.expect.Locator(city).ToHaveText(""), "no city read any more")
	importExpectCount(t, page, "new", 2)
	importExpectCount(t, page, "invalid", 0)
	if got := page.URL(); got != dryRun && !strings.HasPrefix(got, dryRun+"?") {
		t.Errorf("the dry run is at %s, was %s: a new import?", got, dryRun)
	}
}
