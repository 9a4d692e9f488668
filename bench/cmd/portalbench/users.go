package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/cpqportal/portal/internal/config"
	"github.com/cpqportal/portal/internal/demoidp"
	"github.com/cpqportal/portal/internal/session"
	"github.com/cpqportal/portal/internal/statedb"
)

// benchUsers is how many sign-in users each provider knows: every cold list sample needs a user whose
// customer cache is empty, i.e. one who has not signed in before.
const benchUsers = 64

// benchPassword is the password of every benchmark user.
const benchPassword = "bench-pass"

// benchUser is the name of the i-th benchmark user (i from 1).
func benchUser(i int) string { return fmt.Sprintf("bench%02d", i) }

// idpServer is an OpenID provider (internal/demoidp, the provider of demo mode and the tests) serving
// the benchmark users on its own loopback listener.
type idpServer struct {
	server *http.Server
}

// startIdP serves the provider on listener for the portal at portalURL; extraRedirectURIs are other
// callbacks its client may use (oauth2-proxy's, which signs in as the same client).
func startIdP(listener net.Listener, issuer, clientSecret, portalURL string, extraRedirectURIs ...string) (*idpServer, error) {
	users := make([]demoidp.User, 0, benchUsers)
	for i := 1; i <= benchUsers; i++ {
		name := benchUser(i)
		users = append(users, demoidp.User{
			Subject: "sub-" + name, Username: name, Password: benchPassword,
			Name: "Bench User " + name[len(name)-2:], Email: name + "@bench.example", Role: "sales",
		})
	}
	provider, err := demoidp.New(demoidp.Options{
		Issuer: issuer, ClientID: config.DemoClientID, ClientSecret: clientSecret,
		RedirectURIs:           append([]string{portalURL + "/auth/callback"}, extraRedirectURIs...),
		PostLogoutRedirectURIs: []string{portalURL + "/auth/logged-out"},
		// Longer than any run: a token refresh in the middle of a round would be measured too.
		AccessTokenTTL: time.Hour,
		ExtraUsers:     users,
	})
	if err != nil {
		return nil, err
	}
	srv := &http.Server{Handler: provider.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(listener) }()
	return &idpServer{server: srv}, nil
}

func (s *idpServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = s.server.Shutdown(ctx)
}

// signedIn is a user signed in to a portal: the cookies a browser would send, and the access token
// inside the session (read from the portal's file session store with its session key, to give the
// bare proxy the very same token).
type signedIn struct {
	user        string
	cookie      string // the Cookie header
	accessToken string
}

// signInLanding is where sign-in returns to: a page that does not read the customer list, so that a
// user who just signed in still has a cold customer cache.
const signInLanding = "/contracts"

// signIn drives the real sign-in flow like a browser with a cookie jar: /auth/login?return_to= → the
// provider's form → POST credentials → callback → back on the portal.
func signIn(ctx context.Context, env *portalEnv, user string) (*signedIn, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := signInThrough(ctx, browser, env.url+"/auth/login?return_to="+url.QueryEscape(signInLanding), user)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK || resp.Request.URL.String() != env.url+signInLanding {
		return nil, fmt.Errorf("sign-in as %s ended at %s with %s", user, resp.Request.URL, resp.Status)
	}

	portalURL, _ := url.Parse(env.url)
	cookies := jar.Cookies(portalURL)
	if len(cookies) == 0 {
		return nil, errors.New("sign-in: the portal set no session cookie")
	}
	parts := make([]string, 0, len(cookies))
	probe, _ := http.NewRequest(http.MethodGet, env.url+"/", nil)
	for _, c := range cookies {
		parts = append(parts, c.Name+"="+c.Value)
		probe.AddCookie(c)
	}
	// The portal runs with its default session store (the state database: SQLite in its data
	// directory, or its PORTAL_DATABASE_URL): the cookie holds only the session's sealed id, so the
	// session is read from there, as the portal reads it.
	db, err := statedb.Open(ctx, statedb.Options{Dir: filepath.Join(env.dataDir, "state"), URL: env.databaseURL})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	store, err := session.NewSQLStore(session.Options{Keys: []string{env.sessionKey}}, db)
	if err != nil {
		return nil, err
	}
	defer store.Close()
	s, err := session.Load(store, probe)
	if err != nil {
		return nil, fmt.Errorf("sign-in: decoding the session cookie: %w", err)
	}
	if s.AccessToken == "" {
		return nil, errors.New("sign-in: the session holds no access token")
	}
	return &signedIn{user: user, cookie: strings.Join(parts, "; "), accessToken: s.AccessToken}, nil
}

// signInThrough starts a sign-in at start (a relying party's login address) with browser, a client
// with a cookie jar, fills in the provider's login form as user and follows the redirects back; it
// returns the last response (its body already read and closed).
func signInThrough(ctx context.Context, browser *http.Client, start, user string) (*http.Response, error) {
	page, final, err := getPage(ctx, browser, start)
	if err != nil {
		return nil, fmt.Errorf("sign-in: %w", err)
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(page))
	if err != nil {
		return nil, fmt.Errorf("sign-in: %w", err)
	}
	form := doc.Find("form")
	if doc.Find(`input[name="username"]`).Length() != 1 {
		return nil, fmt.Errorf("sign-in: expected the provider's login form at %s", final)
	}
	values := url.Values{}
	form.Find(`input[type="hidden"]`).Each(func(_ int, s *goquery.Selection) {
		values.Set(s.AttrOr("name", ""), s.AttrOr("value", ""))
	})
	values.Set("username", user)
	values.Set("password", benchPassword)
	action, err := final.Parse(form.AttrOr("action", ""))
	if err != nil {
		return nil, fmt.Errorf("sign-in: form action: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, action.String(), strings.NewReader(values.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := browser.Do(req)
	if err != nil {
		return nil, fmt.Errorf("sign-in: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp, nil
}

// getPage GETs target following redirects and returns the body and the final URL.
func getPage(ctx context.Context, client *http.Client, target string) (string, *url.URL, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return "", nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return "", nil, fmt.Errorf("GET %s: %s at %s", target, resp.Status, resp.Request.URL)
	}
	return string(body), resp.Request.URL, nil
}
