// Package e2e holds the browser tests: journeys a person makes through the portal, driven in
// Debian's Chromium through playwright-go.
//
// TestMain builds the portal once, starts it in demo mode (embedded OpenID provider and v2
// simulator, or the v2 API named by E2E_V2_API_URL) on a free loopback port, waits for /readyz,
// and launches one headless Chromium. Each test gets a fresh browser context from newPage, so
// tests share no cookies. The portal's log is printed only when something failed; a failed
// test leaves a screenshot and the page's HTML under e2e/artifacts/<TestName>/.
//
// Prerequisites (make deps installs them): Chromium at /usr/bin/chromium (or E2E_CHROMIUM) and
// the Playwright driver that playwright-go pins, in <repo>/.cache/pw-driver (or
// PLAYWRIGHT_DRIVER_PATH). A missing prerequisite fails the run; it never skips.
package e2e

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/playwright-community/playwright-go"
)

// Demo users of the embedded OpenID provider (internal/demoidp, docs/architecture.md).
const (
	salesUser         = "sales"
	salesPassword     = "sales-demo"
	salesName         = "Sam Sales"
	backofficeUser    = "backoffice"
	backofficePass    = "backoffice-demo"
	backofficeName    = "Bea Backoffice"
	assertTimeoutMs   = 10_000
	startupDeadline   = 60 * time.Second
	stopDeadline      = 15 * time.Second
	defaultChromium   = "/usr/bin/chromium"
	driverCacheSubdir = ".cache/pw-driver"
)

// harness is the state the whole run shares: one portal, one browser.
type harness struct {
	portalURL string // e.g. http://127.0.0.1:40123, no trailing slash
	portalBin string // the built portal, for tests that start one of their own (startExtraPortal)
	// simURL is the embedded simulator's URL with its /_sim/ control API; empty when the tests
	// run against an external v2 API (E2E_V2_API_URL), where faults cannot be injected.
	simURL    string
	browser   playwright.Browser
	expect    playwright.PlaywrightAssertions
	artifacts string // absolute path of e2e/artifacts
}

// suite is set once by TestMain before any test runs and only read afterwards.
var suite *harness

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

// run does TestMain's work so that deferred clean-ups run before os.Exit.
func run(m *testing.M) int {
	root, err := repoRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	chromium, driverDir, err := checkPrerequisites(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: prerequisites missing:", err)
		return 1
	}

	tmp, err := os.MkdirTemp("", "cpq-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(tmp)

	bin := filepath.Join(tmp, "portal")
	build := exec.Command("go", "build", "-o", bin, "./cmd/portal")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "e2e: building the portal failed: %v\n%s", err, out)
		return 1
	}

	portal, err := startPortal(bin)
	if portal != nil {
		defer portal.stop()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: starting the portal failed: %v\n", err)
		portal.printLog(os.Stderr)
		return 1
	}

	pw, err := playwright.Run(&playwright.RunOptions{DriverDirectory: driverDir, SkipInstallBrowsers: true})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: starting Playwright: %v (run `make deps`)\n", err)
		return 1
	}
	defer pw.Stop()
	browser, err := pw.Chromium.Launch(playwright.BrowserTypeLaunchOptions{
		ExecutablePath: playwright.String(chromium),
		Headless:       playwright.Bool(true),
		Args:           []string{"--disable-gpu"},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: launching %s: %v\n", chromium, err)
		return 1
	}
	defer browser.Close()

	suite = &harness{
		portalURL: portal.url,
		simURL:    portal.simURL(),
		browser:   browser,
		expect:    playwright.NewPlaywrightAssertions(assertTimeoutMs),
		artifacts: filepath.Join(root, "e2e", "artifacts"),
		portalBin: bin,
	}
	code := m.Run()
	if code != 0 {
		portal.printLog(os.Stderr)
	}
	return code
}

// repoRoot is the module root: go test runs in the package directory, e2e/.
func repoRoot() (string, error) {
	root, err := filepath.Abs("..")
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		return "", fmt.Errorf("cannot find the repository root (go.mod) above the e2e directory: %w", err)
	}
	return root, nil
}

