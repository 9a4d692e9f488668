package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/playwright-community/playwright-go"
)

// TestWorkContractsSelectAllAndWorklistRange (issue 34): on the contracts list, "Select all on this
// page" ticks the page's contracts (unticking one unticks it) and sends them all to the batch
// check, as does "Archive all N matching" for every contract of the list's filters; the audit
// worklist lists the audits of every quote changed today without an id typed.
func TestWorkContractsSelectAllAndWorklistRange(t *testing.T) {
	page := newPage(t)
	login(t, page, backofficeUser, backofficePass)
	customer := createTestCustomer(t, page, "Select all")
	var numbers, quoteIDs []string
	for range 3 {
		quotePath, quoteID, _ := createTestQuote(t, page, customer, "Select all")
		resp, err := generateContract(t, page.Request(), portalURL(quotePath))
		check(t, err, "generate a contract")
		body, _ := resp.Text()
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
		check(t, err, "parse the contract page")
		number := strings.TrimSpace(strings.TrimPrefix(doc.Find(`h1[data-testid="page-title"]`).Text(), "Contract"))
		if resp.Status() != 200 || number == "" {
			t.Fatalf("generating the contract of %s: %d", quotePath, resp.Status())
		}
		numbers, quoteIDs = append(numbers, number), append(quoteIDs, quoteID)
	}
	list := fmt.Sprintf("/work/contracts?customer=%d", customer.ID)
	visit(t, page, list, `[data-testid="work-row"]`)
	check(t, suite.expect.Locator(page.Locator(`[data-testid="work-row"]`)).ToHaveCount(3), "the customer's three contracts")
	selectPage := page.GetByTestId("work-select-page")
	boxes := page.Locator(`[data-testid="work-select"]`)
	check(t, selectPage.Check(), "select all on this page")
	for i := range 3 {
		check(t, suite.expect.Locator(boxes.Nth(i)).ToBeChecked(), fmt.Sprintf("row %d ticked", i+1))
	}
	check(t, boxes.Nth(1).Uncheck(), "untick one row")
	check(t, suite.expect.Locator(selectPage).Not().ToBeChecked(), "select all is no longer ticked")
	check(t, selectPage.Check(), "select all again")
	check(t, page.GetByTestId("work-archive-selected").Click(), "Archive selected")
	// All three were never sent for signature: the check leaves them out and puts the numbers in
	// the box, so including them is one tick away.
	batchExpectNumbers(t, page, numbers, "select all on this page")

	visit(t, page, list, `[data-testid="work-row"]`)
	check(t, suite.expect.Locator(page.GetByTestId("work-archive-matching")).ToHaveText("Archive all 3 matching"), "the count of the matching contracts")
	check(t, page.GetByTestId("work-archive-matching").Click(), "Archive all 3 matching")
	batchExpectNumbers(t, page, numbers, "archive all matching")

	// The worklist: every quote changed today, no id typed.
	visit(t, page, "/audits/worklist", `[data-testid="worklist-form"]`)
	check(t, page.GetByTestId("worklist-changed").Check(), "every quote changed in these days")
	today := time.Now().UTC().Format("2006-01-02")
	check(t, page.GetByTestId("worklist-from").Fill(today), "from today")
	check(t, page.GetByTestId("worklist-to").Fill(today), "to today")
	check(t, page.GetByTestId("worklist-submit").Click(), "show the audits")
	check(t, suite.expect.Locator(page.GetByTestId("worklist-changed-note")).ToContainText("Quotes changed in these days"), "how many quotes changed")
	table := page.GetByTestId("worklist-table")
	for _, id := range quoteIDs {
		check(t, suite.expect.Locator(table.Locator(`a[href="/audits/`+id+`"]`).First()).ToBeVisible(), "the audit of quote "+id)
	}
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile(`changed=1`)), "the range is in the link")
}

// batchExpectNumbers waits for the batch check's answer and expects every number in its box.
func batchExpectNumbers(t *testing.T, page playwright.Page, numbers []string, what string) {
	t.Helper()
	box := page.GetByTestId("batch-numbers")
	check(t, suite.expect.Locator(box).ToBeVisible(), what+": the batch check answered")
	for _, n := range numbers {
		check(t, suite.expect.Locator(box).ToHaveValue(regexp.MustCompile(regexp.QuoteMeta(n))), what+": "+n+" was sent")
	}
}
