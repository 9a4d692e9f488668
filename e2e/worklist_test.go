package e2e

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
	"github.com/xuri/excelize/v2"
)

// Journeys of the audit worklist and the exports (docs/backoffice.md). The worklist test makes
// three quotes of its own (two customers), renames one customer to a name that a spreadsheet
// would run as a formula, and checks the table, its filters and both exports.

// randomLetters makes a name part no other data shares (letters only, so no id matches it).
func randomLetters(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rand.IntN(26))
	}
	return string(b)
}

// downloadBytes clicks what starts a download and returns the file's bytes and suggested name.
func downloadBytes(t *testing.T, page playwright.Page, locator playwright.Locator, what string) ([]byte, string) {
	t.Helper()
	download, err := page.ExpectDownload(func() error { return locator.Click() })
	check(t, err, "download "+what)
	path, err := download.Path()
	check(t, err, "the downloaded "+what)
	data, err := os.ReadFile(path)
	check(t, err, "read the "+what)
	return data, download.SuggestedFilename()
}

// parseCSV reads an export as an English spreadsheet does: a UTF-8 byte-order mark, then
// comma-separated cells (docs/i18n.md: semicolons where the decimal mark is a comma).
func parseCSV(t *testing.T, data []byte) [][]string {
	t.Helper()
	rest, ok := bytes.CutPrefix(data, []byte("\xEF\xBB\xBF"))
	if !ok {
		t.Fatalf("the CSV has no byte-order mark: %.40q", data)
	}
	rows, err := csv.NewReader(bytes.NewReader(rest)).ReadAll()
	check(t, err, "parse the CSV")
	return rows
}

func parseXLSX(t *testing.T, data []byte, sheet string) ([][]string, *excelize.File) {
	t.Helper()
	book, err := excelize.OpenReader(bytes.NewReader(data))
	check(t, err, "open the XLSX")
	t.Cleanup(func() { _ = book.Close() })
	rows, err := book.GetRows(sheet)
	check(t, err, "read the sheet "+sheet)
	return rows, book
}

func TestAuditWorklistFiltersAndExports(t *testing.T) {
	page := newPage(t)
	login(t, page, backofficeUser, backofficePass)
	customerA := createTestCustomer(t, page, "Worklist A")
	customerB := createTestCustomer(t, page, "Worklist B")
	quote1, _, _ := createTestQuote(t, page, customerA, "Worklist")
	quote2, _, _ := createTestQuote(t, page, customerA, "Worklist")
	quote3, _, _ := createTestQuote(t, page, customerB, "Worklist")
	id := func(path string) string { return path[strings.LastIndex(path, "/")+1:] }
	// Quote 1 is opened, so it is a recent quote to pick.
	_, err := page.Goto(quote1)
	check(t, err, "open the first quote")
	// A customer data change is recorded in the audit of the customer's quotes (A7).
	hostile := "=HYPERLINK(\"http://x\") Worklist " + randomLetters(8)
	docsRenameCustomer(t, page, customerB.ID, hostile)

	_, err = page.Goto("/audits")
	check(t, err, "open Audits")
	check(t, page.GetByTestId("worklist-link").Click(), "open the worklist")
	pick := page.Locator(fmt.Sprintf(`[data-testid="worklist-pick"][value="%s"]`, id(quote1)))
	check(t, pick.Check(), "pick the recent quote")
	check(t, page.GetByTestId("worklist-quotes").Fill(id(quote2)+", "+id(quote3)), "type two more quote ids")
	check(t, page.GetByTestId("worklist-submit").Click(), "show the audits")

	rows := page.Locator(`[data-testid="worklist-row"]`)
	for _, q := range []string{quote1, quote2, quote3} {
		check(t, suite.expect.Locator(rows.Filter(playwright.LocatorFilterOptions{Has: page.GetByRole("link", playwright.PageGetByRoleOptions{Name: id(q), Exact: playwright.Bool(true)})}).First()).ToBeVisible(),
			"quote "+id(q)+" has entries")
	}
	allCount, err := rows.Count()
	check(t, err, "count the rows")
	// The action cell is in words of the reader's language; the row keeps the v2 code in data-action.
	updated := page.Locator(`[data-testid="worklist-row"][data-action="CUSTOMER_UPDATED"]`)
	check(t, suite.expect.Locator(updated.First().GetByTestId("worklist-change").First()).ToContainText(hostile), "before -> after of the rename")
	actor := v2Actor(t, backofficeUser, backofficePass, quote3)
	check(t, suite.expect.Locator(updated.First().GetByTestId("worklist-who")).ToHaveText(actor), "who changed it")

	// Filters: the action, the customer, the user and the days.
	_, err = page.GetByTestId("worklist-action").SelectOption(playwright.SelectOptionValues{Values: &[]string{"CUSTOMER_UPDATED"}})
	check(t, err, "filter the action")
	check(t, page.GetByTestId("worklist-submit").Click(), "apply")
	check(t, suite.expect.Locator(rows).ToHaveCount(1), "one customer change")
	check(t, suite.expect.Locator(rows.First().GetByTestId("worklist-audit-link")).ToHaveText(id(quote3)), "on the renamed customer's quote")
	check(t, suite.expect.Locator(page.GetByTestId("worklist-count")).ToHaveText(fmt.Sprintf("1 of %d entries match the filters.", allCount)), "the count says so")

	// Export what the filters show: CSV (neutralised) and XLSX (parsed back).
	csvData, csvName := downloadBytes(t, page, page.GetByTestId("worklist-export-csv"), "the CSV export")
	csvRows := parseCSV(t, csvData)
	if !strings.HasSuffix(csvName, ".csv") || len(csvRows) != 2 || csvRows[0][0] != "quote" || csvRows[1][0] != id(quote3) || csvRows[1][5] != "Customer updated" {
		t.Fatalf("CSV export %s: %q", csvName, csvRows)
	}
	if csvRows[1][2] != "'"+hostile {
		t.Errorf("CSV customer cell %q: want the formula neutralised with a leading apostrophe", csvRows[1][2])
	}
	if !strings.Contains(csvRows[1][7], "-> "+hostile) {
		t.Errorf("CSV changes %q", csvRows[1][7])
	}
	xlsxData, xlsxName := downloadBytes(t, page, page.GetByTestId("worklist-export-xlsx"), "the XLSX export")
	xlsxRows, book := parseXLSX(t, xlsxData, "Audit worklist")
	if !strings.HasSuffix(xlsxName, ".xlsx") || len(xlsxRows) != 2 || xlsxRows[1][0] != id(quote3) || xlsxRows[1][2] != hostile {
		t.Fatalf("XLSX export %s: %q", xlsxName, xlsxRows)
	}
	if f, _ := book.GetCellFormula("Audit worklist", "C2"); f != "" {
		t.Errorf("the customer cell is a formula %q: want text", f)
	}

	_, err = page.GetByTestId("worklist-action").SelectOption(playwright.SelectOptionValues{Values: &[]string{""}})
	check(t, err, "any action")
	check(t, page.GetByTestId("worklist-customer").Fill(fmt.Sprint(customerA.ID)), "filter the customer by id")
	check(t, page.GetByTestId("worklist-user").Fill(strings.ToUpper(actor)), "filter the user (any case)")
	check(t, page.GetByTestId("worklist-submit").Click(), "apply")
	// The filters are a plain GET form: count the rows of the answer, not of the page before it.
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(fmt.Sprintf(`[?&]customer=%d(&|$)`, customerA.ID))), "the filtered list is loading")
	check(t, page.WaitForLoadState(), "the filtered list is loaded")
	aRows, err := rows.Count()
	check(t, err, "count")
	if aRows == 0 || aRows >= allCount {
		t.Fatalf("customer %d by backoffice: %d rows of %d", customerA.ID, aRows, allCount)
	}
	check(t, suite.expect.Locator(rows.Filter(playwright.LocatorFilterOptions{Has: page.GetByRole("link", playwright.PageGetByRoleOptions{Name: id(quote3), Exact: playwright.Bool(true)})})).ToHaveCount(0), "no row of the other customer")

	tomorrow := time.Now().UTC().AddDate(0, 0, 1).Format("2006-01-02")
	check(t, page.GetByTestId("worklist-from").Fill(tomorrow), "from tomorrow")
	check(t, page.GetByTestId("worklist-submit").Click(), "apply")
	check(t, suite.expect.Locator(rows).ToHaveCount(0), "nothing from tomorrow on")
	check(t, page.GetByTestId("worklist-from").Fill(time.Now().UTC().AddDate(0, 0, -1).Format("2006-01-02")), "from yesterday")
	check(t, page.GetByTestId("worklist-to").Fill(tomorrow), "to tomorrow")
	check(t, page.GetByTestId("worklist-submit").Click(), "apply")
	check(t, suite.expect.Locator(rows).ToHaveCount(aRows), "the day range keeps today's entries")

	// Each row links to the full audit.
	check(t, rows.First().GetByTestId("worklist-audit-link").Click(), "open a full audit")
	check(t, suite.expect.Locator(page.GetByTestId("audit-timeline")).ToBeVisible(), "the full audit is shown")
}

