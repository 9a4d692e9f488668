package handlers

import (
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/cpqportal/portal/internal/v2sim"
)

// Every request the portal sends to the v2 API, whether a person asked for it or the portal sent
// it on its own (readiness probes, cache refreshes, palette look-ups, the requests a page's htmx
// makes), follows the spec's header rules: section 5 (a bearer token on every call, Content-Type
// application/json with a JSON body) and R4 (X-SessionId on calls 3 to 9 and 11 to 16, never on
// 1, 2 and 10). The rules are read here from the spec, independently of the simulator's own table,
// and checked on the simulator's request log after the portal has been driven everywhere.

// specNoSessionHeader are the calls "made without" X-SessionId (section 5): list, init, toflist.
var specNoSessionHeader = map[string]bool{"cpq.list": true, "cpq.init": true, "cpq.toflist": true}

func TestEveryUpstreamCallFollowsTheSpecHeaderRules(t *testing.T) {
	t.Parallel()
	sp := newSecPortal(t, secOptions{})
	user := sp.login(t, "sales", "sales-demo")
	token := sp.tokenOf(t, user)
	w := sp.buildWorld(t, token, secPlainText("headers"))
	samples := w.sampleValues()
	sp.resetSim()

	// What the portal does on its own: readiness probes (as a load balancer sends them).
	for range 3 {
		if resp := sp.get(t, &http.Client{}, "/readyz", nil); resp.StatusCode != http.StatusOK {
			t.Errorf("readyz: %d %q", resp.StatusCode, resp.body)
		}
	}
	if reqs := sp.sim.Requests(); len(reqs) != 0 {
		t.Errorf("readiness probes sent %d v2 calls (first: %s %s), want none", len(reqs), reqs[0].Method, reqs[0].RequestURI)
	}

	// Every page and partial, every form as the page offers it, and palette look-ups of each kind.
	crawled := sp.crawl(t, user, samples)
	for _, f := range crawled.forms {
		sp.submit(t, user, f, nil, nil)
	}
	for _, q := range []string{"", "a", samples["customerId"], samples["quoteId"], samples["contractId"], w.contractNo, "audits"} {
		sp.get(t, user, "/palette?q="+url.QueryEscape(q), htmx)
	}

	reqs := sp.sim.Requests()
	endpoints := map[string]bool{}
	for _, rr := range reqs {
		checkSpecHeaders(t, rr)
		endpoints[rr.Endpoint] = true
	}
	// The check is not vacuous: calls of each kind of rule were made.
	for _, name := range []string{"cpq.list", "cpq.toflist", "cpq.validproducts", "cpq.quantity", "customers.list", "contracts.get"} {
		if !endpoints[name] {
			t.Errorf("driving the portal everywhere made no %s call: the header check did not cover it", name)
		}
	}
	t.Logf("%d v2 calls of %d endpoints checked", len(reqs), len(endpoints))
}

// checkSpecHeaders reports every header rule of the spec that rr breaks.
func checkSpecHeaders(t *testing.T, rr v2sim.RecordedRequest) {
	t.Helper()
	what := fmt.Sprintf("%s %s (%s)", rr.Method, rr.RequestURI, rr.Endpoint)
	auth := rr.Header.Values("Authorization")
	if len(auth) != 1 || !strings.HasPrefix(auth[0], "Bearer ") || strings.TrimSpace(strings.TrimPrefix(auth[0], "Bearer ")) == "" {
		t.Errorf("%s: Authorization %q, want one \"Bearer <token>\" (spec section 5)", what, auth)
	}
	if rr.Status == http.StatusUnauthorized {
		t.Errorf("%s: the v2 API refused the token (401)", what)
	}
	if rr.Body != "" {
		mediaType, _, err := mime.ParseMediaType(rr.Header.Get("Content-Type"))
		if err != nil || (mediaType != "application/json" && mediaType != "multipart/form-data") {
			t.Errorf("%s: a body with Content-Type %q, want application/json (spec section 5)", what, rr.Header.Get("Content-Type"))
		}
	}
	sessionIDs := rr.Header.Values("X-SessionId")
	switch {
	case specNoSessionHeader[rr.Endpoint]:
		if len(sessionIDs) != 0 {
			t.Errorf("%s: X-SessionId %q on a call made without it (spec section 5)", what, sessionIDs)
		}
	case strings.HasPrefix(rr.Endpoint, "cpq."):
		if len(sessionIDs) != 1 || sessionIDs[0] == "" {
			t.Errorf("%s: X-SessionId %q, want the configuration session's id (rule R4)", what, sessionIDs)
		}
	default:
		// Attachments, contracts, signatures and customers are not configuration-session calls.
		if len(sessionIDs) != 0 {
			t.Errorf("%s: X-SessionId %q outside the configuration flow", what, sessionIDs)
		}
	}
}
