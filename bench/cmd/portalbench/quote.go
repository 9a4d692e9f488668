package main

import (
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
)

// quoteIterations is how many times each quote-builder action is timed (each iteration on a fresh
// quote, so that every action is possible again, e.g. a package can be added once per quote).
const quoteIterations = 25

// quoteActions are the actions in the order one iteration performs them (figure names).
var quoteActions = []string{"add_cart", "add_item", "quantity", "apply_discounts", "reprice", "add_package",
	"change_pricelist", "remove_item", "remove_cart"}

// measureQuoteActions times each quote-builder action through the portal's routes as the quote page
// sends them (htmx requests from the same origin): the time a user waits, portal and v2 calls included.
func measureQuoteActions(ctx context.Context, l *lab, rep *report) error {
	user, err := signIn(ctx, l.portal, benchUser(4))
	if err != nil {
		return err
	}
	api, err := l.v2Client()
	if err != nil {
		return err
	}
	apiCtx := apiclient.WithToken(ctx, user.accessToken)
	browser, err := user.browser(l.portal.url)
	if err != nil {
		return err
	}
	// The quote page must exist for the actions to be reachable.
	q, err := newBenchQuote(ctx, l, user)
	if err != nil {
		return err
	}
	if err := checkPage(ctx, l.portal.url+q.pagePath(), user.cookie); err != nil {
		return pending("quote page: %v", err)
	}

	// Ids the forms carry, read from the v2 API once (not timed).
	init, err := api.CPQ.Init(apiCtx, q.cpqID, q.customerID)
	if err != nil {
		return err
	}
	customer, err := api.Customers.Get(apiCtx, q.customerID)
	if err != nil {
		return err
	}
	if len(customer.Owners) == 0 {
		return errors.New("customer 1 has no owner to assign a package to")
	}
	discounts, err := api.CPQ.ApplicableDiscounts(apiCtx, init.SessionID, q.cpqID, q.quoteID)
	if err != nil {
		return err
	}
	var discountID int32
	for _, d := range discounts {
		if !d.Extra {
			discountID = d.DiscountID
			break
		}
	}

	iterations := quoteIterations
	if l.opts.quick {
		iterations = 3
	}
	times := map[string][]time.Duration{}
	for it := range iterations {
		// A fresh quote with one cart, made directly on the simulator (not timed).
		base, err := newBenchQuote(ctx, l, user)
		if err != nil {
			return err
		}
		page := l.portal.url + base.pagePath()
		tof := base.quote.TOFList[len(base.quote.TOFList)-1]
		// The first action of a quote starts the user's configuration session in the portal (call 2);
		// the quote page's discount panel does that here, so the timed actions do not include it.
		if _, _, err := portalAction(ctx, browser, http.MethodGet, page+"/discounts", nil, l.portal.url); err != nil {
			return fmt.Errorf("opening the discount panel: %w", err)
		}
		// Each action sends the fingerprint of what the page shows (issue 18's stale check compares
		// it with the quote before a mutation), taken from the previous action's answer.
		digest := ""
		timed := func(name, method, target string, form url.Values) error {
			if form == nil {
				form = url.Values{}
			}
			if digest != "" {
				form.Set("prev", digest)
			}
			took, body, err := portalAction(ctx, browser, method, target, form, l.portal.url)
			if err != nil {
				return fmt.Errorf("iteration %d, %s: %w", it, name, err)
			}
			if d, ok := digestIn(body); ok {
				digest = d
			}
			times[name] = append(times[name], took)
			return nil
		}
		before := len(base.quote.Carts)
		if err := timed("add_cart", http.MethodPost, page+"/carts", url.Values{"tofId": {itoa(tof.ID)}}); err != nil {
			return err
		}
		doc, err := api.CPQ.TOFList(apiCtx, base.cpqID, base.customerID, base.quoteID)
		if err != nil {
			return err
		}
		if len(doc.Carts) != before+1 {
			return fmt.Errorf("add cart: the quote has %d carts, want %d", len(doc.Carts), before+1)
		}
		cart := doc.Carts[len(doc.Carts)-1]
		basket := page + "/carts/" + strconv.FormatInt(cart.BasketID, 10)
		root := cart.Root
		products, err := api.CPQ.ValidProducts(apiCtx, init.SessionID, base.cpqID, cart.TOFID)
		if err != nil {
			return err
		}
		addon := pickProduct(products, "ADDON", root.ProductID)
		if addon == nil {
			return fmt.Errorf("TOF %d has no add-on for product %d", cart.TOFID, root.ProductID)
		}
		rootItem := basket + "/items/" + strconv.FormatInt(root.NodeID, 10)
		if err := timed("add_item", http.MethodPost, rootItem+"/addons",
			url.Values{"tofId": {itoa(cart.TOFID)}, "productId": {itoa(addon.ProductID)}}); err != nil {
			return err
		}
		if err := timed("quantity", http.MethodPost, basket+"/quantity", url.Values{"quantity": {"3"}}); err != nil {
			return err
		}
		form := url.Values{}
		if discountID != 0 {
			form.Set("discountId", itoa(discountID))
		}
		if err := timed("apply_discounts", http.MethodPost, page+"/discounts", form); err != nil {
			return err
		}
		if err := timed("reprice", http.MethodPost, rootItem+"/reprice",
			url.Values{"activationPrice": {"10.00"}, "recurringPrice": {"5.50"}}); err != nil {
			return err
		}
		packages, err := api.CPQ.PackageConfig(apiCtx, init.SessionID, base.cpqID, cart.TOFID, base.quoteID)
		if err != nil {
			return err
		}
		if len(packages.Packages) == 0 {
			return fmt.Errorf("TOF %d offers no package", cart.TOFID)
		}
		if err := timed("add_package", http.MethodPost, page+"/packages", url.Values{
			"packageId": {itoa(packages.Packages[0].PackageID)}, "tofId": {itoa(cart.TOFID)},
			"assigneeUserId": {strconv.FormatInt(customer.Owners[0].OwnerID, 10)}, "customerQuoteId": {""},
		}); err != nil {
			return err
		}
		pricelist := cart.PricelistID
		for _, pl := range doc.AvailablePricelists {
			if pl.PricelistID != cart.PricelistID {
				pricelist = pl.PricelistID
				break
			}
		}
		if err := timed("change_pricelist", http.MethodPost, basket+"/pricelist", url.Values{"pricelistId": {itoa(pricelist)}}); err != nil {
			return err
		}
		doc, err = api.CPQ.TOFList(apiCtx, base.cpqID, base.customerID, base.quoteID)
		if err != nil {
			return err
		}
		added, ok := doc.Cart(cart.BasketID)
		if !ok || added.Root == nil || len(added.Root.Children) == 0 {
			return errors.New("add item: the new cart has no add-on")
		}
		child := added.Root.Children[len(added.Root.Children)-1]
		if err := timed("remove_item", http.MethodDelete,
			fmt.Sprintf("%s/items/%d/parent/%d", basket, child.NodeID, root.NodeID), nil); err != nil {
			return err
		}
		if err := timed("remove_cart", http.MethodDelete, basket, nil); err != nil {
			return err
		}
	}
	for _, name := range quoteActions {
		p := percentiles(times[name], 50, 99)
		rep.add("quote_action_ms_"+name+"_p50", p[0], "ms")
		rep.add("quote_action_ms_"+name+"_p99", p[1], "ms")
	}
	return nil
}

