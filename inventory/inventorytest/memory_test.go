package inventorytest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
)

func TestMemorySource(t *testing.T) {
	m := NewMemorySource()
	for _, i := range []int{5, 1, 9, 3, 7} { // out of order
		m.Insert("alice", rec(i))
	}
	m.Insert("bob", rec(2))
	updated := rec(3)
	updated.Name = "Renamed"
	m.Insert("alice", updated)
	assert.Equal(t, 5, m.Len("alice"))
	assert.True(t, m.Delete("alice", rec(9).Key))
	assert.False(t, m.Delete("alice", rec(9).Key))
	assert.False(t, m.Delete("carol", rec(9).Key))

	ctx := context.Background()
	p, err := m.List(ctx, inventory.ListRequest{Limit: 2, Principal: &alice})
	require.NoError(t, err)
	assert.Equal(t, []inventory.Entry{rec(1), updated}, p.Entries)
	assert.True(t, p.HasMore)
	p, err = m.List(ctx, inventory.ListRequest{After: updated.Key, Limit: 2, Principal: &alice})
	require.NoError(t, err)
	assert.Equal(t, []inventory.Entry{rec(5), rec(7)}, p.Entries)
	assert.False(t, p.HasMore, "exactly the last records: no more")
	p, err = m.List(ctx, inventory.ListRequest{After: rec(7).Key, Limit: 2, Principal: &alice})
	require.NoError(t, err)
	assert.Empty(t, p.Entries)
	assert.False(t, p.HasMore)

	_, err = m.List(ctx, inventory.ListRequest{Limit: 2, Principal: &principal.Principal{ClientID: "app"}})
	assert.ErrorIs(t, err, ErrNoSubject, "never an unrestricted query")
	_, err = m.List(ctx, inventory.ListRequest{Limit: 2}) // called directly, without a caller
	assert.ErrorIs(t, err, ErrNoSubject, "nil: no caller, no records (it panicked before the check of nil)")
	assert.Equal(t, []inventory.Entry{rec(2)}, m.Records("bob"))
}

func TestMemorySourceConcurrent(t *testing.T) {
	m := NewMemorySource()
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				e := rec(w*1000 + i)
				m.Insert("alice", e)
				if i%3 == 0 {
					m.Delete("alice", e.Key)
				}
				_, err := m.List(context.Background(), inventory.ListRequest{After: fmt.Sprintf("k%03d", i), Limit: 10, Principal: &alice})
				assert.NoError(t, err)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 4*(200-67), m.Len("alice"))
	CheckList(t, tmpl(m.List), alice, Options{})
}
