package routers

import (
	"net/http"

	"github.com/mcpkit/mcpkit/examples/mount/kit"
)

// ServeMux mounts the kit on the standard library's http.ServeMux (Go 1.22+
// patterns; a pattern without a trailing slash matches that path only).
func ServeMux(k *kit.Kit) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", k.MCP)                  // POST; GET/DELETE get the endpoint's 405
	mux.Handle(k.MetadataPath, k.Metadata)     // /.well-known/oauth-protected-resource/mcp
	mux.Handle(k.RootMetadataPath, k.Metadata) // /.well-known/oauth-protected-resource
	mux.Handle("/healthz", k.Health)
	return mux
}
