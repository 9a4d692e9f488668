#!/usr/bin/env bash
# generate-check.sh fails when the committed generated code is stale or missing:
#   1. it runs `go tool templ generate` and fails if that changed, added or removed any *_templ.go
#      (stale or hand-edited output; compared with a snapshot taken just before, so uncommitted
#      work elsewhere in the tree does not count);
#   2. it fails if a *_templ.go file is not tracked by git (generated but never committed).
# On a clean clone (CI) this is the same as "generate leaves git status clean".
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

snapshot() {
  find . -path ./.cache -prune -o -path ./.git -prune -o -name '*_templ.go' -type f -print0 |
    sort -z | xargs -0 -r sha256sum
}

before=$(snapshot)
go tool templ generate
after=$(snapshot)

status=0
if [ "$before" != "$after" ]; then
  echo "generate-check: 'go tool templ generate' changed generated files:" >&2
  diff <(printf '%s\n' "$before") <(printf '%s\n' "$after") | sed -n 's/^[<>] [0-9a-f]*  /  /p' | sort -u >&2
  echo "generate-check: commit the regenerated files (run 'make generate')" >&2
  status=1
fi

untracked=$(git ls-files --others --exclude-standard -- '*_templ.go')
if [ -n "$untracked" ]; then
  echo "generate-check: generated files not tracked by git (commit them):" >&2
  git ls-files --others --exclude-standard -- '*_templ.go' | sed 's/^/  /' >&2
  status=1
fi

exit "$status"
