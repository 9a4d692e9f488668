package handlers

import (
	"net/http"
	"testing"

	"github.com/cpqportal/portal/internal/v2sim"
)

// TestLiveNotice304OnlyAfterTheViewersOwnRead: a viewer who never read the quote with their own
// token is not answered 304 from the tag another viewer's read put in the shared cache: their
// poll reads the quote with their token first, and when that read is refused, they get the
// refusal, never "not modified" (which would tell them the quote exists and how it stands).
func TestLiveNotice304OnlyAfterTheViewersOwnRead(t *testing.T) {
	t.Parallel()
	p, sim := newQuotePortal(t, nil)
	rep := newQuoteUser(t, p, sim)
	stranger := &quoteUser{t: t, p: p, sim: sim, c: p.login(t, "backoffice", "backoffice-demo")}
	quoteURL := rep.createQuote(1, 1, 11, 102, "Probed")
	page, _ := rep.page(quoteURL)
	tag := page.Find("#quote-digest").AttrOr("data-tag", "")
	poll := func(u *quoteUser) response {
		return p.do(t, u.c, http.MethodGet, quoteURL+"/changes", nil, map[string]string{"If-None-Match": `"` + tag + `"`, "HX-Request": "true"})
	}
	// The stranger's token cannot read the quote (the v2 API answers 403 to their read).
	sim.SetFault("cpq.toflist", v2sim.Fault{Status: http.StatusForbidden, Times: 1})
	if resp := poll(stranger); resp.StatusCode == http.StatusNotModified || resp.StatusCode < 400 {
		t.Fatalf("a viewer whose own read is refused got %d from the shared tag", resp.StatusCode)
	}
	// A viewer whose own read succeeds gets 304; within the next minutes their polls read nothing.
	mark := stranger.mark()
	if resp := poll(stranger); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("after an own read: %d", resp.StatusCode)
	}
	if n := len(stranger.requests(mark)); n != 1 {
		t.Fatalf("the first poll of a new viewer read upstream %d times, want 1 (their own read)", n)
	}
	mark = stranger.mark()
	if resp := poll(stranger); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("again: %d", resp.StatusCode)
	}
	if n := len(stranger.requests(mark)); n != 0 {
		t.Fatalf("a viewer who read lately made %d reads", n)
	}
}
