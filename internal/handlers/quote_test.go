package handlers

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// Catalogue of the simulator used below (internal/v2sim/catalog.go, configurator 1): TOF 11
// "Mobile plans" with main product 102 "Business Mobile 50GB" (default; €49.00 one-off, €29.90
// monthly) and add-ons 104 Roaming (0/9.00), 105 Extra 20GB (0/7.50), 106 Device insurance
// (0/4.90), 108 Dual SIM (10.00/2.00) under it, 107 Insurance abroad (0/2.50) only under 106;
// TOF 12 "Mobile devices" with default main product 112 (€49.00, €19.90). Discounts: 1 Loyalty
// 10% monthly, 9 Negotiated (extra, both sides, up to 20). Price list 2 is price list 1 less 15%,
// rounded half-up to the cent. Customer 1 uses configurator 1 (seeded quotes).

// The rule R4 of the spec: X-SessionId on calls 3-9 and 11-16, never on 1, 2 and 10.
var quoteSessionRule = map[string]bool{
	"cpq.list": false, "cpq.init": false, "cpq.toflist": false,
	"cpq.addcart": true, "cpq.addcart_existing": true, "cpq.additem": true, "cpq.removeitem": true,
	"cpq.removecart": true, "cpq.quantity": true, "cpq.validproducts": true, "cpq.discounts": true,
	"cpq.applydiscounts": true, "cpq.reprice": true, "cpq.package.get": true, "cpq.package.add": true,
	"cpq.pricelist": true,
}

// lineOf finds the line of the product in a cart region.
func quoteLineOf(doc *goquery.Selection, productID int) *goquery.Selection {
	return doc.Find(`[data-testid="line"][data-product-id="` + strconv.Itoa(productID) + `"]`)
}

func quoteWantText(t *testing.T, what string, s *goquery.Selection, want string) {
	t.Helper()
	if s.Length() == 0 {
		t.Errorf("%s: not on the page (want %q)", what, want)
		return
	}
	if got := quoteText(s.First()); got != want {
		t.Errorf("%s: %q, want %q", what, got, want)
	}
}

