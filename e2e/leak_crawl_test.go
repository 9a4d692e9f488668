package e2e

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/playwright-community/playwright-go"
	"github.com/xuri/excelize/v2"
)

// The machinery of the leak crawl (leak_test.go, issue 38 item 2): the portal's GET routes read
// from the router's source, a plain HTTP client with a browser's sign-in, the crawl, and the
// scans of what comes back.

// leakSkipped are the GET routes the crawl does not fetch, each with the reason. Any other GET
// route of internal/handlers/routes.go is crawled: a route added later is crawled too, or the
// test fails until it is listed here.
var leakSkipped = map[string]string{
	"/healthz":       "the health answer carries no data of anyone",
	"/readyz":        "the readiness answer carries no data of anyone",
	"/static/*path":  "embedded assets, the same bytes for everyone",
	"/auth/login":    "starts a new sign-in at the provider (would replace the crawl's session)",
	"/auth/callback": "completes a sign-in at the provider; without its state it only answers an error",
}

// leakRouteCall matches a route registration in routes.go: the receiver, the method, the path.
var leakRouteCall = regexp.MustCompile(`\b(\w+)\.(GET|HEAD|POST|PUT|PATCH|DELETE|Any|Handle|Match|Static|StaticFS|StaticFile)\("([^"]*)"`)

// leakGroup matches a route group: its variable and its prefix.
var leakGroup = regexp.MustCompile(`\b(\w+) := r\.Group\("([^"]*)"`)

// leakGETRoutes reads every GET route the portal registers (internal/handlers/routes.go, the one
// place of the whole surface) and fails on a registration it cannot read (Any, Handle, Static),
// so no route escapes the crawl by being registered another way.
func leakGETRoutes(t *testing.T) []string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("..", "internal", "handlers", "routes.go"))
	check(t, err, "read the router's source")
	prefixes := map[string]string{"r": ""}
	for _, m := range leakGroup.FindAllStringSubmatch(string(src), -1) {
		prefixes[m[1]] = strings.TrimSuffix(m[2], "/")
	}
	var routes []string
	for _, m := range leakRouteCall.FindAllStringSubmatch(string(src), -1) {
		prefix, ok := prefixes[m[1]]
		if !ok {
			t.Fatalf("routes.go registers %s %q on %s, a router the crawl does not know: teach leakGETRoutes its prefix", m[2], m[3], m[1])
		}
		switch m[2] {
		case "GET":
			routes = append(routes, prefix+m[3])
		case "HEAD", "POST", "PUT", "PATCH", "DELETE":
		default:
			t.Fatalf("routes.go registers %q with %s: the crawl cannot tell its methods; register GET routes with GET", m[3], m[2])
		}
	}
	if len(routes) < 40 {
		t.Fatalf("found only %d GET routes in routes.go: the parser no longer matches the router's source", len(routes))
	}
	return routes
}

// leakClient fetches the portal as one signed-in person, with their browser's cookies.
type leakClient struct {
	who    string
	base   string
	cookie string
	http   *http.Client
	// exports holds a place while an export is fetched: the portal prepares at most two exports
	// per person at once (429 beyond), and the crawl is one person.
	exports chan struct{}
}

