package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// The sessions page lists the user's sessions (this one marked, another user's never), and its two
// actions end other sessions only: "Sign out this one" by the handle shown, "Sign out all others".
func TestSessionsPage(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{sqlite: true})
	mine := sp.login(t, "sales", "sales-demo")
	second := sp.login(t, "sales", "sales-demo")
	third := sp.login(t, "sales", "sales-demo")
	stranger := sp.login(t, "backoffice", "backoffice-demo")
	form := map[string]string{"Origin": sp.URL, "Content-Type": "application/x-www-form-urlencoded"}

	page := sp.get(t, mine, "/sessions", nil)
	doc := parseHTML(t, page.body)
	rows := doc.Find(`[data-testid="session-row"]`)
	if page.StatusCode != http.StatusOK || rows.Length() != 3 || doc.Find(`[data-testid="session-row"][data-current="true"]`).Length() != 1 {
		t.Fatalf("sessions page: %d, %d rows, want 3 with one current:\n%s", page.StatusCode, rows.Length(), page.body)
	}
	handles := doc.Find(`input[name="session"]`).Map(func(_ int, s *goquery.Selection) string { return s.AttrOr("value", "") })
	if len(handles) != 2 {
		t.Fatalf("want a 'Sign out this one' form per other session, got %d", len(handles))
	}
	// Another user cannot end these sessions with the handles.
	out := sp.do(t, stranger, http.MethodPost, "/sessions/revoke", strings.NewReader(url.Values{"session": {handles[0]}}.Encode()), form)
	if out.StatusCode != http.StatusSeeOther || !strings.HasSuffix(out.Header.Get("Location"), "done=gone") {
		t.Fatalf("another user's revoke: %d %q", out.StatusCode, out.Header.Get("Location"))
	}
	signedIn := func(client *http.Client) bool { return sp.get(t, client, "/sessions", nil).StatusCode == http.StatusOK }
	if !signedIn(second) || !signedIn(third) {
		t.Fatal("another user's revoke ended a session")
	}

	out = sp.do(t, mine, http.MethodPost, "/sessions/revoke", strings.NewReader(url.Values{"session": {handles[0]}}.Encode()), form)
	if out.StatusCode != http.StatusSeeOther || !strings.HasSuffix(out.Header.Get("Location"), "done=revoked") {
		t.Fatalf("revoke: %d %q", out.StatusCode, out.Header.Get("Location"))
	}
	if left := parseHTML(t, sp.get(t, mine, "/sessions", nil).body).Find(`[data-testid="session-row"]`).Length(); left != 2 {
		t.Fatalf("%d sessions after revoking one, want 2", left)
	}
	if signedIn(second) == signedIn(third) {
		t.Fatal("'Sign out this one' did not end exactly one other session")
	}

	out = sp.do(t, mine, http.MethodPost, "/sessions/revoke-others", nil, form)
	if out.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke others: %d", out.StatusCode)
	}
	if signedIn(second) || signedIn(third) {
		t.Fatal("'Sign out all others' left another session")
	}
	if !signedIn(mine) || !signedIn(stranger) {
		t.Fatal("'Sign out all others' ended this session or another user's")
	}
	notice := parseHTML(t, sp.get(t, mine, "/sessions?done=others", nil).body).Find(`[data-testid="sessions-notice"]`).Text()
	if notice != "All your other sessions were signed out." {
		t.Errorf("notice %q", notice)
	}
}

// With the cookie store the page says why it lists only this session, and "Sign out all others"
// still ends the others.
func TestSessionsPageWithTheCookieStore(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{})
	mine := sp.login(t, "sales", "sales-demo")
	other := sp.login(t, "sales", "sales-demo")
	doc := parseHTML(t, sp.get(t, mine, "/sessions", nil).body)
	if doc.Find(`[data-testid="session-row"]`).Length() != 1 || doc.Find(`[data-testid="sessions-not-listed"]`).Length() != 1 {
		t.Fatal("the cookie store's sessions page should show this session and say why")
	}
	out := sp.do(t, mine, http.MethodPost, "/sessions/revoke-others", nil, map[string]string{"Origin": sp.URL})
	if out.StatusCode != http.StatusSeeOther {
		t.Fatalf("revoke others: %d", out.StatusCode)
	}
	if sp.get(t, other, "/customers", nil).StatusCode != http.StatusSeeOther {
		t.Error("the other cookie session survived 'Sign out all others'")
	}
	if sp.get(t, mine, "/customers", nil).StatusCode != http.StatusOK {
		t.Error("'Sign out all others' ended this session")
	}
}
