//go:build tools

// Package oauth2proxy pins oauth2-proxy, the reference Go OpenID Connect proxy, which
// `make bench` measures beside the portal (the overhead group of bench/cmd/portalbench). It is
// its own module so oauth2-proxy's dependencies stay out of the portal's go.sum;
// scripts/build-oauth2-proxy.sh builds the binary from here.
package oauth2proxy

import _ "github.com/oauth2-proxy/oauth2-proxy/v7"
