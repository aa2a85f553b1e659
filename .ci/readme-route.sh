#!/usr/bin/env bash
# .ci/readme-route.sh: README.md's route for using the kit before its first
# tag works, as written. It takes the sh block under the
# "<!-- readme-route: ... -->" marker in README.md and runs it, line by
# line, in a scratch directory whose ../mcpkit is a copy of this checkout's
# tracked files (the block's `git clone` line is the one line not run: CI
# has no network but the module proxy), with a small service of the
# scratch module's own (.ci/readme-route/) written where the block says
# "write your code". Every command must succeed: go mod tidy, go vet and
# go test of a module outside the repository that imports a package of each
# of the kit's modules.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

block=$(awk '/<!-- readme-route:/ { on = 1; next } on && /^```sh/ { inblock = 1; next } inblock && /^```/ { exit } inblock { print }' README.md)
if [[ -z $block ]]; then
  echo "readme-route: no sh block under the readme-route marker in README.md" >&2
  exit 1
fi

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch/mcpkit" "$scratch/myservice"
git ls-files -z | (cd "$root" && xargs -0 cp --parents -t "$scratch/mcpkit")
cd "$scratch/myservice"
export GOWORK=off GOFLAGS=-mod=mod
while IFS= read -r line; do
  case $line in
  '' ) continue ;;
  'git clone '*) echo "readme-route: (the clone is a copy of this checkout) $line"; continue ;;
  '# write your code'*)
    cp "$root/.ci/readme-route/main.go.txt" main.go
    cp "$root/.ci/readme-route/main_test.go.txt" main_test.go
    echo "readme-route: wrote main.go and main_test.go"; continue ;;
  '#'*) continue ;;
  esac
  echo "readme-route: \$ $line"
  bash -euo pipefail -c "$line"
done <<<"$block"
[[ -f main.go ]] || { echo "readme-route: the block never says where to write the code" >&2; exit 1; }
echo "readme-route: ok"
