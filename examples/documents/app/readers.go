package app

import (
	"context"
	"errors"
	"strings"

	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/inventory"
)

// ReadersTemplate is the URI template of the readers of a document: who
// may read it (its owner, and those it is shared with).
const ReadersTemplate = "docs://readers/{id}"

// DocumentReadersTemplate returns the protected template of who may read a
// document: readable by the document's owner only (anyone else gets "not
// found", as for a missing document), and only with both ScopeRead and
// ScopeShare, since it is part of what sharing manages. A client that
// signed in with ScopeRead alone gets 403 insufficient_scope naming both,
// and steps up: it signs in again for both scopes and reads it. It has no
// List: it is not among the documents resources/list shows.
func DocumentReadersTemplate(st store.Store) inventory.Template {
	return inventory.Template{
		Name: "readers", Title: "Readers of a document",
		Description: "Who can read one of your documents: you and those you shared it with (needs " + ScopeShare + ")",
		URITemplate: ReadersTemplate, MIMEType: "text/plain",
		RequiredScopes: []string{ScopeRead, ScopeShare},
		Validate:       map[string]func(string) error{"id": validateID},
		Read:           readReaders(st),
	}
}

// readReaders lists the readers of the caller's own document, one per line.
func readReaders(st store.Store) inventory.ReadFunc {
	return func(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
		if req.Principal == nil || req.Principal.Subject == "" {
			return nil, inventory.ErrNotFound
		}
		readers, err := st.Readers(ctx, req.Principal.Key(), req.Params["id"])
		if errors.Is(err, store.ErrNotFound) {
			return nil, inventory.ErrNotFound // another's and a missing document look the same
		}
		if err != nil {
			return nil, err
		}
		return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: strings.Join(readers, "\n") + "\n"}}, nil
	}
}