// The whole journey through every one of the 16 calls, checking what the page shows after each
// action and, at the end, that the simulator received X-SessionId exactly where rule R4 says.
func TestQuoteJourneyUsesEverySixteenCallsWithSessionRule(t *testing.T) {
	t.Parallel()
	p, sim := newQuotePortal(t, nil)
	u := newQuoteUser(t, p, sim)
	start := u.mark()

	// Started from a customer (the customers area's link): configurator list (call 1), customer 1.
	doc := quoteMust(t, "start page", u.get("/quotes/new?customerId=1", false), http.StatusOK)
	if got := doc.Find(`#quote-cpq option`).Length(); got != 4 {
		t.Errorf("configurator choices: %d, want the simulator's 4", got)
	}
	if got := doc.Find(`input[name=customerId][value="1"]`).AttrOr("checked", "none"); got == "none" {
		t.Error("the customer of the link is not chosen")
	}
	results := quoteMust(t, "customer search", u.get("/quotes/new/customers?cpqId=1&q=", true), http.StatusOK)
	if results.Find(`input[name=customerId][value="1"]`).Length() != 1 {
		t.Error("the configurator's customer search does not offer customer 1")
	}
	kept := quoteMust(t, "search keeps the choice", u.get("/quotes/new/customers?cpqId=1&q=&customerId=1", true), http.StatusOK)
	if kept.Find(`input[name=customerId][value="1"]`).AttrOr("checked", "none") == "none" {
		t.Error("a new search loses the chosen customer")
	}

	// Session (call 2), TOFs, main products (call 9), quote created (call 3).
	tofs := quoteMust(t, "start the session", u.post("/quotes/new", url.Values{"cpqId": {"1"}, "customerId": {"1"}}), http.StatusOK)
	if got := quoteText(tofs.Find(`[data-testid="quote-tof"]`)); !strings.Contains(got, "Mobile plans") || !strings.Contains(got, "Mobile devices") {
		t.Errorf("offer types after the session started: %q", got)
	}
	products := quoteMust(t, "main products", u.get("/quotes/new/1/1/tofs/11/products", true), http.StatusOK)
	if got := products.Find(`input[name=productId]`).Length(); got != 3 {
		t.Errorf("main products offered: %d, want 3 (the add-ons are not main products)", got)
	}
	if products.Find(`input[name=productId][value="102"]`).AttrOr("checked", "none") == "none" {
		t.Error("the default main product is not preselected")
	}
	resp := u.post("/quotes/new/1/1/tofs/11", url.Values{"productId": {"102"}, "label": {"Head office"}})
	quoteMust(t, "create the quote", resp, http.StatusOK)
	quoteURL := resp.Header.Get("HX-Redirect")
	if !quoteURLPattern.MatchString(quoteURL) {
		t.Fatalf("no quote address after creating the quote: %q", quoteURL)
	}

	// The quote page (call 10).
	page, digest := u.page(quoteURL)
	quoteWantText(t, "cart title", page.Find(`[data-testid="cart-title"]`), "Head office")
	quoteWantText(t, "main product", page.Find(`[data-testid="line-name"]`), "Business Mobile 50GB")
	quoteWantText(t, "quote net one-off", page.Find(`[data-testid="quote-net-activation"]`), "€49.00")
	quoteWantText(t, "quote net monthly", page.Find(`[data-testid="quote-net-recurring"]`), "€29.90")
	if got := page.Find(`[data-testid="quote-page"]`).AttrOr("data-session", ""); got != "active" {
		t.Errorf("the session of the start is not the quote's: data-session %q", got)
	}
	if got := quoteText(page.Find(`[data-testid="quote-customer"]`)); got == "" || got == "Customer 1" {
		t.Errorf("the customer's name is not shown: %q", got)
	}
	// The documents area's region comes with the page, from the same read of the quote (issue 27).
	if page.Find(`#quote-documents [data-testid]`).Length() == 0 || page.Find(`#quote-documents[hx-get]`).Length() != 0 {
		t.Error("the quote page does not show the documents area's region with the page")
	}
	cart1 := page.Find(`[data-testid="cart"]`).AttrOr("data-basket-id", "")
	root := quoteLineOf(page.Selection, 102).AttrOr("data-node-id", "")

	// A second cart (calls 9 and 4): the TOF's default main product.
	panel := quoteMust(t, "add-cart panel", u.get(quoteURL+"/carts/new?tofId=12&tofName=Mobile+devices", true), http.StatusOK)
	quoteWantText(t, "default product of TOF 12", panel.Find(`[data-testid="add-cart-default"]`), "Smartphone Essential 128GB")
	upd := quoteMust(t, "add a cart", u.post(quoteURL+"/carts", url.Values{"tofId": {"12"}, "prev": {digest}}), http.StatusOK)
	if got := upd.Find(`#quote-carts [data-testid="cart"]`).Length(); got != 2 {
		t.Fatalf("carts after adding one: %d, want 2", got)
	}
	newCart := upd.Find(`[data-testid="cart"].is-new`)
	if newCart.Length() != 1 || quoteLineOf(newCart, 112).Length() != 1 {
		t.Error("the added cart is not marked new with product 112")
	}
	cart2 := newCart.AttrOr("data-basket-id", "")
	quoteWantText(t, "quote net monthly with two carts", upd.Find(`#quote-summary [data-testid="quote-net-recurring"]`), quoteEUR(2990+1990))
	digest = upd.Find("#quote-digest").AttrOr("value", "")

	// Add-ons allowed under the main product (calls 10 and 9): 104, 105, 106, 108, not 107.
	addons := quoteMust(t, "add-ons", u.get(quoteURL+"/carts/"+cart1+"/items/"+root+"/addons", true), http.StatusOK)
	var offered []string
	addons.Find(`[data-testid="addon-option"]`).Each(func(_ int, s *goquery.Selection) { offered = append(offered, s.AttrOr("data-product-id", "")) })
	if strings.Join(offered, ",") != "104,105,106,108" {
		t.Errorf("add-ons offered under product 102: %v, want 104,105,106,108", offered)
	}
	upd = quoteMust(t, "add an add-on", u.post(quoteURL+"/carts/"+cart1+"/items/"+root+"/addons",
		url.Values{"tofId": {"11"}, "productId": {"106"}, "prev": {digest}}), http.StatusOK)
	insurance := quoteLineOf(upd.Selection, 106)
	if insurance.Length() != 1 || !insurance.HasClass("is-new") || insurance.HasClass("depth-0") {
		t.Error("the add-on is not a new line under the main product")
	}
	quoteWantText(t, "cart 1 net monthly", upd.Find(`[data-testid="cart-net-recurring"]`), quoteEUR(2990+490))
	digest = upd.Find("#quote-digest").AttrOr("value", "")
	node106 := insurance.AttrOr("data-node-id", "")

	// Quantity (call 8): every line times 3; the change is highlighted with the previous amount.
	upd = quoteMust(t, "quantity", u.post(quoteURL+"/carts/"+cart1+"/quantity", url.Values{"quantity": {"3"}, "prev": {digest}}), http.StatusOK)
	rootLine := quoteLineOf(upd.Selection, 102)
	quoteWantText(t, "main product list monthly ×3", rootLine.Find(`[data-testid="line-list-recurring"]`), quoteEUR(2990*3))
	if !rootLine.Find(`[data-testid="line-list-recurring"]`).HasClass("is-changed") {
		t.Error("the changed list amount is not highlighted")
	}
	quoteWantText(t, "previous amount", rootLine.Find(`[data-testid="line-list-recurring-was"]`), "changed, was "+quoteEUR(2990))
	quoteWantText(t, "quote net one-off after the quantity", upd.Find(`[data-testid="quote-net-activation"]`), quoteEUR(4900*3+4900))
	digest = upd.Find("#quote-digest").AttrOr("value", "")

	// Discounts (calls 11 and 12): Loyalty 10 % and a 5 % extra.
	form := quoteMust(t, "discounts", u.get(quoteURL+"/discounts", true), http.StatusOK)
	if form.Find(`input[name=discountId]`).Length() != 3 || form.Find(`input[name="extra-9"]`).Length() != 1 {
		t.Errorf("discount form: %d regular, %d extra-9", form.Find(`input[name=discountId]`).Length(), form.Find(`input[name="extra-9"]`).Length())
	}
	upd = quoteMust(t, "apply discounts", u.post(quoteURL+"/discounts", url.Values{
		"discountId": {"1"}, "extra-9": {"5"}, "extraMax-9": {"20"}, "extra-8": {""}, "extraMax-8": {"10"}, "prev": {digest}}), http.StatusOK)
	rootLine = quoteLineOf(upd.Selection, 102)
	// Monthly: list 89.70, loyalty 10 % = 8.97, extra 5 % of 80.73 = 4.0365 → 4.04, net 76.69.
	quoteWantText(t, "loyalty on the line", rootLine.Find(`[data-testid="line-discount-recurring"]`), "−"+quoteEUR(897))
	quoteWantText(t, "extra on the line", rootLine.Find(`[data-testid="line-extra-recurring"]`), "−"+quoteEUR(404))
	quoteWantText(t, "net monthly of the line", rootLine.Find(`[data-testid="line-net-recurring"]`), quoteEUR(7669))
	// One-off: list 147.00, no loyalty (monthly only), extra 5 % = 7.35, net 139.65.
	quoteWantText(t, "net one-off of the line", rootLine.Find(`[data-testid="line-net-activation"]`), quoteEUR(13965))
	if upd.Find(`[data-testid="quote-applied-discount"][data-discount-id="1"]`).Length() != 1 ||
		upd.Find(`[data-testid="quote-extra-discount"][data-discount-id="9"]`).Length() != 1 {
		t.Error("the summary does not list the applied discounts")
	}
	digest = upd.Find("#quote-digest").AttrOr("value", "")

	// Reprice the add-on (call 13): €3.50 monthly instead of €4.90.
	upd = quoteMust(t, "reprice", u.post(quoteURL+"/carts/"+cart1+"/items/"+node106+"/reprice",
		url.Values{"activationPrice": {"0"}, "recurringPrice": {"3.50"}, "prev": {digest}}), http.StatusOK)
	insurance = quoteLineOf(upd.Selection, 106)
	quoteWantText(t, "repriced unit", insurance.Find(`[data-testid="line-unit-recurring"]`), "€3.50")
	quoteWantText(t, "repriced list ×3", insurance.Find(`[data-testid="line-list-recurring"]`), quoteEUR(1050))
	if insurance.Find(`[data-testid="line-repriced"]`).Length() != 1 {
		t.Error("the repriced line is not marked")
	}
	digest = upd.Find("#quote-digest").AttrOr("value", "")

	// Packages (calls 14 and 15), assigned to the customer's first owner by default.
	pk := quoteMust(t, "packages", u.get(quoteURL+"/packages?tofId=11&tofName=Mobile+plans", true), http.StatusOK)
	if got := quoteText(pk.Find(`[data-testid="package-name"]`)); !strings.Contains(got, "Business Bundle") {
		t.Errorf("packages of TOF 11: %q", got)
	}
	owner := pk.Find(`#quote-package-assignee option[selected]`).AttrOr("value", "")
	if owner == "" || pk.Find(`#quote-package-assignee option`).First().AttrOr("value", "") != owner {
		t.Errorf("the first owner is not the default assignee (%q)", owner)
	}
	upd = quoteMust(t, "add a package", u.post(quoteURL+"/packages", url.Values{
		"packageId": {"31"}, "tofId": {"11"}, "assigneeUserId": {owner}, "customerQuoteId": {"0"}, "prev": {digest}}), http.StatusOK)
	quoteWantText(t, "package on the quote", upd.Find(`#quote-summary [data-testid="quote-package-name"]`), "Business Bundle")
	quoteWantText(t, "packages monthly", upd.Find(`[data-testid="quote-packages-recurring"]`), "€15.00")
	if upd.Find(`#quote-packages-panel[hx-swap-oob]`).Length() != 1 {
		t.Error("the packages panel is not closed after adding")
	}
	digest = upd.Find("#quote-digest").AttrOr("value", "")

	// Price list of cart 2 (call 16): the partner list, 15 % off rounded half-up to the cent.
	upd = quoteMust(t, "price list", u.post(quoteURL+"/carts/"+cart2+"/pricelist", url.Values{"pricelistId": {"2"}, "prev": {digest}}), http.StatusOK)
	phone := quoteLineOf(upd.Selection, 112)
	quoteWantText(t, "partner one-off", phone.Find(`[data-testid="line-unit-activation"]`), quoteEUR(4900-735))
	quoteWantText(t, "partner monthly", phone.Find(`[data-testid="line-unit-recurring"]`), quoteEUR(1990-299))
	digest = upd.Find("#quote-digest").AttrOr("value", "")

	// Remove the add-on (call 6, then call 10), then cart 2 (call 7, then call 10).
	upd = quoteMust(t, "remove an item", u.del(quoteURL+"/carts/"+cart1+"/items/"+node106+"/parent/"+root, url.Values{"prev": {digest}}), http.StatusOK)
	if quoteLineOf(upd.Selection, 106).Length() != 0 || quoteLineOf(upd.Selection, 102).Length() != 1 {
		t.Error("the removed add-on is still shown, or the main product is gone")
	}
	digest = upd.Find("#quote-digest").AttrOr("value", "")
	upd = quoteMust(t, "remove a cart", u.del(quoteURL+"/carts/"+cart2, url.Values{"prev": {digest}}), http.StatusOK)
	if got := upd.Find(`[data-testid="cart"]`).Length(); got != 1 {
		t.Errorf("carts after removing one: %d, want 1", got)
	}

	// What the simulator received.
	seen := map[string]bool{}
	sessionIDs := map[string]bool{}
	for _, r := range u.requests(start) {
		rule, ok := quoteSessionRule[r.Endpoint]
		if !ok {
			continue
		}
		seen[r.Endpoint] = true
		values, present := r.Header["X-Sessionid"]
		if present != rule {
			t.Errorf("%s %s: X-SessionId present=%v, rule R4 wants %v", r.Method, r.RequestURI, present, rule)
		}
		if present {
			sessionIDs[values[0]] = true
		}
		if r.Status < 200 || r.Status > 299 {
			t.Errorf("%s %s answered %d", r.Method, r.RequestURI, r.Status)
		}
	}
	for name := range quoteSessionRule {
		if !seen[name] {
			t.Errorf("call %s was never made", name)
		}
	}
	if len(sessionIDs) != 1 {
		t.Errorf("the journey used %d configuration sessions, want the one started (%v)", len(sessionIDs), sessionIDs)
	}
}