// leakClientOf takes the session cookies of a signed-in page for plain HTTP requests (the crawl
// is thousands of requests: a browser would make it minutes).
func leakClientOf(t *testing.T, who string, page playwright.Page, base string) *leakClient {
	t.Helper()
	cookies, err := page.Context().Cookies(base)
	check(t, err, "read "+who+"'s cookies")
	var parts []string
	for _, c := range cookies {
		parts = append(parts, c.Name+"="+c.Value)
	}
	return &leakClient{who: who, base: base, cookie: strings.Join(parts, "; "), exports: make(chan struct{}, 2), http: &http.Client{
		Timeout: 30 * time.Second,
		// Redirects are answers too: a Location may carry what the page would show.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// leakResp is one fetched answer.
type leakResp struct {
	path     string
	htmx     bool
	status   int
	ctype    string
	location string
	body     []byte
	err      error
	text     string // leakText of the answer, made once
}

func (c *leakClient) get(ctx context.Context, path string, htmx bool) leakResp {
	r := leakResp{path: path, htmx: htmx}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		r.err = err
		return r
	}
	if strings.Contains(path, "export") {
		c.exports <- struct{}{}
		defer func() { <-c.exports }()
	}
	req.Header.Set("Cookie", c.cookie)
	req.Header.Set("Accept-Language", "en-GB")
	if htmx {
		req.Header.Set("HX-Request", "true")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		r.err = err
		return r
	}
	defer resp.Body.Close()
	r.status, r.ctype, r.location = resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("Location")
	r.body, r.err = io.ReadAll(resp.Body)
	return r
}

// leakFetch is one request of the crawl.
type leakFetch struct {
	path string
	htmx bool
}

// fetchAll fetches every request, a few at a time (the machine is shared), in order of requests.
func (c *leakClient) fetchAll(t *testing.T, fetches []leakFetch) []leakResp {
	t.Helper()
	out := make([]leakResp, len(fetches))
	var wg sync.WaitGroup
	next := make(chan int)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				out[i] = c.get(t.Context(), fetches[i].path, fetches[i].htmx)
				if out[i].err == nil {
					out[i].text = leakText(t, out[i])
				}
			}
		}()
	}
	for i := range fetches {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, r := range out {
		if r.err != nil {
			t.Fatalf("%s fetching %s: %v", c.who, r.path, r.err)
		}
		if r.status >= 500 || r.status == http.StatusTooManyRequests {
			t.Errorf("%s: %s answered %d: %.300s", c.who, r.path, r.status, r.body)
		}
	}
	return out
}

// leakText is what a person gets from an answer, as text to scan: an HTML page as is, a CSV or
// XLSX export as "header=value" per cell (so a column's meaning travels with its value), a
// redirect's Location.
func leakText(t *testing.T, r leakResp) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("Location=" + r.location + "\n")
	switch {
	case strings.Contains(r.ctype, "spreadsheetml"):
		f, err := excelize.OpenReader(bytes.NewReader(r.body))
		if err != nil {
			t.Errorf("%s: not a readable XLSX: %v", r.path, err)
			return string(r.body)
		}
		defer f.Close()
		for _, sheet := range f.GetSheetList() {
			rows, err := f.GetRows(sheet)
			if err != nil {
				t.Errorf("%s: the XLSX's rows: %v", r.path, err)
			}
			b.WriteString(leakCells(rows))
		}
	case strings.Contains(r.ctype, "text/csv"):
		rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(r.body, []byte("\xEF\xBB\xBF")))).ReadAll()
		if err != nil {
			t.Errorf("%s: not a readable CSV: %v", r.path, err)
			return string(r.body)
		}
		b.WriteString(leakCells(rows))
	default:
		b.Write(r.body)
	}
	return b.String()
}

