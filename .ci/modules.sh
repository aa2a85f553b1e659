#!/usr/bin/env bash
# .ci/modules.sh PATTERN...: the repository's Go modules hang together.
#
#   - go.work uses every module (every tracked go.mod) and nothing else;
#   - PATTERN... (the README's test command, which .ci/run runs) matches
#     every package of every module, from the repository root;
#   - README.md shows exactly that command ("go test PATTERN...");
#   - each module resolves its packages and tests on its own (GOWORK=off:
#     its go.mod and go.sum are complete, as for a user without the
#     workspace) and is tidy (go mod tidy -diff).
#
#     bash .ci/modules.sh ./... ./examples/... ./mcphttp/otelmcp/... ./redisstore/...
set -euo pipefail
cd "$(dirname "$0")/.."
(($# > 0)) || { echo "usage: .ci/modules.sh PATTERN..." >&2; exit 2; }

status=0
fail() { printf 'modules: %s\n' "$*" >&2; status=1; }

mapfile -t modules < <(git ls-files -- go.mod '*/go.mod' | xargs -n1 dirname | sort)
mapfile -t used < <(go work edit -json | sed -n 's/.*"DiskPath": "\(.*\)".*/\1/p' | sed 's#^\./##; s#^$#.#' | sort)
if [[ ${modules[*]} != "${used[*]}" ]]; then
  fail "go.work uses (${used[*]}), the tracked modules are (${modules[*]})"
fi

want=$(for m in "${modules[@]}"; do (cd "$m" && GOWORK=off go list ./...); done | sort -u)
got=$(go list "$@" | sort -u)
if missing=$(comm -23 <(echo "$want") <(echo "$got")) && [[ -n $missing ]]; then
  fail "go test $* misses packages:"$'\n'"$missing"
fi

if ! grep -qF -- "go test $*" README.md; then
  fail "README.md does not show the test command 'go test $*'"
fi

for m in "${modules[@]}"; do
  (cd "$m" && GOWORK=off go list -deps -test ./... >/dev/null) || fail "module $m does not resolve on its own (GOWORK=off)"
  (cd "$m" && GOWORK=off go mod tidy -diff) || fail "module $m is not tidy (run go mod tidy in $m)"
done

if ((status == 0)); then
  echo "modules: ok (${modules[*]}: $(wc -l <<<"$want") packages, all in 'go test $*'; each resolves alone and is tidy)"
fi
exit $status