// Values the portal refuses itself answer 400 with a message, and nothing reaches the v2 API.
func TestQuoteBadInputIsRefusedBeforeAnyCall(t *testing.T) {
	t.Parallel()
	p, sim := newQuotePortal(t, nil)
	u := newQuoteUser(t, p, sim)
	quoteURL := u.createQuote(1, 1, 11, 102, "Bad input")
	page, _ := u.page(quoteURL)
	cart := page.Find(`[data-testid="cart"]`).AttrOr("data-basket-id", "")
	node := quoteLineOf(page.Selection, 102).AttrOr("data-node-id", "")
	cartURL := quoteURL + "/carts/" + cart

	cases := []struct {
		name   string
		method string
		path   string
		form   url.Values
		errors string // the error slot that shows the message ("" for a toast)
	}{
		{"negative quantity", "POST", cartURL + "/quantity", url.Values{"quantity": {"-2"}}, "#cart-" + cart + "-quantity-errors"},
		{"zero quantity", "POST", cartURL + "/quantity", url.Values{"quantity": {"0"}}, "#cart-" + cart + "-quantity-errors"},
		{"fractional quantity", "POST", cartURL + "/quantity", url.Values{"quantity": {"1.5"}}, "#cart-" + cart + "-quantity-errors"},
		{"non-numeric quantity", "POST", cartURL + "/quantity", url.Values{"quantity": {"three"}}, "#cart-" + cart + "-quantity-errors"},
		{"quantity too large", "POST", cartURL + "/quantity", url.Values{"quantity": {"10000"}}, "#cart-" + cart + "-quantity-errors"},
		{"missing quantity", "POST", cartURL + "/quantity", url.Values{}, "#cart-" + cart + "-quantity-errors"},
		{"price not a number", "POST", cartURL + "/items/" + node + "/reprice", url.Values{"activationPrice": {"abc"}, "recurringPrice": {"1"}}, "#line-" + node + "-reprice-errors"},
		{"negative price", "POST", cartURL + "/items/" + node + "/reprice", url.Values{"activationPrice": {"1"}, "recurringPrice": {"-5"}}, "#line-" + node + "-reprice-errors"},
		{"price with three decimals", "POST", cartURL + "/items/" + node + "/reprice", url.Values{"activationPrice": {"1.234"}, "recurringPrice": {"1"}}, "#line-" + node + "-reprice-errors"},
		{"price too large", "POST", cartURL + "/items/" + node + "/reprice", url.Values{"activationPrice": {"1000000.01"}, "recurringPrice": {"1"}}, "#line-" + node + "-reprice-errors"},
		{"extra discount above its maximum", "POST", quoteURL + "/discounts", url.Values{"extra-9": {"25"}, "extraMax-9": {"20"}}, "#quote-discounts-form-errors"},
		{"extra discount zero", "POST", quoteURL + "/discounts", url.Values{"extra-9": {"0"}, "extraMax-9": {"20"}}, "#quote-discounts-form-errors"},
		{"extra discount negative", "POST", quoteURL + "/discounts", url.Values{"extra-9": {"-3"}, "extraMax-9": {"20"}}, "#quote-discounts-form-errors"},
		{"extra discount not a number", "POST", quoteURL + "/discounts", url.Values{"extra-9": {"lots"}}, "#quote-discounts-form-errors"},
		{"discount id not a number", "POST", quoteURL + "/discounts", url.Values{"discountId": {"1 OR 1"}}, "#quote-discounts-form-errors"},
		{"price list not a number", "POST", cartURL + "/pricelist", url.Values{"pricelistId": {"partner"}}, "#cart-" + cart + "-pricelist-errors"},
		{"no package chosen", "POST", quoteURL + "/packages", url.Values{"tofId": {"11"}, "assigneeUserId": {"1001"}}, "#quote-package-form-errors"},
		{"no add-on chosen", "POST", cartURL + "/items/" + node + "/addons", url.Values{"tofId": {"11"}}, "#line-" + node + "-addon-form-errors"},
		{"label too long", "POST", "/quotes/new/1/1/tofs/11", url.Values{"productId": {"102"}, "label": {strings.Repeat("x", 101)}}, "#quote-create-form-errors"},
		{"negative customer reference", "POST", "/quotes/new/1/1/tofs/11", url.Values{"productId": {"102"}, "customerQuoteId": {"-5"}}, "#quote-create-form-errors"},
		{"no customer chosen", "POST", "/quotes/new", url.Values{"cpqId": {"1"}}, "#quote-start-form-errors"},
		{"quote id not a number", "GET", "/quotes/1/1/abc", nil, ""},
		{"quote id zero", "GET", "/quotes/1/1/0", nil, ""},
		{"configurator id negative", "GET", "/quotes/-1/1/900001", nil, ""},
		{"basket id not a number", "POST", quoteURL + "/carts/x1/quantity", url.Values{"quantity": {"2"}}, ""},
		{"item id too large", "POST", cartURL + "/items/99999999999999999999/reprice", url.Values{"activationPrice": {"1"}, "recurringPrice": {"1"}}, ""},
		{"parent id not a number", "DELETE", cartURL + "/items/" + node + "/parent/root", nil, ""},
		{"TOF id not a number", "GET", quoteURL + "/packages?tofId=eleven", nil, ""},
		{"customer id in the link not a number", "GET", "/quotes/new?customerId=ACME", nil, ""},
		{"search configurator not a number", "GET", "/quotes/new/customers?cpqId=one", nil, ""},
	}
	for _, tc := range cases {
		mark := u.mark()
		var resp response
		switch tc.method {
		case "GET":
			resp = u.get(tc.path, true)
		case "DELETE":
			resp = u.del(tc.path, tc.form)
		default:
			resp = u.post(tc.path, tc.form)
		}
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400 (%.300s)", tc.name, resp.StatusCode, resp.body)
		}
		if got := u.requests(mark); len(got) != 0 {
			t.Errorf("%s: the v2 API was called: %v", tc.name, quoteEndpoints(got))
		}
		target := resp.Header.Get("HX-Retarget")
		if tc.errors != "" {
			doc := parseHTML(t, resp.body)
			if target != tc.errors || doc.Find(`[data-testid="error-summary"] li`).Length() == 0 {
				t.Errorf("%s: answered into %q with %q; want an error summary in %s", tc.name, target, quoteText(doc.Selection), tc.errors)
			}
		} else if target != "#toasts" {
			t.Errorf("%s: answered into %q, want a toast", tc.name, target)
		}
	}
}

