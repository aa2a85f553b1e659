package inventorytest_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
)

func TestCheckGrantsMemoryGrants(t *testing.T) {
	inventorytest.CheckGrantStore(t, grants.NewMemory())
}

// brokenStore is a GrantStore with one deliberate bug.
type brokenStore struct {
	mu                                              sync.Mutex
	by                                              map[string]*grants.Grants
	alwaysChanged, racy, shared, inPlace, noOpError bool
}

func (b *brokenStore) key(subject string) string {
	if b.shared {
		return "everyone"
	}
	return subject
}

func (b *brokenStore) Grants(_ context.Context, subject string) (grants.Grants, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if g := b.by[b.key(subject)]; g != nil {
		return *g, nil
	}
	return grants.Grants{}, nil
}

func (b *brokenStore) Apply(_ context.Context, subject string, c grants.Change) (bool, error) {
	if c.Op < grants.OpAuthorize || c.Op > grants.OpDisable {
		if b.noOpError {
			return false, nil
		}
		return false, assert.AnError
	}
	b.mu.Lock()
	g := b.by[b.key(subject)]
	if g == nil {
		g = &grants.Grants{Overrides: map[string]bool{}}
		b.by[b.key(subject)] = g
	}
	cur := *g
	if !b.inPlace {
		cur.Gates = slices.Clone(cur.Gates)
		o := make(map[string]bool, len(cur.Overrides))
		for k, v := range cur.Overrides {
			o[k] = v
		}
		cur.Overrides = o
	}
	if b.racy {
		b.mu.Unlock()
		time.Sleep(time.Millisecond) // read-modify-write without the lock
		b.mu.Lock()
	}
	defer b.mu.Unlock()
	changed := false
	switch c.Op {
	case grants.OpAuthorize:
		if !slices.Contains(cur.Gates, c.Name) {
			if b.inPlace && len(cur.Gates) > 0 {
				cur.Gates[0], c.Name = c.Name, cur.Gates[0] // reuses the returned array
			}
			cur.Gates, changed = append(cur.Gates, c.Name), true
		}
	case grants.OpRevoke:
		if i := slices.Index(cur.Gates, c.Name); i >= 0 {
			cur.Gates, changed = slices.Delete(cur.Gates, i, i+1), true
		}
	default:
		want := c.Op == grants.OpEnable
		if v, ok := cur.Overrides[c.Name]; !ok || v != want {
			cur.Overrides[c.Name], changed = want, true
		}
	}
	b.by[b.key(subject)] = &cur
	return changed || b.alwaysChanged, nil
}

func TestCheckGrantsFindsBrokenStores(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store *brokenStore
		want  string
	}{
		{"always changed", &brokenStore{alwaysChanged: true}, "reported changed=true, want false"},
		{"lost updates", &brokenStore{racy: true}, "concurrent"},
		{"shared between subjects", &brokenStore{shared: true}, "another subject"},
		{"changes returned grants", &brokenStore{inPlace: true}, "grants returned earlier changed"},
		{"accepts unknown ops", &brokenStore{noOpError: true}, "unknown Op"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.store.by = map[string]*grants.Grants{}
			problems, err := inventorytest.CheckGrants(context.Background(), tc.store)
			require.NoError(t, err)
			require.NotEmpty(t, problems)
			assert.True(t, slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }), "%q", problems)
		})
	}
}

// failingStore fails every call.
type failingStore struct{}

func (failingStore) Grants(context.Context, string) (grants.Grants, error) {
	return grants.Grants{}, assert.AnError
}

func (failingStore) Apply(context.Context, string, grants.Change) (bool, error) {
	return false, assert.AnError
}

func TestCheckGrantsStoreError(t *testing.T) {
	_, err := inventorytest.CheckGrants(context.Background(), failingStore{})
	assert.ErrorIs(t, err, assert.AnError)
}
