package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// TestRecentItemsOnQuotesContractsAndPalette: a quote and a contract the user opened are listed
// (with customer and total) on the Quotes page above "Start a quote", on the Contracts page above
// the look-up box and in the palette, and they are still there after signing out and in again.
func TestRecentItemsOnQuotesContractsAndPalette(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	_, quotePath := docsCreateQuote(t, page, "Recent")
	quoteID := quotePath[strings.LastIndex(quotePath, "/")+1:]
	_, err := page.Goto(quotePath)
	check(t, err, "open the quote")
	customerName, err := page.GetByTestId("quote-customer").TextContent()
	if err != nil || strings.TrimSpace(customerName) == "" {
		customerName = ""
	}
	contract, err := generateContract(t, page.Request(), portalURL(quotePath))
	check(t, err, "generate the contract")
	contractPath := strings.TrimPrefix(contract.URL(), suite.portalURL)
	_, err = page.Goto(contractPath)
	check(t, err, "open the contract")
	title, err := page.GetByTestId("page-title").TextContent()
	check(t, err, "the contract's title")
	number := strings.TrimSpace(strings.TrimPrefix(title, "Contract"))

	checkLists := func(when string) {
		t.Helper()
		check(t, page.GetByTestId("nav-quotes").Click(), "open Quotes "+when)
		row := page.Locator(`[data-testid="quote-recent-row"]`).First()
		check(t, suite.expect.Locator(row.GetByTestId("quote-recent-link")).ToHaveText("Quote "+quoteID), "the quote is the most recent "+when)
		check(t, suite.expect.Locator(row).ToContainText(regexp.MustCompile(`€[\d,.]+ one-off, €[\d,.]+ monthly`)), "with its total "+when)
		if customerName != "" {
			check(t, suite.expect.Locator(row).ToContainText(strings.TrimSpace(customerName)), "with its customer "+when)
		}
		// Above the start form.
		recentBox, err := page.GetByTestId("quote-recent").BoundingBox()
		check(t, err, "where the recent quotes are")
		startBox, err := page.GetByTestId("quote-start").BoundingBox()
		check(t, err, "where the start form is")
		if recentBox.Y >= startBox.Y {
			t.Errorf("recent quotes at y=%v, start form at y=%v: want the list above", recentBox.Y, startBox.Y)
		}

		check(t, page.GetByTestId("nav-contracts").Click(), "open Contracts "+when)
		crow := page.Locator(`[data-testid="contract-recent-row"]`).First()
		check(t, suite.expect.Locator(crow.GetByTestId("contract-recent-link")).ToHaveText("Contract "+number), "the contract is listed "+when)
		check(t, crow.GetByTestId("contract-recent-link").Click(), "open it from the list")
		check(t, suite.expect.Page(page).ToHaveURL(exactURL(contractPath)), "the link leads to the contract")

		_, err = page.Goto("/palette")
		check(t, err, "open the palette page")
		check(t, suite.expect.Locator(page.Locator("main")).ToContainText("Contract "+number), "the palette offers the contract "+when)
		check(t, suite.expect.Locator(page.Locator("main")).ToContainText("Quote "+quoteID), "the palette offers the quote "+when)
	}
	checkLists("after opening them")

	signOut := page.GetByRole("button", playwright.PageGetByRoleOptions{Name: regexp.MustCompile(`(?i)^\s*(sign|log) ?out\s*$`)})
	check(t, signOut.Click(), "sign out")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile("^"+regexp.QuoteMeta(portalURL("/auth/logged-out")))), "signed out")
	login(t, page, salesUser, salesPassword)
	checkLists("after signing in again")
}
