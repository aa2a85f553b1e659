package memstore_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/memstore"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
	"github.com/mcpkit/mcpkit/principal"
)

func template(s *memstore.Store) inventory.Template {
	return inventory.Template{Name: "records", URITemplate: "rec://r/{id}", MIMEType: "text/plain",
		Access: inventory.Protected, List: s.List, Read: s.Read}
}

// The store keeps the keyset contract at every page size, for an owner
// whose records were added out of order, one with a record moved away and
// one with none; URIs follow the store's template.
func TestListContract(t *testing.T) {
	s := memstore.New("rec://r/{id}")
	for i := 300; i >= 1; i-- { // descending: every Add inserts in front
		owner := []string{"alice", "bob"}[i%2] // even ids are alice's
		uri, err := s.Add(owner, fmt.Sprintf("r%04d", i), fmt.Sprintf("record %d", i), "body")
		require.NoError(t, err)
		assert.Equal(t, fmt.Sprintf("rec://r/r%04d", i), uri)
	}
	_, err := s.Add("carol", "r0002", "moved", "body") // was alice's
	require.NoError(t, err)
	for _, sub := range []string{"alice", "bob", "carol", "dave"} {
		t.Run(sub, func(t *testing.T) {
			inventorytest.CheckList(t, template(s), principal.Principal{Subject: sub}, inventorytest.Options{})
		})
	}
	assert.Len(t, s.URIs("alice"), 149)
	assert.Len(t, s.URIs("bob"), 150)
	assert.Equal(t, []string{"rec://r/r0002"}, s.URIs("carol"))
	assert.Empty(t, s.URIs("dave"))
}

// An id the template cannot expand is refused and stores nothing; a
// listing without a subject and a done context list nothing.
func TestRefusals(t *testing.T) {
	s := memstore.New("rec://r/{id}")
	_, err := s.Add("alice", "", "empty id", "body")
	assert.Error(t, err)
	assert.Empty(t, s.URIs("alice"))

	_, err = s.List(context.Background(), inventory.ListRequest{Limit: 10})
	assert.ErrorIs(t, err, memstore.ErrNoSubject)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = s.List(ctx, inventory.ListRequest{Limit: 10, Principal: &principal.Principal{Subject: "alice"}})
	assert.ErrorIs(t, err, context.Canceled)
}

// Reads are served to the owner only, and a page is the caller's copy:
// adds while a page is held, and concurrent adds, lists and reads (run
// with -race), do not change it.
func TestReadsAndConcurrency(t *testing.T) {
	s := memstore.New("rec://r/{id}")
	_, err := s.Add("alice", "a1", "one", "alice's body")
	require.NoError(t, err)
	alice := principal.Principal{Subject: "alice"}
	read := func(p *principal.Principal) ([]inventory.Contents, error) {
		return s.Read(context.Background(), inventory.ReadRequest{URI: "rec://r/a1", Params: map[string]string{"id": "a1"}, Principal: p})
	}
	got, err := read(&alice)
	require.NoError(t, err)
	assert.Equal(t, []inventory.Contents{{URI: "rec://r/a1", MIMEType: "text/plain", Text: "alice's body"}}, got)
	_, err = read(&principal.Principal{Subject: "bob"})
	assert.ErrorIs(t, err, inventory.ErrNotFound)
	_, err = read(nil)
	assert.ErrorIs(t, err, inventory.ErrNotFound)

	page, err := s.List(context.Background(), inventory.ListRequest{Limit: 10, Principal: &alice})
	require.NoError(t, err)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				_, _ = s.Add("alice", fmt.Sprintf("a0%d%02d", w, i), "t", "b")
				_, _ = s.List(context.Background(), inventory.ListRequest{Limit: 5, Principal: &alice})
				_, _ = read(&alice)
			}
		})
	}
	wg.Wait()
	assert.Equal(t, []inventory.Entry{{Key: "a1", URI: "rec://r/a1", Name: "one", MIMEType: "text/plain"}}, page.Entries)
	assert.Len(t, s.URIs("alice"), 201)
}
