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

// TestConfirmCustomerOwnersAndProfileChangedInAnotherTab: the customer page is open in one tab; in
// a second tab the same person adds an owner and deletes a profile; back in the first tab (not
// reloaded), "Replace all owners" asks naming the owner added elsewhere, and deleting the profile
// says it no longer exists and sends nothing.
func TestConfirmCustomerOwnersAndProfileChangedInAnotherTab(t *testing.T) {
	page := newPage(t)
	questions := make(chan string, 8)
	page.OnDialog(func(d playwright.Dialog) {
		questions <- d.Message()
		_ = d.Accept()
	})
	login(t, page, backofficeUser, backofficePass) // no owner: the customer starts without one
	name := "Confirmed " + custUnique() + " S.r.l."
	path := custCreate(t, page, name, custTaxID(), 0)
	owners := page.Locator(`[data-testid="owner"]`)
	custOpenOwnerForms(t, page)
	check(t, page.Locator(`[data-testid="owner-add-id"]`).Fill("1002"), "type owner 1002")
	check(t, page.Locator(`[data-testid="owner-add-submit"]`).Click(), "add owner 1002")
	check(t, suite.expect.Locator(owners).ToHaveCount(1), "one owner")
	rows := page.Locator(`[data-testid="profile-row"]`)
	_, err := page.Locator(`[data-testid="profile-type"]`).SelectOption(playwright.SelectOptionValues{Values: &[]string{"BILLING"}})
	check(t, err, "choose the profile type")
	check(t, page.Locator(`[data-testid="profile-contact-name"]`).Fill("Ada Lovelace"), "type the contact")
	check(t, page.Locator(`[data-testid="profile-submit"]`).Click(), "add the profile")
	check(t, suite.expect.Locator(rows).ToHaveCount(1), "the profile is listed")

	// The second tab: owner 1003 added, the profile deleted.
	other, err := page.Context().NewPage()
	check(t, err, "open a second tab")
	other.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
	_, err = other.Goto(path)
	check(t, err, "open the customer in the second tab")
	custOpenOwnerForms(t, other)
	check(t, other.Locator(`[data-testid="owner-add-id"]`).Fill("1003"), "type owner 1003 in the second tab")
	check(t, other.Locator(`[data-testid="owner-add-submit"]`).Click(), "add owner 1003 in the second tab")
	check(t, suite.expect.Locator(other.Locator(`[data-testid="owner"]`)).ToHaveCount(2), "two owners in the second tab")
	check(t, other.Locator(`[data-testid="profile-row"] [data-testid="profile-delete"]`).Click(), "delete the profile in the second tab")
	check(t, suite.expect.Locator(other.Locator(`[data-testid="profiles-empty"]`)).ToBeVisible(), "the profile is gone in the second tab")

	// The first tab still shows one owner; its question names both owners as they are now.
	check(t, page.BringToFront(), "back to the first tab")
	check(t, suite.expect.Locator(owners).ToHaveCount(1), "the first tab was not reloaded")
	ask := func(what string) string {
		t.Helper()
		select {
		case q := <-questions:
			return q
		case <-time.After(15 * time.Second):
			t.Fatalf("%s asked nothing", what)
			return ""
		}
	}
	custOpenOwnerForms(t, page)
	replace := page.Locator(`[data-testid="owners-replace-form"]`)
	check(t, replace.Locator("input").Fill("1004"), "type owner 1004")
	check(t, replace.Locator(`[data-testid="owners-replace-submit"]`).Click(), "replace all owners")
	question := ask("Replace all owners")
	for _, want := range []string{name, "(1002)", "(1003)", "by 1004"} {
		if !strings.Contains(question, want) {
			t.Errorf("the confirmation %q does not state %q", question, want)
		}
	}
	check(t, suite.expect.Locator(owners).ToHaveCount(1), "one owner after the replace")
	check(t, suite.expect.Locator(owners.First()).ToHaveAttribute("data-owner-id", "1004"), "owner 1004")

	check(t, rows.First().Locator(`[data-testid="profile-delete"]`).Click(), "delete the profile deleted elsewhere")
	if q := ask("Delete"); !strings.Contains(q, "no longer exists") {
		t.Errorf("deleting a profile deleted elsewhere says %q", q)
	}
	check(t, suite.expect.Locator(rows).ToHaveCount(1), "nothing was sent: the first tab still lists it until it is read again")
}
