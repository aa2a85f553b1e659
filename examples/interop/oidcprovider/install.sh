#!/usr/bin/env bash
# Installs oidc-provider, pinned in package.json and package-lock.json
# beside this script (npm ci: exactly the locked tree, integrity-checked),
# into a cache directory outside the repository, and prints the line that
# points the interop tests at it:
#
#     eval "$(bash examples/interop/oidcprovider/install.sh)"
#     # export MCPKIT_OIDC_PROVIDER_DIR=/root/.cache/mcpkit/oidc-provider
#
# The directory is ${MCPKIT_OIDC_PROVIDER_DIR:-$HOME/.cache/mcpkit/oidc-provider}.
# An installation of the same lock file is kept; a changed lock reinstalls.
# Only the export line goes to standard output.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${MCPKIT_OIDC_PROVIDER_DIR:-$HOME/.cache/mcpkit/oidc-provider}
stamp=$dir/.mcpkit-installed-lock

command -v node >/dev/null || { echo "install.sh: node (Node.js >= 20) is required" >&2; exit 1; }
command -v npm >/dev/null || { echo "install.sh: npm is required" >&2; exit 1; }

if [[ -f $dir/node_modules/oidc-provider/package.json ]] && cmp -s "$here/package-lock.json" "$stamp"; then
  echo "install.sh: the pinned oidc-provider is already installed in $dir" >&2
else
  mkdir -p "$dir"
  rm -f "$stamp"
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
  cp "$here/package-lock.json" "$stamp"
  echo "install.sh: installed oidc-provider $(node -p "require('$dir/node_modules/oidc-provider/package.json').version") in $dir" >&2
fi
printf 'export MCPKIT_OIDC_PROVIDER_DIR=%q\n' "$dir"
