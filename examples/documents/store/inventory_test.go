package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
)

const docsURIPrefix = "docs://documents/"

// documentsTemplate is the documents server's list source over a Store, as
// an application writes it: ask the store for limit+1 rows of the caller
// to learn HasMore, never query without a subject, re-check visibility on
// read.
func documentsTemplate(st Store) inventory.Template {
	return inventory.Template{
		Name:           "documents",
		URITemplate:    docsURIPrefix + "{id}",
		MIMEType:       "text/plain",
		RequiredScopes: []string{"documents:read"},
		List: func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
			if req.Principal == nil || req.Principal.Subject == "" {
				return inventory.Page{}, errors.New("documents: no subject") // never list unrestricted
			}
			rows, err := st.List(ctx, req.Principal.Subject, req.After, req.Limit+1)
			if err != nil {
				return inventory.Page{}, err
			}
			page := inventory.Page{HasMore: len(rows) > req.Limit}
			rows = rows[:min(len(rows), req.Limit)]
			page.Entries = make([]inventory.Entry, len(rows))
			for i, r := range rows {
				page.Entries[i] = inventory.Entry{Key: r.OrderKey, URI: docsURIPrefix + r.ID, Name: r.Title, MIMEType: r.MIMEType}
			}
			return page, nil
		},
		Read: func(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			if req.Principal == nil || req.Principal.Subject == "" {
				return nil, inventory.ErrNotFound
			}
			d, err := st.Read(ctx, req.Principal.Subject, req.Params["id"])
			if errors.Is(err, ErrNotFound) {
				return nil, inventory.ErrNotFound
			}
			if err != nil {
				return nil, err
			}
			return []inventory.Contents{{URI: req.URI, MIMEType: d.MIMEType, Text: d.Body}}, nil
		},
	}
}

// TestInventoryContract runs inventorytest's contract checker over the
// List callback of each adapter, for users with many, few and no
// documents, and checks that reads agree with the listing.
func TestInventoryContract(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, Options{})
		ctx := context.Background()
		require.NoError(t, Seed(ctx, st))
		require.NoError(t, SeedMany(ctx, st, "alice", 250)) // pages of 100 too
		doomed := create(t, st, "alice", "deleted")
		require.NoError(t, st.Delete(ctx, "alice", doomed.ID))
		bobs := walk(t, st, "bob", 10)
		require.NotEmpty(t, bobs)
		require.NoError(t, st.Share(ctx, "bob", bobs[0].ID, "carol"))

		tmpl := documentsTemplate(st)
		for _, subject := range []string{"alice", "bob", "carol", "dave"} {
			t.Run(subject, func(t *testing.T) {
				inventorytest.CheckList(t, tmpl, principal.Principal{Subject: subject, Scopes: []string{"documents:read"}}, inventorytest.Options{})
			})
		}

		// Every URI alice lists is readable by her and by nobody else.
		alice := &principal.Principal{Subject: "alice"}
		bob := &principal.Principal{Subject: "bob"}
		page, err := tmpl.List(ctx, inventory.ListRequest{Limit: inventory.MaxLimit, Principal: alice})
		require.NoError(t, err)
		require.True(t, page.HasMore)
		for _, e := range page.Entries {
			id := strings.TrimPrefix(e.URI, docsURIPrefix)
			req := inventory.ReadRequest{URI: e.URI, Params: map[string]string{"id": id}, Principal: alice}
			_, err := tmpl.Read(ctx, req)
			assert.NoError(t, err, e.URI)
			req.Principal = bob
			_, err = tmpl.Read(ctx, req)
			assert.ErrorIs(t, err, inventory.ErrNotFound, e.URI)
		}
		// No subject, no query.
		_, err = tmpl.List(ctx, inventory.ListRequest{Limit: 10})
		assert.Error(t, err)
	})
}

// TestInventoryContractWhileChanging runs the checker while every call of
// the callback is preceded by random writes to the walked collection:
// creates, deletes, shares and unshares. Each page size walks on its own
// (walks of different sizes see different data, so comparing them would
// be meaningless); every page must still satisfy the contract, no URI may
// come twice, and every document that existed for the whole walk must be
// listed.
func TestInventoryContractWhileChanging(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		st := b.open(t, Options{})
		ctx := context.Background()
		require.NoError(t, SeedMany(ctx, st, "alice", 150))
		require.NoError(t, SeedMany(ctx, st, "bob", 20))
		var stable []string
		var volatile []string
		for i, e := range walk(t, st, "alice", MaxListLimit) {
			if i%4 == 0 {
				volatile = append(volatile, e.ID)
			} else {
				stable = append(stable, e.ID)
			}
		}
		bobs := ids(walk(t, st, "bob", MaxListLimit))

		base := documentsTemplate(st)
		for _, size := range []int{1, 7, 50, 100} {
			t.Run(fmt.Sprint("page size ", size), func(t *testing.T) {
				r := rand.New(rand.NewPCG(uint64(size), 1))
				var (
					mu   sync.Mutex
					seen = map[string]bool{}
				)
				tmpl := base
				tmpl.List = func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
					mu.Lock()
					defer mu.Unlock()
					for range r.IntN(3) {
						switch r.IntN(4) {
						case 0:
							d, err := st.Create(ctx, NewDocument{Owner: "alice", Title: "new", MIMEType: "text/markdown"})
							if err != nil {
								return inventory.Page{}, err
							}
							volatile = append(volatile, d.ID)
						case 1:
							if len(volatile) > 0 {
								j := r.IntN(len(volatile))
								if err := st.Delete(ctx, "alice", volatile[j]); err != nil {
									return inventory.Page{}, err
								}
								volatile = append(volatile[:j], volatile[j+1:]...)
							}
						case 2:
							if err := st.Share(ctx, "bob", bobs[r.IntN(len(bobs))], "alice"); err != nil {
								return inventory.Page{}, err
							}
						case 3:
							if err := st.Unshare(ctx, "bob", bobs[r.IntN(len(bobs))], "alice"); err != nil {
								return inventory.Page{}, err
							}
						}
					}
					page, err := base.List(ctx, req)
					for _, e := range page.Entries {
						seen[strings.TrimPrefix(e.URI, docsURIPrefix)] = true
					}
					return page, err
				}
				vs, err := inventorytest.Check(ctx, tmpl, principal.Principal{Subject: "alice"}, inventorytest.Options{PageSizes: []int{size}})
				require.NoError(t, err)
				assert.Empty(t, vs)
				for _, id := range stable {
					assert.True(t, seen[id], "document %s existed all along but was not listed", id)
				}
			})
		}
	})
}
