package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/v2sim"
)

// TestSoak is the load test of docs/security.md (suite 4), run by `make soak` only (SOAK=1).
//
// It builds the portal, starts it in demo mode (embedded OpenID provider) against a v2 simulator
// running in this test process (so the portal process's memory is the portal's alone), and lets
// SOAK_USERS simulated users (default 100), each with their own cookie jar and sign-in, run mixed
// journeys for SOAK_DURATION (default 2m) on loopback: browse and search customers, open a
// customer, start a quote with a cart, change a cart's quantity, open contracts and audits. It
// fails on any server error (5xx) or broken connection (no faults are injected, so every one is
// the portal's), and when the portal's resident memory (VmRSS of its process) grows by 10 % or more
// between the first and the second half of the run. It prints the figures.
//
// The load is what people do (issue 27): each user changes quantities on their own quotes, sending
// the page's fingerprint as the page does; a share of users (SOAK_PAIRS_PERCENT, default 20) work
// in pairs on one quote, and after a 409 (the stale check of issue 18: the colleague changed it)
// redo their change on the current quote with the answer's "Apply my change" form. The share of
// 409 answers among the changes is reported. SOAK_V2_LATENCY (e.g. 50ms) makes the simulator
// answer every call that much later, like a real v2 deployment; the report then says how many
// users one portal replica serves on this machine's cores (its CPU use per user, measured).
func TestSoak(t *testing.T) {
	if os.Getenv("SOAK") != "1" {
		t.Skip("soak test: runs only with SOAK=1 (make soak)")
	}
	duration := soakSetting(t, "SOAK_DURATION", 2*time.Minute, time.ParseDuration)
	users := soakSetting(t, "SOAK_USERS", 100, strconv.Atoi)
	pairsPercent := soakSetting(t, "SOAK_PAIRS_PERCENT", 20, strconv.Atoi)
	latency := soakSetting(t, "SOAK_V2_LATENCY", time.Duration(0), time.ParseDuration)

	sim := v2sim.New(v2sim.Options{Customers: 60, Seed: 7}) // accepts the demo provider's tokens as any bearer token
	simServer := httptest.NewServer(sim)
	defer func() { simServer.Close(); _ = sim.Close() }()
	if latency > 0 {
		sim.SetFault("*", v2sim.Fault{Delay: latency})
	}

	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "portal")
	build := exec.Command("go", "build", "-o", bin, "./cmd/portal")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the portal: %v\n%s", err, out)
	}
	portal := startSoakPortal(t, bin, simServer.URL)

	st := &soakStats{byStatus: map[int]int{}, journeys: map[string]int{}}
	ctx, cancel := context.WithTimeout(context.Background(), duration)
	defer cancel()
	start := time.Now()
	cpuStart, _ := cpuSeconds(portal.cmd.Process.Pid)

	// Memory samples of the portal process every 5 s.
	var samples []rssSample
	var samplesMu sync.Mutex
	samplerDone := make(chan struct{})
	go func() {
		defer close(samplerDone)
		tick := time.NewTicker(5 * time.Second)
		defer tick.Stop()
		for {
			if kb, err := vmRSS(portal.cmd.Process.Pid); err == nil {
				samplesMu.Lock()
				samples = append(samples, rssSample{at: time.Since(start), kb: kb})
				samplesMu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()

	// Pairs share a quote: users 2k and 2k+1 of the first pairsPercent % of the users.
	paired := users * pairsPercent / 100 &^ 1
	pairs := make([]*soakPair, paired/2)
	for i := range pairs {
		pairs[i] = &soakPair{}
	}
	var wg sync.WaitGroup
	for i := range users {
		wg.Add(1)
		go func() {
			defer wg.Done()
			u := newSoakUser(portal.url, st, uint64(i))
			if i < paired {
				u.pair = pairs[i/2]
			}
			// Stagger the sign-ins a little, as people arrive.
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(i) * 20 * time.Millisecond):
			}
			if err := u.signIn(ctx); err != nil {
				if ctx.Err() == nil {
					st.fail("sign-in of user %d: %v", i, err)
				}
				return
			}
			for ctx.Err() == nil {
				u.journey(ctx)
			}
		}()
	}
	wg.Wait()
	<-samplerDone
	if kb, err := vmRSS(portal.cmd.Process.Pid); err == nil {
		samples = append(samples, rssSample{at: time.Since(start), kb: kb})
	}

	// The figures.
	elapsed := time.Since(start)
	cpuEnd, cpuErr := cpuSeconds(portal.cmd.Process.Pid)
	first, second := rssPeak(samples, duration/4, duration/2), rssPeak(samples, 3*duration/4, duration+time.Minute)
	growth := 0.0
	if first > 0 {
		growth = float64(second-first) / float64(first) * 100
	}
	report := &strings.Builder{}
	fmt.Fprintf(report, "soak: %d users for %s on loopback\n", users, elapsed.Round(time.Second))
	fmt.Fprintf(report, "  requests: %d (%.0f/s), server errors: %d, broken connections: %d\n",
		st.requests.Load(), float64(st.requests.Load())/elapsed.Seconds(), st.serverErrors.Load(), st.transportErrors.Load())
	fmt.Fprintf(report, "  statuses: %s\n", st.statusLine())
	fmt.Fprintf(report, "  journeys: %s\n", st.journeyLine())
	changes, conflicts, redone := st.changes.Load(), st.conflicts.Load(), st.redone.Load()
	fmt.Fprintf(report, "  quantity changes: %d, answered 409 (a colleague changed the quote first): %d (%.1f %%), redone on the current quote: %d; %d of %d users in pairs on one quote\n",
		changes, conflicts, 100*float64(conflicts)/float64(max(changes, 1)), redone, paired, users)
	if latency > 0 {
		fmt.Fprintf(report, "  v2 simulator answering every call in %s\n", latency)
	}
	if cpuErr == nil && cpuEnd > cpuStart {
		cores := float64(runtime.NumCPU())
		perUser := (cpuEnd - cpuStart) / elapsed.Seconds() / float64(users)
		rate := float64(st.requests.Load()) / elapsed.Seconds() / float64(users)
		fmt.Fprintf(report, "  portal CPU: %.2f cores for %d users (%.4f cores a user, each sending %.1f requests a second): its CPU would be full at about %.0f such users on %d cores (%.0f requests a second; about %.0f people clicking every 10 s): time waiting on the v2 API costs the portal no CPU, so the v2 API's capacity is reached first\n",
			(cpuEnd-cpuStart)/elapsed.Seconds(), users, perUser, rate, cores/perUser, int(cores), cores/perUser*rate, cores/perUser*rate*10)
	}
	fmt.Fprintf(report, "  portal RSS: peak %d KiB in the first half (from %s), %d KiB in the second half: growth %.1f %%\n",
		first, duration/4, second, growth)
	fmt.Fprintf(report, "  RSS samples (KiB):")
	for _, s := range samples {
		fmt.Fprintf(report, " %s=%d", s.at.Round(time.Second), s.kb)
	}
	fmt.Fprintln(report)
	t.Log(report.String())
	if dir := filepath.Join(root, "e2e", "artifacts"); os.MkdirAll(dir, 0o755) == nil {
		_ = os.WriteFile(filepath.Join(dir, "soak-report.txt"), []byte(report.String()), 0o644)
	}
	fmt.Fprint(os.Stderr, report.String())

	for _, msg := range st.firstFailures() {
		t.Error(msg)
	}
	if n := st.serverErrors.Load() + st.transportErrors.Load(); n > 0 {
		t.Errorf("%d server errors or broken connections under load (none were injected)", n)
	}
	if changes > 0 && float64(conflicts)/float64(changes) > 0.25 {
		t.Errorf("%.0f %% of the quantity changes answered 409: more than people sharing a quote meet", 100*float64(conflicts)/float64(changes))
	}
	for _, j := range []string{"browse", "search", "customer", "quote", "quantity", "contract"} {
		if st.journeyCount(j) == 0 {
			t.Errorf("journey %q never completed: the load was not the mix it claims", j)
		}
	}
	if first == 0 || second == 0 {
		t.Errorf("too few memory samples (%d) to compare the halves; run for at least 40 s", len(samples))
	} else if growth >= 10 {
		t.Errorf("the portal's RSS grew by %.1f %% between the first and the second half (limit 10 %%)", growth)
	}
	portal.stopAndCheck(t)
}

