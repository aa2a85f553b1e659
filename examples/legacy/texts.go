package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
)

// Scope is the scope a token needs to list and read texts.
const Scope = "texts:read"

// textsTemplate is the URI template of the texts.
const textsTemplate = "texts://texts/{id}"

// texts is the private inventory's store: each user's texts, listed with a
// keyset query (inventorytest.MemorySource) and read after an ownership
// check. It is safe for concurrent use.
type texts struct {
	list *inventorytest.MemorySource

	mu   sync.RWMutex
	byID map[string]text
}

type text struct{ owner, body string }

func newTexts() *texts {
	return &texts{list: inventorytest.NewMemorySource(), byID: map[string]text{}}
}

// add stores a text of owner and returns its URI.
func (s *texts) add(owner, id, title, body string) (string, error) {
	uri, err := inventory.Expand(textsTemplate, map[string]string{"id": id})
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	s.byID[id] = text{owner: owner, body: body}
	s.mu.Unlock()
	s.list.Insert(owner, inventory.Entry{Key: id, URI: uri, Name: title, MIMEType: "text/plain"})
	return uri, nil
}

// uris returns the URIs of owner's texts in listing order.
func (s *texts) uris(owner string) []string {
	var out []string
	for _, e := range s.list.Records(owner) {
		out = append(out, e.URI)
	}
	return out
}

// template is the protected texts template with its per-caller List.
func (s *texts) template() inventory.Template {
	return inventory.Template{
		Name: "texts", Title: "Texts", Description: "The caller's own texts, to count words in",
		URITemplate: textsTemplate, MIMEType: "text/plain",
		Access: inventory.Protected, RequiredScopes: []string{Scope},
		List: s.list.List,
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
