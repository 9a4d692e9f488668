package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/v2sim"
)

// The latency lab (issue 27): the simulator answers every v2 call in labLatency, and each journey is
// driven through the portal as the browser drives it (the page, then the regions it loads itself).
// What a person waits for is then the number of v2 round trips made one after the other; the lab
// reports, per journey, the v2 calls, the sequential round trips (from the simulator's request log:
// calls that arrived within half a latency of each other ran side by side), the time, and the floor (the
// fewest round trips the journey can take, the stale check counted once where it applies); journeys
// above their floor are counted (latency_journeys_above_floor) and named on stderr. A journey fails
// the run when a call was refused (the simulator is strict: R4's X-SessionId and the bearer token,
// section 5), when a call went with another token than the user's own, or when a call the journey
// must make (the stale check before a change) is missing.

// labLatency is the simulator's answer time during the lab.
const labLatency = 50 * time.Millisecond

// journey is one thing a person does, as the browser does it.
type journey struct {
	name  string
	floor int
	// must lists endpoints the journey has to call (in this order), whatever the portal saves.
	// (Endpoint names are raw string literals: cmd/i18ncheck reads dotted "quoted" words as keys.)
	must []string
	// prepare, when set, runs before the measured window (a colleague's change, a wait).
	prepare func() error
	run     func() error
}

// journeyResult is one journey's figures.
type journeyResult struct {
	name                 string
	calls, rounds, floor int
	took                 time.Duration
}

// simCall is the part of the simulator's request log the lab reads.
type simCall struct {
	Received time.Time   `json:"received"`
	Answered time.Time   `json:"time"`
	Endpoint string      `json:"endpoint"`
	Status   int         `json:"status"`
	Header   http.Header `json:"header"`
}

// roundTrips counts the sequential round trips of calls (v2sim.RoundTrips on their arrivals).
func roundTrips(calls []simCall, latency time.Duration) int {
	arrivals := make([]time.Time, 0, len(calls))
	for _, c := range calls {
		arrivals = append(arrivals, c.Received)
	}
	return v2sim.RoundTrips(arrivals, latency)
}

// checkCalls applies the rules of the spec the simulator does not see across calls: every call with
// the user's own token, answered without error, and the journey's required calls made in order.
func checkCalls(calls []simCall, token string, must []string) error {
	for _, c := range calls {
		if got := c.Header.Get("Authorization"); got != "Bearer "+token {
			return fmt.Errorf("%s went with another token than the user's own", c.Endpoint)
		}
		if c.Status >= 400 || c.Status == 0 {
			return fmt.Errorf("%s answered %d", c.Endpoint, c.Status)
		}
	}
	i := 0
	for _, c := range calls {
		if i < len(must) && c.Endpoint == must[i] {
			i++
		}
	}
	if i < len(must) {
		return fmt.Errorf("the journey must call %s (in this order); it called %s", strings.Join(must, ", "), endpointsOf(calls))
	}
	return nil
}

func endpointsOf(calls []simCall) string {
	names := make([]string, 0, len(calls))
	for _, c := range calls {
		names = append(names, c.Endpoint)
	}
	return strings.Join(names, ", ")
}

// latencyLab holds what the journeys share: the user, their browser, the ids read along the way.
type latencyLab struct {
	l       *lab
	user    *signedIn
	browser *http.Client
	api     *apiclient.Client
	apiCtx  context.Context

	tofID                int32
	productID            int32
	quotePath            string
	quoteID              int64
	basketID, rootNodeID int64
	addonProductID       int32
	tofProduct           int32
	tag, digest, since   string
	// batchNumbers are the contracts the batch check journey checks.
	batchNumbers   []string
	worklist       string // ten quote numbers, one per line
	contractID     int32
	confirmedState string
	// archiveVals is what the contract page's archive button posts (hx-vals: the number, signed).
	archiveVals url.Values
}