// leakCells writes a table as "header=value" per cell, one row per line.
func leakCells(rows [][]string) string {
	if len(rows) == 0 {
		return ""
	}
	var b strings.Builder
	for _, row := range rows[1:] {
		for i, cell := range row {
			header := ""
			if i < len(rows[0]) {
				header = rows[0][i]
			}
			b.WriteString(header + "=" + cell + "\t")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// leakSecrets is what one person must never learn: the other's rows.
type leakSecrets struct {
	literals    map[string]string // exact text -> what it is
	customerIDs map[string]string
	quoteIDs    map[string]string
	contractIDs map[string]string
	amounts     map[int64]string // cents -> what it sums
}

// leakIDPatterns find ids in text, each with the set it is looked up in.
var leakIDPatterns = []struct {
	re   *regexp.Regexp
	kind string // customer, quote, contract, row (quote or contract)
}{ // (no leading \b: the pattern's literal start lets the regexp skip ahead)
	{regexp.MustCompile(`/customers/(\d+)\b`), "customer"},
	{regexp.MustCompile(`/quotes/\d+/(\d+)/\d+`), "customer"},
	{regexp.MustCompile(`/quotes/\d+/\d+/(\d+)`), "quote"},
	{regexp.MustCompile(`/quotes/new/\d+/(\d+)/`), "customer"},
	{regexp.MustCompile(`/audits/(\d+)\b`), "quote"},
	{regexp.MustCompile(`/palette/quotes/(\d+)\b`), "quote"},
	{regexp.MustCompile(`/contracts/(\d+)\b`), "contract"},
	{regexp.MustCompile(`customer(?:Id)?=(\d+)\b`), "customer"},
	{regexp.MustCompile(`(?i)customer (\d+)\b`), "customer"}, // in words, e.g. the v2's refusal
	{regexp.MustCompile(`quoteId=(\d+)\b`), "quote"},
	{regexp.MustCompile(`data-id="(\d+)"`), "row"},
	{regexp.MustCompile(`data-(?:quote|quote-id)="(\d+)"`), "quote"},
	{regexp.MustCompile(`data-(?:contract|contract-id)="(\d+)"`), "contract"},
	{regexp.MustCompile(`data-customer(?:-id)?="(\d+)"`), "customer"},
	{regexp.MustCompile(`customer id=(\d+)\t`), "customer"},
	{regexp.MustCompile(`contract id=(\d+)\t`), "contract"},
	{regexp.MustCompile(`quote(?: id)?=(\d+)\t`), "quote"},
	{regexp.MustCompile(`link=[^\t]*/(\d+)\t`), "row"},
}

// leakMoney finds amounts as any of the portal's languages write them (1,234.50 1.234,50
// 1 234,50 1234.50): every amount with two decimals, in cents.
var leakMoney = regexp.MustCompile(`\d[\d.,\x{00a0}\x{202f} ']*[.,]\d\d(?:\D|$)`)

// leakFinding is one thing found where it must not be.
type leakFinding struct {
	path, what, context string
}

// scan finds the secrets in r. A secret the request itself carries (an id in its path or
// query, typed by the person) is not a finding where it is echoed; anything else is.
func (s *leakSecrets) scan(t *testing.T, r leakResp) []leakFinding {
	t.Helper()
	text := r.text
	asked := leakRequestValues(r.path)
	var out []leakFinding
	add := func(what string, at int, n int) {
		lo, hi := max(0, at-70), min(len(text), at+n+50)
		out = append(out, leakFinding{path: r.path, what: what, context: strings.Join(strings.Fields(text[lo:hi]), " ")})
	}
	for lit, what := range s.literals {
		if leakAskedFor(asked, lit) {
			continue
		}
		if i := strings.Index(text, lit); i >= 0 {
			add(what, i, len(lit))
		} else if i := strings.Index(text, htmlEscape(lit)); i >= 0 {
			add(what, i, len(lit))
		}
	}
	for _, p := range leakIDPatterns {
		for _, m := range p.re.FindAllStringSubmatchIndex(text, -1) {
			id := text[m[2]:m[3]]
			if leakAskedFor(asked, id) {
				continue
			}
			var what string
			switch p.kind {
			case "customer":
				what = s.customerIDs[id]
			case "quote":
				what = s.quoteIDs[id]
			case "contract":
				what = s.contractIDs[id]
			case "row":
				what = s.quoteIDs[id] + s.contractIDs[id]
			}
			if what != "" {
				add(what, m[0], m[1]-m[0])
			}
		}
	}
	for _, m := range leakMoney.FindAllStringIndex(text, -1) {
		token := strings.TrimRight(text[m[0]:m[1]], "\n\t <&\"'")
		var digits strings.Builder
		for _, r := range token {
			if r >= '0' && r <= '9' {
				digits.WriteRune(r)
			}
		}
		var cents int64
		if _, err := fmt.Sscan(digits.String(), &cents); err != nil {
			continue
		}
		if what, ok := s.amounts[cents]; ok {
			add(what+" ("+token+")", m[0], m[1]-m[0])
		}
	}
	return out
}

// leakRequestValues are the values a request carries: its path's segments and query values.
func leakRequestValues(path string) []string {
	u, err := url.Parse(path)
	if err != nil {
		return nil
	}
	out := strings.Split(u.Path, "/")
	for _, vs := range u.Query() {
		out = append(out, vs...)
	}
	return out
}

// leakAskedFor reports whether the person's own request holds secret (so its echo is no leak).
func leakAskedFor(asked []string, secret string) bool {
	return slices.ContainsFunc(asked, func(v string) bool { return v != "" && strings.Contains(v, secret) })
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// leakShape is what an answer tells beyond the query it echoes: for a page, the text and the
// links and row ids of its main region without the filter form; for an export, its rows. probe
// and control (the filter values) are replaced by one mark, so two answers to different filters
// compare equal when they tell the same.
func leakShape(t *testing.T, r leakResp, values ...string) string {
	t.Helper()
	text := r.text
	if strings.Contains(r.ctype, "text/html") {
		doc, err := goquery.NewDocumentFromReader(strings.NewReader(text))
		check(t, err, "parse "+r.path)
		root := doc.Find("main")
		if root.Length() == 0 {
			root = doc.Selection
		}
		root.Find(`script, style, template, input, select, textarea, [data-testid="work-filters"], [data-testid="work-as-of"], time`).Remove()
		var b strings.Builder
		b.WriteString(strings.Join(strings.Fields(root.Text()), " "))
		root.Find("[href], [data-id], [hx-get], [action]").Each(func(_ int, s *goquery.Selection) {
			for _, a := range []string{"href", "data-id", "hx-get", "action"} {
				if v, ok := s.Attr(a); ok {
					b.WriteString("\n" + a + "=" + v)
				}
			}
		})
		text = b.String()
	}
	text = leakRequestID.ReplaceAllString(fmt.Sprintf("status %d\n%s", r.status, text), "«request id»")
	for _, v := range values {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		for _, form := range []string{url.QueryEscape(v), url.PathEscape(v), strings.ReplaceAll(url.QueryEscape(v), "+", "%20"), htmlEscape(v), v} {
			text = strings.ReplaceAll(text, form, "∅")
		}
	}
	return text
}

// leakUncheckedCount is the lists' and figures' count of rows not checked yet
// (work.unchecked_count.*, in English: the crawl reads the portal in en-GB).
var leakUncheckedCount = regexp.MustCompile(`\d+\+? not checked yet`)

// leakGlued is a lower-case letter followed by an upper-case one: where two elements' text meet.
var leakGlued = regexp.MustCompile(`(\p{Ll})(\p{Lu})`)

// leakAsOf is when an export's row was last read: the crawl's own reads move it.
var leakAsOf = regexp.MustCompile(`as of \(UTC\)=[^\t]*`)

// leakWords is a shape as the sorted words it has: what the viewer's own visits between two
// fetches change (the order of their recent quotes, when their rows were last read) is not
// what tells the other's rows.
//
// A count of rows not checked yet, with nothing else of them, is what issue 38 allows a list or
// figure to say of rows the viewer's token has not read ("N not checked yet", no stage, value or
// filter applied: the filter pairs check that part); the words leave it out.
func leakWords(shape string) string {
	shape = leakUncheckedCount.ReplaceAllString(leakAsOf.ReplaceAllString(shape, ""), "")
	// Text of two elements the shape runs together ("generated" ending one row, "Quote" starting
	// the next) is two words, so a list whose own rows changed order has the same words.
	shape = leakGlued.ReplaceAllString(shape, "$1 $2")
	words := strings.Fields(shape)
	slices.Sort(words)
	return strings.Join(words, " ")
}

// leakWordDiff says which words an answer lost and gained between before and after.
func leakWordDiff(before, after string) string {
	count := map[string]int{}
	for _, w := range strings.Fields(before) {
		count[w]--
	}
	for _, w := range strings.Fields(after) {
		count[w]++
	}
	var lost, gained []string
	for _, w := range slices.Sorted(maps.Keys(count)) {
		for n := count[w]; n < 0; n++ {
			lost = append(lost, w)
		}
		for n := count[w]; n > 0; n-- {
			gained = append(gained, w)
		}
	}
	clip := func(ws []string) string { return strings.Join(ws[:min(len(ws), 25)], " ") }
	return fmt.Sprintf("before only [%s], after only [%s]", clip(lost), clip(gained))
}

// leakRequestID is the id every error answer shows (different for each request).
var leakRequestID = regexp.MustCompile(`[A-Z2-7]{26}`)

// leakComparable reports whether an answer is text the crawl compares (pages, partials, CSV, XLSX;
// not PDFs or ZIPs, which carry the time they were made).
func leakComparable(r leakResp) bool {
	return strings.Contains(r.ctype, "text/") || strings.Contains(r.ctype, "spreadsheetml") || strings.Contains(r.ctype, "json") || r.ctype == ""
}

// leakFirstDiff shows where two shapes part.
func leakFirstDiff(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-60)
	oneLine := strings.NewReplacer("\n", " ⏎ ").Replace
	return fmt.Sprintf("…%s… vs …%s…", oneLine(a[lo:min(len(a), i+100)]), oneLine(b[lo:min(len(b), i+100)]))
}

// leakForeign is what a viewer may not see: the other's rows, the stages only those have and the
// reasons their signers declined with.
type leakForeign struct {
	customers []testCustomer
	quotes    []*leakQuote
	contracts []leakContract
	stages    []string
	reasons   []string
}

// leakCrawlPlan is what the crawl fetches as one viewer.
type leakCrawlPlan struct {
	bare    []leakFetch     // every route with the viewer's own ids, and the lists unfiltered
	covered map[string]bool // the route patterns bare and foreign fetch
}

// leakEntityParam matches the parameters the crawl fills with the viewer's and the other's ids.
var leakEntityParam = regexp.MustCompile(`:(customerId|quoteId|contractId)\b`)

// leakParam matches a route's path parameter.
var leakParam = regexp.MustCompile(`[:*]\w+`)

// leakExpand fills a route's parameters: quote routes with each quote's configurator, customer
// and id; customer, quote and contract routes with each of theirs; other parameters (carts, items,
// attachments, jobs...) with 1, which names nothing of anyone's and must answer nothing.
func leakExpand(pattern string, customers []testCustomer, quotes []*leakQuote, contracts []leakContract) []string {
	fill := func(p string) string { return leakParam.ReplaceAllString(p, "1") }
	var out []string
	switch {
	case strings.Contains(pattern, ":quoteId") && strings.Contains(pattern, ":customerId"):
		for _, q := range quotes {
			out = append(out, fill(strings.NewReplacer(":cpqId", q.cpq, ":customerId", q.customer, ":quoteId", q.id).Replace(pattern)))
		}
	case strings.Contains(pattern, ":customerId"):
		for _, c := range customers {
			out = append(out, fill(strings.NewReplacer(":cpqId", strconv.Itoa(c.CPQID), ":customerId", strconv.Itoa(c.ID)).Replace(pattern)))
		}
	case strings.Contains(pattern, ":quoteId"):
		for _, q := range quotes {
			out = append(out, fill(strings.ReplaceAll(pattern, ":quoteId", q.id)))
		}
	case strings.Contains(pattern, ":contractId"):
		for _, c := range contracts {
			out = append(out, fill(strings.ReplaceAll(pattern, ":contractId", c.id)))
		}
	}
	return out
}

// leakPlan is the viewer's crawl without filters: every route with their own ids (and without
// parameters), as a page and as an htmx partial, and the lists and exports unfiltered.
func leakPlan(routes []string, viewer *leakSide, today string) leakCrawlPlan {
	plan := leakCrawlPlan{covered: map[string]bool{}}
	add := func(p string) {
		plan.bare = append(plan.bare, leakFetch{path: p}, leakFetch{path: p, htmx: true})
	}
	for _, r := range routes {
		if _, skip := leakSkipped[r]; skip {
			continue
		}
		if !leakParam.MatchString(r) {
			add(r)
			plan.covered[r] = true
			continue
		}
		expanded := leakExpand(r, viewer.customers, viewer.quotes, viewer.contracts)
		if !leakEntityParam.MatchString(r) {
			// Jobs, imports and the like: an id of nobody's (1), which must answer nothing.
			expanded = []string{leakParam.ReplaceAllString(r, "1")}
		}
		for _, p := range expanded {
			add(p)
			plan.covered[r] = true
		}
	}
	for _, p := range []string{
		"/work/quotes?scope=all", "/work/contracts?scope=all", "/work/quotes?scope=mine", "/work/contracts?scope=mine",
		"/work/quotes/export?format=csv&scope=all", "/work/contracts/export?format=csv&scope=all",
		"/work/quotes/export?format=xlsx&scope=all", "/work/contracts/export?format=xlsx",
		"/customers/export?format=csv", "/audits/worklist?changed=1&from=" + today + "&to=" + today,
		"/audits/worklist/export?format=csv&from=" + today + "&to=" + today,
	} {
		add(p)
	}
	return plan
}

// leakPair is a filter that could only match the other's rows and its control, a filter of the
// same kind that matches nothing: both must answer the same.
type leakPair struct {
	probe, control        leakFetch
	probeValue, ctrlValue string
}

// leakFilters are the filtered fetches of the lists, exports, palette, searches and worklist,
// and the pairs among them to compare.
func leakFilters(viewer *leakSide, f leakForeign, today string) ([]leakFetch, []leakPair) {
	var fetches []leakFetch
	var pairs []leakPair
	nomatch := "Zq9x" + custUnique()
	// reps are the answers a list gives: the page, its htmx partial, its CSV and XLSX exports.
	reps := func(list string) []leakFetch {
		// (an export answers a file with or without htmx: the bare crawl fetches both)
		return []leakFetch{{path: list + "?"}, {path: list + "?", htmx: true}, {path: list + "/export?format=csv&"}, {path: list + "/export?format=xlsx&"}}
	}
	seen := map[leakFetch]bool{}
	fetch := func(f leakFetch) {
		if !seen[f] { // a control answers many probes: fetched once
			seen[f] = true
			fetches = append(fetches, f)
		}
	}
	pair := func(rep leakFetch, query, value, ctrlQuery, ctrlValue string) {
		probe := leakFetch{path: rep.path + query, htmx: rep.htmx}
		fetch(probe)
		if ctrlQuery == "" {
			return
		}
		control := leakFetch{path: rep.path + ctrlQuery, htmx: rep.htmx}
		fetch(control)
		pairs = append(pairs, leakPair{probe: probe, control: control, probeValue: value, ctrlValue: ctrlValue})
	}
	q := url.QueryEscape
	var prefixes []string
	for _, c := range f.customers {
		for i := range len(c.Name) {
			// (the portal trims what is typed: "Vqxs " is "Vqxs")
			prefixes = append(prefixes, strings.TrimSpace(c.Name[:i+1]))
		}
	}
	slices.Sort(prefixes)
	prefixes = slices.Compact(prefixes)
	var typed []string // what a person may type that names the other's rows
	for _, c := range f.quotes {
		typed = append(typed, c.id)
	}
	for _, c := range f.contracts {
		typed = append(typed, c.number, c.id)
	}
	for _, c := range f.customers {
		typed = append(typed, strconv.Itoa(c.ID))
	}
	// A prefix of up to 2 letters, or one of the viewer's own names too, may well match the
	// viewer's own rows: it is scanned, not compared. So is a short number (an id of 1 to 4
	// digits is in many a tax id or total of the viewer's own).
	diff := func(p string) bool {
		if len(p) < 3 {
			return false
		}
		for _, c := range viewer.customers {
			if strings.Contains(strings.ToLower(c.Name), strings.ToLower(p)) {
				return false
			}
		}
		return true
	}
	// A typed number's control is a number of the same form that names nothing (every digit a 9):
	// the palette offers to open any quote number, anyone's or nobody's, alike.
	typedCtrl := func(scope, v string) (string, string) {
		if len(v) < 5 {
			return "", ""
		}
		ctrl := strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return '9'
			}
			return r
		}, v)
		return scope + "q=" + q(ctrl), ctrl
	}
	for _, list := range []string{"/work/quotes", "/work/contracts"} {
		for _, rep := range reps(list) {
			for _, p := range prefixes {
				ctrl := ""
				if diff(p) {
					ctrl = "scope=all&q=" + q(nomatch)
				}
				pair(rep, "scope=all&q="+q(p), p, ctrl, nomatch)
			}
			for _, scope := range []string{"", "scope=all&", "scope=mine&"} {
				for _, v := range typed {
					ctrlQuery, ctrl := typedCtrl(scope, v)
					pair(rep, scope+"q="+q(v), v, ctrlQuery, ctrl)
				}
				for _, c := range f.customers {
					id := strconv.Itoa(c.ID)
					for _, more := range []string{"", "&from=" + today + "&to=" + today, "&sort=value", "&sort=value&dir=asc", "&stage=" + strings.Join(f.stages, "&stage=")} {
						pair(rep, scope+"customer="+id+more, id, scope+"customer=999999"+more, "999999")
					}
				}
				for _, stage := range f.stages {
					if list == "/work/contracts" || stage != "signature" {
						pair(rep, scope+"stage="+stage, stage, scope+"stage=expired", "expired")
						pair(rep, scope+"stage="+stage+"&sort=value&from="+today+"&to="+today, stage, scope+"stage=expired&sort=value&from="+today+"&to="+today, "expired")
					}
				}
				if list == "/work/contracts" {
					// The team figures' decline reasons open the declined contracts of one reason.
					for _, r := range f.reasons {
						pair(rep, scope+"reason="+q(r), r, scope+"reason="+q(nomatch), nomatch)
						pair(rep, scope+"stage=declined&reason="+q(r), r, scope+"stage=declined&reason="+q(nomatch), nomatch)
					}
				}
				for _, more := range []string{"from=" + today + "&to=" + today, "sort=value", "sort=value&dir=asc", "dir=asc", "refresh=1", "page=2"} {
					pair(rep, scope+more, "", "", "")
				}
			}
		}
	}
	// The customers list and its exports, the palette, the quote start's customer search.
	for _, rep := range []leakFetch{{path: "/customers?"}, {path: "/customers?", htmx: true}, {path: "/customers/export?format=csv&"}, {path: "/customers/export?format=xlsx&"},
		{path: "/palette?"}, {path: "/palette?", htmx: true}} {
		for _, p := range prefixes {
			ctrl := ""
			if diff(p) {
				ctrl = "q=" + q(nomatch)
			}
			pair(rep, "q="+q(p), p, ctrl, nomatch)
		}
		for _, v := range typed {
			ctrlQuery, ctrl := typedCtrl("", v)
			pair(rep, "q="+q(v), v, ctrlQuery, ctrl)
		}
	}
	// The quote start's customer search and choice, in the viewer's own customer's catalogue.
	for _, c := range viewer.customers[:min(1, len(viewer.customers))] {
		rep := leakFetch{path: "/quotes/new/customers?cpqId=" + strconv.Itoa(c.CPQID) + "&", htmx: true}
		for _, p := range prefixes {
			if diff(p) {
				pair(rep, "q="+q(p), p, "q="+q(nomatch), nomatch)
			}
		}
		for _, oc := range f.customers {
			fetches = append(fetches, leakFetch{path: "/quotes/new?cpqId=" + strconv.Itoa(c.CPQID) + "&customerId=" + strconv.Itoa(oc.ID)})
		}
	}
	// What a person types into the contract search, the quote opener and the audit search.
	for _, v := range typed {
		fetches = append(fetches, leakFetch{path: "/contracts/lookup?q=" + q(v)}, leakFetch{path: "/quotes/open?quoteId=" + q(v)}, leakFetch{path: "/audits?quoteId=" + q(v)})
	}
	// The audit worklist: changed in a range, by customer, pasted quotes, and its exports.
	for _, rep := range []leakFetch{{path: "/audits/worklist?"}, {path: "/audits/worklist?", htmx: true}, {path: "/audits/worklist/export?format=csv&"}, {path: "/audits/worklist/export?format=xlsx&"}} {
		rng := "from=" + today + "&to=" + today
		for _, more := range []string{rng, "changed=1&" + rng, "from=2000-01-01&to=" + today, "changed=1&from=2000-01-01"} {
			pair(rep, more, "", "", "")
		}
		for _, p := range prefixes {
			if diff(p) {
				pair(rep, "changed=1&"+rng+"&customer="+q(p), p, "changed=1&"+rng+"&customer="+q(nomatch), nomatch)
			}
		}
		for _, qt := range f.quotes {
			pair(rep, "quotes="+qt.id, "", "", "")
		}
	}
	return fetches, pairs
}

