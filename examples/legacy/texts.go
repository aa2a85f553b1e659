package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/mcpkit/mcpkit/inventory"
)

// Scope is the scope a token needs to list and read texts.
const Scope = "texts:read"

// textsTemplate is the URI template of the texts.
const textsTemplate = "texts://texts/{id}"

// texts is the private inventory's store: each user's texts, listed with a
// keyset query (a binary search over the owner's entries sorted by key,
// what an index does in a database) and read after an ownership check. It
// is safe for concurrent use.
type texts struct {
	mu      sync.RWMutex
	byOwner map[string][]inventory.Entry // sorted by Key (the text id)
	byID    map[string]text
}

type text struct{ owner, body string }

func newTexts() *texts {
	return &texts{byOwner: map[string][]inventory.Entry{}, byID: map[string]text{}}
}

// add stores a text of owner, replacing a text with the same id, and
// returns its URI.
func (s *texts) add(owner, id, title, body string) (string, error) {
	uri, err := inventory.Expand(textsTemplate, map[string]string{"id": id})
	if err != nil {
		return "", err
	}
	e := inventory.Entry{Key: id, URI: uri, Name: title, MIMEType: "text/plain"}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.byID[id]; ok {
		s.byOwner[old.owner] = slices.DeleteFunc(s.byOwner[old.owner], func(e inventory.Entry) bool { return e.Key == id })
	}
	s.byID[id] = text{owner: owner, body: body}
	list := s.byOwner[owner]
	i := sort.Search(len(list), func(i int) bool { return list[i].Key >= id })
	s.byOwner[owner] = slices.Insert(list, i, e)
	return uri, nil
}

// uris returns the URIs of owner's texts in listing order.
func (s *texts) uris(owner string) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for _, e := range s.byOwner[owner] {
		out = append(out, e.URI)
	}
	return out
}

// errNoSubject refuses a listing without a subject: a source never falls
// back to an unrestricted query.
var errNoSubject = errors.New("legacy: principal has no subject")

// list is the keyset query: the caller's next at most req.Limit texts
// strictly after req.After.
func (s *texts) list(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
	if err := ctx.Err(); err != nil {
		return inventory.Page{}, err
	}
	if req.Principal.Subject == "" {
		return inventory.Page{}, errNoSubject
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

// template is the protected texts template with its per-caller List.
func (s *texts) template() inventory.Template {
	return inventory.Template{
		Name: "texts", Title: "Texts", Description: "The caller's own texts, to count words in",
		URITemplate: textsTemplate, MIMEType: "text/plain",
		Access: inventory.Protected, RequiredScopes: []string{Scope},
		List: s.list,
		Read: s.read,
	}
}

func (s *texts) read(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	s.mu.RLock()
	d, ok := s.byID[req.Params["id"]]
	s.mu.RUnlock()
	// Another user's text and a missing one look the same.
	if !ok || req.Principal == nil || d.owner != req.Principal.Subject {
		return nil, inventory.ErrNotFound
	}
	return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: d.body}}, nil
}

// Seeded text counts; pages hold pageSize entries.
const (
	aliceTexts = 12
	bobTexts   = 3
	pageSize   = 5
)

// seed gives alice and bob their texts, with ids from one sequence.
func seed(s *texts) error {
	seq := 0
	for _, u := range []struct {
		owner string
		count int
	}{{"alice", aliceTexts}, {"bob", bobTexts}} {
		for i := 1; i <= u.count; i++ {
			seq++
			if _, err := s.add(u.owner, fmt.Sprintf("t%03d", seq), fmt.Sprintf("%s's text %d", u.owner, i),
				fmt.Sprintf("This is text number %d of %s.", i, u.owner)); err != nil {
				return err
			}
		}
	}
	return nil
}
