#!/usr/bin/env bash
# Builds Mailpit (an SMTP server with an HTTP API to read what arrived), used by the mail tests
# (internal/outbox, e2e), into .cache/mailpit/mailpit from the pinned module in tools/mailpit.
# Builds only when the binary is missing or older than tools/mailpit/go.sum (the pin); otherwise
# it does nothing. A cold build takes a few minutes on 2 cores; later runs are instant.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="$root/.cache/mailpit/mailpit"
pin="$root/tools/mailpit/go.sum"

if [ -x "$bin" ] && [ ! "$pin" -nt "$bin" ]; then
  exit 0
fi

mkdir -p "$(dirname "$bin")"
echo "build-mailpit: building Mailpit into $bin (slow the first time)" >&2
tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
(cd "$root/tools/mailpit" && CGO_ENABLED=0 go build -trimpath -o "$tmp" github.com/axllent/mailpit)
mv -f "$tmp" "$bin"
echo "build-mailpit: done" >&2