// leakCheck crawls as viewer and fails on every leak it finds.
func leakCheck(t *testing.T, routes []string, viewer *leakSide, plan leakCrawlPlan, before []leakResp, f leakForeign, secrets *leakSecrets, today string) {
	t.Helper()
	started := time.Now()
	c := viewer.client
	// The routes with the other's ids in their path (refused by the v2: nothing may show).
	var foreignBare []leakFetch
	for _, r := range routes {
		if _, skip := leakSkipped[r]; skip {
			continue
		}
		for _, p := range leakExpand(r, f.customers, f.quotes, f.contracts) {
			foreignBare = append(foreignBare, leakFetch{path: p}, leakFetch{path: p, htmx: true})
			plan.covered[r] = true
		}
	}
	for _, r := range routes {
		if _, skip := leakSkipped[r]; !skip && !plan.covered[r] {
			t.Errorf("GET %s is neither crawled nor listed in leakSkipped with a reason", r)
		}
	}
	filtered, pairs := leakFilters(viewer, f, today)
	all := append(append(slices.Clone(plan.bare), foreignBare...), filtered...)
	// Exports first: a page re-reads its rows with the viewer's token (and may drop the refused
	// ones), an export must not need a page to have been opened before it to leak nothing.
	got := make([]leakResp, len(all))
	for _, first := range []bool{true, false} {
		var idx []int
		var batch []leakFetch
		for i, f := range all {
			if strings.Contains(f.path, "/export") == first {
				idx = append(idx, i)
				batch = append(batch, f)
			}
		}
		for j, r := range c.fetchAll(t, batch) {
			got[idx[j]] = r
		}
	}
	byFetch := map[leakFetch]leakResp{}
	for i, r := range got {
		byFetch[all[i]] = r
	}
	t.Logf("%s: %d answers in %s", viewer.who, len(got), time.Since(started).Round(time.Millisecond))

	// 1. Nothing of the other's in any answer.
	findings := map[string][]string{} // what -> where
	var mu sync.Mutex
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(got); i += 4 {
				r := got[i]
				for _, fd := range secrets.scan(t, r) {
					mu.Lock()
					findings[fd.what] = append(findings[fd.what], r.path+htmxMark(r.htmx)+": "+fd.context)
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("%s: scanned in %s", viewer.who, time.Since(started).Round(time.Millisecond))
	// 2. Filters that could only match the other's rows answer as filters that match nothing.
	var oracles []string
	// Both answers have both filter values marked alike: the echo of each filter is not what
	// tells them apart.
	for _, p := range pairs {
		if sa, sb := leakShape(t, byFetch[p.probe], p.probeValue, p.ctrlValue), leakShape(t, byFetch[p.control], p.probeValue, p.ctrlValue); sa != sb {
			oracles = append(oracles, fmt.Sprintf("%s%s: differs from %s: %s", p.probe.path, htmxMark(p.probe.htmx), p.control.path, leakFirstDiff(sa, sb)))
		}
	}
	t.Logf("%s: compared %d filters in %s", viewer.who, len(pairs), time.Since(started).Round(time.Millisecond))
	// 3. The pages without filters tell what they told before the other's rows existed.
	var changed []string
	for i, b := range before {
		if strings.HasPrefix(b.path, "/sessions") {
			continue // lists the viewer's own sessions with their last activity
		}
		a := got[i]
		if !leakComparable(a) || !leakComparable(b) {
			continue
		}
		if sb, sa := leakWords(leakShape(t, b)), leakWords(leakShape(t, a)); sa != sb {
			changed = append(changed, fmt.Sprintf("%s%s: %s", b.path, htmxMark(b.htmx), leakWordDiff(sb, sa)))
		}
	}
	report := func(kind string, lines []string) {
		if len(lines) == 0 {
			return
		}
		slices.Sort(lines)
		// Where, by route (ids as {n}, filters by name), then a few of them in full.
		routes := map[string]int{}
		for _, l := range lines {
			path, _, _ := strings.Cut(l, ": ")
			routes[leakRouteKey(path)]++
		}
		var where []string
		for _, k := range slices.Sorted(maps.Keys(routes)) {
			where = append(where, fmt.Sprintf("%s ×%d", k, routes[k]))
		}
		show := 6 // E2E_LEAK_SHOW=n shows n of each kind in full
		if n, err := strconv.Atoi(os.Getenv("E2E_LEAK_SHOW")); err == nil {
			show = n
		}
		shown := lines[:min(len(lines), show)]
		if len(where) > 40 {
			where = append(where[:40], fmt.Sprintf("and %d more routes", len(where)-40))
		}
		t.Errorf("%s: %s: %d answers\n  on: %s\n  e.g.\n  %s", viewer.who, kind, len(lines), strings.Join(where, "; "), strings.Join(shown, "\n  "))
	}
	for _, what := range slices.Sorted(maps.Keys(findings)) {
		report("the other's "+what+" is shown", findings[what])
	}
	report("filters that tell the other's rows apart from nothing (oracles)", oracles)
	report("pages that changed with the other's rows, refusals or the lost customer", changed)
}

// leakRouteKey names an answer by its route: ids as {n}, query values kept only where they
// choose a kind of answer (format, scope, stage, changed, sort), the others as the filter's name.
func leakRouteKey(path string) string {
	htmx := strings.HasSuffix(path, " (htmx)")
	path = strings.TrimSuffix(path, " (htmx)")
	u, err := url.Parse(path)
	if err != nil {
		return path
	}
	key := regexp.MustCompile(`/\d+`).ReplaceAllString(u.Path, "/{n}")
	var params []string
	for _, k := range slices.Sorted(maps.Keys(u.Query())) {
		switch k {
		case "format", "scope", "stage", "changed", "sort":
			params = append(params, k+"="+strings.Join(u.Query()[k], ","))
		default:
			params = append(params, k)
		}
	}
	if len(params) > 0 {
		key += "?" + strings.Join(params, "&")
	}
	if htmx {
		key += " (htmx)"
	}
	return key
}

func htmxMark(htmx bool) string {
	if htmx {
		return " (htmx)"
	}
	return ""
}
