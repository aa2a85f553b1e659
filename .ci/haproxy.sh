# shellcheck shell=bash
# .ci/haproxy.sh: the haproxy binary of the fleet test
# (examples/fleet/fleet_test.go) and of examples/fleet/run.sh. Nothing
# here starts one: they run their own, in the foreground.
#
# Source it, then call haproxy_ensure:
#
#     source .ci/haproxy.sh
#     haproxy_ensure           # exports MCPKIT_HAPROXY
#
# haproxy_ensure uses $MCPKIT_HAPROXY when it is set and executable, else
# haproxy on PATH; when there is none, it installs Debian's haproxy
# package with apt-get (needs root or sudo) without letting the package
# start its service (RUNLEVEL=1 for invoke-rc.d; on a machine run by
# systemd, a service the package started is stopped and disabled again).
# It exports MCPKIT_HAPROXY and returns non-zero with a message on
# failure, never exiting the calling shell nor changing its options or
# traps.

_haproxy_log() { printf 'haproxy.sh: %s\n' "$*" >&2; }

_haproxy_as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else _haproxy_log "need root to run: $*"; return 1
  fi
}

_haproxy_find() {
  if [[ -n ${MCPKIT_HAPROXY:-} && -x ${MCPKIT_HAPROXY} ]]; then
    printf '%s\n' "$MCPKIT_HAPROXY"; return 0
  fi
  command -v haproxy 2>/dev/null || { [[ -x /usr/sbin/haproxy ]] && printf '/usr/sbin/haproxy\n'; }
}

haproxy_ensure() {
  local bin
  if ! bin=$(_haproxy_find); then
    command -v apt-get >/dev/null 2>&1 || { _haproxy_log "no haproxy and no apt-get: install HAProxy, or set MCPKIT_HAPROXY"; return 1; }
    _haproxy_log "haproxy not found: installing Debian's haproxy package with apt-get"
    _haproxy_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq || return 1
    _haproxy_as_root env DEBIAN_FRONTEND=noninteractive RUNLEVEL=1 apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends haproxy >/dev/null || return 1
    if [[ -d /run/systemd/system ]] && systemctl is-active --quiet haproxy 2>/dev/null; then
      _haproxy_log "stopping the haproxy service the package started (the fleet runs its own)"
      _haproxy_as_root systemctl disable --now haproxy >/dev/null 2>&1 || true
    fi
    bin=$(_haproxy_find) || { _haproxy_log "haproxy still not found after installing"; return 1; }
  fi
  export MCPKIT_HAPROXY=$bin
  _haproxy_log "$("$bin" -v | head -n 1) ($bin)"
}