// A value the portal cannot judge (an extra discount's limit comes from the v2 API) and that the
// v2 API refuses is shown next to the form, with the API's message.
func TestQuoteRefusedValueShowsTheAPIsMessageInTheForm(t *testing.T) {
	t.Parallel()
	p, sim := newQuotePortal(t, nil)
	u := newQuoteUser(t, p, sim)
	quoteURL := u.createQuote(1, 1, 11, 102, "")
	_, digest := u.page(quoteURL)
	// A tampered form says the limit is 50; the simulator's limit for discount 9 is 20.
	resp := u.post(quoteURL+"/discounts", url.Values{"extra-9": {"30"}, "extraMax-9": {"50"}, "prev": {digest}})
	doc := quoteMust(t, "refused extra value", resp, http.StatusUnprocessableEntity)
	if resp.Header.Get("HX-Retarget") != "#quote-discounts-form-errors" {
		t.Errorf("answered into %q", resp.Header.Get("HX-Retarget"))
	}
	if got := quoteText(doc.Find(`[data-testid="error-summary"]`)); !strings.Contains(got, "at most 20") {
		t.Errorf("the v2 API's message is not shown: %q", got)
	}
	if link := doc.Find(`[data-testid="error-summary"] a`).AttrOr("href", ""); link != "#quote-extra-9" {
		t.Errorf("the message links to %q, want the field #quote-extra-9", link)
	}
}

