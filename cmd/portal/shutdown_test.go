package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/apiclient"
	"github.com/cpqportal/portal/internal/v2sim"
)

// Graceful shutdown on the real binary (docs/security.md, suite 5): on SIGTERM /readyz turns 503
// first, in-flight requests (a page waiting on the v2 API and an upload still being sent) finish
// within PORTAL_SHUTDOWN_GRACE, then the process exits 0. And a request that outlives the grace
// period does not keep the process alive.
//
// The v2 API is a simulator in this test process behind a gate: the test decides when a held v2
// answer is released, and the upload body comes through a pipe the test writes to. No sleeps: every
// step waits for an observable event.

// shutdownGate holds GET requests to the v2 API while armed and reports arrivals.
type shutdownGate struct {
	next     http.Handler
	armed    atomic.Bool
	held     chan string // a GET was held (its path)
	uploads  chan string // an upload started streaming (its path)
	release  chan struct{}
	released sync.Once
}

func newShutdownGate(next http.Handler) *shutdownGate {
	return &shutdownGate{next: next, held: make(chan string, 64), uploads: make(chan string, 8), release: make(chan struct{})}
}

func (g *shutdownGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v2/attachment/file/"):
		g.uploads <- r.URL.Path
	case r.Method == http.MethodGet && g.armed.Load():
		g.held <- r.URL.Path
		select {
		case <-g.release:
		case <-r.Context().Done():
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

func (g *shutdownGate) open() { g.released.Do(func() { close(g.release) }) }

// shutdownPortal is the portal binary running in demo mode against the gated simulator.
type shutdownPortal struct {
	cmd    *exec.Cmd
	url    string
	out    *shutdownLog
	exited chan struct{}
	err    error // cmd.Wait's result, set before exited is closed
}

type shutdownLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *shutdownLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *shutdownLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// buildPortalBinary compiles this command into a temporary directory.
func buildPortalBinary(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tool is needed to build the portal: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "portal")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/portal: %v\n%s", err, out)
	}
	return bin
}

var shutdownListening = regexp.MustCompile(`portal listening on (http://127\.0\.0\.1:\d+)`)