// checkPrerequisites finds Chromium and a Playwright driver of the version playwright-go pins,
// and says how to install whichever is missing.
func checkPrerequisites(root string) (chromium, driverDir string, err error) {
	chromium = os.Getenv("E2E_CHROMIUM")
	if chromium == "" {
		chromium = defaultChromium
	}
	if info, statErr := os.Stat(chromium); statErr != nil || info.IsDir() || info.Mode()&0o111 == 0 {
		return "", "", fmt.Errorf("no Chromium executable at %s (set E2E_CHROMIUM, or install it: "+
			"`make deps`, i.e. apt-get update && apt-get install -y chromium)", chromium)
	}

	driverDir = os.Getenv("PLAYWRIGHT_DRIVER_PATH")
	if driverDir == "" {
		driverDir = filepath.Join(root, driverCacheSubdir)
	}
	driver, err := playwright.NewDriver(&playwright.RunOptions{DriverDirectory: driverDir, SkipInstallBrowsers: true})
	if err != nil {
		return "", "", err
	}
	out, runErr := driver.Command("--version").Output()
	if want := "Version " + driver.Version; runErr != nil || strings.TrimSpace(string(out)) != want {
		got := strings.TrimSpace(string(out))
		if runErr != nil {
			got = runErr.Error()
		}
		return "", "", fmt.Errorf("the Playwright driver in %s is not %s (got: %s); install it with `make deps` "+
			"(npm pack playwright-core@%s into that directory, see scripts/ensure-deps.sh)", driverDir, want, got, driver.Version)
	}
	return chromium, driverDir, nil
}

// portalProcess is the portal under test and everything it logged.
type portalProcess struct {
	cmd     *exec.Cmd
	url     string
	dataDir string // PORTAL_DATA_DIR: fresh for every portal, removed by stop
	log     *logBuffer
	exited  chan struct{} // closed when the process has exited
	ownSim  bool          // its embedded simulator even beside E2E_V2_API_URL (restrictToOwners)
}

// restrictToOwners makes a test portal's embedded simulator refuse every customer a user does not
// own (403); such a portal uses its embedded simulator even when the suite runs against an
// external v2 API.
const restrictToOwners = "PORTAL_DEMO_RESTRICT_TO_OWNERS=true"

// listeningLine is what cmd/portal logs once its listener is bound.
var listeningLine = regexp.MustCompile(`portal listening on (https?://[^\s"]+)`)

// startPortal runs the portal in demo mode on a free loopback port with a fresh data directory and
// extraEnv (PORTAL_*=... settings), and waits until /readyz answers 200. On error the returned
// process (if not nil) still needs stop and has the log.
func startPortal(bin string, extraEnv ...string) (*portalProcess, error) {
	dataDir, err := os.MkdirTemp("", "cpq-e2e-data-")
	if err != nil {
		return nil, err
	}
	env := []string{}
	for _, kv := range os.Environ() {
		// The developer's own PORTAL_* settings must not leak into the system under test.
		if !strings.HasPrefix(kv, "PORTAL_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"PORTAL_LOG_FORMAT=text",
		"PORTAL_LOG_LEVEL=debug",
		"PORTAL_SHUTDOWN_GRACE=5s",
		// No load balancer to tell: on SIGTERM the portal stops at once instead of answering 503 on
		// /readyz for half the grace first. Every test portal is stopped (about 22 a run), and the
		// drain made each stop take 3.1 s instead of 0.1 s (measured: the demo portal, SIGTERM after
		// /readyz answered 200, to its exit). No browser test is about the drain (cmd/portal's
		// shutdown tests are).
		"PORTAL_SHUTDOWN_DRAIN=0",
		"PORTAL_DATA_DIR="+dataDir,   // a fresh data directory per portal
		"PORTAL_DEMO_SIM_ADMIN=true", // the simulator's /_sim/ faults (tests that need them check it is there)
		// No demo signer answers by itself: a test's contract stays out for signature until the
		// test answers for its signer (signer_test.go, the simulator's /_sim/signatures).
		"PORTAL_DEMO_SIGNER_DELAY=0",
	)
	env = append(env, extraEnv...)
	// A portal asked for a simulator that restricts each user to their own customers gets its
	// embedded one even beside an external v2 API (E2E_V2_API_URL): that restriction is a setting
	// of our simulator, not something the tests can ask of a v2 they do not control.
	ownSim := slices.Contains(extraEnv, restrictToOwners)
	if v2 := os.Getenv("E2E_V2_API_URL"); v2 != "" && !ownSim {
		env = append(env, "PORTAL_V2_API_URL="+v2)
	}

	log := newLogBuffer(listeningLine)
	cmd := exec.Command(bin, "-demo", "-addr", "127.0.0.1:0")
	cmd.Env = env
	cmd.Stdout = log
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		_ = os.RemoveAll(dataDir)
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	p := &portalProcess{cmd: cmd, log: log, exited: make(chan struct{}), dataDir: dataDir, ownSim: ownSim}
	go func() {
		_ = cmd.Wait()
		close(p.exited)
	}()

	deadline := time.NewTimer(startupDeadline)
	defer deadline.Stop()
	select {
	case p.url = <-log.matched:
	case <-p.exited:
		return p, fmt.Errorf("the portal exited before listening (%s)", cmd.ProcessState)
	case <-deadline.C:
		return p, fmt.Errorf("no %q line in the portal's output within %s", "portal listening on http://...", startupDeadline)
	}
	p.url = strings.TrimRight(p.url, "/")

	ready := p.url + "/readyz"
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	client := &http.Client{Timeout: 2 * time.Second}
	for {
		var last string
		resp, err := client.Get(ready)
		if err != nil {
			last = err.Error()
		} else {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, nil
			}
			last = resp.Status
		}
		select {
		case <-tick.C:
		case <-p.exited:
			return p, fmt.Errorf("the portal exited while starting (%s)", cmd.ProcessState)
		case <-deadline.C:
			return p, fmt.Errorf("GET %s did not answer 200 within %s (last: %s)", ready, startupDeadline, last)
		}
	}
}