// When the configuration session has expired upstream, the user sees the restart prompt; one
// click starts a new session (call 2) for the same quote, nothing is retried, and the next action
// works.
func TestQuoteExpiredSessionOffersRestart(t *testing.T) {
	t.Parallel()
	clock := &quoteClock{now: time.Now()}
	p, sim := newQuotePortal(t, clock)
	u := newQuoteUser(t, p, sim)
	quoteURL := u.createQuote(1, 1, 11, 102, "Expiring")
	page, digest := u.page(quoteURL)
	cart := page.Find(`[data-testid="cart"]`).AttrOr("data-basket-id", "")

	clock.Advance(31 * time.Minute) // A3: 30 minutes without use
	mark := u.mark()
	resp := u.post(quoteURL+"/carts/"+cart+"/quantity", url.Values{"quantity": {"2"}, "prev": {digest}})
	doc := quoteMust(t, "action with an expired session", resp, http.StatusConflict)
	if resp.Header.Get("HX-Retarget") != "#quote-session-alert" || doc.Find(`[data-testid="session-expired"]`).Length() != 1 {
		t.Fatalf("no restart prompt (retarget %q): %s", resp.Header.Get("HX-Retarget"), resp.body)
	}
	restart := doc.Find(`[data-testid="session-restart"]`).Closest("form").AttrOr("hx-post", "")
	if restart != quoteURL+"/session" {
		t.Errorf("Restart session posts to %q, want %s/session", restart, quoteURL)
	}
	if got := quoteEndpoints(u.requests(mark)); !slices.Equal(got, []string{"cpq.toflist", "cpq.quantity"}) {
		t.Errorf("calls: %v, want the stale check then the one refused quantity change", got)
	}

	mark = u.mark()
	resp = u.post(restart, url.Values{})
	restarted := quoteMust(t, "restart the session", resp, http.StatusOK)
	if got := quoteEndpoints(u.requests(mark)); !slices.Equal(got, []string{"cpq.init"}) {
		t.Errorf("Restart session made %v, want only call 2 (nothing retried)", got)
	}
	if restarted.Find(`[data-testid="session-restarted"]`).Length() != 1 || !strings.Contains(resp.Header.Get("HX-Trigger"), "You can edit the quote again") {
		t.Errorf("no notice of the new session: %q %s", resp.Header.Get("HX-Trigger"), resp.body)
	}

	mark = u.mark()
	upd := quoteMust(t, "the action again", u.post(quoteURL+"/carts/"+cart+"/quantity", url.Values{"quantity": {"2"}, "prev": {digest}}), http.StatusOK)
	quoteWantText(t, "quantity applied", upd.Find(`[data-testid="line-list-recurring"]`), quoteEUR(2990*2))
	reqs := u.requests(mark)
	if got := quoteEndpoints(reqs); !slices.Equal(got, []string{"cpq.toflist", "cpq.quantity"}) || reqs[1].Status != http.StatusOK {
		t.Errorf("calls after the restart: %v", got)
	}
}

