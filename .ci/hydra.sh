#!/usr/bin/env bash
# .ci/hydra.sh: builds Ory Hydra v2.3.0, the second real authorization
# server of the interop tests (examples/interop/hydra_test.go), from the Go
# module proxy into a cache directory outside the repository, and prints
# the line that points the tests at it:
#
#     eval "$(bash .ci/hydra.sh)"
#     # export MCPKIT_HYDRA=/root/.cache/mcpkit/hydra/v2.3.0/hydra
#
# The module's zip lacks the directory its go.mod replaces
# github.com/ory/hydra-client-go/v2 with (a nested module), so the build
# drops that replace and uses the published module of the version
# required (its checksum verified against the checksum database as usual).
# Built with the sqlite tag (cgo, a C compiler): the tests run Hydra with
# its in-memory database (dsn: memory). A binary already built for this
# version is kept. Only the export line goes to standard output.
set -euo pipefail

version=v2.3.0
dir=${MCPKIT_HYDRA_DIR:-$HOME/.cache/mcpkit/hydra}/$version
bin=$dir/hydra

command -v go >/dev/null || { echo "hydra.sh: go is required" >&2; exit 1; }
if ! command -v cc >/dev/null; then
  # Hydra's SQLite needs cgo: install Debian's C compiler (as root, or with sudo).
  echo "hydra.sh: no C compiler: installing gcc with apt-get" >&2
  as_root() { if [[ $(id -u) -eq 0 ]]; then "$@"; else sudo "$@"; fi; }
  as_root apt-get update -qq >&2 && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >&2 ||
    { echo "hydra.sh: a C compiler (cc) is required for Hydra's SQLite" >&2; exit 1; }
fi

if [[ -x $bin ]] && "$bin" version 2>/dev/null | grep -q "${version#v}"; then
  echo "hydra.sh: Hydra $version is already built in $dir" >&2
else
  start=$(date +%s)
  src=$(go mod download -json "github.com/ory/hydra/v2@$version" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [[ -n $src && -d $src ]] || { echo "hydra.sh: cannot download github.com/ory/hydra/v2@$version" >&2; exit 1; }
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  cp -r "$src/." "$work/"
  chmod -R u+w "$work"
  sed -i '/^replace github.com\/ory\/hydra-client-go\/v2 => /d' "$work/go.mod"
  mkdir -p "$dir"
  (cd "$work" && CGO_ENABLED=1 go build -mod=mod -trimpath -tags sqlite,sqlite_omit_load_extension \
    -ldflags "-X github.com/ory/hydra/v2/driver/config.Version=$version" -o "$bin" .) >&2
  echo "hydra.sh: built Hydra $version in $(( $(date +%s) - start )) s" >&2
fi
printf 'export MCPKIT_HYDRA=%q\n' "$bin"
