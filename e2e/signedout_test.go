package e2e

import (
	"testing"
)

// A tab left open on a quote whose session is signed out from another browser ("Sign out all
// others") says so (issue 26): its live poll meets the end of the session and a toast gives the
// reason; the next click leads to the page that says why, then to the sign-in form.
func TestRevokedSessionsOpenTabSaysWhy(t *testing.T) {
	tab := newPage(t)
	login(t, tab, salesUser, salesPassword)
	customer := createTestCustomer(t, tab, "Revoked")
	quotePath, _, _ := createTestQuote(t, tab, customer, "Left open")
	visit(t, tab, quotePath, `[data-testid="cart"]`)

	other := newPage(t)
	login(t, other, salesUser, salesPassword)
	visit(t, other, "/sessions", `[data-testid="sessions-revoke-others"]`)
	check(t, other.GetByTestId("sessions-revoke-others").Click(), "sign out all other sessions")
	check(t, suite.expect.Locator(other.GetByTestId("sessions-notice")).ToHaveText("All your other sessions were signed out."), "the sessions page confirms")

	toast := tab.Locator(`[data-testid="toast"][data-level="error"]`)
	check(t, suite.expect.Locator(toast).ToContainText("You were signed out"), "the open tab says the session ended")

	check(t, tab.GetByTestId("cart").First().GetByTestId("cart-quantity-submit").Click(), "click an action in the open tab")
	check(t, suite.expect.Locator(tab.GetByTestId("notice-message")).ToContainText("Your session was ended"), "the page says why")
	check(t, tab.GetByTestId("notice-link").Click(), "sign in again")
	check(t, suite.expect.Locator(tab.Locator("input[name=username]")).ToBeVisible(), "the sign-in form")
}
