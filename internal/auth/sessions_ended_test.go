package auth

import (
	"context"
	"crypto/rand"
	"errors"
	"net/http"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cpqportal/portal/internal/session"
)

// revokeFailingStore is the env's store whose revocations fail while failing is set (the database down
// between the logout token's check and the revocation).
type revokeFailingStore struct {
	session.Store
	failing atomic.Bool
}

var errRevokeDown = errors.New("store down (test)")

func (s *revokeFailingStore) RevokeProviderSession(ctx context.Context, subject, sid string) error {
	if s.failing.Load() {
		return errRevokeDown
	}
	return s.Store.RevokeProviderSession(ctx, subject, sid)
}

func (s *revokeFailingStore) RevokeSubject(ctx context.Context, subject, except string) error {
	if s.failing.Load() {
		return errRevokeDown
	}
	return s.Store.RevokeSubject(ctx, subject, except)
}

func (s *revokeFailingStore) Seen(ctx context.Context, key string) (bool, error) {
	return s.Store.(session.Recaller).Seen(ctx, key)
}

// TestBackChannelLogoutRetryAfterAStoreFailureEndsTheSessions: the revocation fails (503), the
// provider sends the same logout token again, and that ends the sessions (the jti was not
// recorded as used); a third delivery is a replay. The portal is told the sessions ended.
func TestBackChannelLogoutRetryAfterAStoreFailureEndsTheSessions(t *testing.T) {
	t.Parallel()
	for name, opts := range map[string]envOptions{"cookie": {}, "postgres": {postgres: true}} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, opts)
			failing := &revokeFailingStore{Store: e.store}
			e.auth.store = failing
			browser := e.newBrowser(t)
			e.signIn(t, browser, "/quotes")
			subject, sid := e.idTokenClaims(t, browser)
			now := e.clock.Now()
			token, err := e.idp.Sign(map[string]any{
				"iss": e.issuer, "aud": testClientID, "sub": subject, "sid": sid,
				"iat": now.Unix(), "exp": now.Add(2 * time.Minute).Unix(), "jti": rand.Text(),
				"events": map[string]any{backChannelEvent: map[string]any{}},
			})
			if err != nil {
				t.Fatal(err)
			}
			failing.failing.Store(true)
			if status, _ := e.postLogoutToken(t, token); status != http.StatusServiceUnavailable {
				t.Fatalf("revocation failing: %d, want 503", status)
			}
			if !e.signedIn(t, browser) || slices.Contains(e.sessionsEnded.All(), subject) {
				t.Fatal("sessions ended although the revocation failed")
			}
			failing.failing.Store(false)
			if status, body := e.postLogoutToken(t, token); status != http.StatusOK {
				t.Fatalf("the provider's retry: %d %q (refused as a replay?)", status, body)
			}
			if e.signedIn(t, browser) {
				t.Fatal("the retried logout token left the session alive")
			}
			if !slices.Contains(e.sessionsEnded.All(), subject) {
				t.Fatal("the portal was not told the user's sessions ended")
			}
			if status, _ := e.postLogoutToken(t, token); status != http.StatusBadRequest {
				t.Fatalf("a third delivery: %d, want 400 (replay)", status)
			}
		})
	}
}

// TestSignOutTellsThePortal: signing out tells OnSessionsEnded the user's subject (the portal
// then pauses their batches and deletes their tokens).
func TestSignOutTellsThePortal(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	subject, _ := e.idTokenClaims(t, browser)
	if got := e.sessionsEnded.All(); len(got) != 0 {
		t.Fatalf("told before signing out: %v", got)
	}
	if p := fetch(t, noRedirects(browser), http.MethodPost, e.server.URL+LogoutPath, nil, nil); p.status != http.StatusSeeOther {
		t.Fatalf("logout: %d", p.status)
	}
	if got := e.sessionsEnded.All(); !slices.Equal(got, []string{subject}) {
		t.Fatalf("told %v, want [%s]", got, subject)
	}
}

// TestForgedLogoutTokensDoNotRefetchTheKeysEachTime: a stream of logout tokens signed with a key
// the provider never published costs at most one fetch of the provider's keys a minute; a valid
// token still works.
func TestForgedLogoutTokensDoNotRefetchTheKeysEachTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOptions{})
	browser := e.newBrowser(t)
	e.signIn(t, browser, "/quotes")
	subject, sid := e.idTokenClaims(t, browser)
	claims := func() map[string]any {
		now := e.clock.Now()
		return map[string]any{
			"iss": e.issuer, "aud": testClientID, "sub": subject, "sid": sid,
			"iat": now.Unix(), "exp": now.Add(2 * time.Minute).Unix(), "jti": rand.Text(),
			"events": map[string]any{backChannelEvent: map[string]any{}},
		}
	}
	before := e.jwksCalls.Load()
	for range 30 {
		if status, _ := e.postLogoutToken(t, signedByStranger(t, claims())); status != http.StatusBadRequest {
			t.Fatalf("forged token: %d", status)
		}
	}
	if fetches := e.jwksCalls.Load() - before; fetches > 2 {
		t.Fatalf("30 forged logout tokens made %d fetches of the provider's keys", fetches)
	}
	good, err := e.idp.Sign(claims())
	if err != nil {
		t.Fatal(err)
	}
	if status, body := e.postLogoutToken(t, good); status != http.StatusOK || e.signedIn(t, browser) {
		t.Fatalf("valid token after the forged ones: %d %q", status, body)
	}
}