// measureLatency runs every journey once with the simulator answering in labLatency and reports the
// table (latency_<journey>_{calls,rounds,ms,floor}).
func measureLatency(ctx context.Context, l *lab, rep *report) error {
	fault := map[string]any{"endpoint": "*", "fault": map[string]any{"delay": labLatency.String()}}
	if err := simAdminJSON(ctx, l, http.MethodPost, "/_sim/faults", fault); err != nil {
		return err
	}
	defer func() { _ = simAdmin(context.WithoutCancel(ctx), l, http.MethodDelete, "/_sim/faults", nil) }()

	user, err := signIn(ctx, l.portal, benchUser(27))
	if err != nil {
		return err
	}
	browser, err := user.browser(l.portal.url)
	if err != nil {
		return err
	}
	api, err := l.v2Client()
	if err != nil {
		return err
	}
	x := &latencyLab{l: l, user: user, browser: browser, api: api, apiCtx: apiclient.WithToken(ctx, user.accessToken)}

	var results []journeyResult
	var failures []string
	for _, j := range x.journeys(ctx) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		res, err := x.measure(ctx, j)
		if err != nil {
			return fmt.Errorf("%s: %w", j.name, err)
		}
		results = append(results, res)
		if res.rounds > res.floor {
			failures = append(failures, fmt.Sprintf("%s: %d round trips, floor %d", j.name, res.rounds, res.floor))
		}
	}
	// Start page to quote on screen, as one person does it.
	startToQuote := journeyResult{name: "start_to_quote_total", floor: 7}
	for _, r := range results {
		if slices.Contains([]string{"quote_start_page", "quote_start_session", "quote_start_products", "quote_create", "quote_page"}, r.name) {
			startToQuote.calls += r.calls
			startToQuote.rounds += r.rounds
			startToQuote.took += r.took
		}
	}
	results = append(results, startToQuote)
	if startToQuote.rounds > startToQuote.floor {
		failures = append(failures, fmt.Sprintf("start page to quote: %d round trips, target %d", startToQuote.rounds, startToQuote.floor))
	}

	tw := tabwriter.NewWriter(rep.stderr, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "journey (v2 at %s)\tv2 calls\tround trips\tms\tfloor\t\n", labLatency)
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t\n", r.name, r.calls, r.rounds, r.took.Milliseconds(), r.floor)
	}
	_ = tw.Flush()
	for _, r := range results {
		rep.add("latency_"+r.name+"_calls", float64(r.calls), "calls")
		rep.add("latency_"+r.name+"_rounds", float64(r.rounds), "round trips")
		rep.add("latency_"+r.name+"_ms", float64(r.took.Microseconds())/1000, "ms")
		rep.add("latency_"+r.name+"_floor", float64(r.floor), "round trips")
	}
	if err := x.measureBatchEnd(ctx, rep); err != nil {
		return fmt.Errorf("batch progress: %w", err)
	}
	// Above the floor is a figure, not a failure of the run (the spec's rules are: checkCalls).
	rep.add("latency_journeys_above_floor", float64(len(failures)), "journeys")
	for _, f := range failures {
		fmt.Fprintf(rep.stderr, "portalbench: latency ABOVE FLOOR: %s\n", f)
	}
	return nil
}

// measure runs one journey between two reads of the simulator's request log.
func (x *latencyLab) measure(ctx context.Context, j journey) (journeyResult, error) {
	if j.prepare != nil {
		if err := j.prepare(); err != nil {
			return journeyResult{}, err
		}
	}
	if err := simAdmin(ctx, x.l, http.MethodPost, "/_sim/reset-requests", nil); err != nil {
		return journeyResult{}, err
	}
	start := time.Now()
	if err := j.run(); err != nil {
		return journeyResult{}, err
	}
	took := time.Since(start)
	var calls []simCall
	if err := simAdmin(ctx, x.l, http.MethodGet, "/_sim/requests", &calls); err != nil {
		return journeyResult{}, err
	}
	if err := checkCalls(calls, x.user.accessToken, j.must); err != nil {
		return journeyResult{}, err
	}
	return journeyResult{name: j.name, calls: len(calls), rounds: roundTrips(calls, labLatency), floor: j.floor, took: took}, nil
}