// A quote opened from its address by someone without a configuration session for it is shown
// with call 10 alone; their first action starts a session (call 2), then works.
func TestQuoteResumedFromItsAddressStartsASessionAtTheFirstAction(t *testing.T) {
	t.Parallel()
	p, sim := newQuotePortal(t, nil)
	author := newQuoteUser(t, p, sim)
	quoteURL := author.createQuote(1, 1, 11, 102, "Shared")

	colleague := newQuoteUser(t, p, sim)
	mark := colleague.mark()
	page, digest := colleague.page(quoteURL)
	quoteWantText(t, "the shared quote", page.Find(`[data-testid="cart-title"]`), "Shared")
	if got := page.Find(`[data-testid="quote-page"]`).AttrOr("data-session", ""); got != "later" {
		t.Errorf("a colleague's view has a session already: data-session %q", got)
	}
	for _, name := range quoteEndpoints(colleague.requests(mark)) {
		if name == "cpq.init" || quoteSessionRule[name] {
			t.Errorf("showing the quote made call %s; call 10 needs no session", name)
		}
	}
	cart := page.Find(`[data-testid="cart"]`).AttrOr("data-basket-id", "")

	mark = colleague.mark()
	upd := quoteMust(t, "colleague's first action", colleague.post(quoteURL+"/carts/"+cart+"/quantity",
		url.Values{"quantity": {"4"}, "prev": {digest}}), http.StatusOK)
	quoteWantText(t, "quantity applied", upd.Find(`[data-testid="line-list-activation"]`), quoteEUR(4900*4))
	reqs := colleague.requests(mark)
	if got := quoteEndpoints(reqs); !slices.Equal(got, []string{"cpq.toflist", "cpq.init", "cpq.quantity"}) {
		t.Fatalf("calls of the first action: %v, want the stale check, init then quantity", got)
	}
	if reqs[2].Header.Get("X-SessionId") == "" || reqs[2].Status != http.StatusOK {
		t.Errorf("the quantity change went without the new session (%d)", reqs[1].Status)
	}

	// The second action reuses the session.
	mark = colleague.mark()
	quoteMust(t, "second action", colleague.post(quoteURL+"/carts/"+cart+"/quantity",
		url.Values{"quantity": {"5"}, "prev": {upd.Find("#quote-digest").AttrOr("value", "")}}), http.StatusOK)
	if got := quoteEndpoints(colleague.requests(mark)); !slices.Equal(got, []string{"cpq.toflist", "cpq.quantity"}) {
		t.Errorf("calls of the second action: %v", got)
	}
}

