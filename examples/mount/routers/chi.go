package routers

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/mcpkit/mcpkit/examples/mount/kit"
)

// Chi mounts the kit on a github.com/go-chi/chi/v5 router.
func Chi(k *kit.Kit) http.Handler {
	r := chi.NewRouter()
	r.Handle("/mcp", k.MCP)                  // POST; GET/DELETE get the endpoint's 405
	r.Handle(k.MetadataPath, k.Metadata)     // /.well-known/oauth-protected-resource/mcp
	r.Handle(k.RootMetadataPath, k.Metadata) // /.well-known/oauth-protected-resource
	r.Handle("/healthz", k.Health)
	return r
}