// startShutdownPortal starts the binary and waits until /readyz answers 200. extraEnv entries
// (KEY=value) come last, so they override the defaults set here.
func startShutdownPortal(t *testing.T, bin, v2URL, grace string, extraEnv ...string) *shutdownPortal {
	t.Helper()
	p := &shutdownPortal{out: &shutdownLog{}, exited: make(chan struct{})}
	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PORTAL_") {
			env = append(env, kv)
		}
	}
	env = append(env, "PORTAL_V2_API_URL="+v2URL, "PORTAL_SHUTDOWN_GRACE="+grace, "PORTAL_LOG_FORMAT=text",
		"PORTAL_LOG_LEVEL=info", "PORTAL_V2_TIMEOUT=60s", "PORTAL_UPLOAD_LIMIT=10MB", "PORTAL_DATA_DIR="+t.TempDir())
	env = append(env, extraEnv...)
	p.cmd = exec.Command(bin, "-demo", "-addr", "127.0.0.1:0")
	p.cmd.Env = env
	p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
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
			t.Logf("portal output:\n%s", p.out.String())
		}
	})

	deadline := time.Now().Add(60 * time.Second)
	client := &http.Client{Timeout: 5 * time.Second}
	for {
		if p.url == "" {
			if m := shutdownListening.FindStringSubmatch(p.out.String()); m != nil {
				p.url = m[1]
			}
		}
		if p.url != "" {
			if resp, err := client.Get(p.url + "/readyz"); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return p
				}
			}
		}
		select {
		case <-p.exited:
			t.Fatalf("the portal exited while starting: %v", p.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the portal did not become ready within 60 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// signIn signs in as the sales user through the embedded provider and returns the browser.
func (p *shutdownPortal) signIn(t *testing.T) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 60 * time.Second}
	resp, err := browser.Get(p.url + "/auth/login?return_to=%2Fquotes")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := goquery.NewDocumentFromReader(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	form := doc.Find("form")
	values := url.Values{"username": {"sales"}, "password": {"sales-demo"}}
	form.Find("input[type=hidden]").Each(func(_ int, s *goquery.Selection) { values.Set(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	req, _ := http.NewRequest(http.MethodPost, p.url+form.AttrOr("action", ""), strings.NewReader(values.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", p.url)
	resp, err = browser.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != "/quotes" {
		t.Fatalf("sign-in ended at %s with %d", resp.Request.URL, resp.StatusCode)
	}
	return browser
}

type shutdownResult struct {
	status int
	body   string
	err    error
}

func (p *shutdownPortal) send(browser *http.Client, req *http.Request) <-chan shutdownResult {
	done := make(chan shutdownResult, 1)
	go func() {
		resp, err := browser.Do(req)
		if err != nil {
			done <- shutdownResult{err: err}
			return
		}
		body, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		done <- shutdownResult{status: resp.StatusCode, body: string(body), err: err}
	}()
	return done
}

// waitFor waits for a channel value with a generous bound (an event, not a timing assertion).
func waitFor[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(60 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func TestShutdownDrainsInFlightRequests(t *testing.T) {
	t.Parallel()
	sim := v2sim.New(v2sim.Options{Customers: 3, Seed: 1}) // any bearer token is accepted
	gate := newShutdownGate(sim)
	simServer := httptest.NewServer(gate)
	t.Cleanup(func() { gate.open(); simServer.Close(); _ = sim.Close() })

	const grace = 30 * time.Second
	p := startShutdownPortal(t, buildPortalBinary(t), simServer.URL, grace.String())
	browser := p.signIn(t)

	// 1. An upload still being sent: the first half of the file now, the rest after SIGTERM.
	bodyReader, bodyWriter := io.Pipe()
	mw := multipart.NewWriter(bodyWriter)
	// 1.5 MiB: larger than what the portal reads before it starts the v2 upload (512 KiB), so the
	// first half is streaming upstream when SIGTERM arrives.
	file := bytes.Repeat([]byte("shutdown-upload "), 96<<10)
	uploadReq, _ := http.NewRequest(http.MethodPost, p.url+"/quotes/1/1/900001/attachments", bodyReader)
	uploadReq.Header.Set("Content-Type", mw.FormDataContentType())
	uploadReq.Header.Set("Origin", p.url)
	uploadReq.Header.Set("HX-Request", "true")
	upload := p.send(browser, uploadReq)
	secondHalf := make(chan struct{})
	writerDone := make(chan error, 1)
	go func() {
		err := func() error {
			if err := mw.WriteField("attachmentType", "OTHER"); err != nil {
				return err
			}
			part, err := mw.CreateFormFile("file", "shutdown.txt")
			if err != nil {
				return err
			}
			if _, err := part.Write(file[:len(file)/2]); err != nil {
				return err
			}
			<-secondHalf
			if _, err := part.Write(file[len(file)/2:]); err != nil {
				return err
			}
			return mw.Close()
		}()
		_ = bodyWriter.CloseWithError(err)
		writerDone <- err
	}()
	waitFor(t, "the upload to start streaming to the v2 API", gate.uploads)

	// 2. A page whose v2 call is held.
	gate.armed.Store(true)
	pageReq, _ := http.NewRequest(http.MethodGet, p.url+"/quotes/1/1/900001/documents", nil)
	page := p.send(browser, pageReq)
	waitFor(t, "the page's v2 call", gate.held)

	// 3. SIGTERM while both are in flight: readiness turns false first.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	probe := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var lastErr error
	readyAnswered503 := false
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		resp, err := probe.Get(p.url + "/readyz")
		if err != nil {
			lastErr = err
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(body), "shutting down") {
			readyAnswered503 = true
			break
		}
		lastErr = fmt.Errorf("readyz answered %d %q", resp.StatusCode, body)
	}
	if !readyAnswered503 {
		t.Errorf("after SIGTERM, with requests in flight, /readyz never answered 503 (last: %v); load balancers "+
			"must see 'not ready' while the portal drains instead of refused connections", lastErr)
	}
	select {
	case <-p.exited:
		t.Fatalf("the portal exited with requests in flight (%v)", p.err)
	default:
	}

	// 4. The in-flight requests complete normally.
	close(secondHalf)
	if err := waitFor(t, "the upload body to be written", writerDone); err != nil {
		t.Errorf("writing the upload body after SIGTERM failed: %v", err)
	}
	gate.open()
	if res := waitFor(t, "the page", page); res.err != nil || res.status != http.StatusOK {
		t.Errorf("the page in flight at SIGTERM: status %d, err %v", res.status, res.err)
	}
	res := waitFor(t, "the upload", upload)
	if res.err != nil || res.status != http.StatusOK || !strings.Contains(res.body, "shutdown.txt") {
		t.Errorf("the upload in flight at SIGTERM: status %d, err %v: %.300s", res.status, res.err, res.body)
	}

	// 5. Then the process exits 0, within the grace period.
	select {
	case <-p.exited:
	case <-time.After(grace):
		t.Fatalf("the portal did not exit within the %s grace period after its requests finished", grace)
	}
	if p.err != nil {
		t.Errorf("exit: %v, want status 0", p.err)
	}
	if log := p.out.String(); !strings.Contains(log, "portal stopped") || strings.Contains(log, "were cut") {
		t.Errorf("the log does not show a clean stop:\n%s", log)
	}
	// The upload reached the v2 API whole.
	quote, err := apiclientForShutdown(t, simServer.URL).CPQ.TOFList(apiclient.WithToken(context.Background(), "test"), 1, 1, 900001)
	if err != nil {
		t.Fatal(err)
	}
	stored := false
	for _, a := range quote.Attachments {
		if a.FileName == "shutdown.txt" && a.Size == int64(len(file)) {
			stored = true
		}
	}
	if !stored {
		t.Errorf("the upload finished during shutdown is not stored whole: %+v", quote.Attachments)
	}
}

func apiclientForShutdown(t *testing.T, base string) *apiclient.Client {
	t.Helper()
	c, err := apiclient.New(base)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestShutdownGraceBoundsSlowRequests(t *testing.T) {
	t.Parallel()
	sim := v2sim.New(v2sim.Options{Customers: 3, Seed: 1})
	gate := newShutdownGate(sim)
	simServer := httptest.NewServer(gate)
	t.Cleanup(func() { gate.open(); simServer.Close(); _ = sim.Close() })

	p := startShutdownPortal(t, buildPortalBinary(t), simServer.URL, "1s")
	browser := p.signIn(t)
	gate.armed.Store(true)
	req, _ := http.NewRequest(http.MethodGet, p.url+"/quotes/1/1/900001/documents", nil)
	stuck := p.send(browser, req)
	waitFor(t, "the page's v2 call", gate.held)

	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The held v2 call never returns: the grace period ends it, and the process still exits 0.
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("the portal did not exit after its 1 s grace period")
	}
	if p.err != nil {
		var exitErr *exec.ExitError
		errors.As(p.err, &exitErr)
		t.Errorf("exit: %v, want status 0", p.err)
	}
	if !strings.Contains(p.out.String(), "were cut") {
		t.Errorf("the log does not say requests were cut at the end of the grace period:\n%s", p.out.String())
	}
	if res := waitFor(t, "the stuck request", stuck); res.err == nil && res.status < 500 {
		t.Errorf("the request cut at the end of the grace period looked successful: %d", res.status)
	}
}