// answer is a portal response as the browser got it.
type answer struct {
	status int
	header http.Header
	body   []byte
}

// do sends one request as the page does (htmx when hx, same origin) and fails on any status but ok.
func (x *latencyLab) do(ctx context.Context, method, path string, form url.Values, hx bool, ok int) (answer, error) {
	var body io.Reader
	if form != nil && method == http.MethodPost {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, x.l.portal.url+path, body)
	if err != nil {
		return answer{}, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	if hx {
		req.Header.Set("HX-Request", "true")
	}
	if method != http.MethodGet {
		req.Header.Set("Origin", x.l.portal.url)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
	}
	resp, err := x.browser.Do(req)
	if err != nil {
		return answer{}, err
	}
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return answer{}, err
	}
	if resp.StatusCode != ok {
		return answer{}, fmt.Errorf("%s %s: %s, want %d: %.300s", method, path, resp.Status, ok, data)
	}
	return answer{status: resp.StatusCode, header: resp.Header, body: data}, nil
}

// loadRegionPattern finds the regions a page loads itself once shown (hx-trigger="load").
var loadRegionPattern = regexp.MustCompile(`hx-get="([^"]+)"\s+hx-trigger="load"`)

// page loads a full page and the regions it loads on its own, as the browser does.
func (x *latencyLab) page(ctx context.Context, path string) (answer, error) {
	a, err := x.do(ctx, http.MethodGet, path, nil, false, http.StatusOK)
	if err != nil {
		return a, err
	}
	for _, m := range loadRegionPattern.FindAllSubmatch(a.body, -1) {
		if _, err := x.do(ctx, http.MethodGet, htmlUnescape(string(m[1])), nil, true, http.StatusOK); err != nil {
			return a, err
		}
	}
	return a, nil
}

func htmlUnescape(s string) string { return strings.ReplaceAll(s, "&amp;", "&") }

// archiveButtonPattern finds the hx-vals of the contract page's archive button.
var archiveButtonPattern = regexp.MustCompile(`<button[^>]*hx-vals="([^"]*)"[^>]*data-testid="archive-button"`)

// archiveButtonVals reads what the archive button posts, as htmx does (hx-vals is JSON).
func archiveButtonVals(page []byte) (url.Values, error) {
	m := archiveButtonPattern.FindSubmatch(page)
	if m == nil {
		return nil, errors.New("the contract page's archive button carries no hx-vals")
	}
	var vals map[string]string
	if err := json.Unmarshal([]byte(html.UnescapeString(string(m[1]))), &vals); err != nil {
		return nil, fmt.Errorf("the archive button's hx-vals: %w", err)
	}
	out := url.Values{}
	for k, v := range vals {
		out.Set(k, v)
	}
	return out, nil
}

