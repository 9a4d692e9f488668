package handlers

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/v2sim"
)

// The quote builder in Italian: labels, amounts written the Italian way ("12.346,50 €"), numbers
// typed with the decimal comma reach the v2 API as plain JSON numbers, a number typed the English
// way is refused next to its field in Italian with nothing sent upstream.
func TestQuoteBuilderInItalian(t *testing.T) {
	t.Parallel()
	p, sim := newQuotePortal(t, nil)
	u := newQuoteUser(t, p, sim)
	choose := p.do(t, u.c, http.MethodPost, "/language", strings.NewReader("lang=it&next=/quotes"),
		map[string]string{"Content-Type": "application/x-www-form-urlencoded", "Origin": p.URL})
	if choose.StatusCode != http.StatusSeeOther {
		t.Fatalf("choosing Italian answered %d", choose.StatusCode)
	}

	start := quoteMust(t, "start page", u.get("/quotes", false), http.StatusOK)
	quoteWantText(t, "start page title", start.Find(`[data-testid="page-title"]`), "Offerte")
	quoteWantText(t, "start submit", start.Find(`[data-testid="quote-start-submit"]`), "Inizia l’offerta")

	quoteURL := u.createQuote(1, 1, 11, 102, "Sede")
	page, digest := u.page(quoteURL)
	if lang := page.Find("html").AttrOr("lang", ""); lang != "it" {
		t.Errorf("<html lang=%q>, want it", lang)
	}
	quoteID := quoteURLPattern.FindStringSubmatch(quoteURL)[3]
	quoteWantText(t, "page title", page.Find(`[data-testid="page-title"]`), "Offerta "+quoteID)
	quoteWantText(t, "carts heading", page.Find(`#quote-carts-title`), "Carrelli (1)")
	quoteWantText(t, "quantity button", page.Find(`[data-testid="cart-quantity-submit"]`), "Aggiorna quantità")
	quoteWantText(t, "summary heading", page.Find(`#quote-summary-title`), "Totale offerta")
	// quoteText would fold the non-breaking space CLDR puts before the euro sign: compare the raw text.
	if got := quoteLineOf(page.Selection, 102).Find(`[data-testid="line-unit-activation"]`).Text(); got != "49,00\u00a0€" {
		t.Errorf("unit price %q, want 49,00 €", got)
	}
	if got := quoteLineOf(page.Selection, 102).Find(`[data-testid="reprice-recurring"]`).AttrOr("value", ""); got != "29,90" {
		t.Errorf("the reprice input holds %q, want 29,90 (what an Italian can submit again)", got)
	}
	cart := page.Find(`[data-testid="cart"]`).AttrOr("data-basket-id", "")
	node := quoteLineOf(page.Selection, 102).AttrOr("data-node-id", "")
	cartURL := quoteURL + "/carts/" + cart

	// Refused in Italian, next to the field, and nothing goes upstream.
	for _, tc := range []struct {
		name, path string
		form       url.Values
		slot, want string
	}{
		{"quantity 2,5", cartURL + "/quantity", url.Values{"quantity": {"2,5"}}, "#cart-" + cart + "-quantity-errors",
			"La quantità deve essere un numero intero, ad esempio 3."},
		{"extra discount 1.5", quoteURL + "/discounts", url.Values{"extra-9": {"1.5"}, "extraMax-9": {"20"}}, "#quote-discounts-form-errors",
			"Lo sconto extra deve essere una percentuale con al massimo due decimali, ad esempio 5 o 7,5."},
		{"price 1.5", cartURL + "/items/" + node + "/reprice", url.Values{"activationPrice": {"1.5"}, "recurringPrice": {"2"}},
			"#line-" + node + "-reprice-errors",
			"Il prezzo unitario una tantum deve essere un importo in euro con al massimo due decimali, ad esempio 49,90."},
	} {
		mark := u.mark()
		tc.form.Set("prev", digest)
		resp := u.post(tc.path, tc.form)
		doc := quoteMust(t, tc.name, resp, http.StatusBadRequest)
		if got := resp.Header.Get("HX-Retarget"); got != tc.slot {
			t.Errorf("%s: the message goes to %q, want %q", tc.name, got, tc.slot)
		}
		if got := quoteText(doc.Find(`[data-testid="error-summary"]`)); !strings.Contains(got, "C’è un problema") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: error summary %q, want the Italian %q", tc.name, got, tc.want)
		}
		if reqs := u.requests(mark); len(reqs) != 0 {
			t.Errorf("%s: sent upstream %v", tc.name, quoteEndpoints(reqs))
		}
	}

	// Accepted: quantity 3, a reprice of 4.115,50 (Italian grouping and decimal comma), an extra
	// discount of 12,5 %.
	mark := u.mark()
	upd := quoteMust(t, "quantity 3", u.post(cartURL+"/quantity", url.Values{"quantity": {"3"}, "prev": {digest}}), http.StatusOK)
	wantBody(t, u.requests(mark), "cpq.quantity", map[string]any{"quantity": 3.0})
	digest = upd.Find("#quote-digest").AttrOr("value", "")

	mark = u.mark()
	upd = quoteMust(t, "reprice", u.post(cartURL+"/items/"+node+"/reprice",
		url.Values{"activationPrice": {"4.115,50"}, "recurringPrice": {"29,9"}, "prev": {digest}}), http.StatusOK)
	wantBody(t, u.requests(mark), "cpq.reprice", map[string]any{"activationPrice": 4115.5, "recurringPrice": 29.9})
	root := quoteLineOf(upd.Selection, 102)
	if got := root.Find(`[data-testid="line-list-activation"]`).Text(); got != "12.346,50\u00a0€" {
		t.Errorf("list one-off ×3 %q, want 12.346,50 €", got)
	}
	if got := root.Find(`[data-testid="reprice-activation"]`).AttrOr("value", ""); got != "4.115,50" {
		t.Errorf("the reprice input holds %q, want 4.115,50", got)
	}
	quoteWantText(t, "repriced badge", root.Find(`[data-testid="line-repriced"]`), "Prezzo impostato a mano")
	digest = upd.Find("#quote-digest").AttrOr("value", "")

	mark = u.mark()
	upd = quoteMust(t, "extra discount 12,5", u.post(quoteURL+"/discounts",
		url.Values{"extra-9": {"12,5"}, "extraMax-9": {"20"}, "prev": {digest}}), http.StatusOK)
	wantBody(t, u.requests(mark), "cpq.applydiscounts", map[string]any{
		"extraDiscountList": []any{map[string]any{"discountId": 9.0, "discountValue": 12.5}}})
	quoteWantText(t, "extra discount in the summary", upd.Find(`[data-testid="quote-extra-discount"] .muted`), "(extra 12,5% sul residuo)")
	if got := upd.Find(`[data-testid="quote-extra-discount"]`).Length(); got != 1 {
		t.Errorf("%d extra discounts in the summary, want 1", got)
	}
	form := quoteMust(t, "discount form", u.get(quoteURL+"/discounts", true), http.StatusOK)
	if got := form.Find(`input[name="extra-9"]`).AttrOr("value", ""); got != "12,5" {
		t.Errorf("the applied extra discount is put back as %q, want 12,5", got)
	}
	if got := form.Find(`[data-testid="discounts-submit"]`).Text(); got != "Applica sconti" {
		t.Errorf("discount button %q", got)
	}
}

// wantBody checks the one request to endpoint among reqs: its JSON body has the fields with these
// values (numbers as JSON numbers: the portal's reading of the reader's separators stays at its edge).
func wantBody(t *testing.T, reqs []v2sim.RecordedRequest, endpoint string, want map[string]any) {
	t.Helper()
	var found []v2sim.RecordedRequest
	for _, r := range reqs {
		if r.Endpoint == endpoint {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%s sent %d times (requests %v), want once", endpoint, len(found), quoteEndpoints(reqs))
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(found[0].Body), &body); err != nil {
		t.Fatalf("%s body %q: %v", endpoint, found[0].Body, err)
	}
	for key, value := range want {
		got, _ := json.Marshal(body[key])
		wanted, _ := json.Marshal(value)
		if string(got) != string(wanted) {
			t.Errorf("%s: %s = %s, want %s (body %s)", endpoint, key, got, wanted, found[0].Body)
		}
	}
}
