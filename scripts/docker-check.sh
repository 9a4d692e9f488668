#!/usr/bin/env bash
# docker-check.sh replays the build stage of the Dockerfile without Docker and checks that the
# result fits the final image (distroless static: no libc, no shell, read-only root):
#   go tool templ generate
#   CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$VERSION" ./cmd/portal
# then verifies the binary is statically linked and carries the version and build settings.
# Keep the commands here and in the Dockerfile's build stage in step.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
version=${VERSION:-dev}

fail() { echo "docker-check: FAIL: $*" >&2; exit 1; }

# The Dockerfile is the reference; make sure it still runs the commands replayed below.
grep -q 'go tool templ generate' Dockerfile || fail "Dockerfile no longer runs 'go tool templ generate'"
grep -q 'CGO_ENABLED=0 go build -trimpath' Dockerfile || fail "Dockerfile no longer builds with CGO_ENABLED=0 -trimpath"
grep -q 'static-debian12:nonroot' Dockerfile || fail "Dockerfile no longer uses distroless static nonroot"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "docker-check: go tool templ generate"
go tool templ generate
echo "docker-check: CGO_ENABLED=0 go build -trimpath -ldflags \"-s -w -X main.version=$version\" -o $tmp/portal ./cmd/portal"
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$tmp/portal" ./cmd/portal

# Static: distroless/static has no dynamic loader, so a dynamic binary would not even start.
if ldd "$tmp/portal" >/dev/null 2>&1; then
  fail "the binary is dynamically linked: $(ldd "$tmp/portal" 2>&1 | tr '\n' ' ')"
fi
if command -v file >/dev/null 2>&1; then
  file "$tmp/portal" | grep -q 'statically linked' || fail "file(1) does not call it static: $(file "$tmp/portal")"
fi

info=$(go version -m "$tmp/portal")
grep -q $'\tbuild\tCGO_ENABLED=0' <<<"$info" || fail "built with cgo"
grep -q $'\tbuild\t-trimpath=true' <<<"$info" || fail "built without -trimpath"
# -trimpath keeps -ldflags out of the build info, and -X silently ignores a missing variable:
# ask the binary itself.
printed=$("$tmp/portal" -version 2>&1) || fail "'portal -version' failed: $printed"
grep -qF -- "$version" <<<"$printed" || fail "'portal -version' prints '$printed', not $version"

echo "docker-check: OK: static binary ($(du -h "$tmp/portal" | cut -f1)), CGO_ENABLED=0, -trimpath, main.version=$version"
