package app

import (
	"fmt"

	"github.com/go-chi/chi/v5"

	"github.com/mcpkit/mcpkit/examples/devissuer"
)

// signInScopes are the scopes the development authorization server
// grants, as its login page explains them.
var signInScopes = []devissuer.Scope{
	{Name: ScopeRead, Description: "list and read your documents and the ones shared with you"},
	{Name: ScopeShare, Description: "share, unshare and edit your own documents, and see who can read them"},
}

// mountSignIn mounts the development authorization server (development
// mode only: a.dev is set): MCP clients discover it from the resource
// metadata, register (client ID metadata document or RFC 7591), and sign
// people in through its login page, which offers alice, bob and carol
// and a field for any other user. See devissuer.Server for its endpoints
// and rules. It replaces the issuer's plain JWK Set and metadata routes:
// its paths include both.
func (a *App) mountSignIn(r chi.Router) error {
	as, err := a.dev.NewServer(devissuer.ServerOptions{
		Scopes: signInScopes, DefaultScopes: []string{ScopeRead},
		ResourceName: "mcpkit documents", ClientMetadataRoots: a.cfg.DevClientMetadataRoots, Logger: a.log,
	})
	if err != nil {
		return fmt.Errorf("development authorization server: %w", err)
	}
	for _, p := range as.Paths() {
		r.Handle(p, as)
	}
	return nil
}
