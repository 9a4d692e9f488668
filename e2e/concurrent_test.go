package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// Two people, one quote (issue 18): each test makes its own customer and quote, a second browser
// context is the other person (or a second tab is the same person), and every wait is a Playwright
// assertion.

// ccAcceptDialogs answers "OK" to hx-confirm questions.
func ccAcceptDialogs(page playwright.Page) {
	page.OnDialog(func(d playwright.Dialog) { _ = d.Accept() })
}

// ccOpenAs signs user in on a new browser context and opens path.
func ccOpenAs(t *testing.T, user, password, path string) playwright.Page {
	t.Helper()
	page := newPage(t)
	login(t, page, user, password)
	_, err := page.Goto(path)
	check(t, err, "open "+path)
	check(t, suite.expect.Locator(page.GetByTestId("quote-carts")).ToBeVisible(), "the quote is shown")
	ccAcceptDialogs(page)
	return page
}

// ccQuoteWithTwoCarts creates a customer and a quote with the cart "Head office" and a second cart
// of another offer type, as the rep, and returns the quote's path with the rep's page on it.
func ccQuoteWithTwoCarts(t *testing.T, page playwright.Page, prefix string) string {
	t.Helper()
	customer := createTestCustomer(t, page, prefix)
	path, _, tofIDs := createTestQuote(t, page, customer, "Head office")
	_, err := page.Goto(path)
	check(t, err, "open the quote")
	ccAcceptDialogs(page)
	tof := tofIDs[0]
	if len(tofIDs) > 1 {
		tof = tofIDs[1]
	}
	check(t, page.Locator(fmt.Sprintf(`[data-testid="quote-add-cart-tof"][hx-get*="tofId=%s&"]`, tof)).First().Click(), "open Add a cart")
	check(t, page.GetByTestId("add-cart-submit").Click(), "add the cart")
	check(t, suite.expect.Locator(page.GetByTestId("cart")).ToHaveCount(2), "the quote has two carts")
	return path
}

// The manager applies a discount and removes a cart while the rep looks at the old page; the rep's
// quantity change is not applied to a quote they have not seen: they see the manager's changes
// first, then confirm, and both changes are in the quote (no lost update).
func TestConcurrentDiscountThenQuantity(t *testing.T) {
	rep := newPage(t)
	login(t, rep, salesUser, salesPassword)
	path := ccQuoteWithTwoCarts(t, rep, "Concurrent")
	repCart := qtCartLocator(rep, "Head office")
	check(t, suite.expect.Locator(rep.GetByTestId("quote-applied-discount")).ToHaveCount(0), "no discount yet")

	manager := ccOpenAs(t, backofficeUser, backofficePass, path)
	check(t, manager.GetByTestId("quote-discounts-open").Click(), "manager opens the discounts")
	check(t, manager.Locator(`[data-testid="discount-option"] input[name=discountId]`).First().Check(), "manager ticks a discount")
	check(t, manager.GetByTestId("discounts-submit").Click(), "manager applies it")
	check(t, suite.expect.Locator(manager.GetByTestId("quote-applied-discount")).ToHaveCount(1), "the discount is applied")
	check(t, manager.GetByTestId("cart").Nth(1).GetByTestId("cart-remove").Click(), "manager removes the second cart")
	check(t, suite.expect.Locator(manager.GetByTestId("cart")).ToHaveCount(1), "one cart left")

	// The rep, on the page they loaded before, changes the quantity.
	input := repCart.GetByTestId("cart-quantity")
	check(t, input.Fill("3"), "rep types the quantity")
	check(t, input.Press("Enter"), "rep submits it")
	notice := rep.GetByTestId("conflict-notice")
	check(t, suite.expect.Locator(notice).ToBeVisible(), "the rep is told the quote changed")
	changes := rep.GetByTestId("conflict-changes")
	check(t, suite.expect.Locator(changes).ToContainText("applied"), "the discount is listed")
	check(t, suite.expect.Locator(changes).ToContainText("removed"), "the removed cart is listed")
	check(t, suite.expect.Locator(rep.GetByTestId("conflict-who")).ToContainText(v2Actor(t, backofficeUser, backofficePass, path)), "who changed it")
	check(t, suite.expect.Locator(rep.GetByTestId("conflict-pending")).ToContainText("to 3"), "the rep's change, not applied")
	check(t, suite.expect.Locator(rep.GetByTestId("cart")).ToHaveCount(1), "the rep sees the cart removed")
	check(t, suite.expect.Locator(rep.GetByTestId("quote-applied-discount")).ToHaveCount(1), "the rep sees the discount")
	check(t, suite.expect.Locator(input).ToHaveValue("1"), "the quantity was not changed")
	check(t, suite.expect.Locator(rep.Locator("#quote-summary .is-changed").First()).ToBeVisible(), "the changed total is highlighted")

	check(t, rep.GetByTestId("conflict-apply").Click(), "rep applies their change to the current quote")
	check(t, suite.expect.Locator(notice).ToHaveCount(0), "the notice goes")
	check(t, suite.expect.Locator(input).ToHaveValue("3"), "the quantity is applied")
	check(t, suite.expect.Locator(rep.GetByTestId("quote-applied-discount")).ToHaveCount(1), "the manager's discount is kept")

	// The manager's page learns of the rep's change without reloading.
	check(t, suite.expect.Locator(manager.GetByTestId("live-notice")).ToContainText("quantity changed"), "the manager is told")
	check(t, manager.GetByTestId("live-notice-show").Click(), "manager shows the changes")
	check(t, suite.expect.Locator(qtCartLocator(manager, "Head office").GetByTestId("cart-quantity")).ToHaveValue("3"), "the manager sees quantity 3")
}

