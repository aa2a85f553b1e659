#!/usr/bin/env bash
# Installs the MCP Inspector (@modelcontextprotocol/inspector, whose CLI
# the interop tests drive) and the Node.js 22 it needs (the npm package
# node, whose install script fetches the platform's node binary package
# through npm), pinned in package.json and package-lock.json beside this
# script (npm ci: exactly the locked tree, integrity-checked), into a cache
# directory outside the repository, and prints the line that points the
# interop tests at it:
#
#     eval "$(bash examples/interop/inspector/install.sh)"
#     # export MCPKIT_INSPECTOR_DIR=/root/.cache/mcpkit/inspector
#
# The directory is ${MCPKIT_INSPECTOR_DIR:-$HOME/.cache/mcpkit/inspector}.
# An installation of the same lock file is kept; a changed lock
# reinstalls. Only the export line goes to standard output; npm's output
# goes to standard error. The machine's own node (any version npm runs on)
# only runs npm: the Inspector runs on $dir/node_modules/.bin/node.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dir=${MCPKIT_INSPECTOR_DIR:-$HOME/.cache/mcpkit/inspector}
stamp=$dir/.mcpkit-installed-lock
inspector=$dir/node_modules/@modelcontextprotocol/inspector/package.json

command -v npm >/dev/null || { echo "install.sh: npm is required" >&2; exit 1; }

if [[ -f $inspector && -x $dir/node_modules/.bin/node ]] && cmp -s "$here/package-lock.json" "$stamp"; then
  echo "install.sh: the pinned Inspector is already installed in $dir" >&2
else
  mkdir -p "$dir"
  rm -f "$stamp"
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  npm ci --prefix "$dir" --no-audit --no-fund --loglevel=error >&2
  cp "$here/package-lock.json" "$stamp"
  echo "install.sh: installed @modelcontextprotocol/inspector $("$dir/node_modules/.bin/node" -p "require('$inspector').version") on node $("$dir/node_modules/.bin/node" --version) in $dir" >&2
fi
printf 'export MCPKIT_INSPECTOR_DIR=%q\n' "$dir"
