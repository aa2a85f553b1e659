# shellcheck shell=bash
# .ci/conformance.sh: runs the official MCP conformance suite's server
# scenarios against examples/conformance. Sourced by .ci/run.
#
#     source .ci/conformance.sh
#     conformance_run intercept server-initialize ping resources-list ...
#
# The suite runs through ../shared/tools/conformance/run when that team tool
# is next to the checkout; otherwise the pinned npm package is installed into
# a cache directory and run directly (with .ci/node20/, a loader that gives
# Node.js 20 the fs.globSync the suite expects from Node.js 22).

CONFORMANCE_VERSION=${CONFORMANCE_VERSION:-0.1.16}

_conf_log() { printf 'conformance.sh: %s\n' "$*" >&2; }

# _conf_suite runs the suite's CLI with the given arguments.
_conf_suite() {
  local shared
  shared=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/shared/tools/conformance/run
  if [[ -x $shared ]]; then
    "$shared" "$@"
    return
  fi
  local home=${CONFORMANCE_HOME:-$HOME/.cache/mcp-conformance}/$CONFORMANCE_VERSION
  local entry=$home/node_modules/@modelcontextprotocol/conformance/dist/index.js
  if [[ ! -f $entry ]]; then
    mkdir -p "$home"
    [[ -f $home/package.json ]] || echo '{"name":"conformance-runner","private":true}' >"$home/package.json"
    (cd "$home" && npm install --silent --no-audit --no-fund "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" >&2)
  fi
  local major
  major=$(node -p 'process.versions.node.split(".")[0]')
  if ((major >= 22)); then
    node "$entry" "$@"
  else
    node --import "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/node20/register.mjs" "$entry" "$@"
  fi
}

# conformance_run MODE SCENARIO...: starts examples/conformance in MODE on
# a free loopback port, runs each scenario, stops the server. Returns
# non-zero when a scenario fails.
conformance_run() {
  local mode=$1; shift
  local bin log url pid status=0 scenario out
  bin=$(mktemp -d)/conformance
  go build -o "$bin" ./examples/conformance || return 1
  log=$(mktemp)
  "$bin" -addr 127.0.0.1:0 -mode "$mode" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 1 100); do
    url=$(sed -n 's/^listening on //p' "$log" | head -n 1)
    [[ -n $url ]] && break
    sleep 0.1
  done
  if [[ -z $url ]]; then
    _conf_log "the fixture server did not start:"; cat "$log" >&2
    kill "$pid" 2>/dev/null; return 1
  fi
  for scenario in "$@"; do
    if out=$(_conf_suite server --url "$url" --scenario "$scenario" 2>&1) && grep -q ' 0 failed' <<<"$out"; then
      printf '  %-28s %s\n' "$scenario" "$(grep -E '^Passed:' <<<"$out")"
    else
      printf '  %-28s FAILED\n' "$scenario"
      printf '%s\n' "$out" | tail -n 30
      status=1
    fi
  done
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  rm -rf "$(dirname "$bin")" "$log"
  return $status
}
