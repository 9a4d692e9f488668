package handlers

import (
	"net/http"
	"strings"
	"testing"
)

// TestExportsInFlightArePerUserAndBounded: with the user's export slots all taken (downloads
// still running), another export answers 429 with a sentence saying what to do; once one ends,
// the export works; another user is not held back.
func TestExportsInFlightArePerUserAndBounded(t *testing.T) {
	t.Parallel()
	e := newDocsEnv(t, docsOptions{})
	var releases []func()
	for range exportsPerUser {
		release, ok := e.p.h.exports.Acquire("demo-sales")
		if !ok {
			t.Fatal("a slot of an idle user")
		}
		releases = append(releases, release)
	}
	r := e.p.get(t, e.user, "/customers/export?format=csv", nil)
	text := strings.Join(strings.Fields(parseHTML(t, r.body).Find("main").Text()), " ")
	if r.StatusCode != http.StatusTooManyRequests || !strings.Contains(text, "You already have 2 exports being prepared") {
		t.Fatalf("over the export quota: %d %q", r.StatusCode, text)
	}
	other := e.p.login(t, "backoffice", "backoffice-demo")
	if r := e.p.get(t, other, "/customers/export?format=csv", nil); r.StatusCode != http.StatusOK {
		t.Fatalf("another user's export: %d", r.StatusCode)
	}
	releases[0]()
	if r := e.p.get(t, e.user, "/customers/export?format=csv", nil); r.StatusCode != http.StatusOK {
		t.Fatalf("after one export ended: %d", r.StatusCode)
	}
}
