package main

import (
	"fmt"

	"github.com/mcpkit/mcpkit/examples/memstore"
	"github.com/mcpkit/mcpkit/inventory"
)

// Scope is the scope a token needs to list and read texts.
const Scope = "texts:read"

// textsTemplate is the URI template of the texts.
const textsTemplate = "texts://texts/{id}"

// texts is the private inventory's store: each user's texts, listed with
// a keyset query and read after an ownership check (package memstore).
type texts struct{ *memstore.Store }

func newTexts() *texts { return &texts{memstore.New(textsTemplate)} }

// template is the protected texts template with its per-caller List.
func (s *texts) template() inventory.Template {
	return inventory.Template{
		Name: "texts", Title: "Texts", Description: "The caller's own texts, to count words in",
		URITemplate: textsTemplate, MIMEType: "text/plain",
		Access: inventory.Protected, RequiredScopes: []string{Scope},
		List: s.List,
		Read: s.Read,
	}
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
			if _, err := s.Add(u.owner, fmt.Sprintf("t%03d", seq), fmt.Sprintf("%s's text %d", u.owner, i),
				fmt.Sprintf("This is text number %d of %s.", i, u.owner)); err != nil {
				return err
			}
		}
	}
	return nil
}
