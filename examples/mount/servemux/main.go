// Command servemux serves the mcpkit mount example on net/http.ServeMux
// (the router code is routers.ServeMux). See package examples/mount for how to
// try it:
//
//	go run ./examples/mount/servemux                      # development issuer, prints tokens
//	go run ./examples/mount/servemux -issuer https://auth.example.com \
//		-jwks-url https://auth.example.com/.well-known/jwks.json \
//		-resource https://mcp.example.com/mcp -addr 127.0.0.1:8081
package main

import (
	"github.com/mcpkit/mcpkit/examples/mount/kit"
	"github.com/mcpkit/mcpkit/examples/mount/routers"
)

func main() {
	kit.Main("servemux", routers.ServeMux)
}
