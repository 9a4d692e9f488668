#!/usr/bin/env bash
# Builds oauth2-proxy, the peer that `make bench` measures beside the portal (the overhead group
# of bench/cmd/portalbench, docs/performance.md), into .cache/oauth2-proxy/oauth2-proxy from the
# pinned module in tools/oauth2-proxy. Builds only when the binary is missing or older than
# tools/oauth2-proxy/go.sum (the pin); otherwise it does nothing.
# A cold build takes a few minutes on 2 cores; later runs are instant.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="$root/.cache/oauth2-proxy/oauth2-proxy"
pin="$root/tools/oauth2-proxy/go.sum"

if [ -x "$bin" ] && [ ! "$pin" -nt "$bin" ]; then
  exit 0
fi

mkdir -p "$(dirname "$bin")"
echo "build-oauth2-proxy: building oauth2-proxy into $bin (slow the first time)" >&2
tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
# The version it reports (--version) is the pinned one, as in its release builds.
mod=github.com/oauth2-proxy/oauth2-proxy/v7
version=$(cd "$root/tools/oauth2-proxy" && go list -m -f '{{.Version}}' "$mod")
(cd "$root/tools/oauth2-proxy" && CGO_ENABLED=0 go build -trimpath -ldflags "-X $mod/pkg/version.VERSION=$version" -o "$tmp" "$mod")
mv -f "$tmp" "$bin"
echo "build-oauth2-proxy: done" >&2
