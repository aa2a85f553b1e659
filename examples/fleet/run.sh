#!/usr/bin/env bash
# examples/fleet/run.sh: a local fleet of the documents server in one
# command, as an operator would run one behind a plain load balancer:
#
#   Redis        sessions, DPoP replay memory, rate limits (-redis)
#   PostgreSQL   the documents, and notifications between the instances
#                (LISTEN/NOTIFY)
#   3 instances  of examples/documents in production mode, one cursor key
#                ring, one database, one Redis
#   an issuer    examples/fleet/issuer: a development issuer whose tokens
#                every instance accepts
#   HAProxy      round-robin, health checks on /healthz, no stickiness
#                (examples/fleet/haproxy.cfg)
#
#     bash examples/fleet/run.sh         # then Ctrl-C stops everything
#
# It prints the MCP URL and how to get tokens. Everything lives in a
# temporary directory, removed at the end, data included. It installs
# redis-server, PostgreSQL and haproxy from the Debian packages when they
# are missing (needs root or sudo; see .ci/redis.sh, .ci/postgres.sh,
# .ci/haproxy.sh). Ports (all on 127.0.0.1) and extra flags for the
# instances come from the environment:
#
#   FLEET_PORT=8080  FLEET_INSTANCE_PORTS="8081 8082 8083"  FLEET_ISSUER_PORT=8090
#   FLEET_REDIS_PORT=6390  FLEET_ARGS="-rate-list off"  (any documents flags)
#
# FLEET_REDIS=cluster starts a Redis Cluster instead of one Redis: three
# masters and a replica each, on FLEET_REDIS_PORT and the five ports after
# it, formed by redis-cli --cluster create; -redis gets go-redis's cluster
# URL (redis://HOST:PORT?addr=…). Kill a master (its pid is printed) and
# its replica takes over within a few seconds.
set -euo pipefail
cd "$(dirname "$0")/../.."

port=${FLEET_PORT:-8080}
read -r -a iports <<<"${FLEET_INSTANCE_PORTS:-8081 8082 8083}"
issuer_port=${FLEET_ISSUER_PORT:-8090}
redis_port=${FLEET_REDIS_PORT:-6390}
read -r -a extra <<<"${FLEET_ARGS:-}"
((${#iports[@]} == 3)) || { echo "run.sh: FLEET_INSTANCE_PORTS needs three ports" >&2; exit 2; }

log() { printf 'fleet: %s\n' "$*" >&2; }
redis_mode=${FLEET_REDIS:-single}
case $redis_mode in
single) redis_ports=("$redis_port") ;;
cluster) redis_ports=("$redis_port" $((redis_port + 1)) $((redis_port + 2)) $((redis_port + 3)) $((redis_port + 4)) $((redis_port + 5))) ;;
*) echo "run.sh: FLEET_REDIS is single or cluster" >&2; exit 2 ;;
esac
check_ports=("$port" "${iports[@]}" "$issuer_port" "${redis_ports[@]}")
if [[ $redis_mode == cluster ]]; then
  # A cluster node also listens on its bus port, port + 10000: it must be
  # free, and outside the kernel's range of ports for outgoing
  # connections, which any connection the machine opens could take first.
  read -r eph_lo eph_hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || { eph_lo=32768; eph_hi=60999; }
  for p in "${redis_ports[@]}"; do
    for q in "$p" $((p + 10000)); do
      if ((q >= eph_lo && q <= eph_hi)); then
        log "port $q (a Redis port or its cluster-bus port, port + 10000) is in the kernel's ephemeral range $eph_lo-$eph_hi: choose a FLEET_REDIS_PORT whose ports and ports + 10000 are outside it (the default 6390 is)"
        exit 2
      fi
    done
    check_ports+=($((p + 10000)))
  done
fi
for p in "${check_ports[@]}"; do
  if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    log "port $p is taken on 127.0.0.1: choose others (FLEET_PORT, FLEET_INSTANCE_PORTS, FLEET_ISSUER_PORT, FLEET_REDIS_PORT; a cluster also needs FLEET_REDIS_PORT's ports + 10000)"
    exit 2
  fi
done
dir=$(mktemp -d /tmp/mcpkit-fleet.XXXXXX)
pids=()
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  log "stopping"
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pg_stop 2>/dev/null || true
  if ((rc != 0 && rc != 130)); then
    # A failure: keep the logs (the Redis nodes', the instances') that
    # say why; only the binaries go.
    rm -f "$dir/documents" "$dir/issuer"
    log "failed (status $rc): logs kept in $dir"
  else
    rm -rf "$dir"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# shellcheck source=../../.ci/redis.sh
source .ci/redis.sh
# shellcheck source=../../.ci/postgres.sh
source .ci/postgres.sh
# shellcheck source=../../.ci/haproxy.sh
source .ci/haproxy.sh
redis_ensure
haproxy_ensure

log "building the documents server and the issuer"
go build -o "$dir/documents" ./examples/documents
go build -o "$dir/issuer" ./examples/fleet/issuer

# wait_http URL: until it answers 200 (30 s at most).
wait_http() {
  local i
  for ((i = 0; i < 300; i++)); do
    curl -fsS -o /dev/null "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  log "$1 did not answer; logs in $dir"; return 1
}

