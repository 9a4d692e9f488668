#!/usr/bin/env bash
# e2e-lanes.sh LANE2_RE [go test flags...]: runs the browser tests (./e2e/) in two go test
# processes at once: lane 2 the top-level tests whose names match LANE2_RE, lane 1 all the others.
# Each process has its own portal (its own data directory and embedded simulator) and its own
# Chromium (TestMain), so the lanes share no data: a test sees only what the tests before it in its
# own lane made, as in one process. Why two: one process runs one test at a time and used less than
# half a core of 2 (2026-11-29: 367 CPU-s user+sys in 13m25s); a test mostly waits for the browser
# and the portal. The Makefile (E2E_LANE2) has the figures.
# Lane 1 prints as it goes; lane 2's output is kept and printed when it ends. Fails when either
# lane failed. Only for the embedded simulator: against an external v2 API (E2E_V2_API_URL) the
# lanes would share its data, so the Makefile runs one process there.
set -euo pipefail

lane2=${1:?usage: e2e-lanes.sh LANE2_RE [go test flags...]}
shift

# Compile the test binary once, so the two go test runs below only link it.
go test -c -o /dev/null ./e2e/

out2=$(mktemp)
go test "$@" -run "$lane2" -skip Soak ./e2e/ >"$out2" 2>&1 &
pid2=$!
trap 'kill "$pid2" 2>/dev/null || true; rm -f "$out2"' EXIT

rc1=0
go test "$@" -skip "Soak|$lane2" ./e2e/ || rc1=$?
rc2=0
wait "$pid2" || rc2=$?
echo "e2e: lane 2 ($lane2):"
cat "$out2"
if [ "$rc1" -ne 0 ] || [ "$rc2" -ne 0 ]; then
  echo "e2e: FAILED (lane 1 exit $rc1, lane 2 exit $rc2)" >&2
  exit 1
fi
