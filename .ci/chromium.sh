# shellcheck shell=bash
# .ci/chromium.sh: a headless browser for the browser CORS test and the
# sign-in tests
# (examples/interop/browser_test.go, signin_test.go).
#
# Source it, then call chromium_ensure:
#
#     source .ci/chromium.sh
#     chromium_ensure          # exports MCPKIT_CHROMIUM
#     go test -run TestBrowserCORS ./examples/interop/
#
# chromium_ensure uses $MCPKIT_CHROMIUM when it is set and executable,
# else chromium or chromium-browser on PATH; when there is none, it installs
# Debian's chromium package with apt-get (needs root or sudo). It exports
# MCPKIT_CHROMIUM (the binary the test runs) and returns non-zero with a
# message on failure, never exiting the calling shell itself nor changing
# its options or traps.

_chromium_log() { printf 'chromium.sh: %s\n' "$*" >&2; }

# _chromium_as_root runs a command as root (directly, or through sudo).
_chromium_as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else _chromium_log "need root to run: $*"; return 1
  fi
}

# _chromium_find prints the browser binary, if there is one.
_chromium_find() {
  if [[ -n ${MCPKIT_CHROMIUM:-} && -x ${MCPKIT_CHROMIUM} ]]; then
    printf '%s\n' "$MCPKIT_CHROMIUM"; return 0
  fi
  local name
  for name in chromium chromium-browser; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"; return 0
    fi
  done
  return 1
}

chromium_ensure() {
  local bin
  if ! bin=$(_chromium_find); then
    command -v apt-get >/dev/null 2>&1 || { _chromium_log "no chromium and no apt-get: install Chromium, or set MCPKIT_CHROMIUM"; return 1; }
    _chromium_log "chromium not found: installing Debian's chromium package with apt-get"
    _chromium_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq || return 1
    _chromium_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null || return 1
    bin=$(_chromium_find) || { _chromium_log "chromium still not found after installing"; return 1; }
  fi
  export MCPKIT_CHROMIUM=$bin
  # Debian's wrapper script prints a harmless shell warning on some
  # machines; the version line is the last one.
  _chromium_log "$("$bin" --version 2>/dev/null | tail -n 1) ($bin)"
}