// One user, two tabs: the cart removed in one tab is acted on in the other; nothing is sent for a
// cart that is gone, and the tab shows the quote as it is.
func TestConcurrentRemovedCartInAnotherTab(t *testing.T) {
	first := newPage(t)
	login(t, first, salesUser, salesPassword)
	path := ccQuoteWithTwoCarts(t, first, "Two tabs")
	second, err := first.Context().NewPage()
	check(t, err, "open a second tab")
	_, err = second.Goto(path)
	check(t, err, "open the quote in the second tab")
	ccAcceptDialogs(second)
	check(t, suite.expect.Locator(second.GetByTestId("cart")).ToHaveCount(2), "the second tab shows two carts")

	check(t, first.BringToFront(), "back to the first tab")
	check(t, qtCartLocator(first, "Head office").GetByTestId("cart-remove").Click(), "remove the cart in the first tab")
	check(t, suite.expect.Locator(first.GetByTestId("cart")).ToHaveCount(1), "the first tab shows one cart")

	check(t, second.BringToFront(), "switch to the second tab")
	input := qtCartLocator(second, "Head office").GetByTestId("cart-quantity")
	check(t, input.Fill("4"), "type a quantity for the removed cart")
	check(t, input.Press("Enter"), "submit it")
	check(t, suite.expect.Locator(second.GetByTestId("conflict-pending")).ToContainText("no longer in the quote"), "nothing to apply")
	check(t, suite.expect.Locator(second.GetByTestId("conflict-apply")).ToHaveCount(0), "no apply button")
	check(t, suite.expect.Locator(second.GetByTestId("cart")).ToHaveCount(1), "the second tab shows the quote as it is")
	check(t, suite.expect.Locator(second.GetByTestId("conflict-changes")).ToContainText("removed"), "the removal is listed")

	// The other cart still works in the second tab (the quote's configuration session is shared).
	other := second.GetByTestId("cart").First()
	qtSetQuantity(t, other, 2)
	check(t, suite.expect.Locator(second.GetByTestId("session-expired")).ToHaveCount(0), "no session problem")
}

// The live notice appears within 5 s of another user's change, without taking the focus or the
// text the user is typing.
func TestConcurrentLiveNoticeKeepsFocusAndTyping(t *testing.T) {
	rep := newPage(t)
	login(t, rep, salesUser, salesPassword)
	customer := createTestCustomer(t, rep, "Live notice")
	path, _, _ := createTestQuote(t, rep, customer, "Head office")
	_, err := rep.Goto(path)
	check(t, err, "open the quote")

	manager := ccOpenAs(t, backofficeUser, backofficePass, path)
	check(t, rep.BringToFront(), "the rep's window is in front")
	input := qtCartLocator(rep, "Head office").GetByTestId("cart-quantity")
	check(t, input.Click(), "the rep clicks the quantity")
	check(t, input.Fill(""), "clears it")
	check(t, input.PressSequentially("17"), "and types, without submitting")

	qtSetQuantity(t, qtCartLocator(manager, "Head office"), 2)

	banner := rep.GetByTestId("live-notice")
	check(t, suite.expect.Locator(banner).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(5000)}),
		"the rep's page shows the notice within 5 s")
	check(t, suite.expect.Locator(banner).ToContainText("changed by "+v2Actor(t, backofficeUser, backofficePass, path)), "who")
	check(t, suite.expect.Locator(banner).ToContainText("quantity changed"), "what")
	check(t, suite.expect.Locator(input).ToBeFocused(), "the focus stays in the quantity")
	check(t, suite.expect.Locator(input).ToHaveValue("17"), "the typed text is kept")
	check(t, input.PressSequentially("5"), "the rep goes on typing")
	check(t, suite.expect.Locator(input).ToHaveValue("175"), "typing goes on in the same field")

	check(t, rep.GetByTestId("live-notice-show").Click(), "Show changes")
	check(t, suite.expect.Locator(banner).ToHaveCount(0), "the notice goes")
	check(t, suite.expect.Locator(qtCartLocator(rep, "Head office").GetByTestId("cart-quantity-was")).ToBeVisible(), "the change is highlighted")
	check(t, suite.expect.Locator(input).ToHaveValue("2"), "the page shows the manager's quantity")
	text, _ := rep.GetByTestId("live-notice-slot").TextContent()
	if strings.TrimSpace(text) != "" {
		t.Errorf("the notice slot is not empty: %q", text)
	}
}