# start_redis_cluster: six cluster-enabled servers on redis_ports, formed
# into three masters with a replica each; sets redis_url.
start_redis_cluster() {
  local p addrs=() i
  for p in "${redis_ports[@]}"; do
    mkdir -p "$dir/redis-$p"
    "$MCPKIT_REDIS_SERVER" --port "$p" --bind 127.0.0.1 --dir "$dir/redis-$p" --save "" --appendonly no \
      --cluster-enabled yes --cluster-config-file nodes.conf --cluster-node-timeout 1000 \
      --cluster-replica-validity-factor 0 --cluster-require-full-coverage no >"$dir/redis-$p.log" 2>&1 &
    pids+=($!)
    log "redis-server :$p pid $!"
    addrs+=("127.0.0.1:$p")
  done
  local cli=${MCPKIT_REDIS_SERVER%redis-server}redis-cli
  [[ -x $cli ]] || cli=redis-cli
  for p in "${redis_ports[@]}"; do
    for ((i = 0; i < 100; i++)); do "$cli" -p "$p" ping >/dev/null 2>&1 && break; sleep 0.1; done
  done
  "$cli" --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes >"$dir/redis-cluster.log" 2>&1 ||
    { log "redis-cli --cluster create failed:"; tail -n 5 "$dir/redis-cluster.log" >&2; return 1; }
  for p in "${redis_ports[@]}"; do
    for ((i = 0; i < 300; i++)); do
      "$cli" -p "$p" cluster info 2>/dev/null | grep -q cluster_state:ok && break
      sleep 0.1
    done
  done
  redis_url="redis://${addrs[0]}?$(printf 'addr=%s&' "${addrs[@]:1}")"
  redis_url=${redis_url%&}
}

if [[ $redis_mode == cluster ]]; then
  start_redis_cluster
else
  mkdir -p "$dir/redis"
  "$MCPKIT_REDIS_SERVER" --port "$redis_port" --bind 127.0.0.1 --dir "$dir/redis" --save "" --appendonly no \
    >"$dir/redis.log" 2>&1 &
  pids+=($!)
  redis_url=redis://127.0.0.1:$redis_port/0
fi
pg_start
dsn=$MCPKIT_TEST_POSTGRES_DSN

resource=http://127.0.0.1:$port/mcp
issuer=http://127.0.0.1:$issuer_port
"$dir/issuer" -addr "127.0.0.1:$issuer_port" -data-dir "$dir/issuer-key" -resource "$resource" 2>"$dir/issuer.log" &
pids+=($!)
wait_http "$issuer/jwks.json"

# One cursor key ring for the fleet: a cursor sealed by one instance opens
# on every other. In the environment, not on the command line.
MCPKIT_CURSOR_KEYS=1:$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')
export MCPKIT_CURSOR_KEYS
export MCPKIT_REDIS_URL=$redis_url
# HAProxy (127.0.0.1) appends each client's address to X-Forwarded-For
# (option forwardfor): -trusted-proxies believes it from HAProxy alone, so
# the per-address limits key on the client.
common=(-db "$dsn" -issuer "$issuer" -jwks-url "$issuer/jwks.json" -resource "$resource" -audit-log off
  -trusted-proxies 127.0.0.1/32 "${extra[@]}")
for i in 0 1 2; do
  seed=false
  ((i == 0)) && seed=true # the first seeds alice's, bob's and carol's documents, alone
  "$dir/documents" -addr "127.0.0.1:${iports[i]}" -seed "$seed" "${common[@]}" 2>"$dir/instance-$((i + 1)).log" &
  pids+=($!)
  wait_http "http://127.0.0.1:${iports[i]}/healthz"
done

FLEET_BIND=127.0.0.1:$port FLEET_A=127.0.0.1:${iports[0]} FLEET_B=127.0.0.1:${iports[1]} FLEET_C=127.0.0.1:${iports[2]} \
  "$MCPKIT_HAPROXY" -db -f examples/fleet/haproxy.cfg 2>"$dir/haproxy.log" &
haproxy_pid=$!
pids+=($haproxy_pid)
wait_http "http://127.0.0.1:$port/healthz"

cat <<MSG

The fleet is up: $resource
  (HAProxy, round-robin over 127.0.0.1:${iports[0]}, :${iports[1]} and :${iports[2]};
   Redis $redis_url, PostgreSQL $dsn)

Tokens (one hour, documents:read and documents:share), for alice, bob, carol or anyone:
  TOKEN=\$($dir/issuer -addr 127.0.0.1:$issuer_port -data-dir $dir/issuer-key -resource $resource token alice)

List alice's documents through the balancer:
  curl -s $resource -H "Authorization: Bearer \$TOKEN" -H 'Content-Type: application/json' \\
    -H 'Accept: application/json, text/event-stream' \\
    -d '{"jsonrpc":"2.0","id":1,"method":"resources/list"}'

MCP clients sign in through the issuer's page ($issuer/authorize), which the
resource metadata names. Logs: $dir/*.log. Kill one instance (kill -9) and
keep going; Ctrl-C stops everything and removes $dir.
MSG

wait "$haproxy_pid" || true
log "HAProxy ended:"; tail -n 5 "$dir/haproxy.log" >&2
