package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gin-gonic/gin"
	"golang.org/x/oauth2"

	"github.com/cpqportal/portal/internal/session"
)

const (
	// rotationMemory is how long a refresh result is remembered by the refresh token it replaced. A
	// request that still carries the old cookie (sent before the browser stored the new one) then gets the
	// rotated tokens instead of presenting a refresh token the provider has already retired, which would
	// end the session.
	rotationMemory = time.Minute
	// refreshTimeout bounds one refresh call to the provider.
	refreshTimeout = 15 * time.Second
)

// refreshed is the outcome of one refresh.
type refreshed struct {
	accessToken, refreshToken, idToken string
	expiry                             time.Time
}

func (r refreshed) applyTo(s *session.Session) {
	s.AccessToken = r.accessToken
	s.RefreshToken = r.refreshToken
	s.TokenExpiry = r.expiry
	if r.idToken != "" {
		s.IDToken = r.idToken
	}
}

// rotationCache maps a hash of a retired refresh token to the tokens that replaced it.
type rotationCache struct {
	mu      sync.Mutex
	entries map[string]rotationEntry
}

type rotationEntry struct {
	result  refreshed
	expires time.Time
}

func (rc *rotationCache) get(key string, now time.Time) (refreshed, bool) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	entry, ok := rc.entries[key]
	if !ok || now.After(entry.expires) {
		return refreshed{}, false
	}
	return entry.result, true
}

func (rc *rotationCache) put(key string, result refreshed, now time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	for k, entry := range rc.entries {
		if now.After(entry.expires) {
			delete(rc.entries, k)
		}
	}
	rc.entries[key] = rotationEntry{result: result, expires: now.Add(rotationMemory)}
}

func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// refresh renews s's tokens in place. Concurrent requests of one session share one call to the provider
// (single flight keyed by the refresh token's hash), and requests arriving just after it reuse its result.
// It returns ErrSessionEnded when the provider refuses (invalid_grant and other 4xx answers), unless
// another replica had just refreshed the session (adoptRefreshedElsewhere), and ErrProviderUnavailable
// for network and server errors.
func (a *Authenticator) refresh(c *gin.Context, s *session.Session) error {
	if s.RefreshToken == "" {
		return fmt.Errorf("%w: no refresh token", ErrSessionEnded)
	}
	key := tokenHash(s.RefreshToken)
	if result, ok := a.rotated.get(key, a.now()); ok {
		result.applyTo(s)
		return nil
	}
	refreshToken, subject, sessionID := s.RefreshToken, s.Subject, s.ID
	// The shared call must not die with the request that happened to start it.
	ctx := context.WithoutCancel(c.Request.Context())
	value, err, _ := a.refreshes.Do(key, func() (any, error) {
		if result, ok := a.rotated.get(key, a.now()); ok {
			return result, nil
		}
		result, err := a.callRefresh(ctx, refreshToken, subject)
		if errors.Is(err, ErrSessionEnded) {
			result, err = a.adoptRefreshedElsewhere(ctx, sessionID, refreshToken, err)
		}
		if err != nil {
			return nil, err
		}
		a.rotated.put(key, result, a.now())
		a.logger.DebugContext(ctx, "tokens refreshed", "subject", subject)
		return result, nil
	})
	if err != nil {
		return err
	}
	value.(refreshed).applyTo(s)
	return nil
}