// TestCustomerListExports: the customer list's current search exports to CSV and XLSX.
func TestCustomerListExports(t *testing.T) {
	page := newPage(t)
	login(t, page, backofficeUser, backofficePass)
	hostile := fmt.Sprintf("@SUM(1) Export %d", rand.IntN(1e9))
	docsRenameCustomer(t, page, 58, hostile)
	_, err := page.Goto("/customers")
	check(t, err, "open Customers")
	check(t, page.GetByTestId("customer-q").Fill(hostile[len("@SUM(1) "):]), "search for the customer")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-row"]`)).ToHaveCount(1), "one customer found")
	csvData, _ := downloadBytes(t, page, page.GetByTestId("customer-export-csv"), "the customer CSV")
	rows := parseCSV(t, csvData)
	if len(rows) != 2 || rows[0][1] != "name" || rows[1][0] != "58" || rows[1][1] != "'"+hostile {
		t.Fatalf("CSV: %q", rows)
	}
	xlsxData, _ := downloadBytes(t, page, page.GetByTestId("customer-export-xlsx"), "the customer XLSX")
	xrows, _ := parseXLSX(t, xlsxData, "Customers")
	if len(xrows) != 2 || xrows[1][0] != "58" || xrows[1][1] != hostile {
		t.Fatalf("XLSX: %q", xrows)
	}
	// The whole list (no search) has every customer, in the list's order.
	check(t, page.GetByTestId("customer-q").Fill(""), "clear the search")
	// "1 customer found." must go; a count such as "111 customers" contains the words too, so the
	// row count is what is awaited.
	check(t, suite.expect.Locator(page.GetByTestId("result-count")).Not().ToHaveText("1 customer found."), "the whole list")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="customer-row"]`)).Not().ToHaveCount(1), "the whole list's rows")
	xlsxData, _ = downloadBytes(t, page, page.GetByTestId("customer-export-xlsx"), "the whole list")
	xrows, _ = parseXLSX(t, xlsxData, "Customers")
	if len(xrows) < 60 {
		t.Fatalf("the whole list exported %d rows", len(xrows)-1)
	}
}