// Two quotes open side by side (two tabs, one browser) keep their own configuration sessions.
func TestQuoteTwoQuotesKeepTheirOwnSessions(t *testing.T) {
	t.Parallel()
	p, sim := newQuotePortal(t, nil)
	u := newQuoteUser(t, p, sim)
	first := u.createQuote(1, 1, 11, 102, "First")
	second := u.createQuote(1, 1, 12, 112, "Second")
	if first == second {
		t.Fatal("the two quotes have the same address")
	}
	sessionOf := func(quoteURL string, quantity string) string {
		t.Helper()
		page, digest := u.page(quoteURL)
		cart := page.Find(`[data-testid="cart"]`).AttrOr("data-basket-id", "")
		mark := u.mark()
		quoteMust(t, "quantity of "+quoteURL, u.post(quoteURL+"/carts/"+cart+"/quantity", url.Values{"quantity": {quantity}, "prev": {digest}}), http.StatusOK)
		reqs := u.requests(mark)
		if len(reqs) != 2 || reqs[1].Endpoint != "cpq.quantity" {
			t.Fatalf("calls: %v, want the stale check and the quantity change (the quote's session is kept)", quoteEndpoints(reqs))
		}
		return reqs[1].Header.Get("X-SessionId")
	}
	a1, b1, a2 := sessionOf(first, "2"), sessionOf(second, "3"), sessionOf(first, "4")
	if a1 == "" || a1 == b1 || a1 != a2 {
		t.Errorf("sessions: first %q then %q, second %q; want one per quote, kept", a1, a2, b1)
	}
	page, _ := u.page(first)
	if got := page.Find(`[data-testid="cart-quantity"]`).AttrOr("value", ""); got != "4" {
		t.Errorf("first quote's quantity %q, want 4", got)
	}
	page, _ = u.page(second)
	if got := page.Find(`[data-testid="cart-quantity"]`).AttrOr("value", ""); got != "3" {
		t.Errorf("second quote's quantity %q, want 3", got)
	}
	// The start page lists both as recent quotes.
	start := quoteMust(t, "quotes page", u.get("/quotes", false), http.StatusOK)
	var links []string
	start.Find(`[data-testid="quote-recent-link"]`).Each(func(_ int, s *goquery.Selection) { links = append(links, s.AttrOr("href", "")) })
	if !slices.Contains(links, first) || !slices.Contains(links, second) {
		t.Errorf("recent quotes %v, want both %s and %s", links, first, second)
	}
}

