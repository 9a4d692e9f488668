package e2e

import (
	"regexp"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/cpqportal/portal/internal/sheetread/sheettest"
)

// TestHostileSpreadsheetsAreRefusedQuickly (issue 38): the files that took the portal's memory and
// CPU (a 42 KB list of 5,000 rows with a cell at column XFD: 1.6 GB and 155 s; 20,000 and 1.5
// million rows of blank formulas at XFD: 25 CPU-seconds and minutes) are posted through the real
// pages and the person sees, on the form, what is wrong with their file: the column and the row,
// or that the workbook unpacks to too much. Each answer is awaited with the browser's own
// timeout; the bench (hostile_xlsx_seconds) measures how quickly it comes.
func TestHostileSpreadsheetsAreRefusedQuickly(t *testing.T) {
	page := newPage(t)
	login(t, page, backofficeUser, backofficePass)
	const xlsxType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

	batchOpenForm(t, page)
	check(t, page.GetByTestId("batch-file").SetInputFiles([]playwright.InputFile{{Name: "month-end.xlsx", MimeType: xlsxType,
		Buffer: sheettest.XFDPerRow(5000)}}), "choose the XFD list")
	check(t, page.GetByTestId("batch-check").Click(), "check the XFD list")
	check(t, suite.expect.Locator(page.GetByTestId("batch-file-error")).ToContainText("the file has more than 64 columns (row 2 has a cell in column XFD)"),
		"the batch form says which cell is too far")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`/contracts/batch-archive$`)), "still on the batch form")

	for _, c := range []struct {
		name, want string
		data       []byte
	}{
		{"20,000 blank formulas at XFD", "The file has more than 64 columns: row 2 has a cell in column XFD.", sheettest.BlankFormulaRows(20_000)},
		{"1,500,000 blank formulas at XFD", "The workbook unpacks to more than 24 MiB", sheettest.BlankFormulaRows(1_500_000)},
	} {
		visit(t, page, "/customers/import", `[data-testid="import-form"]`)
		check(t, page.GetByTestId("import-file").SetInputFiles([]playwright.InputFile{{Name: "customers.xlsx", MimeType: xlsxType, Buffer: c.data}}), "choose "+c.name)
		check(t, page.GetByTestId("import-check").Click(), "check "+c.name)
		check(t, suite.expect.Locator(page.GetByTestId("import-file-error")).ToContainText(c.want), "the import form says why: "+c.name)
		check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`/customers/import$`)), "still on the import form")
	}
}
