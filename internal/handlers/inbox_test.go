package handlers

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/inbox"
)

// TestInboxCountPageOpenAndCrossOrigin: the page frame carries the inbox link with an empty count
// (loaded after the page, no read in the render); the count answers the number with its ETag and
// 304 while it stays; the inbox escapes what an item carries; another person cannot open the
// item; a cross-site POST changes nothing; opening the item goes to its page and reads it.
func TestInboxCountPageOpenAndCrossOrigin(t *testing.T) {
	t.Parallel()
	p := newPortal(t, portalOptions{inbox: true})
	sales := p.login(t, "sales", "sales-demo")
	ctx := context.Background()
	if err := p.inbox.Deliver(ctx, inbox.SignatureAnswered("demo-sales", 42, "C-42", `<script>alert(1)</script>`, "declined", "", time.Now())); err != nil {
		t.Fatal(err)
	}

	frame := parseHTML(t, p.get(t, sales, "/sessions", nil).body)
	count := frame.Find(`[data-testid="inbox-link"] [data-testid="inbox-count"]`)
	if count.Length() != 1 || count.AttrOr("data-live-poll", "") != "/inbox/count" || strings.TrimSpace(count.Text()) != "" {
		t.Fatalf("the header's inbox count: %d, poll %q, text %q", count.Length(), count.AttrOr("data-live-poll", ""), count.Text())
	}
	r := p.get(t, sales, "/inbox/count", htmx)
	if r.StatusCode != http.StatusOK || r.Header.Get("ETag") != `"1"` || !strings.Contains(r.body, `data-n="1"`) {
		t.Fatalf("count: %d %q %.200s", r.StatusCode, r.Header.Get("ETag"), r.body)
	}
	if r := p.get(t, sales, "/inbox/count", map[string]string{"HX-Request": "true", "If-None-Match": `"1"`}); r.StatusCode != http.StatusNotModified {
		t.Fatalf("unchanged count: %d, want 304", r.StatusCode)
	}

	page := p.get(t, sales, "/inbox", nil)
	if page.StatusCode != http.StatusOK || strings.Contains(page.body, "<script>alert") || !strings.Contains(page.body, "&lt;script&gt;") {
		t.Fatalf("inbox page %d, escaped: %.2000s", page.StatusCode, page.body)
	}
	doc := parseHTML(t, page.body)
	id := doc.Find(`[data-testid="inbox-item"]`).AttrOr("data-item-id", "")
	if len(id) != 32 {
		t.Fatalf("item id %q", id)
	}

	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": p.URL}
	evil := map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}
	for _, path := range []string{"/inbox/read-all", "/inbox/" + id + "/open", "/inbox/" + id + "/read", "/inbox/preferences"} {
		if r := p.do(t, sales, http.MethodPost, path, strings.NewReader("delivery=email"), evil); r.StatusCode != http.StatusForbidden {
			t.Errorf("cross-site POST %s: %d, want 403", path, r.StatusCode)
		}
	}
	backoffice := p.login(t, "backoffice", "backoffice-demo")
	if r := p.do(t, backoffice, http.MethodPost, "/inbox/"+id+"/open", nil, form); r.StatusCode != http.StatusNotFound {
		t.Errorf("another person opened the item: %d", r.StatusCode)
	}
	if n, _ := p.inbox.Unread(ctx, inbox.PersonKey("demo-sales")); n != 1 {
		t.Fatalf("unread %d after refused requests, want 1", n)
	}
	open := p.do(t, sales, http.MethodPost, "/inbox/"+id+"/open", nil, form)
	if open.StatusCode != http.StatusSeeOther || open.Header.Get("Location") != "/contracts/42" {
		t.Fatalf("open: %d to %q", open.StatusCode, open.Header.Get("Location"))
	}
	if r := p.get(t, sales, "/inbox/count", map[string]string{"HX-Request": "true", "If-None-Match": `"1"`}); r.StatusCode != http.StatusOK || !strings.Contains(r.body, `data-n="0"`) {
		t.Fatalf("count after opening: %d %.200s", r.StatusCode, r.body)
	}
}
