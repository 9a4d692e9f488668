package auth

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
)

// jwksRefetchInterval is the least time between two fetches of the provider's keys for logout
// tokens. go-oidc fetches the keys again whenever a signature does not verify (the way to learn a
// rotated key), so without it every forged logout token would make the portal call the provider.
const jwksRefetchInterval = time.Minute

// maxJWKS bounds the provider's key set document.
const maxJWKS = 1 << 20

// jwksThrottle is the transport of the logout tokens' key set: a fetch less than
// jwksRefetchInterval after the last successful one is answered with that one's copy instead of
// reaching the provider. A key the provider rotated in is therefore learnt within a minute.
type jwksThrottle struct {
	next http.RoundTripper
	now  func() time.Time

	mu        sync.Mutex
	body      []byte
	header    http.Header
	fetchedAt time.Time
}

func (t *jwksThrottle) RoundTrip(req *http.Request) (*http.Response, error) {
	t.mu.Lock()
	if t.body != nil && t.now().Sub(t.fetchedAt) < jwksRefetchInterval {
		body, header := t.body, t.header.Clone()
		t.mu.Unlock()
		return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Header: header, Body: io.NopCloser(bytes.NewReader(body)),
			ContentLength: int64(len(body)), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Request: req}, nil
	}
	t.mu.Unlock()
	resp, err := t.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKS+1))
	_ = resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("auth: read the provider's keys: %w", err)
	}
	if len(body) > maxJWKS {
		return nil, fmt.Errorf("auth: the provider's key set is over %d bytes", maxJWKS)
	}
	t.mu.Lock()
	t.body, t.header, t.fetchedAt = body, resp.Header.Clone(), t.now()
	t.mu.Unlock()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp, nil
}

// logoutVerifier verifies logout tokens against the provider's keys (jwks_uri) fetched through
// jwksThrottle, with the provider's announced algorithms.
func (a *Authenticator) logoutVerifier(provider *oidc.Provider) (*oidc.IDTokenVerifier, error) {
	var meta struct {
		Issuer     string   `json:"issuer"`
		JWKS       string   `json:"jwks_uri"`
		Algorithms []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := provider.Claims(&meta); err != nil {
		return nil, fmt.Errorf("auth: discovery document: %w", err)
	}
	next := a.cfg.HTTPClient.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	client := &http.Client{Timeout: a.cfg.HTTPClient.Timeout, Transport: &jwksThrottle{next: next, now: a.now}}
	keys := oidc.NewRemoteKeySet(oidc.ClientContext(context.Background(), client), meta.JWKS)
	return oidc.NewVerifier(meta.Issuer, keys, &oidc.Config{ClientID: a.cfg.ClientID, Now: a.cfg.Now, SupportedSigningAlgs: meta.Algorithms}), nil
}
