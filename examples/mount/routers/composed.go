package routers

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/mux"

	"github.com/mcpkit/mcpkit/examples/mount/kit"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// The same service with the pieces composed on the router instead of the
// one-line endpoint: the bearer verifier as middleware (Principal in the
// context), one strict decode as middleware (the message in the context),
// then method routing — resources/list to the list handler, everything
// else to the endpoint, which uses the principal and the decode it finds.
// Clients see exactly what the one-line mounts answer (examples/mount
// tests it); a service does this to put its own middleware in between
// (rate limits, logging by method, its own auth) or to route MCP methods
// to handlers of its own.

// byMethod sends resources/list to the list handler and every other
// request to the endpoint, on the method the Decoder decoded.
func byMethod(k *kit.Kit) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := jsonrpc.FromContext(r.Context()); ok && !b.Batch && b.Message.Method == "resources/list" {
			k.List.ServeHTTP(w, r)
			return
		}
		k.MCP.ServeHTTP(w, r)
	})
}

// ChiComposed mounts the pieces on a chi router.
func ChiComposed(k *kit.Kit) http.Handler {
	r := chi.NewRouter()
	r.Handle(k.MetadataPath, k.Metadata)
	r.Handle(k.RootMetadataPath, k.Metadata)
	r.Handle("/healthz", k.Health)
	r.Group(func(r chi.Router) {
		r.Use(k.Auth.Optional)                   // the bearer verifier: Principal in the context
		r.Use(jsonrpc.Decoder(jsonrpc.Limits{})) // one strict decode: the message in the context
		r.Handle("/mcp", byMethod(k))            // method routing
	})
	return r
}

// GorillaComposed mounts the pieces on a gorilla/mux router.
func GorillaComposed(k *kit.Kit) http.Handler {
	r := mux.NewRouter()
	r.Handle(k.MetadataPath, k.Metadata)
	r.Handle(k.RootMetadataPath, k.Metadata)
	r.Handle("/healthz", k.Health)
	api := r.PathPrefix("/mcp").Subrouter()
	api.Use(k.Auth.Optional, jsonrpc.Decoder(jsonrpc.Limits{}))
	api.Handle("", byMethod(k))
	return r
}

// ServeMuxComposed mounts the pieces on the standard library's ServeMux.
func ServeMuxComposed(k *kit.Kit) http.Handler {
	m := http.NewServeMux()
	m.Handle(k.MetadataPath, k.Metadata)
	m.Handle(k.RootMetadataPath, k.Metadata)
	m.Handle("/healthz", k.Health)
	m.Handle("/mcp", k.Auth.Optional(jsonrpc.Decoder(jsonrpc.Limits{})(byMethod(k))))
	return m
}
