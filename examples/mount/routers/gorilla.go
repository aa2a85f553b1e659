package routers

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/mcpkit/mcpkit/examples/mount/kit"
)

// Gorilla mounts the kit on a github.com/gorilla/mux router.
func Gorilla(k *kit.Kit) http.Handler {
	r := mux.NewRouter()
	r.Handle("/mcp", k.MCP)                  // POST; GET/DELETE get the endpoint's 405
	r.Handle(k.MetadataPath, k.Metadata)     // /.well-known/oauth-protected-resource/mcp
	r.Handle(k.RootMetadataPath, k.Metadata) // /.well-known/oauth-protected-resource
	r.Handle("/healthz", k.Health)
	return r
}