// stop sends SIGTERM, the way an orchestrator stops the portal, and kills it if it lingers.
func (p *portalProcess) stop() {
	defer os.RemoveAll(p.dataDir)
	select {
	case <-p.exited:
		return
	default:
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(stopDeadline):
		fmt.Fprintf(os.Stderr, "e2e: the portal did not stop within %s of SIGTERM; killing it\n", stopDeadline)
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}

// simURL is the embedded simulator's URL from the start-up banner ("" with an external v2 API).
func (p *portalProcess) simURL() string {
	if os.Getenv("E2E_V2_API_URL") != "" && !p.ownSim {
		return ""
	}
	if m := regexp.MustCompile(`v2 simulator:\s+(http://[^\s]+)`).FindSubmatch(p.log.Bytes()); m != nil {
		return string(m[1])
	}
	return ""
}

func (p *portalProcess) printLog(w io.Writer) {
	if p == nil {
		return
	}
	fmt.Fprintln(w, "----- portal log -----")
	_, _ = w.Write(p.log.Bytes())
	fmt.Fprintln(w, "----- end of portal log -----")
}

// logBuffer keeps everything the portal writes and reports the first match of a pattern
// (the listening line) on matched.
type logBuffer struct {
	mu      sync.Mutex
	buf     bytes.Buffer
	scanned int // bytes of buf already searched for pattern (whole lines only)
	pattern *regexp.Regexp
	found   bool
	matched chan string
}

func newLogBuffer(pattern *regexp.Regexp) *logBuffer {
	return &logBuffer{pattern: pattern, matched: make(chan string, 1)}
}

// Write implements io.Writer; the portal's stdout and stderr both write here.
func (l *logBuffer) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf.Write(b)
	if l.found {
		return len(b), nil
	}
	data := l.buf.Bytes()
	end := bytes.LastIndexByte(data, '\n') + 1
	if end > l.scanned {
		if m := l.pattern.FindSubmatch(data[l.scanned:end]); m != nil {
			l.found = true
			l.matched <- string(m[1])
		}
		l.scanned = end
	}
	return len(b), nil
}

// Bytes returns a copy of everything written so far.
func (l *logBuffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.buf.Bytes())
}

// newPage opens a page in a fresh browser context (no cookies shared with other tests) whose
// relative URLs resolve against the portal. It is closed when the test ends; if the test
// failed, a full-page screenshot and the page's HTML are saved first.
func newPage(t *testing.T) playwright.Page {
	t.Helper()
	return newPageAt(t, suite.portalURL)
}

// newPageAt is newPage for the portal at base (one a test started itself).
func newPageAt(t *testing.T, base string) playwright.Page {
	t.Helper()
	browserContext, err := suite.browser.NewContext(playwright.BrowserNewContextOptions{
		BaseURL: playwright.String(base),
		Locale:  playwright.String("en-GB"),
	})
	if err != nil {
		t.Fatalf("new browser context: %v", err)
	}
	page, err := browserContext.NewPage()
	if err != nil {
		_ = browserContext.Close()
		t.Fatalf("new page: %v", err)
	}
	// What the page complained about (CSP violations, script errors, failed requests) explains
	// many failures: kept, and logged when the test fails.
	var consoleMu sync.Mutex
	var console []string
	page.OnConsole(func(m playwright.ConsoleMessage) {
		if m.Type() == "error" || m.Type() == "warning" {
			consoleMu.Lock()
			console = append(console, m.Type()+": "+m.Text())
			consoleMu.Unlock()
		}
	})
	page.OnPageError(func(err error) {
		consoleMu.Lock()
		console = append(console, "page error: "+err.Error())
		consoleMu.Unlock()
	})
	page.OnResponse(func(r playwright.Response) {
		if r.Status() >= 400 {
			consoleMu.Lock()
			console = append(console, fmt.Sprintf("HTTP %d: %s %s", r.Status(), r.Request().Method(), r.URL()))
			consoleMu.Unlock()
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			saveArtifacts(t, page)
			consoleMu.Lock()
			for _, line := range console {
				t.Logf("browser: %s", line)
			}
			consoleMu.Unlock()
		}
		_ = browserContext.Close()
	})
	return page
}

