// Command chi serves the mcpkit mount example on github.com/go-chi/chi/v5
// (the router code is routers.Chi). See package examples/mount for how to
// try it:
//
//	go run ./examples/mount/chi                      # development issuer, prints tokens
//	go run ./examples/mount/chi -issuer https://auth.example.com \
//		-jwks-url https://auth.example.com/.well-known/jwks.json \
//		-resource https://mcp.example.com/mcp -addr 127.0.0.1:8081
package main

import (
	"github.com/mcpkit/mcpkit/examples/mount/kit"
	"github.com/mcpkit/mcpkit/examples/mount/routers"
)

func main() {
	kit.Main("chi", routers.Chi)
}