// journeys are the lab's journeys in the order a person makes them (each may use what the one before
// read: the quote it created, the contract it generated).
func (x *latencyLab) journeys(ctx context.Context) []journey {
	const cpqID, customerID = 1, 1
	form := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	withDigest := func(v url.Values) url.Values {
		if x.digest != "" {
			v.Set("prev", x.digest)
		}
		return v
	}
	keepDigest := func(a answer) {
		if d, ok := digestIn(a.body); ok {
			x.digest = d
		}
	}
	return []journey{
		{name: "customer_list_first_view", floor: 1, run: func() error {
			_, err := x.page(ctx, "/customers")
			return err
		}},
		{name: "customer_search_configurator", floor: 1, run: func() error {
			_, err := x.do(ctx, http.MethodGet, "/customers?cpqId=1&q=a", nil, true, http.StatusOK)
			return err
		}},
		{name: "quote_start_page", floor: 1, run: func() error {
			_, err := x.page(ctx, "/quotes")
			return err
		}},
		{name: "quote_start_session", floor: 1, must: []string{`cpq.init`}, run: func() error {
			a, err := x.do(ctx, http.MethodPost, "/quotes/new", form("cpqId", "1", "customerId", "1",
				"customerName", "Bench customer", "configuratorName", "Bench configurator"), true, http.StatusOK)
			if err != nil {
				return err
			}
			m := regexp.MustCompile(`/quotes/new/1/1/tofs/(\d+)/products`).FindSubmatch(a.body)
			if m == nil {
				return errors.New("the session step offers no offer type")
			}
			id, _ := strconv.ParseInt(string(m[1]), 10, 32)
			x.tofID = int32(id)
			return nil
		}},
		{name: "quote_start_products", floor: 1, must: []string{`cpq.validproducts`}, run: func() error {
			a, err := x.do(ctx, http.MethodGet, fmt.Sprintf("/quotes/new/%d/%d/tofs/%d/products", cpqID, customerID, x.tofID), nil, true, http.StatusOK)
			if err != nil {
				return err
			}
			m := regexp.MustCompile(`name="productId"[^>]*value="(\d+)"`).FindSubmatch(a.body)
			if m == nil {
				return fmt.Errorf("the products step offers no product: %.500s", a.body)
			}
			x.productFromChoice(string(m[1]))
			// The form may carry each product's TOF product id (so creating needs no second call 9).
			if t := regexp.MustCompile(`name="tofProduct"[^>]*value="` + string(m[1]) + `:(\d+)"`).FindSubmatch(a.body); t != nil {
				x.productFromChoice(string(m[1]) + ":" + string(t[1]))
			}
			return nil
		}},
		{name: "quote_create", floor: 1, must: []string{`cpq.addcart`}, run: func() error {
			v := form("productId", itoa(x.productID), "label", "Latency lab", "customerQuoteId", "")
			if x.tofProduct != 0 {
				v.Set("tofProduct", itoa(x.productID)+":"+itoa(x.tofProduct))
			}
			a, err := x.do(ctx, http.MethodPost, fmt.Sprintf("/quotes/new/%d/%d/tofs/%d", cpqID, customerID, x.tofID), v, true, http.StatusOK)
			if err != nil {
				return err
			}
			x.quotePath = a.header.Get("HX-Redirect")
			parts := strings.Split(x.quotePath, "/")
			if len(parts) != 5 {
				return fmt.Errorf("the quote was created at %q", x.quotePath)
			}
			x.quoteID, err = strconv.ParseInt(parts[4], 10, 64)
			return err
		}},
		{name: "quote_page", floor: 1, must: []string{`cpq.toflist`}, run: func() error {
			a, err := x.page(ctx, x.quotePath)
			if err != nil {
				return err
			}
			keepDigest(a)
			return nil
		}},
		{name: "addons_panel", floor: 1, must: []string{`cpq.validproducts`}, prepare: func() error {
			q, err := x.quoteNow()
			if err != nil {
				return err
			}
			cart := q.Carts[0]
			x.basketID, x.rootNodeID = cart.BasketID, cart.Root.NodeID
			return nil
		}, run: func() error {
			a, err := x.do(ctx, http.MethodGet, fmt.Sprintf("%s/carts/%d/items/%d/addons?tofId=%d", x.quotePath, x.basketID, x.rootNodeID, x.tofID), nil, true, http.StatusOK)
			if err != nil {
				return err
			}
			m := regexp.MustCompile(`name="productId"[^>]*value="(\d+)"`).FindSubmatch(a.body)
			if m == nil {
				return fmt.Errorf("the add-ons panel offers no add-on")
			}
			id, _ := strconv.ParseInt(string(m[1]), 10, 32)
			x.addonProductID = int32(id)
			return nil
		}},
		{name: "add_addon", floor: 2, must: []string{`cpq.toflist`, `cpq.additem`}, run: func() error {
			a, err := x.do(ctx, http.MethodPost, fmt.Sprintf("%s/carts/%d/items/%d/addons", x.quotePath, x.basketID, x.rootNodeID),
				withDigest(form("tofId", itoa(x.tofID), "productId", itoa(x.addonProductID))), true, http.StatusOK)
			keepDigest(a)
			return err
		}},
		{name: "quantity", floor: 2, must: []string{`cpq.toflist`, `cpq.quantity`}, run: func() error {
			a, err := x.do(ctx, http.MethodPost, fmt.Sprintf("%s/carts/%d/quantity", x.quotePath, x.basketID),
				withDigest(form("quantity", "2")), true, http.StatusOK)
			keepDigest(a)
			return err
		}},
		{name: "discounts_panel", floor: 1, must: []string{`cpq.discounts`}, run: func() error {
			_, err := x.do(ctx, http.MethodGet, x.quotePath+"/discounts", nil, true, http.StatusOK)
			return err
		}},
		// "Generate contract" asks its confirmation when clicked (the quote read now) and posts the
		// state confirmed; the generation reads the quote again to check it, then generates.
		{name: "contract_generate_confirm", floor: 1, must: []string{`cpq.toflist`}, run: func() error {
			a, err := x.do(ctx, http.MethodGet, x.quotePath+"/contract/confirm", nil, true, http.StatusOK)
			if err != nil {
				return err
			}
			var confirmation struct{ State string }
			if err := json.Unmarshal(a.body, &confirmation); err != nil || confirmation.State == "" {
				return fmt.Errorf("the generate confirmation names no state: %.300s", a.body)
			}
			x.confirmedState = confirmation.State
			return nil
		}},
		{name: "contract_generate", floor: 2, must: []string{`cpq.toflist`, `contracts.generate`}, run: func() error {
			a, err := x.do(ctx, http.MethodPost, x.quotePath+"/contract", form("confirmed", x.confirmedState), true, http.StatusOK)
			if err != nil {
				return err
			}
			m := regexp.MustCompile(`/contracts/(\d+)`).FindSubmatch(a.body)
			if m == nil {
				return errors.New("the documents region links no contract")
			}
			id, _ := strconv.ParseInt(string(m[1]), 10, 32)
			x.contractID = int32(id)
			return nil
		}},
		{name: "contract_pdf_frame", floor: 1, run: func() error {
			_, err := x.do(ctx, http.MethodGet, fmt.Sprintf("/contracts/%d/pdf?inline=1", x.contractID), nil, false, http.StatusOK)
			return err
		}},
		{name: "send_for_signature", floor: 1, must: []string{`signature.request`}, run: func() error {
			_, err := x.do(ctx, http.MethodPost, fmt.Sprintf("/contracts/%d/signature", x.contractID),
				form("email", "signer@example.com", "signerName", "Sam Signer", "message", ""), true, http.StatusOK)
			return err
		}},
		{name: "remove_signature_request", floor: 1, must: []string{`signature.remove`}, run: func() error {
			_, err := x.do(ctx, http.MethodDelete, fmt.Sprintf("/contracts/%d/signature", x.contractID), nil, true, http.StatusOK)
			return err
		}},
		{name: "contract_page", floor: 1, must: []string{`contracts.get`}, run: func() error {
			a, err := x.page(ctx, fmt.Sprintf("/contracts/%d", x.contractID))
			if err != nil {
				return err
			}
			x.archiveVals, err = archiveButtonVals(a.body)
			return err
		}},
		{name: "audit_page", floor: 1, must: []string{`contracts.audit`}, run: func() error {
			_, err := x.page(ctx, fmt.Sprintf("/audits/%d", x.quoteID))
			return err
		}},
		// Archive: the button posts the contract's number, signed by the portal, so the archive call
		// goes first; then the contract's new state and the archive payload side by side.
		{name: "archive_contract", floor: 2, must: []string{`contracts.archive`}, run: func() error {
			a, err := x.do(ctx, http.MethodPost, fmt.Sprintf("/contracts/%d/archive", x.contractID), x.archiveVals, true, http.StatusOK)
			if err != nil {
				return err
			}
			for _, m := range loadRegionPattern.FindAllSubmatch(a.body, -1) {
				if _, err := x.do(ctx, http.MethodGet, htmlUnescape(string(m[1])), nil, true, http.StatusOK); err != nil {
					return err
				}
			}
			return nil
		}},
		{name: "audit_worklist_10_quotes", floor: 3,
			prepare: func() error { return x.prepareWorklist(ctx) },
			run: func() error {
				_, err := x.do(ctx, http.MethodGet, "/audits/worklist?quotes="+url.QueryEscape(x.worklist), nil, false, http.StatusOK)
				return err
			}},
		{name: "quote_poll_unchanged", floor: 1,
			prepare: func() error { return x.preparePoll(ctx, false) },
			run:     func() error { return x.poll(ctx, http.StatusNotModified) }},
		// The viewer's own poll finds the change: its read (call 10), then the audit for who and what.
		// When a colleague's change went through this replica, the portal knows the new tag already
		// and both reads go side by side (one round trip; handler test TestLiveNoticeReadsInParallel).
		{name: "quote_poll_after_change", floor: 2, must: []string{`cpq.toflist`, `contracts.audit`},
			prepare: func() error { return x.preparePoll(ctx, true) },
			run:     func() error { return x.poll(ctx, http.StatusOK) }},
		// The batch archive's check of 20 contracts (issue 42 item 6): each contract read once,
		// PORTAL_BATCH_CONCURRENCY (4) at a time, so 5 round trips; the draft's page calls nothing
		// (handler test TestBatchCheckRoundTrips).
		{name: "batch_check_20_contracts", floor: 5, must: []string{`contracts.bynumber`},
			prepare: func() error {
				var err error
				x.batchNumbers, err = makeContracts(ctx, x.l, x.user.accessToken, 20)
				return err
			},
			run: func() error {
				a, err := x.do(ctx, http.MethodPost, "/contracts/batch-archive",
					url.Values{"numbers": {strings.Join(x.batchNumbers, "\n")}, "include_unsent": {"1"}}, false, http.StatusSeeOther)
				if err != nil {
					return err
				}
				_, err = x.do(ctx, http.MethodGet, a.header.Get("Location"), nil, false, http.StatusOK)
				return err
			}},
	}
}

