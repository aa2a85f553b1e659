#!/usr/bin/env bash
# Installs the official MCP TypeScript SDK (and playwright-core, which
# drives the system's Chromium in the sign-in tests and downloads no
# browser of its own) pinned in package.json and
# package-lock.json beside this script (npm ci: exactly the locked tree,
# integrity-checked) into a cache directory outside the repository, and
# prints the line that points the interop tests at it:
#
#     eval "$(bash examples/interop/tsclient/install.sh)"
#     # export MCPKIT_TS_SDK_DIR=/root/.cache/mcpkit/ts-sdk
#
# The directory is ${MCPKIT_TS_SDK_DIR:-$HOME/.cache/mcpkit/ts-sdk}. An
# installation of the same lock file is kept; a changed lock reinstalls.
# Only the export line goes to standard output; npm's output goes to
# standard error.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${MCPKIT_TS_SDK_DIR:-$HOME/.cache/mcpkit/ts-sdk}
stamp=$dir/.mcpkit-installed-lock

command -v node >/dev/null || { echo "install.sh: node (Node.js >= 20) is required" >&2; exit 1; }
command -v npm >/dev/null || { echo "install.sh: npm is required" >&2; exit 1; }

if [[ -f $dir/node_modules/@modelcontextprotocol/sdk/package.json && -f $dir/node_modules/@modelcontextprotocol/client/package.json && -f $dir/node_modules/playwright-core/package.json ]] && cmp -s "$here/package-lock.json" "$stamp"; then
  echo "install.sh: the pinned SDK is already installed in $dir" >&2
else
  mkdir -p "$dir"
  rm -f "$stamp"
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
  cp "$here/package-lock.json" "$stamp"
  echo "install.sh: installed @modelcontextprotocol/sdk $(node -p "require('$dir/node_modules/@modelcontextprotocol/sdk/package.json').version"), @modelcontextprotocol/client $(node -p "require('$dir/node_modules/@modelcontextprotocol/client/package.json').version") and playwright-core $(node -p "require('$dir/node_modules/playwright-core/package.json').version") in $dir" >&2
fi
printf 'export MCPKIT_TS_SDK_DIR=%q\n' "$dir"
