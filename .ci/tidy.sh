#!/usr/bin/env bash
# .ci/tidy.sh [VERSION]: go mod tidy in every module of the repository,
# before the in-repo versions they require are published.
#
# The nested modules (examples, mcphttp/otelmcp, redisstore) require the
# kit, and examples the other two, at the version the next release will
# tag. Until that tag exists, plain go mod tidy in them fails (the module
# proxy has no such version) and go.work does not help (tidy ignores the
# workspace). So each module gets a temporary replace of every in-repo
# module by its directory, go mod tidy runs, and the replaces are dropped
# again (also when tidy fails). The result is what tidy gives once the
# release is tagged from this commit, except for the go.sum lines of the
# in-repo modules themselves, which the release adds (RELEASING.md) and
# which are kept.
#
# With VERSION (v0.2.0), first sets every in-repo requirement to VERSION
# and go.work's replaces to match: the bump before a release.
#
#     bash .ci/tidy.sh            # tidy every module
#     bash .ci/tidy.sh v0.2.0     # require v0.2.0 of the in-repo modules, then tidy
set -euo pipefail
cd "$(dirname "$0")/.."

version=${1:-}
if [[ -n $version && ! $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "tidy: VERSION must look like v0.2.0, got $version" >&2
  exit 2
fi

mapfile -t modules < <(git ls-files -- go.mod '*/go.mod' | xargs -n1 dirname | sort)
declare -A path
for m in "${modules[@]}"; do
  path[$m]=$(cd "$m" && go mod edit -json | sed -n '/"Module"/,/}/s/.*"Path": "\(.*\)".*/\1/p' | head -n 1)
done

# requires M D: does module M's go.mod require module D?
requires() { (cd "$1" && go mod edit -json) | tr -d '\n\t ' | grep -qF "{\"Path\":\"${path[$2]}\",\"Version\":"; }

if [[ -n $version ]]; then
  for m in "${modules[@]}"; do
    for d in "${modules[@]}"; do
      [[ $d != "$m" ]] && requires "$m" "$d" && (cd "$m" && go mod edit -require="${path[$d]}@$version")
    done
  done
  for d in "${modules[@]}"; do
    old=$(go work edit -json | tr -d '\n\t ' | grep -oE "\"Old\":\{\"Path\":\"${path[$d]//./\\.}\",\"Version\":\"[^\"]+\"" | sed 's/.*"Version":"//; s/"$//' || true)
    # sed, not go work edit: that would rewrite go.work without its comments.
    [[ -n $old ]] && sed -i "s#^\([[:space:]]*\)${path[$d]} $old => #\1${path[$d]} $version => #" go.work
  done
  echo "tidy: in-repo requirements and go.work's replaces set to $version"
fi

for m in "${modules[@]}"; do
  added=()
  for d in "${modules[@]}"; do
    [[ $d == "$m" ]] && continue
    rel=$(realpath --relative-to="$m" "$d"); [[ $rel == .* ]] || rel=./$rel
    (cd "$m" && go mod edit -replace="${path[$d]}=$rel")
    added+=("${path[$d]}")
  done
  drop() { for p in "${added[@]}"; do (cd "$m" && go mod edit -dropreplace="$p"); done; }
  trap drop EXIT
  # The go.sum lines of published in-repo versions (a directory replace
  # needs none, so tidy would drop them) are kept.
  keep=$(for p in "${added[@]}"; do grep "^$p " "$m/go.sum" 2>/dev/null || true; done)
  (cd "$m" && GOWORK=off go mod tidy)
  drop
  if [[ -n $keep ]]; then
    { cat "$m/go.sum"; echo "$keep"; } | LC_ALL=C sort -u >"$m/go.sum.new" && mv "$m/go.sum.new" "$m/go.sum"
  fi
  trap - EXIT
  echo "tidy: $m"
done
