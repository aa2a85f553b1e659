# shellcheck shell=bash
# .ci/setup-local.sh: every outside part the tests use, on your machine, with
# the same scripts CI uses (.ci/run). Source it from the repository root, in
# the shell you run the tests from:
#
#     source .ci/setup-local.sh
#     go test ./... ./examples/... ./mcphttp/otelmcp/... ./redisstore/...
#     pg_stop                  # stops the throw-away PostgreSQL
#
# It installs what is missing (Debian packages with apt-get, as root or
# with sudo; Node packages with npm into ~/.cache/mcpkit, outside the
# repository) and exports the variables the tests read:
#
#   PostgreSQL          MCPKIT_TEST_POSTGRES_DSN   a throw-away server on a free
#                                                  loopback port (.ci/postgres.sh)
#   TypeScript SDK v1/v2, playwright-core
#                       MCPKIT_TS_SDK_DIR          (examples/interop/tsclient/install.sh)
#   MCP Inspector, Node.js 22
#                       MCPKIT_INSPECTOR_DIR       (examples/interop/inspector/install.sh)
#   oidc-provider       MCPKIT_OIDC_PROVIDER_DIR   (examples/interop/oidcprovider/install.sh)
#   Chromium            MCPKIT_CHROMIUM            (.ci/chromium.sh)
#   redis-server        MCPKIT_REDIS_SERVER        (.ci/redis.sh)
#   haproxy             MCPKIT_HAPROXY             (.ci/haproxy.sh)
#   Ory Hydra v2.3.0    MCPKIT_HYDRA               (.ci/hydra.sh: built from the Go module
#                                                  proxy, minutes of CPU the first time)
#
# Node.js >= 20 and npm must be on PATH already (the Inspector's Node.js 22
# comes as an npm package). Each part that fails is reported and the others
# are still set up; the summary at the end says what is missing, and the
# tests that need it then skip (or fail under CI=true). It never exits your
# shell nor changes its options.

if [[ ${BASH_SOURCE[0]} == "$0" ]]; then
  echo "setup-local.sh: source it (source .ci/setup-local.sh), so that the variables it exports reach your shell" >&2
  exit 2
fi

_setup_local() {
  local root ok=() missing=() out
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

  # shellcheck source=.ci/postgres.sh
  source "$root/.ci/postgres.sh"
  if [[ -n ${MCPKIT_TEST_POSTGRES_DSN:-} ]]; then
    ok+=("PostgreSQL (MCPKIT_TEST_POSTGRES_DSN already set)")
  elif pg_start; then
    ok+=("PostgreSQL ($MCPKIT_TEST_POSTGRES_DSN; pg_stop stops it)")
  else
    missing+=("PostgreSQL")
  fi

  local script var
  for script in tsclient inspector oidcprovider; do
    case $script in
    tsclient) var=MCPKIT_TS_SDK_DIR ;;
    inspector) var=MCPKIT_INSPECTOR_DIR ;;
    oidcprovider) var=MCPKIT_OIDC_PROVIDER_DIR ;;
    esac
    if out=$(bash "$root/examples/interop/$script/install.sh") && eval "$out"; then
      ok+=("$var=${!var}")
    else
      missing+=("$var (examples/interop/$script/install.sh failed)")
    fi
  done

  # shellcheck source=.ci/chromium.sh
  source "$root/.ci/chromium.sh"
  if chromium_ensure; then ok+=("MCPKIT_CHROMIUM=$MCPKIT_CHROMIUM"); else missing+=("Chromium"); fi
  # shellcheck source=.ci/redis.sh
  source "$root/.ci/redis.sh"
  if redis_ensure; then ok+=("MCPKIT_REDIS_SERVER=$MCPKIT_REDIS_SERVER"); else missing+=("redis-server"); fi
  # shellcheck source=.ci/haproxy.sh
  source "$root/.ci/haproxy.sh"
  if haproxy_ensure; then ok+=("MCPKIT_HAPROXY=$MCPKIT_HAPROXY"); else missing+=("haproxy"); fi
  if out=$(bash "$root/.ci/hydra.sh") && eval "$out"; then
    ok+=("MCPKIT_HYDRA=$MCPKIT_HYDRA")
  else
    missing+=("MCPKIT_HYDRA (.ci/hydra.sh failed)")
  fi

  printf '\nsetup-local.sh: ready:\n' >&2
  printf '  %s\n' "${ok[@]}" >&2
  if ((${#missing[@]} > 0)); then
    printf 'setup-local.sh: MISSING (the tests that need these skip):\n' >&2
    printf '  %s\n' "${missing[@]}" >&2
    return 1
  fi
}
_setup_local
