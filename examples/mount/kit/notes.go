package kit

import (
	"fmt"

	"github.com/mcpkit/mcpkit/examples/memstore"
	"github.com/mcpkit/mcpkit/inventory"
)

// Notes is the in-memory per-user notes store (package memstore): a
// keyset listing of each owner's notes, and reads that check the owner
// again. It is safe for concurrent use.
type Notes struct{ *memstore.Store }

// NewNotes returns an empty store.
func NewNotes() *Notes { return &Notes{memstore.New(NotesTemplate)} }

// Template is the protected notes template: its List shows the caller's
// own notes, its Read serves a note only to its owner.
func (n *Notes) Template() inventory.Template {
	return inventory.Template{
		Name: "notes", Title: "Notes", Description: "The caller's own notes",
		URITemplate: NotesTemplate, MIMEType: "text/plain",
		Access: inventory.Protected, RequiredScopes: []string{Scope},
		List: n.List,
		Read: n.Read,
	}
}

// Seeded note counts: alice's notes fill more than two pages of
// DefaultPageSize.
const (
	AliceNotes = 12
	BobNotes   = 4
)

// SeedNotes gives alice and bob their notes. Ids are "n001", "n002", …
// in one sequence, so an id does not tell whose note it is.
func SeedNotes(n *Notes) {
	seq := 0
	for _, u := range []struct {
		owner string
		count int
	}{{"alice", AliceNotes}, {"bob", BobNotes}} {
		for i := 1; i <= u.count; i++ {
			seq++
			id := fmt.Sprintf("n%03d", seq)
			// Add cannot fail for these ids.
			_, _ = n.Add(u.owner, id, fmt.Sprintf("%s's note %d", u.owner, i), fmt.Sprintf("Note %d of %s.", i, u.owner))
		}
	}
}
