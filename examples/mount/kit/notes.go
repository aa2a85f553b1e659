package kit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/mcpkit/mcpkit/inventory"
)

// Notes is an in-memory per-user notes store: each owner's list entries
// sorted by key answer the keyset listing with a binary search (what an
// index does in a database), and a map by id answers reads, which check
// the owner again. It is safe for concurrent use.
type Notes struct {
	mu      sync.RWMutex
	byOwner map[string][]inventory.Entry // sorted by Key (the note id)
	byID    map[string]note
}

type note struct{ owner, title, text string }

// NewNotes returns an empty store.
func NewNotes() *Notes {
	return &Notes{byOwner: map[string][]inventory.Entry{}, byID: map[string]note{}}
}

// Add stores a note of owner under id (its key orders the owner's notes),
// replacing a note with the same id, and returns its URI.
func (n *Notes) Add(owner, id, title, text string) (string, error) {
	uri, err := inventory.Expand(NotesTemplate, map[string]string{"id": id})
	if err != nil {
		return "", err
	}
	e := inventory.Entry{Key: id, URI: uri, Name: title, MIMEType: "text/plain"}
	n.mu.Lock()
	defer n.mu.Unlock()
	if old, ok := n.byID[id]; ok {
		n.byOwner[old.owner] = slices.DeleteFunc(n.byOwner[old.owner], func(e inventory.Entry) bool { return e.Key == id })
	}
	n.byID[id] = note{owner: owner, title: title, text: text}
	list := n.byOwner[owner]
	i := sort.Search(len(list), func(i int) bool { return list[i].Key >= id })
	n.byOwner[owner] = slices.Insert(list, i, e)
	return uri, nil
}

// URIs returns the URIs of owner's notes in listing order.
func (n *Notes) URIs(owner string) []string {
	n.mu.RLock()
	defer n.mu.RUnlock()
	var out []string
	for _, e := range n.byOwner[owner] {
		out = append(out, e.URI)
	}
	return out
}

// errNoSubject refuses a listing without a subject: a source never falls
// back to an unrestricted query.
var errNoSubject = errors.New("kit: principal has no subject")

// list is the keyset query: the caller's next at most req.Limit notes
// strictly after req.After.
func (n *Notes) list(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
	if err := ctx.Err(); err != nil {
		return inventory.Page{}, err
	}
	if req.Principal.Subject == "" {
		return inventory.Page{}, errNoSubject
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	all := n.byOwner[req.Principal.Subject]
	i := sort.Search(len(all), func(i int) bool { return all[i].Key > req.After })
	end := min(i+req.Limit, len(all))
	if i >= end {
		return inventory.Page{}, nil
	}
	return inventory.Page{Entries: slices.Clone(all[i:end]), HasMore: end < len(all)}, nil
}

// Template is the protected notes template: its List shows the caller's
// own notes, its Read serves a note only to its owner.
func (n *Notes) Template() inventory.Template {
	return inventory.Template{
		Name: "notes", Title: "Notes", Description: "The caller's own notes",
		URITemplate: NotesTemplate, MIMEType: "text/plain",
		Access: inventory.Protected, RequiredScopes: []string{Scope},
		List: n.list,
		Read: n.read,
	}
}

func (n *Notes) read(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	n.mu.RLock()
	d, ok := n.byID[req.Params["id"]]
	n.mu.RUnlock()
	// A note of another user and a note that does not exist look the same.
	if !ok || req.Principal == nil || d.owner != req.Principal.Subject {
		return nil, inventory.ErrNotFound
	}
	return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: d.text}}, nil
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