// tofProduct is the TOF product id of the chosen main product, when the products step carries it.
func (x *latencyLab) productFromChoice(v string) {
	main, tof, _ := strings.Cut(v, ":")
	id, _ := strconv.ParseInt(main, 10, 32)
	x.productID = int32(id)
	if t, err := strconv.ParseInt(tof, 10, 32); err == nil {
		x.tofProduct = int32(t)
	}
}

// quoteNow reads the quote from the v2 API directly (outside the measured window).
func (x *latencyLab) quoteNow() (*apiclient.Quote, error) {
	return x.api.CPQ.TOFList(x.apiCtx, 1, 1, x.quoteID)
}

// prepareWorklist makes ten quotes (directly on the simulator, outside the measured window).
func (x *latencyLab) prepareWorklist(ctx context.Context) error {
	var ids []string
	for range 10 {
		q, err := newBenchQuote(ctx, x.l, x.user)
		if err != nil {
			return err
		}
		ids = append(ids, strconv.FormatInt(q.quoteID, 10))
	}
	x.worklist = strings.Join(ids, "\n")
	return nil
}

// preparePoll reads the page's change tag and, for a change, lets a colleague (the same user's
// token, outside the measured window) change the quote; then it waits past the interval in which
// the portal shares one read among viewers, so the poll reads.
func (x *latencyLab) preparePoll(ctx context.Context, change bool) error {
	a, err := x.do(ctx, http.MethodGet, x.quotePath, nil, false, http.StatusOK)
	if err != nil {
		return err
	}
	m := digestPattern.FindSubmatch(a.body)
	if m == nil {
		return errors.New("the quote page has no change tag")
	}
	x.tag = string(m[2])
	x.since = ""
	if u := regexp.MustCompile(`(?:^|;)u=(\d+)`).FindStringSubmatch(htmlUnescape(string(m[1]))); u != nil {
		x.since = u[1]
	}
	if change {
		init, err := x.api.CPQ.Init(x.apiCtx, 1, 1)
		if err != nil {
			return err
		}
		if _, err := x.api.CPQ.SetQuantity(x.apiCtx, init.SessionID, 1, x.quoteID, x.basketID, 5); err != nil {
			return err
		}
	}
	time.Sleep(pollInterval + 100*time.Millisecond)
	return nil
}

