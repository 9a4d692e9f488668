package e2e

import (
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"
)

// A signed-in user sees their own name in the page header, and a reload keeps them signed in.
func TestSignInShowsUserNameAndSurvivesReload(t *testing.T) {
	users := []struct{ user, password, name string }{
		{salesUser, salesPassword, salesName},
		{backofficeUser, backofficePass, backofficeName},
	}
	for _, u := range users {
		t.Run(u.user, func(t *testing.T) {
			page := newPage(t)
			login(t, page, u.user, u.password)

			header := page.Locator("header")
			check(t, suite.expect.Locator(header).ToContainText(u.name), "the header shows the user's name")

			_, err := page.Reload()
			check(t, err, "reload")
			check(t, suite.expect.Locator(header).ToContainText(u.name), "after a reload the header still shows the user's name")
			if !onPortalPage(page.URL()) {
				t.Fatalf("after a reload the browser left the portal for %s", page.URL())
			}
			check(t, suite.expect.Locator(page.Locator("input[name=password]")).ToHaveCount(0),
				"after a reload no sign-in form is shown")
		})
	}
}

// Opening a protected URL while signed out leads through sign-in back to that exact URL.
func TestSignInReturnsToRequestedURL(t *testing.T) {
	page := newPage(t)
	const wanted = "/customers?q=abc"
	_, err := page.Goto(wanted)
	check(t, err, "open "+wanted)
	if onPortalPage(page.URL()) {
		t.Fatalf("a signed-out visit to %s was not sent to sign in (at %s)", wanted, page.URL())
	}

	signIn(t, page, salesUser, salesPassword)
	check(t, suite.expect.Page(page).ToHaveURL(exactURL(wanted)), "after signing in the browser is back on "+wanted)
	check(t, suite.expect.Locator(page.Locator("header")).ToContainText(salesName), "the header shows the user's name")
	check(t, suite.expect.Locator(page.GetByTestId("customer-q")).ToHaveValue("abc"), "the search box holds the query of the URL")
}

// After signing out, the back button does not show the protected page again: it is not served
// from the browser's cache (Cache-Control: no-store) and the server asks for sign-in.
func TestSignOutThenBackShowsNoProtectedContent(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)

	resp, err := page.Goto("/customers")
	check(t, err, "open /customers")
	if cc := resp.Headers()["cache-control"]; !strings.Contains(cc, "no-store") {
		t.Errorf("an authenticated page has Cache-Control %q, want no-store (the back button could show it after sign-out)", cc)
	}
	header := page.Locator("header")
	check(t, suite.expect.Locator(header).ToContainText(salesName), "signed in on /customers")

	signOut := page.GetByRole("button", playwright.PageGetByRoleOptions{Name: regexp.MustCompile(`(?i)^\s*(sign|log) ?out\s*$`)})
	check(t, signOut.Click(), "click Sign out")
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile("^"+regexp.QuoteMeta(portalURL("/auth/logged-out")))),
		"signing out lands on the signed-out page")
	check(t, suite.expect.Locator(page.GetByText(salesName)).ToHaveCount(0), "the signed-out page does not show the user")

	_, err = page.GoBack()
	check(t, err, "go back")
	check(t, suite.expect.Locator(page.Locator("input[name=username]")).ToBeVisible(),
		"going back after sign-out asks for sign-in")
	check(t, suite.expect.Locator(page.GetByText(salesName)).ToHaveCount(0),
		"going back after sign-out does not show the signed-in user")
}

// When the session has gone (here: all cookies cleared), an htmx request from a page (typing in
// the customer search box) sends the browser to sign in, and after signing in the user is back on
// the page they were on.
func TestExpiredSessionHTMXRequestLeadsToSignInAndBack(t *testing.T) {
	page := newPage(t)
	login(t, page, salesUser, salesPassword)
	_, err := page.Goto("/customers")
	check(t, err, "open /customers")
	check(t, suite.expect.Locator(page.Locator("header")).ToContainText(salesName), "signed in on /customers")
	search := page.GetByTestId("customer-q")
	check(t, suite.expect.Locator(search).ToBeVisible(), "the customer search box is shown")

	check(t, page.Context().ClearCookies(), "clear cookies (the session expires)")
	check(t, search.Fill("abc"), "type in the search box (an htmx request)")

	// A real navigation to the provider, not the sign-in page swapped into the old page.
	check(t, suite.expect.Page(page).ToHaveURL(regexp.MustCompile("^"+regexp.QuoteMeta(portalURL("/idp/")))),
		"an htmx request without a session sends the browser to the OpenID provider")
	signIn(t, page, salesUser, salesPassword)
	check(t, suite.expect.Page(page).ToHaveURL(exactURL("/customers")), "after signing in the browser is back on /customers")
	check(t, suite.expect.Locator(page.Locator("header")).ToContainText(salesName), "signed in again")
	check(t, suite.expect.Locator(page.GetByTestId("customer-q")).ToBeVisible(), "the customer search is usable again")
}
