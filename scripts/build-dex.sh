#!/usr/bin/env bash
# Builds the Dex OpenID provider used by the interoperability test (internal/auth/dex_test.go)
# into .cache/dex/dex, from the pinned module in tools/dex. Builds only when the binary is
# missing or older than tools/dex/go.sum (the pin); otherwise it does nothing.
# A cold build takes 3 to 4 minutes on 2 cores; later runs are instant.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin="$root/.cache/dex/dex"
pin="$root/tools/dex/go.sum"

if [ -x "$bin" ] && [ ! "$pin" -nt "$bin" ]; then
  exit 0
fi

mkdir -p "$(dirname "$bin")"
echo "build-dex: building Dex into $bin (slow the first time)" >&2
tmp="$bin.tmp.$$"
trap 'rm -f "$tmp"' EXIT
(cd "$root/tools/dex" && CGO_ENABLED=0 go build -trimpath -o "$tmp" github.com/dexidp/dex/cmd/dex)
mv -f "$tmp" "$bin"
echo "build-dex: done" >&2
