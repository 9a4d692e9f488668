package e2e

import (
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
	"github.com/xuri/excelize/v2"

	"github.com/cpqportal/portal/internal/i18n"
)

// Saved views and list exports (docs/work-index.md "Saved views", "Exports").

// openListTools opens the list's "Save or export these filters" disclosure.
func openListTools(t *testing.T, page playwright.Page) {
	t.Helper()
	more := page.GetByTestId("work-tools-more")
	check(t, suite.expect.Locator(more).ToBeVisible(), "the list's saved views and exports")
	if open, err := more.Evaluate("el => el.open", nil); err != nil || open != true {
		check(t, more.Locator("summary").Click(), "open Save or export")
	}
	check(t, suite.expect.Locator(page.GetByTestId("work-view-name")).ToBeVisible(), "the save form is shown")
}

// A rep filters the quotes list, saves the filters under a name; the view is on the list (marked
// current), survives signing out and in, appears in the palette, and opening it applies its
// filters. The list with its saved views and /work/views are axe clean.
func TestSavedViewSurvivesSignOutAndAppliesFromPalette(t *testing.T) {
	src := axeSource(t)
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	customer := createTestCustomer(t, page, "SavedView")
	_, quoteID, _ := createTestQuote(t, page, customer, "Saved view")
	name := fmt.Sprintf("Drafts of %s %d", customer.Name, rand.IntN(1e6))

	workGoto(t, page, "/work/quotes")
	check(t, page.GetByTestId("work-find").Fill(customer.Name), "find the customer's quotes")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`q=`)), "the search is in the URL")
	check(t, page.GetByTestId("work-stage-draft").Check(), "only drafts")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`stage=draft`)), "the stage is in the URL")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="work-row"]`)).ToHaveCount(1), "the customer's one draft")
	openListTools(t, page)
	check(t, page.GetByTestId("work-view-name").Fill(""), "no name")
	check(t, page.GetByTestId("work-view-save").Click(), "save without a name")
	check(t, suite.expect.Locator(page.GetByTestId("work-view-name-error")).ToHaveText("Enter a name for the view."), "an empty name is refused")
	checkAxe(t, page, src, "the quotes list with a saved view's problem")
	check(t, page.GetByTestId("work-view-name").Fill(name), "name the view")
	check(t, page.GetByTestId("work-view-save").Click(), "save the view")
	saved := page.Locator(`[data-testid="work-view"]`).Filter(playwright.LocatorFilterOptions{HasText: name})
	check(t, suite.expect.Locator(saved).ToHaveAttribute("aria-current", "true"), "the new view is listed as the filters shown")
	checkAxe(t, page, src, "the quotes list with its saved views")

	workGoto(t, page, "/work/quotes")
	check(t, suite.expect.Locator(saved).ToBeVisible(), "the view is on the unfiltered list")
	check(t, suite.expect.Locator(saved).Not().ToHaveAttribute("aria-current", "true"), "not as the filters shown")

	signOut := page.GetByRole("button", playwright.PageGetByRoleOptions{Name: regexp.MustCompile(`(?i)^\s*(sign|log) ?out\s*$`)})
	check(t, signOut.Click(), "sign out")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile("^"+regexp.QuoteMeta(portalURL("/auth/logged-out")))), "signed out")
	login(t, page, salesUser, salesPassword)

	workGoto(t, page, "/work/views")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="saved-view"][data-name="`+name+`"]`)).ToBeVisible(), "the view survived signing out")
	checkAxe(t, page, src, "the saved views page")

	// From the palette: Ctrl+K, part of the name, Enter.
	workGoto(t, page, "/customers")
	openPaletteWithKeys(t, page)
	check(t, page.Keyboard().Type(customer.Name), "type the view's name")
	option := page.Locator(`#palette [role="option"][data-kind="view"]`)
	check(t, suite.expect.Locator(option).ToContainText(name), "the palette offers the saved view")
	check(t, option.Click(), "open the view from the palette")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`/work/quotes\?.*stage=draft`)), "the view's filters are applied")
	check(t, suite.expect.Locator(page.GetByTestId("work-find")).ToHaveValue(customer.Name), "the search is filled in")
	check(t, suite.expect.Locator(page.GetByTestId("work-stage-draft")).ToBeChecked(), "the stage is checked")
	check(t, suite.expect.Locator(workRow(page, quoteID)).ToBeVisible(), "the view lists the quote")
	check(t, suite.expect.Locator(saved).ToHaveAttribute("aria-current", "true"), "and is marked as the filters shown")

	// Renamed, then deleted, on /work/views.
	workGoto(t, page, "/work/views")
	item := page.Locator(`[data-testid="saved-view"][data-name="` + name + `"]`)
	check(t, item.GetByTestId("saved-view-rename-name").Fill(name+" (renamed)"), "a new name")
	check(t, item.GetByTestId("saved-view-rename").Click(), "rename")
	renamed := page.Locator(`[data-testid="saved-view"][data-name="` + name + ` (renamed)"]`)
	check(t, suite.expect.Locator(renamed).ToBeVisible(), "renamed")
	check(t, renamed.GetByTestId("saved-view-delete").Click(), "delete")
	check(t, suite.expect.Locator(renamed).ToHaveCount(0), "deleted")
}

