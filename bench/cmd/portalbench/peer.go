package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/cpqportal/portal/internal/config"
)

// oauth2-proxy (github.com/oauth2-proxy/oauth2-proxy/v7, the reference Go OpenID Connect proxy) is the
// peer of the overhead group: an authenticating reverse proxy with a cookie session in front of the
// same simulator, signed in through the same provider. It only forwards JSON where the portal renders
// a page; it shows what a well-known Go program pays for a session check and a proxied call.
const (
	// oauth2ProxyBuildScript builds the pinned binary (tools/oauth2-proxy) into oauth2ProxyBin.
	oauth2ProxyBuildScript = "scripts/build-oauth2-proxy.sh"
	oauth2ProxyBin         = ".cache/oauth2-proxy/oauth2-proxy"
	// oauth2ProxyCallback is its OAuth callback path; oauth2ProxyLanding a page it returns to after
	// the sign-in (proxied to the simulator).
	oauth2ProxyCallback = "/oauth2/callback"
	oauth2ProxyLanding  = "/v2/customer/1"
)

// reserveAddr returns a free loopback address for a program that takes its address as a flag (the
// provider must know oauth2-proxy's callback before oauth2-proxy starts).
func reserveAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	return addr, l.Close()
}

// ensureOAuth2Proxy builds oauth2-proxy when it is missing (the script does nothing when the binary
// is current) and returns its path.
func (l *lab) ensureOAuth2Proxy(ctx context.Context) (string, error) {
	build := exec.CommandContext(ctx, "bash", oauth2ProxyBuildScript)
	build.Dir = l.opts.root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %w\n%s", oauth2ProxyBuildScript, err, out)
	}
	return filepath.Join(l.opts.root, oauth2ProxyBin), nil
}

// startOAuth2Proxy starts oauth2-proxy on addr in front of the simulator, as a client of the main
// portal's provider (env), with its defaults but for what a loopback lab needs: http cookies, any
// e-mail domain, the ID token passed upstream as the bearer token (the simulator accepts any),
// PKCE like the portal, and its request log in a file (like the portal's), not on a pipe to us.
func (l *lab) startOAuth2Proxy(ctx context.Context, bin, addr string, env *portalEnv) (*proc, string, error) {
	secret := make([]byte, 16)
	_, _ = rand.Read(secret)
	base := "http://" + addr
	p, _, err := l.start(ctx, "oauth2-proxy", bin, []string{
		"--provider=oidc",
		"--oidc-issuer-url=" + env.issuer,
		"--client-id=" + config.DemoClientID,
		"--client-secret=" + env.clientSecret,
		"--redirect-url=" + base + oauth2ProxyCallback,
		"--code-challenge-method=S256",
		"--http-address=" + addr,
		"--upstream=" + l.simURL + "/",
		"--cookie-secret=" + hex.EncodeToString(secret),
		"--cookie-secure=false",
		"--email-domain=*",
		"--insecure-oidc-allow-unverified-email",
		"--skip-provider-button",
		"--pass-authorization-header",
		"--pass-basic-auth=false",
		"--logging-filename=" + filepath.Join(l.dir, "oauth2-proxy-requests.log"),
	}, nil, nil)
	if err != nil {
		return p, "", err
	}
	if err := waitReady(ctx, base+"/ping"); err != nil {
		return p, "", fmt.Errorf("oauth2-proxy: %w", err)
	}
	return p, base, nil
}

// signInOAuth2Proxy signs user in through oauth2-proxy's /oauth2/start like a browser and returns
// the Cookie header of its session (_oauth2_proxy, in several cookies when large).
func signInOAuth2Proxy(ctx context.Context, proxyURL, user string) (string, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return "", err
	}
	browser := &http.Client{Jar: jar, Timeout: 30 * time.Second}
	resp, err := signInThrough(ctx, browser, proxyURL+"/oauth2/start?rd="+url.QueryEscape(oauth2ProxyLanding), user)
	if err != nil {
		return "", fmt.Errorf("oauth2-proxy %w", err)
	}
	if resp.StatusCode != http.StatusOK || resp.Request.URL.Path != oauth2ProxyLanding {
		return "", fmt.Errorf("oauth2-proxy sign-in as %s ended at %s with %s", user, resp.Request.URL, resp.Status)
	}
	u, _ := url.Parse(proxyURL)
	var parts []string
	for _, c := range jar.Cookies(u) {
		if strings.HasPrefix(c.Name, "_oauth2_proxy") && !strings.HasSuffix(c.Name, "_csrf") {
			parts = append(parts, c.Name+"="+c.Value)
		}
	}
	if len(parts) == 0 {
		return "", errors.New("oauth2-proxy sign-in: no _oauth2_proxy cookie")
	}
	return strings.Join(parts, "; "), nil
}