// adoptRefreshedElsewhere runs after the provider refused refreshToken (refusal). Providers that rotate
// refresh tokens accept each one once, so when two replicas refresh the same session at the same moment
// the loser is refused although the winner has just stored fresh tokens. With a server-side store it
// reloads the session once: if it now holds another refresh token and an access token still valid, those
// are the winner's and are returned, so this request carries on with them. If the session is unchanged
// (revoked, signed out at the provider) or gone, the refusal stands and the session ends.
//
// The cookie store has nothing to reload: the cookie is the session, and another replica's refresh lives
// only in the Set-Cookie of its own response. The refusal stands there (docs/operations.md, "Scaling
// out"); within one replica the single flight and the rotation cache already spare concurrent requests.
func (a *Authenticator) adoptRefreshedElsewhere(ctx context.Context, sessionID, refreshToken string, refusal error) (refreshed, error) {
	reloader, ok := a.store.(session.Reloader)
	if !ok || sessionID == "" {
		return refreshed{}, refusal
	}
	current, err := reloader.Reload(ctx, sessionID)
	if errors.Is(err, session.ErrNoSession) {
		return refreshed{}, refusal
	}
	if err != nil {
		return refreshed{}, fmt.Errorf("%w (reloading the session: %w)", refusal, err)
	}
	stillValid := current.TokenExpiry.IsZero() || a.now().Before(current.TokenExpiry)
	if current.RefreshToken == "" || current.RefreshToken == refreshToken || !stillValid {
		return refreshed{}, refusal
	}
	a.logger.InfoContext(ctx, "refresh refused, but the session was refreshed meanwhile by another request; using its tokens",
		"subject", current.Subject)
	return refreshed{
		accessToken:  current.AccessToken,
		refreshToken: current.RefreshToken,
		idToken:      current.IDToken,
		expiry:       current.TokenExpiry,
	}, nil
}

func (a *Authenticator) callRefresh(ctx context.Context, refreshToken, subject string) (refreshed, error) {
	d, err := a.providerNow(ctx)
	if err != nil {
		return refreshed{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	// An expired token with only the refresh token makes the TokenSource refresh at once. oauth2 gives no
	// signal when a TokenSource refreshes, so we call it directly and persist the result ourselves.
	token, err := d.oauth.TokenSource(a.idpContext(ctx), &oauth2.Token{RefreshToken: refreshToken}).Token()
	if err != nil {
		var retrieveErr *oauth2.RetrieveError
		if errors.As(err, &retrieveErr) && retrieveErr.Response != nil &&
			retrieveErr.Response.StatusCode >= 400 && retrieveErr.Response.StatusCode < 500 {
			return refreshed{}, fmt.Errorf("%w: %w", ErrSessionEnded, err)
		}
		return refreshed{}, fmt.Errorf("%w: refresh: %w", ErrProviderUnavailable, err)
	}
	result := refreshed{
		accessToken:  token.AccessToken,
		refreshToken: token.RefreshToken, // oauth2 keeps the old one when the provider does not rotate
		expiry:       a.expiryOf(token),
	}
	if rawIDToken, _ := token.Extra("id_token").(string); rawIDToken != "" {
		idToken, err := d.refreshVerifier.Verify(a.idpContext(ctx), rawIDToken)
		if err != nil {
			return refreshed{}, fmt.Errorf("%w: refreshed ID token: %w", ErrSessionEnded, err)
		}
		if idToken.Subject != subject {
			return refreshed{}, fmt.Errorf("%w: refreshed ID token is for another subject", ErrSessionEnded)
		}
		result.idToken = rawIDToken
	}
	return result, nil
}

// ForceRefresh renews the access token now, for a handler whose v2 call answered 401 with a token that
// looked valid. It shares the single flight of RequireLogin and saves the session, so AccessToken(c)
// returns the new token afterwards. On ErrSessionEnded the session has been cleared: answer with
// Unauthenticated.
func (a *Authenticator) ForceRefresh(c *gin.Context) error {
	s := CurrentSession(c)
	if s == nil {
		return ErrNotSignedIn
	}
	if err := a.refresh(c, s); err != nil {
		if errors.Is(err, ErrSessionEnded) {
			if delErr := session.Delete(a.store, c.Writer, c.Request); delErr != nil {
				a.logger.ErrorContext(c.Request.Context(), "deleting the session failed", "err", delErr)
			}
			a.sessionsEnded(c.Request.Context(), s.Subject)
		}
		return err
	}
	if err := session.Save(a.store, c.Writer, c.Request, s); err != nil {
		if errors.Is(err, session.ErrNoSession) {
			return ErrSessionEnded
		}
		return fmt.Errorf("auth: save refreshed session: %w", err)
	}
	return nil
}
