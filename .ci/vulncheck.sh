#!/usr/bin/env bash
# .ci/vulncheck.sh PATTERN...: govulncheck (golang.org/x/vuln, pinned
# below, from the Go module proxy) over PATTERN... of the workspace: known
# vulnerabilities that the modules' code reaches, in their dependencies and
# in the Go toolchain running it. A finding fails.
#
# It needs the Go vulnerability database ($GOVULNDB, default
# https://vuln.go.dev). When that cannot be reached from this machine the
# check is not run: the script prints a line saying so, loudly, and exits
# 0 (a machine that reaches only the module proxy must still pass CI; the
# line keeps the gap visible).
#
#     bash .ci/vulncheck.sh ./... ./examples/... ./mcphttp/otelmcp/... ./redisstore/...
set -euo pipefail
cd "$(dirname "$0")/.."
(($# > 0)) || { echo "usage: .ci/vulncheck.sh PATTERN..." >&2; exit 2; }

version=v1.9.0
db=${GOVULNDB:-https://vuln.go.dev}

reachable() {
  if command -v curl >/dev/null 2>&1; then
    curl -fsS -m 15 -o /dev/null "$db/index/db.json" 2>/dev/null
  else
    return 1
  fi
}
if [[ $db == https://* || $db == http://* ]] && ! reachable; then
  echo "vulncheck: NOT CHECKED: the Go vulnerability database $db cannot be reached from this machine (no network route or DNS to it, or no curl); govulncheck $version did not run"
  exit 0
fi

bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
GOWORK=off GOBIN=$bin go install "golang.org/x/vuln/cmd/govulncheck@$version"
echo "vulncheck: govulncheck $version against $db, $(go version | cut -d' ' -f3)"
GOVULNDB=$db "$bin/govulncheck" -db "$db" "$@"
