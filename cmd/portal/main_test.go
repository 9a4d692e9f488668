package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

func noEnv(string) string { return "" }

func TestConfigErrorIsReported(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), nil, noEnv, io.Discard, io.Discard)
	if err == nil || err.Error() != "PORTAL_V2_API_URL: required (or run with -demo)" {
		t.Fatalf("err = %v", err)
	}
}

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	if err := run(context.Background(), []string{"-version"}, noEnv, &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	if out.String() != "portal dev\n" {
		t.Errorf("-version printed %q", out.String())
	}
}

// TestDemoMode starts the whole portal in demo mode on a free port, as `make run` and the e2e
// harness do, signs in through the embedded provider and shuts down gracefully.
func TestDemoMode(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stdoutW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-demo", "-addr", "127.0.0.1:0", "-demo-customers", "3", "-data-dir", t.TempDir()}, noEnv, stdoutW, io.Discard)
		_ = stdoutW.Close()
	}()

	// The banner: the line the e2e harness parses, then the demo details.
	lines := bufio.NewScanner(stdout)
	var banner []string
	for lines.Scan() {
		banner = append(banner, lines.Text())
		if strings.HasPrefix(lines.Text(), "  v2 simulator:") {
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	if len(banner) == 0 {
		t.Fatalf("no output; run returned %v", <-done)
	}
	m := regexp.MustCompile(`^portal listening on (http://127\.0\.0\.1:(\d+))$`).FindStringSubmatch(banner[0])
	if m == nil || m[2] == "0" {
		t.Fatalf("first line %q is not 'portal listening on http://127.0.0.1:PORT'", banner[0])
	}
	base := m[1]
	text := strings.Join(banner, "\n")
	for _, want := range []string{"sales / sales-demo", "backoffice / backoffice-demo", "teamlead / teamlead-demo", "OpenID provider: " + base + "/idp", "v2 simulator:    http://127.0.0.1:", "(3 customers)"} {
		if !strings.Contains(text, want) {
			t.Errorf("banner lacks %q:\n%s", want, text)
		}
	}

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := client.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	if resp, body := get("/healthz"); resp.StatusCode != 200 || body != "ok\n" {
		t.Errorf("healthz: %d %q", resp.StatusCode, body)
	}
	// Ready once discovery of the in-process provider is done and the simulator answers.
	for i := 0; ; i++ {
		resp, body := get("/readyz")
		if resp.StatusCode == 200 {
			break
		}
		if i == 200 {
			t.Fatalf("never ready: %d %q", resp.StatusCode, body)
		}
		time.Sleep(25 * time.Millisecond)
	}

	// Sign in through the embedded provider's form.
	resp, body := get("/customers")
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	form := doc.Find("form")
	if resp.Request.URL.Path != "/idp/login" || form.Length() != 1 {
		t.Fatalf("GET /customers ended at %s, want the provider's login form", resp.Request.URL)
	}
	values := url.Values{"username": {"sales"}, "password": {"sales-demo"}}
	form.Find("input[type=hidden]").Each(func(_ int, s *goquery.Selection) { values.Set(s.AttrOr("name", ""), s.AttrOr("value", "")) })
	req, _ := http.NewRequest(http.MethodPost, base+form.AttrOr("action", ""), strings.NewReader(values.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", base)
	signedIn, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(signedIn.Body)
	_ = signedIn.Body.Close()
	if signedIn.Request.URL.Path != "/customers" || !strings.Contains(string(page), `<bdi data-testid="user-name">Sam Sales</bdi>`) {
		t.Fatalf("after sign-in: %s %d\n%s", signedIn.Request.URL, signedIn.StatusCode, page)
	}

	cancel() // what SIGTERM does
	if err := <-done; err != nil {
		t.Errorf("graceful shutdown returned %v, want nil (exit 0)", err)
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Error("the portal still answers after shutdown")
	}
}