func soakSetting[T any](t *testing.T, name string, def T, parse func(string) (T, error)) T {
	t.Helper()
	raw := os.Getenv(name)
	if raw == "" {
		return def
	}
	v, err := parse(raw)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, raw, err)
	}
	return v
}

// ---- the portal process ----

type soakPortal struct {
	cmd    *exec.Cmd
	url    string
	log    *tailBuffer
	exited chan struct{}
	err    error
}

// startSoakPortal starts the binary in demo mode against the simulator, quiet (warnings only: the
// access log of a soak would be gigabytes), and waits until it is ready.
func startSoakPortal(t *testing.T, bin, v2URL string) *soakPortal {
	t.Helper()
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PORTAL_") {
			env = append(env, kv)
		}
	}
	// Its data directory (sessions, demo keys) is the test's own temporary one, never e2e/.data.
	env = append(env, "PORTAL_V2_API_URL="+v2URL, "PORTAL_LOG_FORMAT=text", "PORTAL_LOG_LEVEL=warn", "PORTAL_SHUTDOWN_GRACE=10s",
		"PORTAL_DATA_DIR="+filepath.Join(t.TempDir(), "data"))
	p := &soakPortal{log: &tailBuffer{max: 256 << 10}, exited: make(chan struct{})}
	p.cmd = exec.Command(bin, "-demo", "-addr", "127.0.0.1:0")
	p.cmd.Env = env
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p.cmd.Stderr = p.log
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		lines := bufio.NewScanner(stdout)
		for lines.Scan() {
			_, _ = p.log.Write([]byte(lines.Text() + "\n"))
			if m := listeningLine.FindStringSubmatch(lines.Text()); m != nil {
				select {
				case found <- strings.TrimRight(m[1], "/"):
				default:
				}
			}
		}
	}()
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("portal log (tail):\n%s", p.log.String())
		}
	})
	select {
	case p.url = <-found:
	case <-p.exited:
		t.Fatalf("the portal exited while starting: %v", p.err)
	case <-time.After(startupDeadline):
		t.Fatal("the portal did not print its address")
	}
	client := &http.Client{Timeout: 2 * time.Second}
	for deadline := time.Now().Add(startupDeadline); ; {
		if resp, err := client.Get(p.url + "/readyz"); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the portal did not become ready")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stopAndCheck stops the portal with SIGTERM and checks it exits 0.
func (p *soakPortal) stopAndCheck(t *testing.T) {
	t.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		if p.err != nil {
			t.Errorf("the portal exited with %v after the soak", p.err)
		}
	case <-time.After(stopDeadline):
		t.Errorf("the portal did not stop within %s of SIGTERM", stopDeadline)
	}
}

