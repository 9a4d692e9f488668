package handlers

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// The live notice's poll: 304 while the page shows the quote as it is (If-None-Match: the page's
// change tag); after another user's change a banner with who and what and a new ETag; polls of many
// viewers share one upstream read per interval.
func TestQuoteLiveNoticePoll(t *testing.T) {
	t.Parallel()
	p, sim := newQuotePortal(t, nil)
	rep := newQuoteUser(t, p, sim)
	manager := &quoteUser{t: t, p: p, sim: sim, c: p.login(t, "backoffice", "backoffice-demo")}
	quoteURL := rep.createQuote(1, 1, 11, 102, "Polled")
	page, _ := rep.page(quoteURL)
	tag := page.Find("#quote-digest").AttrOr("data-tag", "")
	if tag == "" || page.Find(`[data-live-poll="`+quoteURL+`/changes"]`).Length() != 1 {
		t.Fatalf("the page has no live region or change tag (%q)", tag)
	}
	_, since, _ := strings.Cut(page.Find("#quote-digest").AttrOr("value", ""), ";u=")
	poll := func(u *quoteUser, etag string) response {
		return p.do(t, u.c, http.MethodGet, quoteURL+"/changes?since="+since, nil, map[string]string{"If-None-Match": `"` + etag + `"`, "HX-Request": "true"})
	}
	mark := rep.mark()
	if resp := poll(rep, tag); resp.StatusCode != http.StatusNotModified {
		t.Fatalf("unchanged quote: %d %.300s", resp.StatusCode, resp.body)
	}
	if n := len(rep.requests(mark)); n != 0 {
		t.Errorf("a poll right after the page was shown read upstream %d times, want 0 (the page's own read is shared)", n)
	}

	// 50 viewers poll at once, several times: one shared upstream read per interval at most.
	mark = rep.mark()
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			for range 3 {
				if resp := poll(rep, tag); resp.StatusCode != http.StatusNotModified {
					t.Errorf("poll: %d", resp.StatusCode)
				}
			}
		})
	}
	wg.Wait()
	if n := len(rep.requests(mark)); n > 2 {
		t.Errorf("150 polls read upstream %d times, want at most one per interval", n)
	}

	// The manager applies a discount: the rep's next poll shows the banner.
	_, mDigest := manager.page(quoteURL)
	quoteMust(t, "manager's discount", manager.post(quoteURL+"/discounts", url.Values{"discountId": {"1"}, "prev": {mDigest}}), http.StatusOK)
	resp := poll(rep, tag)
	doc := quoteMust(t, "poll after the change", resp, http.StatusOK)
	text := quoteText(doc.Find(`[data-testid="live-notice-text"]`))
	if !strings.Contains(text, "changed by") || !strings.Contains(text, "discounts applied") {
		t.Errorf("banner: %q", text)
	}
	newTag := strings.Trim(resp.Header.Get("ETag"), `"`)
	if newTag == "" || newTag == tag {
		t.Fatalf("ETag %q after the change", newTag)
	}
	if resp := poll(rep, newTag); resp.StatusCode != http.StatusNotModified {
		t.Errorf("poll with the new tag: %d", resp.StatusCode)
	}
	// "Show changes": the current quote, highlighted, and the notice cleared.
	show := quoteMust(t, "show changes", rep.get(quoteURL+"/current?prev="+url.QueryEscape(page.Find("#quote-digest").AttrOr("value", "")), true), http.StatusOK)
	if show.Find(`[data-testid="quote-applied-discount"]`).Length() != 1 || show.Find(".is-changed").Length() == 0 {
		t.Error("Show changes does not show the discount highlighted")
	}
	if got := show.Find("#quote-digest").AttrOr("data-tag", ""); got != newTag {
		t.Errorf("Show changes gives tag %q, want %q", got, newTag)
	}
}