// A contract archived by one user while another has it open: the other's page says so within 5 s and
// loses its signature and archive actions at once (issue 25),
// and its own actions after a reload reflect it; the archiving user's page shows no notice of their
// own change.
func TestConcurrentContractArchivedWhileOpen(t *testing.T) {
	rep := newPage(t)
	login(t, rep, salesUser, salesPassword)
	docsAcceptDialogs(rep)
	_, quotePath := docsCreateQuote(t, rep, "Archived")
	region := docsOpenDocuments(t, rep, quotePath)
	check(t, region.Locator(`[data-testid="generate-contract"]`).Click(), "generate the contract")
	check(t, suite.expect.Locator(rep.Locator(`[data-testid="generate-result"]`)).ToContainText("was generated"), "the contract is generated")
	check(t, rep.Locator(`[data-testid="contract-link"]`).Click(), "open the contract")
	check(t, suite.expect.Locator(rep.Locator(`[data-testid="archive-button"]`)).ToBeVisible(), "the contract page")
	contractPath := strings.TrimPrefix(rep.URL(), suite.portalURL)

	other := newPage(t)
	login(t, other, backofficeUser, backofficePass)
	_, err := other.Goto(contractPath)
	check(t, err, "the colleague opens the contract")
	check(t, suite.expect.Locator(other.Locator(`[data-testid="archive-button"]`)).ToBeVisible(), "not archived yet for the colleague")
	search := other.Locator(`[data-testid="signature-email"]`)
	check(t, search.Fill("sig"), "the colleague starts typing a signer's e-mail")

	check(t, rep.BringToFront(), "back to the rep")
	check(t, rep.Locator(`[data-testid="archive-button"]`).Click(), "archive (and confirm)")
	check(t, suite.expect.Locator(rep.Locator(`[data-testid="archive-result"]`)).ToBeVisible(), "archived")

	banner := other.GetByTestId("live-notice")
	check(t, suite.expect.Locator(banner).ToBeVisible(playwright.LocatorAssertionsToBeVisibleOptions{Timeout: playwright.Float(5000)}),
		"the colleague's page shows the notice within 5 s")
	check(t, suite.expect.Locator(banner).ToContainText("contract archived"), "what")
	check(t, suite.expect.Locator(banner).ToContainText("changed by "+v2Actor(t, salesUser, salesPassword, quotePath)), "who")
	// The contract is archived: its signature and archive actions leave the page at once (issue 25),
	// so the half-typed request cannot be sent into an error.
	check(t, suite.expect.Locator(other.Locator(`[data-testid="signature-archived"]`)).ToBeVisible(), "the signature actions are gone at once")
	check(t, suite.expect.Locator(search).ToHaveCount(0), "the signature form is gone")
	check(t, suite.expect.Locator(other.Locator(`[data-testid="archive-button"]`)).ToHaveCount(0), "the archive button is gone")
	check(t, suite.expect.Locator(other.GetByTestId("contract-status")).ToHaveAttribute("data-status", "Archived"), "the badge follows")
	clickSettled(t, other, other.GetByTestId("live-notice-show"), "Show changes (reload)")
	check(t, suite.expect.Locator(other.Locator(`[data-testid="archive-details"]`)).ToBeVisible(), "the colleague sees the archive")
	check(t, suite.expect.Locator(other.Locator(`[data-testid="signature-archived"]`)).ToBeVisible(), "no more signature requests offered")

	// The rep's own page tells them nothing about their own change.
	check(t, suite.expect.Locator(rep.GetByTestId("live-notice")).ToHaveCount(0), "no notice of one's own change")
}
