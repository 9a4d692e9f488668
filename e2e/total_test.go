package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// The quote's total where the person is (issue 26): after every action on a quote, wherever the
// person scrolled to, the new total is in sight (the bar stuck to the top of the window) and the
// toast states it; applying discounts closes the panel and puts the focus on the summary.

// totalTag is the state of the quote the page shows: #quote-digest's data-tag, which every answer
// that changes the quote replaces (out of band, in the same swap as the summary and the bar).
func totalTag(t *testing.T, page playwright.Page) string {
	t.Helper()
	tag, err := page.Locator("#quote-digest").GetAttribute("data-tag")
	check(t, err, "read the quote's state")
	return tag
}

// totalExpectInSight waits for the action's answer to be swapped in (the page shows a state other
// than before: reading the summary any earlier reads the total that is about to change, issue 33),
// then checks that the total bar is in the viewport and says the summary's net total, and that the
// action's toast states it too.
func totalExpectInSight(t *testing.T, page playwright.Page, before, what string) {
	t.Helper()
	check(t, suite.expect.Locator(page.Locator("#quote-digest")).Not().ToHaveAttribute("data-tag", before), what+": the answer is on the page")
	bar := page.GetByTestId("quote-total-bar")
	check(t, suite.expect.Locator(bar).ToBeInViewport(), what+": the total is in sight")
	net, err := page.Locator(`#quote-summary [data-testid="quote-net-recurring"]`).TextContent()
	check(t, err, what+": read the summary's monthly total")
	net = strings.TrimSpace(net)
	check(t, suite.expect.Locator(bar).ToContainText(net), what+": the bar says the summary's total "+net)
	toast := page.Locator(`[data-testid="toast"][data-level="success"]`).Last()
	check(t, suite.expect.Locator(toast).ToContainText(net), what+": the toast states the new total")
	// Toasts pile up; the next action's is then the last one.
	check(t, page.Locator(`[data-testid="toast"] [data-dismiss="toast"]`).Last().Click(), what+": dismiss the toast")
}

func TestQuoteTotalInSightAfterEachAction(t *testing.T) {
	page := newPageWith(t, pageOptions{width: 1280, height: 720})
	login(t, page, salesUser, salesPassword)
	page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
	customer := createTestCustomer(t, page, "Totals")
	path, _, tofIDs := createTestQuote(t, page, customer, "Head office")
	second, err := page.Request().Post(portalURL(path+"/carts"), playwright.APIRequestContextPostOptions{
		Form: map[string]any{"tofId": tofIDs[len(tofIDs)-1]}, Headers: map[string]string{"HX-Request": "true"},
	})
	check(t, err, "add a second cart")
	if second.Status() != 200 {
		t.Fatalf("adding a second cart answered %d", second.Status())
	}
	visit(t, page, path, `[data-testid="cart"]`)
	check(t, suite.expect.Locator(page.GetByTestId("cart")).ToHaveCount(2), "two carts")
	cart := page.GetByTestId("cart").Last()

	// The quantity of the last cart, far down the page.
	quantity := cart.GetByTestId("cart-quantity")
	before := totalTag(t, page)
	check(t, quantity.Fill("3"), "type a quantity")
	check(t, cart.GetByTestId("cart-quantity-submit").Click(), "update the quantity")
	check(t, suite.expect.Locator(page.GetByTestId("cart").Last().GetByTestId("cart-quantity")).ToHaveValue("3"), "the quantity is 3")
	totalExpectInSight(t, page, before, "after the quantity")

	// The price list applies as soon as it is chosen.
	pricelist := page.GetByTestId("cart").Last().GetByTestId("cart-pricelist")
	options, err := pricelist.Locator("option").Count()
	check(t, err, "count the price lists")
	if options > 1 {
		chosen, err := pricelist.Locator("option").Nth(1).GetAttribute("value")
		check(t, err, "a second price list")
		before = totalTag(t, page)
		_, err = pricelist.SelectOption(playwright.SelectOptionValues{Values: &[]string{chosen}})
		check(t, err, "choose the second price list")
		check(t, suite.expect.Locator(page.Locator(`[data-testid="toast"][data-level="success"]`).Last()).ToBeVisible(), "choosing applies it")
		check(t, suite.expect.Locator(page.GetByTestId("cart").Last().GetByTestId("cart-pricelist")).ToHaveValue(chosen), "the cart has the price list")
		totalExpectInSight(t, page, before, "after the price list")
	}

	// Discounts: the panel closes, the focus goes to the summary, the total is in sight.
	check(t, page.GetByTestId("quote-discounts-open").Click(), "open the discounts")
	check(t, page.Locator(`[data-testid="discount-option"] input[name=discountId]`).First().Check(), "tick a discount")
	before = totalTag(t, page)
	check(t, page.GetByTestId("discounts-submit").Click(), "apply the discounts")
	check(t, suite.expect.Locator(page.GetByTestId("quote-applied-discount")).ToHaveCount(1), "the discount is applied")
	check(t, suite.expect.Locator(page.GetByTestId("discounts-form")).ToHaveCount(0), "the discounts panel closes")
	check(t, suite.expect.Locator(page.Locator("#quote-summary-title")).ToBeFocused(), "the focus is on the summary")
	totalExpectInSight(t, page, before, "after the discounts")

	// Removing the last cart, at the bottom of it.
	before = totalTag(t, page)
	check(t, page.GetByTestId("cart").Last().GetByTestId("cart-remove").Click(), "remove the last cart")
	check(t, suite.expect.Locator(page.GetByTestId("cart")).ToHaveCount(1), "one cart left")
	totalExpectInSight(t, page, before, "after removing a cart")

	// Scrolled to the bottom of the page, the total is still in sight.
	_, err = page.Evaluate(`() => window.scrollTo(0, document.documentElement.scrollHeight)`)
	check(t, err, "scroll to the bottom")
	check(t, suite.expect.Locator(page.GetByTestId("quote-total-bar")).ToBeInViewport(), "the total is in sight at the bottom of the page")
	check(t, suite.expect.Locator(page.GetByTestId("quote-total-bar")).ToHaveText(regexp.MustCompile(`\d`)), "and says an amount")
}