// tailBuffer keeps the last max bytes written.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
	max int
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

type rssSample struct {
	at time.Duration
	kb int64
}

var vmRSSLine = regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB$`)

// vmRSS reads the resident set size of a process from /proc (Linux).
func vmRSS(pid int) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	m := vmRSSLine.FindSubmatch(status)
	if m == nil {
		return 0, errors.New("no VmRSS line")
	}
	return strconv.ParseInt(string(m[1]), 10, 64)
}

// cpuSeconds reads the user and system CPU time a process has used from /proc (Linux, clock ticks
// of 1/100 s, as on every Linux Go supports here).
func cpuSeconds(pid int) (float64, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the command name (which may hold spaces) start after the last ')'.
	i := strings.LastIndexByte(string(stat), ')')
	fields := strings.Fields(string(stat)[i+1:])
	if len(fields) < 13 {
		return 0, errors.New("short /proc stat line")
	}
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, errors.New("malformed /proc stat line")
	}
	return (utime + stime) / 100, nil
}

// rssPeak is the highest sample taken in [from, to).
func rssPeak(samples []rssSample, from, to time.Duration) int64 {
	var peak int64
	for _, s := range samples {
		if s.at >= from && s.at < to && s.kb > peak {
			peak = s.kb
		}
	}
	return peak
}

// ---- statistics ----

type soakStats struct {
	requests, serverErrors, transportErrors atomic.Int64
	changes, conflicts, redone              atomic.Int64

	mu       sync.Mutex
	byStatus map[int]int
	journeys map[string]int
	failures []string
}

func (s *soakStats) record(status int) {
	s.requests.Add(1)
	s.mu.Lock()
	s.byStatus[status]++
	s.mu.Unlock()
}

func (s *soakStats) fail(format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.failures) < 20 {
		s.failures = append(s.failures, fmt.Sprintf(format, args...))
	}
}

func (s *soakStats) done(journey string) {
	s.mu.Lock()
	s.journeys[journey]++
	s.mu.Unlock()
}

func (s *soakStats) journeyCount(j string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.journeys[j]
}

func (s *soakStats) firstFailures() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.failures...)
}

func (s *soakStats) statusLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	codes := make([]int, 0, len(s.byStatus))
	for c := range s.byStatus {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	parts := []string{}
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d×%d", s.byStatus[c], c))
	}
	return strings.Join(parts, " ")
}

func (s *soakStats) journeyLine() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.journeys))
	for n := range s.journeys {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := []string{}
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %d", n, s.journeys[n]))
	}
	return strings.Join(parts, ", ")
}

// ---- a simulated user ----

type soakUser struct {
	base    string
	client  *http.Client
	stats   *soakStats
	rng     *rand.Rand
	quote   string    // the path of the user's own quote, once created
	pair    *soakPair // set for users who share a quote with a colleague
	custIDs []string
}

// soakPair is two users working on one quote: the first quote either of them creates.
type soakPair struct {
	mu    sync.Mutex
	quote string
}

func (p *soakPair) shared(own string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quote == "" {
		p.quote = own
	}
	return p.quote
}

func newSoakUser(base string, st *soakStats, seed uint64) *soakUser {
	jar, _ := cookiejar.New(nil)
	return &soakUser{
		base:  base,
		stats: st,
		rng:   rand.New(rand.NewPCG(seed, 0x50a4)),
		client: &http.Client{
			Jar:     jar,
			Timeout: 60 * time.Second,
			// Browsers keep a few connections per host; so do the simulated users.
			Transport: &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second},
		},
	}
}

// page is one answer, with its document when it is HTML.
type page struct {
	status int
	url    *url.URL
	header http.Header
	doc    *goquery.Document
}

// do sends a request (following redirects, as a browser does), records the status and counts
// server errors and broken connections.
func (u *soakUser) do(ctx context.Context, method, path string, form url.Values, htmx bool) (*page, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	target := path
	if strings.HasPrefix(path, "/") {
		target = u.base + path
	}
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", u.base)
	}
	if htmx {
		req.Header.Set("HX-Request", "true")
	}
	resp, err := u.client.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			u.stats.transportErrors.Add(1)
			u.stats.fail("%s %s: %v", method, path, err)
		}
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		if ctx.Err() == nil {
			u.stats.transportErrors.Add(1)
			u.stats.fail("%s %s: reading the answer: %v", method, path, err)
		}
		return nil, err
	}
	u.stats.record(resp.StatusCode)
	if resp.StatusCode >= 500 {
		u.stats.serverErrors.Add(1)
		u.stats.fail("%s %s answered %d: %.200s", method, path, resp.StatusCode, data)
	}
	p := &page{status: resp.StatusCode, url: resp.Request.URL, header: resp.Header}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		p.doc, _ = goquery.NewDocumentFromReader(strings.NewReader(string(data)))
	}
	// htmx redirects (HX-Redirect / HX-Location) are followed like a browser running htmx would.
	if loc := resp.Header.Get("HX-Redirect"); loc != "" && htmx && strings.HasPrefix(loc, "/") {
		return u.do(ctx, http.MethodGet, loc, nil, false)
	}
	return p, nil
}

func (u *soakUser) signIn(ctx context.Context) error {
	login, err := u.do(ctx, http.MethodGet, "/customers", nil, false)
	if err != nil {
		return err
	}
	if login.doc == nil || login.doc.Find(`form input[name="username"]`).Length() != 1 {
		return fmt.Errorf("no sign-in form at %s", login.url)
	}
	form := login.doc.Find("form")
	values := url.Values{}
	form.Find("input[type=hidden]").Each(func(_ int, s *goquery.Selection) { values.Set(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	if u.rng.IntN(2) == 0 {
		values.Set("username", salesUser)
		values.Set("password", salesPassword)
	} else {
		values.Set("username", backofficeUser)
		values.Set("password", backofficePass)
	}
	action, _ := login.url.Parse(form.AttrOr("action", ""))
	done, err := u.do(ctx, http.MethodPost, action.String(), values, false)
	if err != nil {
		return err
	}
	if done.status != http.StatusOK || done.url.Path != "/customers" {
		return fmt.Errorf("sign-in ended at %s with %d", done.url, done.status)
	}
	return nil
}

// think pauses like a person between clicks (bounded).
func (u *soakUser) think(ctx context.Context) {
	select {
	case <-ctx.Done():
	case <-time.After(time.Duration(50+u.rng.IntN(250)) * time.Millisecond):
	}
}

// journey runs one randomly chosen journey.
func (u *soakUser) journey(ctx context.Context) {
	switch n := u.rng.IntN(10); {
	case n < 3:
		u.browse(ctx)
	case n < 5:
		u.search(ctx)
	case n < 7:
		u.quoteJourney(ctx)
	case n < 9:
		u.quantity(ctx)
	default:
		u.contracts(ctx)
	}
	u.think(ctx)
}

var customerLink = regexp.MustCompile(`^/customers/\d+$`)

// browse: the customer list, then one customer.
func (u *soakUser) browse(ctx context.Context) {
	list, err := u.do(ctx, http.MethodGet, "/customers", nil, false)
	if err != nil || list.doc == nil || list.status != http.StatusOK {
		return
	}
	u.stats.done("browse")
	var links []string
	list.doc.Find("a[href]").Each(func(_ int, s *goquery.Selection) {
		if href := s.AttrOr("href", ""); customerLink.MatchString(href) {
			links = append(links, href)
		}
	})
	if len(links) == 0 {
		return
	}
	u.custIDs = links
	u.think(ctx)
	if p, err := u.do(ctx, http.MethodGet, links[u.rng.IntN(len(links))], nil, false); err == nil && p.status == http.StatusOK {
		u.stats.done("customer")
	}
}

// search: the customer search partial, as typing does.
func (u *soakUser) search(ctx context.Context) {
	q := []string{"a", "e", "s.p.a", "gmbh", "IT", "1", "ro", "zz"}[u.rng.IntN(8)]
	if p, err := u.do(ctx, http.MethodGet, "/customers?q="+url.QueryEscape(q), nil, true); err == nil && p.status == http.StatusOK {
		u.stats.done("search")
	}
}

// quoteJourney: start a configuration session for a customer of configurator 1, pick the first
// offer type and main product, create the quote and open it.
func (u *soakUser) quoteJourney(ctx context.Context) {
	results, err := u.do(ctx, http.MethodGet, "/quotes/new/customers?cpqId=1&q=", nil, true)
	if err != nil || results.doc == nil {
		return
	}
	var customers []string
	results.doc.Find(`input[name="customerId"]`).Each(func(_ int, s *goquery.Selection) { customers = append(customers, s.AttrOr("value", "")) })
	if len(customers) == 0 {
		return
	}
	u.think(ctx)
	tofs, err := u.do(ctx, http.MethodPost, "/quotes/new", url.Values{"cpqId": {"1"}, "customerId": {customers[u.rng.IntN(len(customers))]}}, true)
	if err != nil || tofs.doc == nil {
		return
	}
	productsURL := tofs.doc.Find(`[data-testid="quote-tof"]`).First().AttrOr("hx-get", "")
	if productsURL == "" {
		return
	}
	u.think(ctx)
	products, err := u.do(ctx, http.MethodGet, productsURL, nil, true)
	if err != nil || products.doc == nil {
		return
	}
	form := products.doc.Find(`form[hx-post]`).First()
	create := form.AttrOr("hx-post", "")
	values := formValues(form)
	if product := form.Find(`input[name="productId"]`).First().AttrOr("value", ""); product != "" {
		values.Set("productId", product)
	}
	if create == "" || values.Get("productId") == "" {
		return
	}
	u.think(ctx)
	quote, err := u.do(ctx, http.MethodPost, create, values, true)
	if err != nil || quote.status != http.StatusOK || !quotePage.MatchString(quote.url.Path) {
		return
	}
	u.quote = quote.url.Path
	u.stats.done("quote")
}

var quotePage = regexp.MustCompile(`^/quotes/\d+/\d+/\d+$`)
var quantityAction = regexp.MustCompile(`/carts/\d+/quantity$`)

// quantity: open the user's quote (the pair's, for paired users; a new one when the user has
// none yet) and change a cart's quantity, sending the page's fingerprint as the page does. After a
// 409 the user redoes the change on the current quote with the answer's "Apply my change" form.
func (u *soakUser) quantity(ctx context.Context) {
	if u.quote == "" {
		u.quoteJourney(ctx)
		if u.quote == "" {
			return
		}
	}
	target := u.quote
	if u.pair != nil {
		target = u.pair.shared(u.quote)
	}
	quote, err := u.do(ctx, http.MethodGet, target, nil, false)
	if err != nil || quote.doc == nil || quote.status != http.StatusOK {
		return
	}
	var action string
	var values url.Values
	quote.doc.Find("form").Each(func(_ int, s *goquery.Selection) {
		a := s.AttrOr("hx-post", s.AttrOr("action", ""))
		if action == "" && quantityAction.MatchString(a) {
			action, values = a, formValues(s)
		}
	})
	if action == "" {
		return
	}
	values.Set("quantity", strconv.Itoa(1+u.rng.IntN(20)))
	values.Set("prev", quote.doc.Find("#quote-digest").AttrOr("value", "")) // hx-include="#quote-digest"
	u.think(ctx)
	p, err := u.do(ctx, http.MethodPost, action, values, true)
	if err != nil {
		return
	}
	u.stats.changes.Add(1)
	if p.status == http.StatusConflict && p.doc != nil {
		u.stats.conflicts.Add(1)
		replay := p.doc.Find(`form:has([data-testid="conflict-apply"])`).First()
		redo := replay.AttrOr("hx-post", "")
		if redo == "" {
			return
		}
		u.think(ctx) // the person reads the notice, then applies their change again
		if p, err = u.do(ctx, http.MethodPost, redo, formValues(replay), true); err != nil {
			return
		}
		u.stats.changes.Add(1)
		if p.status == http.StatusConflict {
			u.stats.conflicts.Add(1)
			return
		}
		u.stats.redone.Add(1)
	}
	if p.status == http.StatusOK {
		u.stats.done("quantity")
	}
}

// contracts: a contract page and its quote's validation audit.
func (u *soakUser) contracts(ctx context.Context) {
	contract, err := u.do(ctx, http.MethodGet, "/contracts/1", nil, false)
	if err != nil || contract.status != http.StatusOK {
		return
	}
	u.think(ctx)
	if p, err := u.do(ctx, http.MethodGet, "/contracts/lookup?q=1", nil, false); err == nil && p.status == http.StatusOK {
		u.stats.done("contract")
	}
}

// formValues are a form's named controls with their current values.
func formValues(form *goquery.Selection) url.Values {
	values := url.Values{}
	form.Find("input, select, textarea").Each(func(_ int, s *goquery.Selection) {
		name := s.AttrOr("name", "")
		switch {
		case name == "":
		case s.Is("input[type=radio], input[type=checkbox]"):
			if _, checked := s.Attr("checked"); checked {
				values.Set(name, s.AttrOr("value", "on"))
			}
		case s.Is("select"):
			values.Set(name, s.Find("option[selected]").First().AttrOr("value", s.Find("option").First().AttrOr("value", "")))
		case s.Is("textarea"):
			values.Set(name, s.Text())
		case s.Is("input[type=hidden]"):
			values.Add(name, s.AttrOr("value", ""))
		default:
			values.Set(name, s.AttrOr("value", ""))
		}
	})
	return values
}
