package e2e

import (
	"strings"
	"sync/atomic"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// The quote journey by keyboard (issue 33): moving through a menu takes no action, and a full page
// load puts the focus on the page's main heading.

// TestKeyboardPricelistArrowKeysDoNotReprice: the down arrow on the price-list menu changes what it
// shows and nothing else (no request); Enter applies the price list shown.
func TestKeyboardPricelistArrowKeysDoNotReprice(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	customer := createTestCustomer(t, page, "Keyboard")
	path, _, _ := createTestQuote(t, page, customer, "Keyboard")
	var sent atomic.Int32
	page.OnRequest(func(r playwright.Request) {
		if strings.HasSuffix(r.URL(), "/pricelist") {
			sent.Add(1)
		}
	})
	visit(t, page, path, `[data-testid="cart"]`)
	pricelist := page.GetByTestId("cart").First().GetByTestId("cart-pricelist")
	options, err := pricelist.Locator("option").Count()
	check(t, err, "count the price lists")
	if options < 2 {
		t.Skipf("the configurator offers %d price list(s): nothing to move through", options)
	}
	before, err := pricelist.InputValue()
	check(t, err, "the price list in use")
	tag := totalTag(t, page)

	check(t, pricelist.Focus(), "focus the price-list menu")
	check(t, pricelist.Press("ArrowDown"), "press the down arrow")
	check(t, suite.expect.Locator(pricelist).Not().ToHaveValue(before), "the menu shows the next price list")
	form := page.GetByTestId("cart").First().Locator("form:has([data-testid=cart-pricelist])")
	check(t, suite.expect.Locator(form).ToHaveAttribute("data-choosing", ""), "the form waits for a choice")
	check(t, suite.expect.Locator(form.GetByTestId("cart-pricelist-submit")).ToBeVisible(), "its button is offered")
	check(t, suite.expect.Locator(page.Locator("#quote-digest")).ToHaveAttribute("data-tag", tag), "the quote is unchanged")
	if n := sent.Load(); n != 0 {
		t.Fatalf("the down arrow sent %d price-list request(s)", n)
	}

	// Enter is a choice: applied (one request, the quote's state changes).
	chosen, err := pricelist.InputValue()
	check(t, err, "the price list shown")
	check(t, pricelist.Press("Enter"), "press Enter")
	check(t, suite.expect.Locator(page.Locator("#quote-digest")).Not().ToHaveAttribute("data-tag", tag), "Enter applies the price list")
	check(t, suite.expect.Locator(page.GetByTestId("cart").First().GetByTestId("cart-pricelist")).ToHaveValue(chosen), "the cart has the price list chosen")
	if n := sent.Load(); n != 1 {
		t.Errorf("%d price-list requests, want 1 (Enter's)", n)
	}
}

// TestKeyboardFocusOnMainHeadingAfterLoad: after a full load of the quote page the focus is on its
// main heading and the page has not scrolled; an address with a #fragment keeps the browser's own
// behaviour.
func TestKeyboardFocusOnMainHeadingAfterLoad(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	customer := createTestCustomer(t, page, "Heading")
	path, _, _ := createTestQuote(t, page, customer, "Heading")
	visit(t, page, path, `[data-testid="cart"]`)
	heading := page.Locator("main h1")
	check(t, suite.expect.Locator(heading).ToBeFocused(), "the focus is on the page's heading")
	check(t, suite.expect.Locator(heading).ToHaveAttribute("tabindex", "-1"), "the heading is focusable by script only")
	scrolled, err := page.Evaluate(`() => window.scrollY === 0`)
	check(t, err, "read the scroll position")
	if top, _ := scrolled.(bool); !top {
		t.Error("the page scrolled on load")
	}

	_, err = page.Goto(path + "#quote-summary")
	check(t, err, "open the quote at its summary")
	_, err = page.Reload()
	check(t, err, "load it in full")
	check(t, suite.expect.Locator(page.GetByTestId("quote-summary")).ToBeVisible(), "the summary is shown")
	check(t, suite.expect.Locator(heading).Not().ToBeFocused(), "a #fragment keeps its place")
}