// poll sends the live notice's request with the page's tag, as app.js does.
func (x *latencyLab) poll(ctx context.Context, want int) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, x.l.portal.url+x.quotePath+"/changes?since="+x.since, nil)
	if err != nil {
		return err
	}
	req.Header.Set("If-None-Match", `"`+x.tag+`"`)
	req.Header.Set("HX-Request", "true")
	resp, err := x.browser.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != want {
		return fmt.Errorf("poll answered %s, want %d", resp.Status, want)
	}
	return nil
}

// progressLink is the running progress region's request for its next state.
var progressLink = regexp.MustCompile(`id="batch-progress"[^>]*hx-get="([^"]+)"`)

// measureBatchEnd follows a 5-contract batch archive's progress region as the page does (each answer
// asks for the next state) and reports how long after the batch's last archive call was answered the
// page showed the batch finished (latency_batch_end_shown_ms; target 250).
func (x *latencyLab) measureBatchEnd(ctx context.Context, rep *report) error {
	numbers, err := makeContracts(ctx, x.l, x.user.accessToken, 5)
	if err != nil {
		return err
	}
	post := func(path string, form url.Values) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, x.l.portal.url+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", x.l.portal.url)
		resp, err := x.browser.Do(req)
		if err != nil {
			return "", err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusSeeOther {
			return "", fmt.Errorf("POST %s: %s", path, resp.Status)
		}
		return resp.Header.Get("Location"), nil
	}
	// Only generated contracts: included explicitly (never-sent ones are left out by default).
	batch, err := post("/contracts/batch-archive", url.Values{"numbers": {strings.Join(numbers, "\n")}, "include_unsent": {"1"}})
	if err != nil {
		return err
	}
	if err := simAdmin(ctx, x.l, http.MethodPost, "/_sim/reset-requests", nil); err != nil {
		return err
	}
	if _, err := post(batch+"/start", url.Values{}); err != nil {
		return err
	}
	page, err := x.do(ctx, http.MethodGet, batch, nil, false, http.StatusOK)
	if err != nil {
		return err
	}
	var shown time.Time
	next := progressLink.FindSubmatch(page.body)
	for requests := 0; next != nil; requests++ {
		if requests > 200 {
			return errors.New("the progress region never showed the end")
		}
		a, err := x.do(ctx, http.MethodGet, htmlUnescape(string(next[1])), nil, true, http.StatusOK)
		if err != nil {
			return err
		}
		shown = time.Now()
		next = progressLink.FindSubmatch(a.body)
	}
	var calls []simCall
	if err := simAdmin(ctx, x.l, http.MethodGet, `/_sim/requests?endpoint=contracts.archive`, &calls); err != nil {
		return err
	}
	if len(calls) != len(numbers) {
		return fmt.Errorf("%d archive calls, want %d", len(calls), len(numbers))
	}
	var end time.Time
	for _, c := range calls {
		if c.Answered.After(end) {
			end = c.Answered
		}
	}
	rep.add("latency_batch_end_shown_ms", float64(shown.Sub(end).Microseconds())/1000, "ms")
	return nil
}

// simAdminJSON posts a JSON body to the simulator's control API.
func simAdminJSON(ctx context.Context, l *lab, method, path string, body any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, method, l.simURL+path, strings.NewReader(string(data)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
		return fmt.Errorf("simulator %s %s: %s: %s", method, path, resp.Status, msg)
	}
	return nil
}
