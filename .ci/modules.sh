#!/usr/bin/env bash
# .ci/modules.sh PATTERN...: the repository's Go modules hang together and
# each is requirable as published.
#
#   - go.work uses every module (every tracked go.mod) and nothing else;
#   - PATTERN... (the README's test command, which .ci/run runs) matches
#     every package of every module, from the repository root;
#   - README.md shows exactly that command ("go test PATTERN...");
#   - no go.mod has a replace directive (a replace in a dependency's go.mod
#     is ignored by its users: what builds here with one would not build
#     for them);
#   - every module that requires another module of this repository
#     requires it at one version, the next release (RELEASING.md), and
#     go.work replaces exactly that version of each with its directory
#     (the go.work replace is what lets the workspace build before the tag
#     exists; go.work is for development and CI and is never published);
#   - each module resolves its packages and tests on its own and is tidy,
#     as a user's build sees it once the release is tagged. Before the tag
#     the module proxy has no such version, so this is checked in a scratch
#     copy of the checkout without go.work, in which each go.mod gets a
#     replace of every in-repo module by its directory (the same source
#     the tag will hold) and go.sum loses the lines of in-repo modules
#     (a directory replace has no checksum): GOWORK=off go list -deps
#     -test ./... (go.mod and go.sum are complete for every outside
#     dependency) and go mod tidy -diff (nothing to add or drop);
#   - in the real checkout, GOWORK=off go list -m all in each module either
#     works (the required versions are published) or fails only on the
#     in-repo versions not yet published: printed, not a failure.
#
#     bash .ci/modules.sh ./... ./examples/... ./mcphttp/otelmcp/... ./redisstore/...
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
(($# > 0)) || { echo "usage: .ci/modules.sh PATTERN..." >&2; exit 2; }

status=0
fail() { printf 'modules: %s\n' "$*" >&2; status=1; }

mapfile -t modules < <(git ls-files -- go.mod '*/go.mod' | xargs -n1 dirname | sort)
mapfile -t used < <(go work edit -json | sed -n 's/.*"DiskPath": "\(.*\)".*/\1/p' | sed 's#^\./##; s#^$#.#' | sort)
if [[ ${modules[*]} != "${used[*]}" ]]; then
  fail "go.work uses (${used[*]}), the tracked modules are (${modules[*]})"
fi

# path[dir] is each module's path.
declare -A path
for m in "${modules[@]}"; do
  path[$m]=$(cd "$m" && go mod edit -json | sed -n '/"Module"/,/}/s/.*"Path": "\(.*\)".*/\1/p' | head -n 1)
done

# No replace in any go.mod; in-repo requirements at one version.
declare -A required # module path -> version required by some in-repo module
versions=()
for m in "${modules[@]}"; do
  json=$(cd "$m" && go mod edit -json)
  if grep -q '"Replace": \[' <<<"$json"; then
    fail "$m/go.mod has a replace directive (use go.work for development; see RELEASING.md)"
  fi
  for d in "${modules[@]}"; do
    [[ $d == "$m" ]] && continue
    v=$(cd "$m" && go mod edit -json | tr -d '\n\t ' | grep -oE "\{\"Path\":\"${path[$d]//./\\.}\",\"Version\":\"[^\"]+\"" | sed 's/.*"Version":"//; s/"$//' || true)
    if [[ -n $v ]]; then
      required[${path[$d]}]=$v
      versions+=("$v")
    fi
  done
done
mapfile -t distinct < <(printf '%s\n' "${versions[@]}" | sort -u | sed '/^$/d')
if ((${#distinct[@]} > 1)); then
  fail "the modules require this repository's modules at several versions (${distinct[*]}): one release version for all (RELEASING.md)"
fi
next=${distinct[0]:-}

# go.work replaces exactly the required in-repo versions with their directories.
want_repl=$(for m in "${modules[@]}"; do
  p=${path[$m]}
  [[ -n ${required[$p]:-} ]] && printf '%s %s => %s\n' "$p" "${required[$p]}" "$m"
done | sort)
got_repl=$(go work edit -json | tr -d '\n\t ' | grep -oE '"Old":\{[^}]*\},"New":\{[^}]*\}' |
  sed -E 's/"Old":\{"Path":"([^"]*)"(,"Version":"([^"]*)")?\},"New":\{"Path":"([^"]*)".*/\1 \3 => \4/; s#=> \./?#=> #; s#=> $#=> .#' | sort)
if [[ $want_repl != "$got_repl" ]]; then
  fail "go.work's replaces are"$'\n'"$got_repl"$'\n'"the in-repo requirements need exactly"$'\n'"$want_repl"
fi

# (After the checks above: a go.work that does not replace the required
# in-repo versions makes these fail first, with the module proxy's 404.)
if ! want=$(for m in "${modules[@]}"; do (cd "$m" && go list ./...) || exit 1; done | sort -u) ||
  ! got=$(go list "$@" | sort -u); then
  fail "go list failed in the workspace (above)"
  exit 1
fi
if missing=$(comm -23 <(echo "$want") <(echo "$got")) && [[ -n $missing ]]; then
  fail "go test $* misses packages:"$'\n'"$missing"
fi

if ! grep -qF -- "go test $*" README.md; then
  fail "README.md does not show the test command 'go test $*'"
fi

# Each module alone, tidy, in a scratch copy with directory replaces.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git ls-files -z -co --exclude-standard | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$scratch"
rm -f "$scratch/go.work" "$scratch/go.work.sum"
for m in "${modules[@]}"; do
  (
    cd "$scratch/$m"
    rel=$(realpath --relative-to=. "$scratch")
    for d in "${modules[@]}"; do
      [[ $d == "$m" ]] && continue
      go mod edit -replace="${path[$d]}=$rel/$d"
    done
    if [[ -f go.sum ]]; then
      for d in "${modules[@]}"; do grep -v "^${path[$d]} " go.sum >go.sum.new || true; mv go.sum.new go.sum; done
    fi
  )
  (cd "$scratch/$m" && GOWORK=off go list -deps -test ./... >/dev/null) || fail "module $m does not resolve on its own (GOWORK=off, in-repo modules replaced by their directories)"
  (cd "$scratch/$m" && GOWORK=off go mod tidy -diff) || fail "module $m is not tidy (run .ci/tidy.sh, or go mod tidy in $m with a temporary replace; see RELEASING.md)"
done

# The real checkout without the workspace: published, or not yet.
unpublished=()
for m in "${modules[@]}"; do
  if out=$(cd "$m" && GOWORK=off go list -m all 2>&1 >/dev/null); then
    continue
  fi
  if [[ -n $next ]] && grep -qE "github\.com/mcpkit/mcpkit(/[a-z/]+)?@$next" <<<"$out"; then
    unpublished+=("$m")
  else
    fail "module $m without the workspace (GOWORK=off) fails for another reason than the unpublished $next:"$'\n'"$out"
  fi
done

if ((status == 0)); then
  echo "modules: ok (${modules[*]}: $(wc -l <<<"$want") packages, all in 'go test $*'; no replace in any go.mod; in-repo requirements at ${next:-none}, replaced in go.work; each resolves alone and is tidy)"
  if ((${#unpublished[@]} > 0)); then
    echo "modules: ${unpublished[*]}: GOWORK=off needs this repository's modules at $next, not yet published (expected before that tag; RELEASING.md)"
  fi
fi
exit $status