// The list's saved views and exports on a 375 px phone, in every language: axe clean, nothing
// scrolls sideways.
func TestSavedViewPhoneEveryLanguage(t *testing.T) {
	src := axeSource(t)
	page := newPageWith(t, pageOptions{width: 375, height: 812, touch: true})
	login(t, page, salesUser, salesPassword)
	workGoto(t, page, "/work/quotes")
	openListTools(t, page)
	check(t, page.GetByTestId("work-view-name").Fill(fmt.Sprintf("SavedView phone %d", rand.IntN(1e6))), "name a view")
	check(t, page.GetByTestId("work-view-save").Click(), "save it")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="work-view"][aria-current="true"]`)).ToBeVisible(), "saved")
	for _, lang := range i18n.Languages {
		check(t, page.Context().AddCookies([]playwright.OptionalCookie{{
			Name: i18n.CookieName, Value: lang.String(), URL: playwright.String(suite.portalURL),
		}}), "choose "+lang.String())
		for _, path := range []string{"/work/quotes", "/work/views"} {
			what := path + " on a phone in " + lang.String()
			visit(t, page, path, `[data-testid="page-title"]`)
			check(t, suite.expect.Locator(page.Locator("html")).ToHaveAttribute("lang", lang.String()), what)
			if path == "/work/quotes" {
				openListTools(t, page)
			}
			checkAxe(t, page, src, what)
			problem, err := page.Evaluate(overflowJS)
			check(t, err, "measure "+what)
			if problem != "" {
				t.Errorf("%s scrolls sideways: %v", what, problem)
			}
		}
	}
}

// An exported quote list opens in a spreadsheet with the amounts as numbers and the dates as
// dates (the Pipeline's list export): downloaded through the list's own link, read with excelize.
func TestPipelineExportQuoteListTyped(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	customer := createTestCustomer(t, page, "Export")
	_, quoteID, _ := createTestQuote(t, page, customer, "Export cart")

	workGoto(t, page, "/work/quotes")
	check(t, page.GetByTestId("work-find").Fill(customer.Name), "the customer's quotes")
	check(t, suite.expect.Locator(page.Locator(`[data-testid="work-row"]`)).ToHaveCount(1), "one quote")
	openListTools(t, page)
	check(t, suite.expect.Locator(page.GetByTestId("work-export-xlsx")).ToHaveAttribute("href", regexp.MustCompile(`q=`)), "the export follows the filters")
	data, fileName := downloadBytes(t, page, page.GetByTestId("work-export-xlsx"), "the quotes XLSX")
	if !strings.HasSuffix(fileName, ".xlsx") {
		t.Errorf("file name %q", fileName)
	}
	const sheet = "Quotes"
	rows, book := parseXLSX(t, data, sheet)
	if len(rows) != 2 || rows[1][0] != quoteID || rows[1][2] != customer.Name || rows[0][6] != "one-off net (EUR)" {
		t.Fatalf("XLSX rows %q", rows)
	}
	numFmt := func(cell string) int {
		id, _ := book.GetCellStyle(sheet, cell)
		style, err := book.GetStyle(id)
		check(t, err, "the style of "+cell)
		return style.NumFmt
	}
	raw := func(cell string) string {
		v, _ := book.GetCellValue(sheet, cell, excelize.Options{RawCellValue: true})
		return v
	}
	for _, cell := range []string{"A2", "B2", "G2", "H2", "I2", "J2"} {
		if typ, _ := book.GetCellType(sheet, cell); typ != excelize.CellTypeNumber && typ != excelize.CellTypeUnset {
			t.Errorf("%s is not a number: %v %q", cell, typ, raw(cell))
		}
		if _, err := strconv.ParseFloat(raw(cell), 64); err != nil {
			t.Errorf("%s reads %q", cell, raw(cell))
		}
	}
	if numFmt("G2") != 4 || numFmt("H2") != 4 || numFmt("I2") != 4 || rows[0][8] != "pipeline value (EUR)" {
		t.Errorf("amounts are not money: %d %d %d %q", numFmt("G2"), numFmt("H2"), numFmt("I2"), rows[0][8])
	}
	// The pipeline value is the one-off plus 12 months of the monthly total (issue 41).
	oneOff, _ := strconv.ParseFloat(raw("G2"), 64)
	monthly, _ := strconv.ParseFloat(raw("H2"), 64)
	if value, _ := strconv.ParseFloat(raw("I2"), 64); math.Abs(value-(oneOff+12*monthly)) > 0.01 {
		t.Errorf("pipeline value %v, want %v", value, oneOff+12*monthly)
	}
	// Excel's day 46023 is 1 January 2026: the quote was changed today.
	if serial, err := strconv.ParseFloat(raw("J2"), 64); err != nil || serial < 46023 || numFmt("J2") != 22 {
		t.Errorf("the last change is not a date: %q format %d", raw("J2"), numFmt("J2"))
	}

	csvData, _ := downloadBytes(t, page, page.GetByTestId("work-export-csv"), "the quotes CSV")
	csvRows := parseCSV(t, csvData)
	if len(csvRows) != 2 || csvRows[1][0] != quoteID || !regexp.MustCompile(`^\d+\.\d\d$`).MatchString(csvRows[1][6]) {
		t.Errorf("CSV rows %q", csvRows)
	}
}
