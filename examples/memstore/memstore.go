// Package memstore is the examples' in-memory store of per-user text
// records, shared by the legacy and mount examples: each owner's list
// entries, sorted by key, answer the keyset listing with a binary search
// (what an index does in a database), and a map by id answers reads,
// which check the owner again.
//
// A real service lists from its own database with the same keyset query
// (WHERE owner = $1 AND id > $2 ORDER BY id LIMIT $3); the documents
// example does that on SQLite and PostgreSQL.
package memstore

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"

	"github.com/mcpkit/mcpkit/inventory"
)

// ErrNoSubject refuses a listing without a subject: a source never falls
// back to an unrestricted query.
var ErrNoSubject = errors.New("memstore: principal has no subject")

// Store holds every owner's text records. It is safe for concurrent use.
type Store struct {
	uriTemplate string // expanded with {id} into each record's URI

	mu      sync.RWMutex
	byOwner map[string][]inventory.Entry // sorted by Key (the record id)
	byID    map[string]record
}

type record struct{ owner, body string }

// New returns an empty store whose records have URIs of uriTemplate, a
// URI template with one variable, {id}.
func New(uriTemplate string) *Store {
	return &Store{uriTemplate: uriTemplate, byOwner: map[string][]inventory.Entry{}, byID: map[string]record{}}
}

// Add stores a text/plain record of owner under id (its key orders the
// owner's records), replacing a record with the same id, and returns its
// URI.
func (s *Store) Add(owner, id, title, body string) (string, error) {
	uri, err := inventory.Expand(s.uriTemplate, map[string]string{"id": id})
	if err != nil {
		return "", err
	}
	e := inventory.Entry{Key: id, URI: uri, Name: title, MIMEType: "text/plain"}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.byID[id]; ok {
		s.byOwner[old.owner] = slices.DeleteFunc(s.byOwner[old.owner], func(e inventory.Entry) bool { return e.Key == id })
	}
	s.byID[id] = record{owner: owner, body: body}
	list := s.byOwner[owner]
	i := sort.Search(len(list), func(i int) bool { return list[i].Key >= id })
	s.byOwner[owner] = slices.Insert(list, i, e)
	return uri, nil
}

// URIs returns the URIs of owner's records in listing order.
func (s *Store) URIs(owner string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for _, e := range s.byOwner[owner] {
		out = append(out, e.URI)
	}
	return out
}

// List is the keyset query, an inventory.ListFunc: the caller's next at
// most req.Limit records strictly after req.After.
func (s *Store) List(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
	if err := ctx.Err(); err != nil {
		return inventory.Page{}, err
	}
	if req.Principal == nil || req.Principal.Subject == "" {
		return inventory.Page{}, ErrNoSubject
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	all := s.byOwner[req.Principal.Subject]
	i := sort.Search(len(all), func(i int) bool { return all[i].Key > req.After })
	end := min(i+req.Limit, len(all))
	if i >= end {
		return inventory.Page{}, nil
	}
	return inventory.Page{Entries: slices.Clone(all[i:end]), HasMore: end < len(all)}, nil
}

// Read is an inventory.ReadFunc for a template with the variable {id}: it
// serves a record to its owner only.
func (s *Store) Read(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	s.mu.RLock()
	d, ok := s.byID[req.Params["id"]]
	s.mu.RUnlock()
	// Another user's record and a missing one look the same.
	if !ok || req.Principal == nil || d.owner != req.Principal.Subject {
		return nil, inventory.ErrNotFound
	}
	return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: d.body}}, nil
}
