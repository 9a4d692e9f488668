package e2e

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/playwright-community/playwright-go"

	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// startExtraPortal starts a portal of the test's own (fresh data directory) with extraEnv and
// returns its URL; it stops when the test ends, printing its log if the test failed.
func startExtraPortal(t *testing.T, extraEnv ...string) string {
	t.Helper()
	return startExtraPortalProcess(t, extraEnv...).url
}

// startExtraPortalProcess is startExtraPortal for a test that also needs the portal's embedded
// simulator (its simURL).
func startExtraPortalProcess(t *testing.T, extraEnv ...string) *portalProcess {
	t.Helper()
	p, err := startPortal(suite.portalBin, extraEnv...)
	if p != nil {
		t.Cleanup(func() {
			if t.Failed() {
				p.printLog(os.Stderr)
			}
			p.stop()
		})
	}
	if err != nil {
		t.Fatalf("starting a portal with %v: %v", extraEnv, err)
	}
	return p
}

// signedInPageAt opens base's customer list in a new browser context and signs in.
func signedInPageAt(t *testing.T, base, user, password string) playwright.Page {
	t.Helper()
	page := newPageAt(t, base)
	if _, err := page.Goto("/customers"); err != nil {
		t.Fatalf("open /customers: %v", err)
	}
	signInAt(t, page, base, user, password)
	return page
}

// expectSignedIn opens /customers in page and expects the user's name in the header.
func expectSignedIn(t *testing.T, page playwright.Page, name, why string) {
	t.Helper()
	_, err := page.Goto("/customers")
	check(t, err, "open /customers")
	check(t, suite.expect.Locator(page.GetByTestId("user-name")).ToHaveText(name), why)
}

// expectSignedOut opens /customers in page and expects the sign-in form, with no trace of the user.
func expectSignedOut(t *testing.T, page playwright.Page, name, why string) {
	t.Helper()
	_, err := page.Goto("/customers")
	check(t, err, "open /customers")
	// The portal says why before the sign-in form (issue 26).
	check(t, suite.expect.Locator(page.GetByTestId("notice-message")).ToContainText("Your session was ended"), why+": the reason is given")
	check(t, page.GetByTestId("notice-link").Click(), why+": sign in again")
	check(t, suite.expect.Locator(page.Locator("input[name=username]")).ToBeVisible(), why)
	check(t, suite.expect.Locator(page.GetByText(name)).ToHaveCount(0), why+" (the user's name is not shown)")
}

// With each session store, a session cookie copied out of a browser before it signed out opens
// nothing afterwards: the copy lands on the sign-in form.
func TestCopiedCookieOpensNothingAfterSignOut(t *testing.T) {
	stores := []struct {
		name string
		env  func(t *testing.T) []string
	}{
		{"database (default, SQLite)", func(*testing.T) []string { return nil }},
		{"cookie", func(*testing.T) []string { return []string{"PORTAL_SESSION_STORE=cookie"} }},
		{"database on PostgreSQL", func(t *testing.T) []string {
			return []string{"PORTAL_SESSION_STORE=database", "PORTAL_DATABASE_URL=" + statedbtest.PostgresURL(t)}
		}},
	}
	for _, store := range stores {
		t.Run(store.name, func(t *testing.T) {
			base := startExtraPortal(t, store.env(t)...)
			owner := signedInPageAt(t, base, salesUser, salesPassword)

			cookies, err := owner.Context().Cookies()
			check(t, err, "read the browser's cookies")
			var copied []playwright.OptionalCookie
			for _, c := range cookies {
				if strings.HasPrefix(c.Name, "portal_") {
					copied = append(copied, playwright.OptionalCookie{Name: c.Name, Value: c.Value, Domain: playwright.String(c.Domain), Path: playwright.String(c.Path)})
				}
			}
			if len(copied) == 0 {
				t.Fatalf("no session cookie to copy among %d cookies", len(cookies))
			}
			thief := newPageAt(t, base)
			check(t, thief.Context().AddCookies(copied), "put the copied cookies in another browser")
			expectSignedIn(t, thief, salesName, "control: the copied cookie opens the portal before sign-out")

			check(t, owner.GetByTestId("logout").Click(), "click Sign out")
			check(t, suite.expect.Page(owner).ToHaveURL(regexp.MustCompile("^"+regexp.QuoteMeta(base+"/auth/logged-out"))), "signed out")

			expectSignedOut(t, thief, salesName, "after sign-out the copied cookie leads to the sign-in form")
		})
	}
}

// The sessions page lists the user's sessions (this one marked); "Sign out this one" and "Sign out
// all others" end the other browsers' sessions and leave this one.
func TestSessionsPageSignsOutOtherBrowsers(t *testing.T) {
	base := startExtraPortal(t)
	mine := signedInPageAt(t, base, backofficeUser, backofficePass)
	second := signedInPageAt(t, base, backofficeUser, backofficePass)
	third := signedInPageAt(t, base, backofficeUser, backofficePass)

	check(t, mine.GetByTestId("sessions-link").Click(), "open the sessions page from the header")
	rows := mine.GetByTestId("session-row")
	check(t, suite.expect.Locator(rows).ToHaveCount(3), "three sessions are listed")
	check(t, suite.expect.Locator(mine.Locator(`[data-testid="session-row"][data-current="true"]`)).ToHaveCount(1), "one is marked as this session")
	check(t, suite.expect.Locator(mine.GetByTestId("session-current")).ToHaveText("This session"), "the mark reads 'This session'")

	check(t, mine.Locator(`[data-testid="session-row"]:not([data-current])`).First().GetByTestId("session-revoke").Click(), "click 'Sign out this one' on another session")
	check(t, suite.expect.Locator(mine.GetByTestId("sessions-notice")).ToHaveText("The session was signed out."), "the page confirms")
	check(t, suite.expect.Locator(rows).ToHaveCount(2), "two sessions are left")

	check(t, mine.GetByTestId("sessions-revoke-others").Click(), "click 'Sign out all others'")
	check(t, suite.expect.Locator(mine.GetByTestId("sessions-notice")).ToHaveText("All your other sessions were signed out."), "the page confirms")
	check(t, suite.expect.Locator(rows).ToHaveCount(1), "only this session is left")
	check(t, suite.expect.Locator(mine.Locator(`[data-testid="session-row"][data-current="true"]`)).ToHaveCount(1), "and it is this one")

	expectSignedOut(t, second, backofficeName, "the second browser is signed out")
	expectSignedOut(t, third, backofficeName, "the third browser is signed out")
	expectSignedIn(t, mine, backofficeName, "this browser is still signed in")
}

// Signing out ends the session at the embedded OpenID provider, which tells the portal through
// back-channel logout: the same user's session in another browser ends at once, not at its next
// token refresh.
func TestSignOutAtTheProviderEndsTheOtherBrowsersSession(t *testing.T) {
	base := startExtraPortal(t)
	first := signedInPageAt(t, base, salesUser, salesPassword)
	second := signedInPageAt(t, base, salesUser, salesPassword)
	expectSignedIn(t, second, salesName, "control: the second browser is signed in")

	check(t, first.GetByTestId("logout").Click(), "click Sign out in the first browser")
	check(t, suite.expect.Page(first).ToHaveURL(regexp.MustCompile("^"+regexp.QuoteMeta(base+"/auth/logged-out"))), "the first browser is signed out")
	expectSignedOut(t, second, salesName, "the second browser's session was ended by the provider's back-channel logout")
}
