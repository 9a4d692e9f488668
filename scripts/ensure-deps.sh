#!/usr/bin/env bash
# ensure-deps.sh installs what `make test` needs beyond Go, and only what is missing:
#   - Debian packages: chromium (browser tests), redis-server (only for the tests of the one-time
#     import of an older portal's Redis: internal/store and cmd/portal's legacy state store; the
#     portal keeps nothing in Redis),
#     postgresql (the state database's tests on PostgreSQL: a throwaway cluster, scripts/with-postgres.sh),
#     sqlite3 (the shell whose .backup the backup test takes of a live state database),
#     nodejs + npm (to fetch and run the Playwright driver);
#   - the Playwright driver that playwright-go pins, assembled from npm's playwright-core
#     into .cache/pw-driver (or $PLAYWRIGHT_DRIVER_PATH); Playwright's own CDN is not used;
#   - axe-core (pinned) from npm into .cache/axe, for the accessibility checks of the browser tests;
#   - Dex, through scripts/build-dex.sh, when that script exists;
#   - Mailpit (the SMTP server of the mail tests), through scripts/build-mailpit.sh.
# It is idempotent and takes about a second when everything is present. It needs root only
# when a Debian package is missing; without root it prints the command to run and exits 1.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

say() { printf 'deps: %s\n' "$*"; }
die() { printf 'deps: %s\n' "$*" >&2; exit 1; }

# --- Debian packages ---------------------------------------------------------------------
chromium=${E2E_CHROMIUM:-/usr/bin/chromium}
missing=()
[ -x "$chromium" ] || missing+=(chromium)
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v sqlite3 >/dev/null 2>&1 || missing+=(sqlite3)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)

if ((${#missing[@]})); then
  cmd="apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y ${missing[*]}"
  if [ "$(id -u)" -ne 0 ]; then
    die "missing ${missing[*]}; as root run: $cmd"
  fi
  say "installing ${missing[*]} (apt-get, about a minute)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # apt's chromium lands in /usr/bin; a custom E2E_CHROMIUM that is still missing is the caller's to fix.
  [ -x "$chromium" ] || die "chromium is not at $chromium after installing it (E2E_CHROMIUM?)"
fi
say "chromium, redis-server, postgresql, sqlite3, node, npm: present"

# --- Playwright driver -------------------------------------------------------------------
# playwright-go pins the Playwright version it speaks (const playwrightCliVersion in run.go);
# the driver must print exactly that version or playwright.Run refuses it.
pwmod=github.com/playwright-community/playwright-go
go mod download "$pwmod"
pwdir=$(go list -m -f '{{.Dir}}' "$pwmod")
version=$(sed -n 's/^const playwrightCliVersion = "\(.*\)"$/\1/p' "$pwdir/run.go")
[ -n "$version" ] || die "cannot read playwrightCliVersion from $pwdir/run.go"

driver=${PLAYWRIGHT_DRIVER_PATH:-$root/.cache/pw-driver}
if [ "$("$driver/node" "$driver/package/cli.js" --version 2>/dev/null)" = "Version $version" ]; then
  say "Playwright driver $version: present in $driver"
else
  say "installing Playwright driver $version into $driver (npm pack playwright-core@$version)"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "playwright-core@$version" >/dev/null)
  mkdir -p "$driver"
  rm -rf "$driver/package"
  tar -xzf "$tmp/playwright-core-$version.tgz" -C "$driver"
  ln -sf "$(command -v node)" "$driver/node"
  got=$("$driver/node" "$driver/package/cli.js" --version)
  [ "$got" = "Version $version" ] || die "driver in $driver prints '$got', want 'Version $version'"
  say "Playwright driver $version: installed"
fi

# --- axe-core (accessibility checks of the browser tests, e2e/a11y_test.go) ---------------
# The e2e harness evaluates .cache/axe/axe.min.js in each page it checks (docs/accessibility.md).
axe_version=4.14.1
axe_dir=$root/.cache/axe
if [ "$(cat "$axe_dir/VERSION" 2>/dev/null)" = "$axe_version" ] && [ -s "$axe_dir/axe.min.js" ]; then
  say "axe-core $axe_version: present in $axe_dir"
else
  say "installing axe-core $axe_version into $axe_dir (npm pack axe-core@$axe_version)"
  axe_tmp=$(mktemp -d)
  (cd "$axe_tmp" && npm pack --silent "axe-core@$axe_version" >/dev/null)
  tar -xzf "$axe_tmp/axe-core-$axe_version.tgz" -C "$axe_tmp"
  mkdir -p "$axe_dir"
  cp "$axe_tmp/package/axe.min.js" "$axe_tmp/package/LICENSE" "$axe_dir/"
  rm -rf "$axe_tmp"
  grep -q "axe v$axe_version" "$axe_dir/axe.min.js" || die "$axe_dir/axe.min.js is not axe-core $axe_version"
  echo "$axe_version" >"$axe_dir/VERSION"
  say "axe-core $axe_version: installed"
fi

# --- Dex (interoperability test of internal/auth) ----------------------------------------
if [ -f scripts/build-dex.sh ]; then
  bash scripts/build-dex.sh
  say "Dex: present"
fi

# --- Mailpit (the SMTP server the mail tests send to: internal/outbox, e2e) ----------------
if [ -f scripts/build-mailpit.sh ]; then
  bash scripts/build-mailpit.sh
  say "Mailpit: present"
fi
