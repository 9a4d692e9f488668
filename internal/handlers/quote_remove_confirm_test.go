package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Removing a cart or an add-on asks with the quote as it is when the person clicks: the cart's
// quantity and totals after a change made elsewhere (not those the page was rendered with), and a
// refusal, sending nothing, once the cart or the line is gone.
func TestQuoteRemovalConfirmationsStateTheQuoteOfNow(t *testing.T) {
	t.Parallel()
	p, sim := newQuotePortal(t, nil)
	u := newQuoteUser(t, p, sim)
	quoteURL := u.createQuote(1, 1, 11, 102, "Head office")
	page, digest := u.page(quoteURL)
	cart := page.Find(`[data-testid="cart"]`).AttrOr("data-basket-id", "")
	root := quoteLineOf(page.Selection, 102).AttrOr("data-node-id", "")
	upd := quoteMust(t, "add an add-on", u.post(quoteURL+"/carts/"+cart+"/items/"+root+"/addons",
		url.Values{"tofId": {"11"}, "productId": {"106"}, "prev": {digest}}), http.StatusOK)
	digest = upd.Find("#quote-digest").AttrOr("value", "")

	// The page as rendered now: its buttons name where to read the question.
	page, _ = u.page(quoteURL)
	cartConfirm := page.Find(`[data-testid="cart-remove"]`).AttrOr("data-confirm-url", "")
	lineConfirm := quoteLineOf(page.Selection, 106).Find(`[data-testid="line-remove"]`).AttrOr("data-confirm-url", "")
	if cartConfirm == "" || lineConfirm == "" || page.Find(`[data-testid="cart-remove"][hx-confirm]`).Length() != 0 {
		t.Fatalf("the remove buttons do not read their question when clicked: %q %q", cartConfirm, lineConfirm)
	}
	ask := func(what, confirmURL string) confirmation {
		t.Helper()
		resp := u.get(confirmURL, true)
		var answer confirmation
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Cache-Control") != "no-store" || json.Unmarshal([]byte(resp.body), &answer) != nil {
			t.Fatalf("%s: %d, Cache-Control %q: %s", what, resp.StatusCode, resp.Header.Get("Cache-Control"), resp.body)
		}
		return answer
	}
	if got := ask("the cart's question", cartConfirm); got.Refused || !strings.Contains(got.Question, "“Head office” (quantity 1, €49.00 one-off, €34.80 monthly)") {
		t.Errorf("the cart's question: %+v", got)
	}
	if got := ask("the line's question", lineConfirm); got.Refused || !strings.Contains(got.Question, "from the cart “Head office”") {
		t.Errorf("the line's question: %+v", got)
	}

	// Another tab sets the quantity to 3: the same button now asks with the cart of now.
	quoteMust(t, "quantity elsewhere", u.post(quoteURL+"/carts/"+cart+"/quantity", url.Values{"quantity": {"3"}, "prev": {digest}}), http.StatusOK)
	if got := ask("the cart's question after the change", cartConfirm); !strings.Contains(got.Question, "(quantity 3, €147.00 one-off, €104.40 monthly)") {
		t.Errorf("the cart's question after another tab's change: %+v", got)
	}

	// Removed elsewhere: refused, saying why.
	_, digest = u.page(quoteURL)
	quoteMust(t, "remove the add-on elsewhere", u.del(quoteURL+"/carts/"+cart+"/items/"+quoteLineOf(upd.Selection, 106).AttrOr("data-node-id", "")+"/parent/"+root, url.Values{"prev": {digest}}), http.StatusOK)
	if got := ask("the line's question once it is gone", lineConfirm); !got.Refused || !strings.Contains(got.Question, "no longer in the cart") {
		t.Errorf("the question of a removed line: %+v", got)
	}
	_, digest = u.page(quoteURL)
	quoteMust(t, "remove the cart elsewhere", u.del(quoteURL+"/carts/"+cart, url.Values{"prev": {digest}}), http.StatusOK)
	if got := ask("the cart's question once it is gone", cartConfirm); !got.Refused || !strings.Contains(got.Question, "no longer on the quote") {
		t.Errorf("the question of a removed cart: %+v", got)
	}
	// The main product is never removed alone: its question refuses too.
	if got := ask("the main product's question", quoteURL+"/carts/"+cart+"/items/"+root+"/parent/"+root+"/confirm"); !got.Refused {
		t.Errorf("the main product's question: %+v", got)
	}
	// Malformed ids answer 400 before any v2 call.
	mark := u.mark()
	if resp := u.get(quoteURL+"/carts/x/confirm", true); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("a malformed cart id: %d", resp.StatusCode)
	}
	if calls := u.requests(mark); len(calls) != 0 {
		t.Errorf("a malformed id called the v2 API: %v", quoteEndpoints(calls))
	}
}
