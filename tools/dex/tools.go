//go:build tools

// Package dex pins the Dex OpenID provider used by the portal's interoperability
// test (internal/auth). It is its own module so Dex's many dependencies stay out of
// the portal's go.sum; scripts/build-dex.sh builds the binary from here.
package dex

import _ "github.com/dexidp/dex/cmd/dex"