// saveArtifacts writes a screenshot and the HTML of page to e2e/artifacts/<TestName>/.
func saveArtifacts(t *testing.T, page playwright.Page) {
	t.Helper()
	dir := filepath.Join(suite.artifacts, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Logf("artifacts: %v", err)
		return
	}
	t.Logf("page URL at failure: %s", page.URL())
	if _, err := page.Screenshot(playwright.PageScreenshotOptions{
		Path:     playwright.String(filepath.Join(dir, "screenshot.png")),
		FullPage: playwright.Bool(true),
	}); err != nil {
		t.Logf("artifacts: screenshot: %v", err)
	}
	if html, err := page.Content(); err != nil {
		t.Logf("artifacts: page HTML: %v", err)
	} else if err := os.WriteFile(filepath.Join(dir, "page.html"), []byte(html), 0o644); err != nil {
		t.Logf("artifacts: %v", err)
	}
	// CI keeps only the log: what covered the page or said why nothing happened is said there.
	if toasts, err := page.Locator("#toasts").InnerText(playwright.LocatorInnerTextOptions{Timeout: playwright.Float(1000)}); err == nil && strings.TrimSpace(toasts) != "" {
		t.Logf("toasts at failure: %q", toasts)
	}
	t.Logf("artifacts saved in %s", dir)
}

// portalURL is the absolute URL of path (which starts with /) on the portal under test.
func portalURL(path string) string {
	return suite.portalURL + path
}

// exactURL matches exactly the portal URL of path, query included, for ToHaveURL.
func exactURL(path string) *regexp.Regexp {
	return regexp.MustCompile("^" + regexp.QuoteMeta(portalURL(path)) + "$")
}

// onPortalPage reports whether rawURL is a portal page, not the sign-in flow (the embedded
// provider under /idp, the portal's /auth/ endpoints).
func onPortalPage(rawURL string) bool { return onPortalPageOf(suite.portalURL)(rawURL) }

// onPortalPageOf is onPortalPage for the portal at base.
func onPortalPageOf(base string) func(rawURL string) bool {
	return func(rawURL string) bool {
		if !strings.HasPrefix(rawURL, base+"/") && rawURL != base {
			return false
		}
		path := strings.TrimPrefix(rawURL, base)
		return !strings.HasPrefix(path, "/idp/") && !strings.HasPrefix(path, "/auth/")
	}
}

// login opens the portal's home page and signs in with the demo provider's form.
func login(t *testing.T, page playwright.Page, user, password string) {
	t.Helper()
	if _, err := page.Goto("/"); err != nil {
		t.Fatalf("open /: %v", err)
	}
	signIn(t, page, user, password)
}

// signIn fills the demo provider's sign-in form that page shows (or is about to show),
// submits it, and waits until the browser is back on a portal page.
func signIn(t *testing.T, page playwright.Page, user, password string) {
	t.Helper()
	signInAt(t, page, suite.portalURL, user, password)
}

// signInAt is signIn on the portal at base.
func signInAt(t *testing.T, page playwright.Page, base, user, password string) {
	t.Helper()
	username := page.Locator("input[name=username]")
	check(t, suite.expect.Locator(username).ToBeVisible(), "the sign-in form is shown")
	check(t, username.Fill(user), "fill the user name")
	check(t, page.Locator("input[name=password]").Fill(password), "fill the password")
	// The form's submit button, whatever language the provider's page speaks.
	check(t, page.Locator(`form:has(input[name=password]) button[type=submit]`).Click(), "click Sign in")
	if err := page.WaitForURL(onPortalPageOf(base), playwright.PageWaitForURLOptions{Timeout: playwright.Float(assertTimeoutMs)}); err != nil {
		t.Fatalf("after signing in as %s the browser did not come back to a portal page (at %s): %v", user, page.URL(), err)
	}
}

// check fails the test now when err (from a Playwright action or assertion) is not nil;
// what says what was expected, in the words of the journey.
func check(t *testing.T, err error, what string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// clickSettled clicks l after scrolling it into view and letting the browser draw two frames.
// Chromium routes a click that comes right after a scroll by where frames were drawn before it, so
// on a page with a PDF viewer (an out-of-process frame) Playwright's scroll-then-click can land in
// the viewer; a person's click never comes that fast. Use it for a click that needs a scroll on a
// page that previews a PDF.
func clickSettled(t *testing.T, page playwright.Page, l playwright.Locator, what string) {
	t.Helper()
	check(t, l.ScrollIntoViewIfNeeded(), what+": scroll into view")
	_, err := page.Evaluate(`() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))`)
	check(t, err, what+": wait for two drawn frames")
	check(t, l.Click(), what)
}
