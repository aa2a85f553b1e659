#!/usr/bin/env bash
# .ci/lean.sh: the kit's module stays lean for its users. A fresh consumer
# module in a temporary directory, with a replace to this checkout, imports
# authn, inventory and mcphttp; its module graph (go list -m all) must
# hold none of the examples' dependencies: pgx, modernc sqlite,
# gorilla, the go-sdk, mcp-go, chi, and nothing of OpenTelemetry or
# Prometheus (the otelmcp adapter is a module of its own), nor go-redis
# (redisstore is one too). Prints the graph.
#
# Run from anywhere in the checkout: bash .ci/lean.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)

forbidden='^(github\.com/jackc/pgx|modernc\.org/sqlite|github\.com/gorilla/|github\.com/modelcontextprotocol/|github\.com/mark3labs/|github\.com/go-chi/|go\.opentelemetry\.io/|github\.com/prometheus/|github\.com/redis/)'

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cat >"$dir/go.mod" <<MOD
module example.com/leanconsumer

go 1.26.0

require github.com/mcpkit/mcpkit v0.0.0-00010101000000-000000000000

replace github.com/mcpkit/mcpkit => $root
MOD
cat >"$dir/main.go" <<'GO'
// Command leanconsumer is what a user's service imports of mcpkit.
package main

import (
	"fmt"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/principal"
)

func main() {
	var (
		_ principal.Principal
		_ *authn.Authenticator
		_ *inventory.Inventory
		_ *mcphttp.Endpoint
		_ *sessions.Part
		_ *tools.Part
	)
	fmt.Println("ok")
}
GO

cd "$dir"
export GOWORK=off
go mod tidy
go build -o /dev/null .
graph=$(go list -m all)
echo "lean: go list -m all of a module importing authn, inventory and mcphttp:"
sed 's/^/  /' <<<"$graph"
if bad=$(grep -E "$forbidden" <<<"$graph"); then
  echo "lean: the kit's module graph reaches the examples' dependencies:" >&2
  sed 's/^/  /' <<<"$bad" >&2
  echo "lean: the root go.mod must require only jwx, gjson and testify (and what they need)" >&2
  exit 1
fi
echo "lean: ok"
