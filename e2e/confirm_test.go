package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Confirmations state the facts as they are when the person confirms (issue 33): the question is
// read from the v2 API when they click, not rendered with the page.

// TestOfferConfirmationShowsTotalsChangedInAnotherTab: the quote page is open in one tab; in a second
// tab the same person sets a line's prices to 0; back in the first tab (not reloaded), "Generate
// contract" asks with the new totals, and the contract is generated.
func TestOfferConfirmationShowsTotalsChangedInAnotherTab(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	_, quotePath := docsCreateQuote(t, page, "Confirm")
	region := docsOpenDocuments(t, page, quotePath)
	questions := make(chan string, 4)
	page.OnDialog(func(d playwright.Dialog) {
		questions <- d.Message()
		_ = d.Accept()
	})

	// The second tab: the first line's prices set to 0.
	other, err := page.Context().NewPage()
	check(t, err, "open a second tab")
	_, err = other.Goto(quotePath)
	check(t, err, "open the quote in the second tab")
	oneOff := other.Locator(`#quote-summary [data-testid="quote-net-activation"]`)
	monthly := other.Locator(`#quote-summary [data-testid="quote-net-recurring"]`)
	check(t, suite.expect.Locator(oneOff).ToBeVisible(), "the second tab shows the quote's total")
	oldOneOff := qtText(t, oneOff, "the one-off total")
	oldMonthly := qtText(t, monthly, "the monthly total")
	line := other.GetByTestId("line").First()
	check(t, line.Locator("summary").Click(), "open the reprice form")
	check(t, line.GetByTestId("reprice-activation").Fill("0"), "one-off unit price 0")
	check(t, line.GetByTestId("reprice-recurring").Fill("0"), "monthly unit price 0")
	check(t, line.GetByTestId("reprice-submit").Click(), "save the prices")
	check(t, suite.expect.Locator(other.GetByTestId("line").First().GetByTestId("line-repriced")).ToBeVisible(), "the line is repriced")
	check(t, suite.expect.Locator(monthly).Not().ToHaveText(oldMonthly), "the monthly total changed")
	newOneOff := qtText(t, oneOff, "the one-off total")
	newMonthly := qtText(t, monthly, "the monthly total")
	if newOneOff == oldOneOff && newMonthly == oldMonthly {
		t.Fatalf("the totals did not change (%s, %s)", newOneOff, newMonthly)
	}

	// The first tab still shows the page as rendered; its confirmation states the quote now.
	check(t, page.BringToFront(), "back to the first tab")
	check(t, region.GetByTestId("generate-contract").Click(), "click Generate contract")
	var question string
	select {
	case question = <-questions:
	case <-time.After(15 * time.Second):
		t.Fatal("Generate contract asked nothing")
	}
	if !strings.Contains(question, newOneOff+" one-off") || !strings.Contains(question, newMonthly+" monthly") {
		t.Errorf("the confirmation %q does not state the totals now (%s one-off, %s monthly)", question, newOneOff, newMonthly)
	}
	if newMonthly != oldMonthly && strings.Contains(question, oldMonthly+" monthly") {
		t.Errorf("the confirmation %q states the totals rendered with the page", question)
	}
	check(t, suite.expect.Locator(page.GetByTestId("generate-result")).ToContainText("was generated"), "the contract is generated")
}
