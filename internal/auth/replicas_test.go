package auth

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/gorilla/sessions"

	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/statedb/statedbtest"
)

// pausingStore holds the request that loads the session until release is called, so a test can make another replica
// refresh the session between this request's load and its refresh.
type pausingStore struct {
	*session.ServerStore
	loaded, resume chan struct{}
	release        func()
	once           sync.Once
}

// New is what session.Load calls (gorilla/sessions' Store).
func (ps *pausingStore) New(r *http.Request, name string) (*sessions.Session, error) {
	gs, err := ps.ServerStore.New(r, name)
	ps.once.Do(func() { close(ps.loaded) })
	<-ps.resume
	return gs, err
}

// replica is a second portal instance behind the same public URL, with its own Authenticator (own single
// flight and rotation cache) and its own connection to the env's state database and provider. Its store pauses
// the first request after loading the session.
type replica struct {
	handler http.Handler
	store   *pausingStore
}

func (e *env) newReplica(t *testing.T) *replica {
	t.Helper()
	// Its own connection pool to the env's database, as another process would have.
	ds, err := session.NewSQLStore(e.storeOpts, statedbtest.OpenURL(t, e.databaseURL))
	if err != nil {
		t.Fatal(err)
	}
	store := &pausingStore{ServerStore: ds, loaded: make(chan struct{}), resume: make(chan struct{})}
	store.release = sync.OnceFunc(func() { close(store.resume) })
	t.Cleanup(store.release) // never leave a paused request behind
	publicURL, _ := url.Parse(e.server.URL)
	a := New(Config{
		IssuerURL:    e.issuer,
		ClientID:     testClientID,
		ClientSecret: testClientSecret,
		PublicURL:    publicURL,
		HTTPClient:   e.server.Client(),
		Now:          e.clock.Now,
	}, store, testLogger(t))
	t.Cleanup(a.Close)
	r := gin.New()
	r.Use(english())
	r.POST(BackChannelLogoutPath, a.BackChannelLogout)
	r.GET("/whoami", a.RequireLogin(), func(c *gin.Context) {
		c.JSON(http.StatusOK, whoami{User: CurrentUser(c), AccessToken: AccessToken(c)})
	})
	return &replica{handler: r, store: store}
}

// The race of docs/operations.md ("Sessions on several replicas"): two replicas refresh one session at the same moment,
// the provider rotates the refresh token for the first and refuses it (invalid_grant) to the second. The
// second must carry on with the first one's tokens instead of signing the user out.
func TestReplicaLosingTheRefreshRaceAdoptsTheWinnersTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{postgres: true})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	before := e.who(t, browser)
	replicaB := e.newReplica(t)
	e.clock.Advance(20 * time.Minute) // the access token has expired: the next request on either replica refreshes

	// Replica B receives a request and loads the session (old refresh token), then pauses.
	req := requestWithCookies(e.cookieHeader(browser, "/whoami"))
	answered := make(chan *httptest.ResponseRecorder, 1)
	go func() {
		rec := httptest.NewRecorder()
		replicaB.handler.ServeHTTP(rec, req)
		answered <- rec
	}()
	<-replicaB.store.loaded

	// Meanwhile replica A refreshes the same session: the provider rotates the refresh token and the database
	// gets the new tokens.
	winner := e.who(t, browser)
	if winner.AccessToken == before.AccessToken || e.refreshCalls.Load() != 1 {
		t.Fatalf("replica A did not refresh (refresh calls %d)", e.refreshCalls.Load())
	}

	// Replica B now presents the retired refresh token.
	replicaB.store.release()
	rec := <-answered
	if e.refreshCalls.Load() != 2 || e.refreshRefusals.Load() != 1 {
		t.Fatalf("replica B's refresh: %d calls, %d refused; want 2 and 1 (the race was not reproduced)",
			e.refreshCalls.Load(), e.refreshRefusals.Load())
	}
	if rec.Code != http.StatusOK {
		t.Fatalf("replica B answered %d (Location %q): the user was signed out", rec.Code, rec.Header().Get("Location"))
	}
	var got whoami
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.AccessToken != winner.AccessToken || got.User != before.User {
		t.Fatalf("replica B used %+v, want replica A's tokens", got)
	}
	for _, line := range rec.Result().Header.Values("Set-Cookie") {
		if strings.Contains(line, "Max-Age=0") {
			t.Fatalf("replica B cleared the session cookie: %q", line)
		}
	}

	// The session lives on in the database with the winner's tokens, and needs no further refresh.
	if again := e.who(t, browser); again.AccessToken != winner.AccessToken || e.refreshCalls.Load() != 2 {
		t.Fatalf("after the race: same token %v, refresh calls %d", again.AccessToken == winner.AccessToken, e.refreshCalls.Load())
	}
}

// A refresh token revoked at the provider still ends the session with the database store: reloading the
// session finds the same refresh token, so nobody else refreshed it.
func TestRevokedRefreshTokenEndsTheDatabaseSession(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{postgres: true})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	cookies := e.cookieHeader(browser, "/quotes")
	stored, err := session.Load(e.store, requestWithCookies(cookies))
	if err != nil {
		t.Fatal(err)
	}
	e.revoke(t, stored.RefreshToken)
	// Due for refresh, yet still valid: only the unchanged refresh token tells a revoked session from one
	// refreshed elsewhere.
	e.clock.Advance(14*time.Minute + 30*time.Second)

	p := fetch(t, noRedirects(browser), http.MethodGet, e.server.URL+"/quotes", nil, nil)
	if p.status != http.StatusSeeOther || !strings.HasPrefix(p.header.Get("Location"), LoginPath) {
		t.Fatalf("revoked refresh token: %d %q", p.status, p.header.Get("Location"))
	}
	if e.refreshRefusals.Load() != 1 {
		t.Fatalf("%d refused refreshes, want 1", e.refreshRefusals.Load())
	}
	if _, err := session.Load(e.store, requestWithCookies(cookies)); !errors.Is(err, session.ErrNoSession) {
		t.Fatalf("the server-side session survived: %v", err)
	}
}

// requestWithCookies is a request carrying a browser's Cookie header.
func requestWithCookies(cookies string) *http.Request {
	req := httptest.NewRequest(http.MethodGet, "/whoami", nil)
	req.Header.Set("Cookie", cookies)
	return req
}

// revoke revokes a token at the provider's revocation endpoint (RFC 7009), as an administrator or a
// sign-out elsewhere would.
func (e *env) revoke(t *testing.T, token string) {
	t.Helper()
	var discovery struct {
		RevocationEndpoint string `json:"revocation_endpoint"`
	}
	p := fetch(t, e.server.Client(), http.MethodGet, e.issuer+"/.well-known/openid-configuration", nil, nil)
	if err := json.Unmarshal([]byte(p.body), &discovery); err != nil || discovery.RevocationEndpoint == "" {
		t.Fatalf("discovery: %v, %s", err, p.body)
	}
	req, err := http.NewRequest(http.MethodPost, discovery.RevocationEndpoint,
		strings.NewReader(url.Values{"token": {token}, "token_type_hint": {"refresh_token"}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(testClientID, testClientSecret)
	resp, err := e.server.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("revoke: %d", resp.StatusCode)
	}
}
