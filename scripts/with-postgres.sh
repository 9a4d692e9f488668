#!/usr/bin/env bash
# with-postgres.sh CMD...: runs CMD with a throwaway PostgreSQL cluster (Debian's postgresql
# package; make deps installs it) whose superuser URL is in PORTAL_TEST_POSTGRES_URL, so the state
# tests of both engines (internal/statedb/statedbtest) share one server instead of starting one
# each. The cluster lives in a temporary directory and is removed when CMD ends, whatever its end.
# When PORTAL_TEST_POSTGRES_URL is already set, CMD runs against that server instead.
set -euo pipefail

if [ -n "${PORTAL_TEST_POSTGRES_URL:-}" ]; then
  exec "$@"
fi

bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
[ -x "$bin/initdb" ] || { echo "with-postgres: PostgreSQL is not installed (make deps)" >&2; exit 1; }

dir=$(mktemp -d /tmp/portal-pg-XXXXXX)
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
  chown postgres:postgres "$dir"
  as_pg=(runuser -u postgres --)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])' 2>/dev/null || echo $((20000 + RANDOM % 20000)))

cleanup() {
  "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}
trap cleanup EXIT

"${as_pg[@]}" "$bin/initdb" -D "$dir/data" -A trust -U postgres --no-sync -E UTF8 >/dev/null
"${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 start \
  -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300" >/dev/null
echo "with-postgres: throwaway PostgreSQL on 127.0.0.1:$port"
export PORTAL_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
"$@"
