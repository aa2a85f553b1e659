# shellcheck shell=bash
# .ci/postgres.sh: a throw-away PostgreSQL server for the tests.
#
# Source it, then call pg_start; call pg_stop when done (a trap is best):
#
#     source .ci/postgres.sh
#     pg_start                 # exports MCPKIT_TEST_POSTGRES_DSN
#     trap pg_stop EXIT
#     go test -race ./examples/documents/store/
#
# pg_start installs PostgreSQL from the Debian packages when no initdb is
# found (needs root or sudo), runs initdb as the postgres user into a fresh
# temporary directory, starts the server on 127.0.0.1 with a free port (unix
# socket inside that directory, so nothing else on the machine is touched),
# creates the database "mcpkit" and exports
#
#     MCPKIT_TEST_POSTGRES_DSN=postgres://postgres@127.0.0.1:PORT/mcpkit?sslmode=disable
#
# pg_stop stops the server, removes the directory and unsets the variable.
# Both functions return non-zero with a message on failure and never exit
# the calling shell themselves, nor change its options or traps.
#
# The cluster's default collation is linguistic (ICU "en-US" when the server
# supports it), like most production databases, so that a query which
# forgets COLLATE "C" sorts differently here and its test fails.
#
# Environment (all optional):
#   MCPKIT_PG_BINDIR   directory holding initdb/pg_ctl (default: newest
#                      /usr/lib/postgresql/*/bin, else initdb on PATH)
#   MCPKIT_PG_TMPDIR   parent of the temporary directory (default: /tmp)

_pg_log() { printf 'postgres.sh: %s\n' "$*" >&2; }

