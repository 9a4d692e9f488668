//go:build tools

// Package mailpit pins Mailpit, the SMTP server with an HTTP API that the portal's mail tests
// send to and read from (internal/outbox, e2e). It is its own module so Mailpit's dependencies
// stay out of the portal's go.sum; scripts/build-mailpit.sh builds the binary from here.
package mailpit

import _ "github.com/axllent/mailpit"
