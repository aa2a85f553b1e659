# shellcheck shell=bash
# .ci/redis.sh: the redis-server binary the redisstore tests run. The
# tests start their own servers (a free loopback port, a temporary
# directory, nothing persisted) and stop them; nothing here starts one.
#
# Source it, then call redis_ensure:
#
#     source .ci/redis.sh
#     redis_ensure             # exports MCPKIT_REDIS_SERVER
#     go test ./redisstore/...
#
# redis_ensure uses $MCPKIT_REDIS_SERVER when it is set and executable,
# else redis-server on PATH; when there is none, it installs Debian's
# redis-server package with apt-get (needs root or sudo) without letting
# the package start its service (RUNLEVEL=1 for invoke-rc.d; on a machine
# run by systemd, the service the package started is stopped and
# disabled again). It exports MCPKIT_REDIS_SERVER and returns non-zero
# with a message on failure, never exiting the calling shell itself nor
# changing its options or traps.

_redis_log() { printf 'redis.sh: %s\n' "$*" >&2; }

# _redis_as_root runs a command as root (directly, or through sudo).
_redis_as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else _redis_log "need root to run: $*"; return 1
  fi
}

# _redis_find prints the server binary, if there is one.
_redis_find() {
  if [[ -n ${MCPKIT_REDIS_SERVER:-} && -x ${MCPKIT_REDIS_SERVER} ]]; then
    printf '%s\n' "$MCPKIT_REDIS_SERVER"; return 0
  fi
  command -v redis-server 2>/dev/null
}

redis_ensure() {
  local bin
  if ! bin=$(_redis_find); then
    command -v apt-get >/dev/null 2>&1 || { _redis_log "no redis-server and no apt-get: install Redis, or set MCPKIT_REDIS_SERVER"; return 1; }
    _redis_log "redis-server not found: installing Debian's redis-server package with apt-get"
    _redis_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq || return 1
    _redis_as_root env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get install -y -qq --no-install-recommends redis-server >/dev/null || return 1
    if [[ -d /run/systemd/system ]] && systemctl is-active --quiet redis-server 2>/dev/null; then
      _redis_log "stopping the redis-server service the package started (the tests run their own)"
      _redis_as_root systemctl disable --now redis-server >/dev/null 2>&1 || true
    fi
    bin=$(_redis_find) || { _redis_log "redis-server still not found after installing"; return 1; }
  fi
  export MCPKIT_REDIS_SERVER=$bin
  _redis_log "$("$bin" --version) ($bin)"
}