# _pg_bindir prints the directory of the newest installed initdb.
_pg_bindir() {
  if [[ -n ${MCPKIT_PG_BINDIR:-} && -x ${MCPKIT_PG_BINDIR}/initdb ]]; then
    printf '%s\n' "$MCPKIT_PG_BINDIR"; return 0
  fi
  local d best=""
  for d in /usr/lib/postgresql/*/bin; do
    [[ -x $d/initdb && -x $d/pg_ctl ]] || continue
    # Version directories are integers (15, 16, ...); keep the highest.
    if [[ -z $best ]] || (( $(basename "$(dirname "$d")") > $(basename "$(dirname "$best")") )); then
      best=$d
    fi
  done
  if [[ -z $best ]] && command -v initdb >/dev/null 2>&1; then
    best=$(dirname "$(readlink -f "$(command -v initdb)")")
  fi
  [[ -n $best ]] && printf '%s\n' "$best"
}

# _pg_as_root runs a command as root (directly, or through sudo).
_pg_as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo "$@"
  else _pg_log "need root to run: $*"; return 1
  fi
}

# _pg_install installs PostgreSQL from the Debian packages without letting
# the package create or start its own "main" cluster.
_pg_install() {
  command -v apt-get >/dev/null 2>&1 || { _pg_log "no initdb and no apt-get: install PostgreSQL"; return 1; }
  _pg_log "initdb not found: installing PostgreSQL with apt-get"
  _pg_as_root mkdir -p /etc/postgresql-common/createcluster.d || return 1
  printf 'create_main_cluster = false\n' |
    _pg_as_root tee /etc/postgresql-common/createcluster.d/mcpkit-ci.conf >/dev/null || return 1
  _pg_as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq || return 1
  _pg_as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null || return 1
}

# _pg_free_port prints a TCP port nobody listens on at 127.0.0.1. python3
# asks the kernel for one; otherwise random ports are probed with bash's
# /dev/tcp (a refused connection means free). pg_start retries on a race.
_pg_free_port() {
  local port i
  if command -v python3 >/dev/null 2>&1; then
    port=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()' 2>/dev/null) || port=""
    if [[ $port =~ ^[0-9]+$ ]]; then printf '%s\n' "$port"; return 0; fi
  fi
  for ((i = 0; i < 200; i++)); do
    port=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      printf '%s\n' "$port"; return 0
    fi
  done
  _pg_log "no free port found"; return 1
}

# _pg_run runs a PostgreSQL program as the cluster's OS user (postgres when
# we are root: PostgreSQL refuses to run as root), from inside the cluster
# directory so the postgres user can read its working directory.
_pg_run() {
  if [[ $(id -u) -eq 0 ]]; then
    (cd "$_MCPKIT_PG_DIR" && runuser -u postgres -- "$@")
  else
    (cd "$_MCPKIT_PG_DIR" && "$@")
  fi
}

pg_start() {
  if [[ -n ${_MCPKIT_PG_DIR:-} ]]; then
    _pg_log "already running in $_MCPKIT_PG_DIR"; return 0
  fi
  local bin
  bin=$(_pg_bindir) || true
  if [[ -z $bin ]]; then
    _pg_install || { _pg_log "installing PostgreSQL failed"; return 1; }
    bin=$(_pg_bindir) || true
    [[ -n $bin ]] || { _pg_log "initdb still not found after installing"; return 1; }
  fi
  if [[ $(id -u) -eq 0 ]] && ! id postgres >/dev/null 2>&1; then
    useradd --system --no-create-home --shell /usr/sbin/nologin postgres || { _pg_log "cannot create user postgres"; return 1; }
  fi

  _MCPKIT_PG_BIN=$bin
  _MCPKIT_PG_DIR=$(mktemp -d "${MCPKIT_PG_TMPDIR:-/tmp}/mcpkit-pg.XXXXXX") || { _pg_log "mktemp failed"; return 1; }
  if [[ $(id -u) -eq 0 ]]; then chown postgres: "$_MCPKIT_PG_DIR" || { pg_stop; return 1; }; fi
  chmod 700 "$_MCPKIT_PG_DIR"
  local data=$_MCPKIT_PG_DIR/data

  # Linguistic default collation when ICU is available; C.UTF-8 otherwise.
  local -a common=(-D "$data" -U postgres -A trust -E UTF8 --no-sync)
  if ! _pg_run "$bin/initdb" "${common[@]}" --locale=C.UTF-8 --locale-provider=icu --icu-locale=en-US >"$_MCPKIT_PG_DIR/initdb.log" 2>&1; then
    rm -rf "$data"
    if ! _pg_run "$bin/initdb" "${common[@]}" --locale=C.UTF-8 >"$_MCPKIT_PG_DIR/initdb.log" 2>&1; then
      rm -rf "$data"
      if ! _pg_run "$bin/initdb" "${common[@]}" >"$_MCPKIT_PG_DIR/initdb.log" 2>&1; then
        _pg_log "initdb failed:"; cat "$_MCPKIT_PG_DIR/initdb.log" >&2; pg_stop; return 1
      fi
    fi
  fi

  local port="" try opts
  for try in 1 2 3 4 5; do
    port=$(_pg_free_port) || { pg_stop; return 1; }
    opts="-c listen_addresses=127.0.0.1 -p $port -k '$data' -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
    if _pg_run "$bin/pg_ctl" -D "$data" -l "$_MCPKIT_PG_DIR/server.log" -w -t 60 -o "$opts" start >/dev/null 2>&1; then
      break
    fi
    _pg_log "start on port $port failed (attempt $try)"; port=""
    _pg_run "$bin/pg_ctl" -D "$data" -m immediate -w stop >/dev/null 2>&1 || true
  done
  if [[ -z $port ]]; then
    _pg_log "could not start the server:"; tail -n 20 "$_MCPKIT_PG_DIR/server.log" >&2 || true
    pg_stop; return 1
  fi
  _MCPKIT_PG_PORT=$port

  if ! _pg_run "$bin/createdb" -h 127.0.0.1 -p "$port" -U postgres mcpkit; then
    _pg_log "createdb failed"; pg_stop; return 1
  fi
  export MCPKIT_TEST_POSTGRES_DSN="postgres://postgres@127.0.0.1:$port/mcpkit?sslmode=disable"
  _pg_log "PostgreSQL $("$bin/pg_ctl" --version | awk '{print $3}') on 127.0.0.1:$port (data in $data)"
  _pg_log "MCPKIT_TEST_POSTGRES_DSN=$MCPKIT_TEST_POSTGRES_DSN"
}

pg_stop() {
  if [[ -z ${_MCPKIT_PG_DIR:-} ]]; then return 0; fi
  if [[ -f $_MCPKIT_PG_DIR/data/postmaster.pid ]]; then
    _pg_run "$_MCPKIT_PG_BIN/pg_ctl" -D "$_MCPKIT_PG_DIR/data" -m fast -w -t 60 stop >/dev/null 2>&1 ||
      _pg_run "$_MCPKIT_PG_BIN/pg_ctl" -D "$_MCPKIT_PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 ||
      _pg_log "pg_ctl stop failed"
  fi
  rm -rf "$_MCPKIT_PG_DIR"
  unset _MCPKIT_PG_DIR _MCPKIT_PG_BIN _MCPKIT_PG_PORT MCPKIT_TEST_POSTGRES_DSN
  return 0
}