// portalAction sends one htmx request of the quote page (same origin, as a browser sends it) and
// returns how long the answer took and the answer (decompressed); any status but 200 fails.
// A DELETE carries its form in the query string, as htmx sends it.
func portalAction(ctx context.Context, browser *http.Client, method, target string, form url.Values, origin string) (time.Duration, []byte, error) {
	var body io.Reader
	if form != nil && method == http.MethodPost {
		body = strings.NewReader(form.Encode())
	}
	if len(form) > 0 && method == http.MethodDelete {
		target += "?" + form.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	req.Header.Set("HX-Request", "true")
	req.Header.Set("Accept-Encoding", "gzip")
	if method != http.MethodGet {
		req.Header.Set("Origin", origin)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	start := time.Now()
	resp, err := browser.Do(req)
	if err != nil {
		return 0, nil, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	if err != nil {
		return 0, nil, err
	}
	if resp.Header.Get("Content-Encoding") == "gzip" {
		data, _ = gunzip(data)
	}
	if resp.StatusCode != http.StatusOK {
		return 0, nil, fmt.Errorf("%s %s: %s: %.300s", method, req.URL.Path, resp.Status, data)
	}
	return took, data, nil
}

// digestPattern finds the quote page's fingerprint input (#quote-digest) in an answer.
var digestPattern = regexp.MustCompile(`<input[^>]*id="quote-digest"[^>]*value="([^"]*)"[^>]*data-tag="([^"]*)"`)

// digestIn returns the fingerprint an answer carries.
func digestIn(body []byte) (string, bool) {
	m := digestPattern.FindSubmatch(body)
	if m == nil {
		return "", false
	}
	return html.UnescapeString(string(m[1])), true
}

// browser returns a client with a cookie jar holding the user's session cookies (the portal updates
// them when it starts a configuration session).
func (u *signedIn) browser(portalURL string) (*http.Client, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	base, err := url.Parse(portalURL)
	if err != nil {
		return nil, err
	}
	header := http.Header{"Cookie": {u.cookie}}
	jar.SetCookies(base, (&http.Request{Header: header}).Cookies())
	return &http.Client{
		Jar:           jar,
		Transport:     &http.Transport{DisableCompression: true},
		Timeout:       time.Minute,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}, nil
}

func itoa[T ~int32 | ~int64](v T) string { return strconv.FormatInt(int64(v), 10) }
