# shellcheck shell=bash
# .ci/conformance.sh: runs the official MCP conformance suite's server
# scenarios against examples/conformance. Sourced by .ci/run.
#
#     source .ci/conformance.sh
#     conformance_baseline 0.2.0-alpha.12 endpoint   # every scenario, against .ci/conformance/0.2.0-alpha.12-endpoint.yaml
#     conformance_run intercept server-initialize ping resources-list ...
#
# conformance_baseline is what CI runs, for the release (CONFORMANCE_VERSION,
# 0.1.16) and the pre-release (CONFORMANCE_PRERELEASE, 0.2.0-alpha.12, the
# 2026-07-28 era) in both fixture modes: every server scenario the suite
# has (--suite all), judged against the expected failures listed and
# explained in .ci/conformance/VERSION-MODE.yaml (the suite's own baseline
# format). It fails when a scenario or check that is not listed fails — a
# regression — and when a listed one passes: a stale entry, to be removed.
# conformance_run runs named scenarios
# that must all pass.
#
# The suite runs through ../shared/tools/conformance/run when that team tool
# is next to the checkout; otherwise the pinned npm package is installed into
# a cache directory and run directly (with .ci/node20/, a loader that gives
# Node.js 20 the fs.globSync the suite expects from Node.js 22).

CONFORMANCE_VERSION=${CONFORMANCE_VERSION:-0.1.16}
CONFORMANCE_PRERELEASE=${CONFORMANCE_PRERELEASE:-0.2.0-alpha.12}

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

# _conf_start MODE: builds examples/conformance and starts it in MODE on a
# free loopback port; sets _conf_url, _conf_pid and _conf_dir.
_conf_start() {
  local mode=$1 log
  _conf_dir=$(mktemp -d)
  go build -o "$_conf_dir/conformance" ./examples/conformance || return 1
  log=$_conf_dir/server.log
  "$_conf_dir/conformance" -addr 127.0.0.1:0 -mode "$mode" >"$log" 2>&1 &
  _conf_pid=$!
  _conf_url=
  for _ in $(seq 1 100); do
    _conf_url=$(sed -n 's/^listening on //p' "$log" | head -n 1)
    [[ -n $_conf_url ]] && return 0
    sleep 0.1
  done
  _conf_log "the fixture server did not start:"; cat "$log" >&2
  _conf_stop
  return 1
}

# _conf_stop stops the server _conf_start started.
_conf_stop() {
  kill "$_conf_pid" 2>/dev/null; wait "$_conf_pid" 2>/dev/null
  rm -rf "$_conf_dir"
}

# conformance_run MODE SCENARIO...: starts examples/conformance in MODE on
# a free loopback port, runs each scenario, stops the server. Returns
# non-zero when a scenario fails.
conformance_run() {
  local mode=$1; shift
  local status=0 scenario out
  _conf_start "$mode" || return 1
  for scenario in "$@"; do
    if out=$(_conf_suite server --url "$_conf_url" --scenario "$scenario" 2>&1) && grep -q ' 0 failed' <<<"$out"; then
      printf '  %-28s %s\n' "$scenario" "$(grep -E '^Passed:' <<<"$out")"
    else
      printf '  %-28s FAILED\n' "$scenario"
      printf '%s\n' "$out" | tail -n 30
      status=1
    fi
  done
  _conf_stop
  return $status
}

# conformance_baseline VERSION MODE: runs every server scenario of the
# suite's VERSION against examples/conformance in MODE, with the expected
# failures of .ci/conformance/VERSION-MODE.yaml. Returns non-zero when a
# failure is not listed there or a listed one passes; prints the suite's
# summary and its verdict on the baseline either way.
conformance_baseline() {
  local version=$1 mode=$2 baseline out status=0
  baseline=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/conformance/$version-$mode.yaml
  [[ -f $baseline ]] || { _conf_log "no baseline $baseline"; return 1; }
  _conf_start "$mode" || return 1
  out=$(CONFORMANCE_VERSION=$version _conf_suite server --url "$_conf_url" --suite all --expected-failures "$baseline" 2>&1) || status=$?
  _conf_stop
  if ((status == 0)); then
    printf '  %s\n' "$(grep -E '^Total:' <<<"$out")" "$(grep -F 'Baseline check passed' <<<"$out" | sed 's/\x1b\[[0-9;]*m//g')"
  elif grep -q '=== SUMMARY ===' <<<"$out"; then
    # Every scenario's line, then the unexpected failures and stale entries.
    printf '%s\n' "$out" | sed -n '/=== SUMMARY ===/,$p' | sed 's/\x1b\[[0-9;]*m//g; s/^/  /'
  else
    printf '%s\n' "$out" | tail -n 30 # the suite did not run
  fi
  return $status
}

# conformance_compare VERSION: runs every server scenario of the suite's
# VERSION against examples/conformance -mode sdk (the go-sdk server of
# intercept mode, with the suite's prompts and client-facing tools, alone)
# and -mode intercept (the kit in front of that very server). Returns
# non-zero when a scenario that passes against the go-sdk server alone
# fails through the kit, or passes fewer of its checks: the kit adds no
# failure.
conformance_compare() {
  local version=$1 mode out sdk kit status=0
  for mode in sdk intercept; do
    _conf_start "$mode" || return 1
    out=$(CONFORMANCE_VERSION=$version _conf_suite server --url "$_conf_url" --suite all 2>&1)
    _conf_stop
    # The marks are matched as byte sequences (an alternation, not a
    # bracket expression), so that the parse holds in any locale, C too.
    out=$(sed 's/\x1b\[[0-9;]*m//g' <<<"$out" | sed -n 's/^\(✓\|✗\) \([^:]*\): \([0-9]*\) passed, \([0-9]*\) failed$/\2 \3 \4/p')
    if [[ -z $out ]]; then
      _conf_log "the suite did not run against -mode $mode"
      return 1
    fi
    if [[ $mode == sdk ]]; then sdk=$out; else kit=$out; fi
  done
  local worse
  worse=$(awk 'NR == FNR { kp[$1] = $2; kf[$1] = $3; next }
    $3 == 0 && (!($1 in kf) || kf[$1] > 0) { print "  " $1 ": passes against the go-sdk server alone, fails through the kit" }
    ($1 in kp) && kp[$1] < $2 { print "  " $1 ": " kp[$1] " checks pass through the kit, " $2 " alone" }' \
    <(printf '%s\n' "$kit") <(printf '%s\n' "$sdk"))
  printf '  go-sdk alone: %s of %s scenarios pass; through the kit: %s of %s\n' \
    "$(awk '$3 == 0' <<<"$sdk" | wc -l)" "$(wc -l <<<"$sdk")" "$(awk '$3 == 0' <<<"$kit" | wc -l)" "$(wc -l <<<"$kit")"
  if [[ -n $worse ]]; then
    printf '%s\n' "$worse"
    status=1
  fi
  return $status
}