// A v2 error during an action is a toast with the API's message, and the page keeps its state:
// here removing the main product alone (A5 #6: remove the cart instead).
func TestQuoteUpstreamRefusalIsAToast(t *testing.T) {
	t.Parallel()
	p, sim := newQuotePortal(t, nil)
	u := newQuoteUser(t, p, sim)
	quoteURL := u.createQuote(1, 1, 11, 102, "")
	page, digest := u.page(quoteURL)
	cart := page.Find(`[data-testid="cart"]`).AttrOr("data-basket-id", "")
	root := quoteLineOf(page.Selection, 102).AttrOr("data-node-id", "")
	resp := u.del(quoteURL+"/carts/"+cart+"/items/"+root+"/parent/"+root, url.Values{"prev": {digest}})
	doc := quoteMust(t, "remove the main product", resp, http.StatusConflict)
	if resp.Header.Get("HX-Retarget") != "#toasts" || !strings.Contains(quoteText(doc.Find(`[data-testid="toast"]`)), "remove the cart instead") {
		t.Errorf("no toast with the API's message: %q %s", resp.Header.Get("HX-Retarget"), resp.body)
	}
}

// The quote page of an unknown quote is the 404 error page (the API's answer), and the quote of
// another customer is not shown under this customer's address.
func TestQuoteUnknownQuoteIsNotFound(t *testing.T) {
	t.Parallel()
	p, sim := newQuotePortal(t, nil)
	u := newQuoteUser(t, p, sim)
	quoteURL := u.createQuote(1, 1, 11, 102, "")
	m := quoteURLPattern.FindStringSubmatch(quoteURL)
	for _, path := range []string{"/quotes/1/1/999999999", "/quotes/1/2/" + m[3]} {
		doc := quoteMust(t, path, u.get(path, false), http.StatusNotFound)
		if doc.Find(`[data-testid="error-page"]`).Length() != 1 {
			t.Errorf("%s: no error page", path)
		}
	}
}
