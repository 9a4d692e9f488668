package auth

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/crypto/bcrypt"
)

// The interoperability test: the same sign-in, refresh and sign-out against Dex, a widely used OpenID
// provider that shares no code with the demo provider. Dex is built from the pinned module in tools/dex
// by scripts/build-dex.sh (or taken from DEX_BIN).

const (
	dexUserEmail    = "sam.sales@dex.example"
	dexUserName     = "sam"
	dexUserPassword = "dex-password"
)

func TestDexInteroperability(t *testing.T) {
	t.Parallel()
	bin := dexBinary(t)
	addr := freeAddr(t)
	issuer := "http://" + addr + "/dex"

	e := newEnv(t, envOptions{issuer: issuer})
	startDex(t, bin, addr, issuer, e.server.URL+CallbackPath)

	// Sign in through Dex's own login form (its field is "login", the e-mail).
	browser := e.newBrowser(t)
	form := e.get(t, browser, "/quotes?from=dex")
	if form.status != http.StatusOK || !strings.HasPrefix(form.url.String(), issuer) {
		t.Fatalf("expected Dex's login page, got %d at %s", form.status, form.url)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(form.body))
	if err != nil {
		t.Fatal(err)
	}
	action, ok := doc.Find("form").Attr("action")
	if !ok || doc.Find(`input[name="login"]`).Length() != 1 || doc.Find(`input[name="password"]`).Length() != 1 {
		t.Fatalf("Dex login form not found: %s", form.body)
	}
	post, err := form.url.Parse(action)
	if err != nil {
		t.Fatal(err)
	}
	landed := fetch(t, browser, http.MethodPost, post.String(), nil, url.Values{"login": {dexUserEmail}, "password": {dexUserPassword}})
	if landed.status != http.StatusOK || landed.url.Path != "/quotes" || landed.url.RawQuery != "from=dex" {
		t.Fatalf("after Dex login: %d at %s: %s", landed.status, landed.url, landed.body)
	}
	first := e.who(t, browser)
	if first.User.Email != dexUserEmail || first.User.Name != dexUserName || first.User.Subject == "" {
		t.Fatalf("user from Dex: %+v", first.User)
	}
	if first.AccessToken == "" || first.IDToken == "" {
		t.Fatal("tokens missing")
	}

	// Refresh: make the token look expired on our clock; Dex rotates the refresh token.
	e.clock.Advance(9*time.Minute + 30*time.Second) // Dex tokens live 10 minutes here
	second := e.who(t, browser)
	if second.AccessToken == first.AccessToken || second.User != first.User {
		t.Fatalf("refresh against Dex: token changed %v, user %+v", second.AccessToken != first.AccessToken, second.User)
	}

	// Dex has no end_session_endpoint: logout ends the local session and shows the signed-out page.
	out := fetch(t, noRedirects(browser), http.MethodPost, e.server.URL+LogoutPath, nil, nil)
	if out.status != http.StatusSeeOther || out.header.Get("Location") != LoggedOutPath {
		t.Fatalf("logout with Dex: %d %q", out.status, out.header.Get("Location"))
	}
	if p := e.get(t, browser, LoggedOutPath); !strings.Contains(p.body, "You are signed out") {
		t.Fatalf("logged-out page: %s", p.body)
	}
	if p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil); p.status != http.StatusSeeOther {
		t.Fatalf("still signed in after logout: %d", p.status)
	}

	// A wrong password stays on Dex's page with an error (nothing reaches our callback).
	browser = e.newBrowser(t)
	form = e.get(t, browser, "/quotes")
	doc, _ = goquery.NewDocumentFromReader(strings.NewReader(form.body))
	action, _ = doc.Find("form").Attr("action")
	post, _ = form.url.Parse(action)
	bad := fetch(t, browser, http.MethodPost, post.String(), nil, url.Values{"login": {dexUserEmail}, "password": {"wrong"}})
	if !strings.HasPrefix(bad.url.String(), issuer) || !strings.Contains(bad.body, "Invalid") {
		t.Fatalf("wrong password: %d at %s", bad.status, bad.url)
	}
}

// dexBinary returns DEX_BIN or builds .cache/dex/dex with scripts/build-dex.sh (a no-op when current;
// several minutes the first time).
func dexBinary(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("DEX_BIN"); bin != "" {
		return bin
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(root, "scripts", "build-dex.sh")
	cmd := exec.Command(script)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building Dex with %s failed: %v\n%s", script, err, out)
	}
	return filepath.Join(root, ".cache", "dex", "dex")
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startDex writes a configuration (memory storage, one static client with the portal's exact callback,
// the password database with one user) and runs Dex until the test ends.
func startDex(t *testing.T, bin, addr, issuer, callback string) {
	t.Helper()
	hash, err := bcrypt.GenerateFromPassword([]byte(dexUserPassword), bcrypt.DefaultCost) // Dex refuses cheaper hashes
	if err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`issuer: %s
storage:
  type: memory
web:
  http: %s
oauth2:
  skipApprovalScreen: true
expiry:
  idTokens: "10m"
staticClients:
- id: %s
  secret: %s
  name: CPQ Portal
  redirectURIs:
  - %s
enablePasswordDB: true
staticPasswords:
- email: %q
  hash: %q
  username: %q
  userID: "5d5a2b0e-7d3c-4d8e-9d0b-3a5e1f0c2b11"
`, issuer, addr, testClientID, testClientSecret, callback, dexUserEmail, string(hash), dexUserName)
	path := filepath.Join(t.TempDir(), "dex.yaml")
	if err := os.WriteFile(path, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}

	var logs lockedBuffer
	cmd := exec.Command(bin, "serve", path)
	cmd.Stdout = &logs
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatalf("start Dex: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("Dex log:\n%s", logs.String())
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, issuer+"/.well-known/openid-configuration", nil)
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-exited:
			t.Fatalf("Dex exited:\n%s", logs.String())
		case <-ctx.Done():
			t.Fatalf("Dex did not start:\n%s", logs.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// lockedBuffer collects a child process's output safely.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
