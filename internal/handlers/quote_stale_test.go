package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/v2sim"
)

// Two people, one quote (issue 18): the rep's page is stale after the manager applied a discount
// and removed a cart. The rep's quantity change is not sent upstream; the answer shows the current
// quote with the manager's changes, and the rep's change offered again. Confirming applies it.
func TestQuoteStaleMutationIsNotSentUpstream(t *testing.T) {
	t.Parallel()
	// The simulator's audit has whole seconds (A10): its clock moves a second between the rep's
	// last change and the manager's, as people's changes do, so which changes the notice lists does
	// not depend on where the real clock's second turns.
	clock := &quoteClock{now: time.Now()}
	p, sim := newQuotePortal(t, clock)
	rep := newQuoteUser(t, p, sim)
	manager := &quoteUser{t: t, p: p, sim: sim, c: p.login(t, "backoffice", "backoffice-demo")}

	quoteURL := rep.createQuote(1, 1, 11, 102, "Head office")
	_, digest := rep.page(quoteURL)
	upd := quoteMust(t, "second cart", rep.post(quoteURL+"/carts", url.Values{"tofId": {"12"}, "prev": {digest}}), http.StatusOK)
	repDigest := upd.Find("#quote-digest").AttrOr("value", "")
	var carts []string
	upd.Find(`[data-testid="cart"]`).Each(func(_ int, s *goquery.Selection) { carts = append(carts, s.AttrOr("data-basket-id", "")) })
	if len(carts) != 2 {
		t.Fatalf("carts: %v", carts)
	}

	// The manager, on their own page: 10 % loyalty discount, then removes the second cart.
	clock.Advance(time.Second)
	_, mDigest := manager.page(quoteURL)
	upd = quoteMust(t, "manager's discount", manager.post(quoteURL+"/discounts", url.Values{"discountId": {"1"}, "prev": {mDigest}}), http.StatusOK)
	mDigest = upd.Find("#quote-digest").AttrOr("value", "")
	quoteMust(t, "manager removes a cart", manager.del(quoteURL+"/carts/"+carts[1], url.Values{"prev": {mDigest}}), http.StatusOK)

	// The rep, still on the old page, changes the first cart's quantity.
	mark := rep.mark()
	resp := rep.post(quoteURL+"/carts/"+carts[0]+"/quantity", url.Values{"quantity": {"3"}, "prev": {repDigest}})
	doc := quoteMust(t, "stale quantity change", resp, http.StatusConflict)
	if got := quoteEndpoints(rep.requests(mark)); slices.Contains(got, "cpq.quantity") {
		t.Fatalf("the stale change was sent upstream: %v", got)
	}
	if resp.Header.Get("HX-Retarget") != "#quote-carts" {
		t.Errorf("the conflict answers into %q, want every cart", resp.Header.Get("HX-Retarget"))
	}
	notice := doc.Find(`[data-testid="conflict-notice"]`)
	changes := quoteText(notice.Find(`[data-testid="conflict-changes"]`))
	for _, want := range []string{"Discount “Loyalty", "applied", "Cart no. " + carts[1] + " removed", "Quote total monthly"} {
		if !strings.Contains(changes, want) {
			t.Errorf("changes %q do not say %q", changes, want)
		}
	}
	if who := quoteText(notice.Find(`[data-testid="conflict-who"]`)); !strings.Contains(who, "changed by ") || !strings.Contains(who, "discounts applied") || !strings.Contains(who, "cart removed") {
		t.Errorf("who changed it: %q", who)
	}
	if got := quoteText(notice.Find(`[data-testid="conflict-pending"]`)); !strings.Contains(got, "quantity") || !strings.Contains(got, "to 3") {
		t.Errorf("the rep's change is not described: %q", got)
	}
	if doc.Find(`[data-testid="cart"]`).Length() != 1 || doc.Find(`[data-testid="quote-applied-discount"]`).Length() != 1 {
		t.Error("the answer does not show the current quote (one cart, the discount)")
	}
	if doc.Find(`.is-changed`).Length() == 0 {
		t.Error("the other person's changes are not highlighted")
	}

	// "Apply my change to the current quote" sends the same change with the current fingerprint.
	replay := url.Values{}
	notice.Find(`form input[type=hidden]`).Each(func(_ int, s *goquery.Selection) { replay.Add(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	if action := notice.Find("form").AttrOr("hx-post", ""); action != quoteURL+"/carts/"+carts[0]+"/quantity" {
		t.Fatalf("the confirmation posts to %q", action)
	}
	mark = rep.mark()
	resp = rep.post(quoteURL+"/carts/"+carts[0]+"/quantity", replay)
	doc = quoteMust(t, "confirmed quantity change", resp, http.StatusOK)
	if got := quoteEndpoints(rep.requests(mark)); !slices.Contains(got, "cpq.quantity") {
		t.Fatalf("the confirmed change was not sent: %v", got)
	}
	// Monthly: 3 × €29.90 = €89.70, loyalty 10 % → €80.73: both changes are in.
	quoteWantText(t, "net monthly with both changes", doc.Find(`#quote-summary [data-testid="quote-net-recurring"]`), quoteEUR(8073))
	if resp.Header.Get("HX-Retarget") != "#quote-carts" {
		t.Errorf("the confirmed change answers into %q, want every cart (the notice's target)", resp.Header.Get("HX-Retarget"))
	}
}

// A forged or missing fingerprint is "unknown state": the user is asked to confirm (409 with the
// current quote), never an error page; a removed cart acted on offers nothing to apply; the stale
// check's read failing refuses the action with a retry message.
func TestQuoteStaleCheckUnknownGoneAndFailedRead(t *testing.T) {
	t.Parallel()
	p, sim := newQuotePortal(t, nil)
	u := newQuoteUser(t, p, sim)
	quoteURL := u.createQuote(1, 1, 11, 102, "Forged")
	page, digest := u.page(quoteURL)
	cart := page.Find(`[data-testid="cart"]`).AttrOr("data-basket-id", "")

	for forged, unknown := range map[string]bool{"": true, "not a digest": true, "q=" + strings.Repeat("9", 30): true, "q=1,2,3": false} {
		mark := u.mark()
		doc := quoteMust(t, "forged "+forged, u.post(quoteURL+"/carts/"+cart+"/quantity", url.Values{"quantity": {"2"}, "prev": {forged}}), http.StatusConflict)
		text := quoteText(doc.Find(`[data-testid="conflict-notice"]`))
		if text == "" || unknown != strings.Contains(text, "could not tell which version") {
			t.Errorf("forged %q: no confirmation asked: %.500s", forged, doc.Text())
		}
		if slices.Contains(quoteEndpoints(u.requests(mark)), "cpq.quantity") {
			t.Errorf("forged %q: the change was sent", forged)
		}
	}

	// The cart is removed (another tab); acting on it again offers nothing to apply.
	upd := quoteMust(t, "remove in tab 1", u.del(quoteURL+"/carts/"+cart, url.Values{"prev": {digest}}), http.StatusOK)
	_ = upd
	mark := u.mark()
	doc := quoteMust(t, "quantity in tab 2", u.post(quoteURL+"/carts/"+cart+"/quantity", url.Values{"quantity": {"2"}, "prev": {digest}}), http.StatusConflict)
	if slices.Contains(quoteEndpoints(u.requests(mark)), "cpq.quantity") {
		t.Error("a change of a removed cart was sent")
	}
	if doc.Find(`[data-testid="conflict-apply"]`).Length() != 0 || !strings.Contains(quoteText(doc.Find(`[data-testid="conflict-pending"]`)), "no longer in the quote") {
		t.Errorf("a removed cart offers to apply the change: %.800s", doc.Text())
	}

	// The read before the action fails: refused, never applied blind.
	sim.SetFault("cpq.toflist", v2sim.Fault{Status: http.StatusServiceUnavailable})
	mark = u.mark()
	resp := u.post(quoteURL+"/discounts", url.Values{"discountId": {"1"}, "prev": {digest}})
	if resp.StatusCode < 500 || !strings.Contains(resp.body, "not applied") {
		t.Errorf("failed stale check: %d %.500s", resp.StatusCode, resp.body)
	}
	if slices.Contains(quoteEndpoints(u.requests(mark)), "cpq.applydiscounts") {
		t.Error("the discounts were applied without the check")
	}
}
