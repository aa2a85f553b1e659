package inventory_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/principal"
)

// callerLog records the caller of every callback call, by callback.
type callerLog struct {
	mu  sync.Mutex
	got map[string][]*principal.Principal
}

func (l *callerLog) add(kind string, p *principal.Principal) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.got == nil {
		l.got = map[string][]*principal.Principal{}
	}
	l.got[kind] = append(l.got[kind], p)
}

// callerInventory has a public static, a protected list and search
// source owned by the subject, another owned by the client, and a public
// template with a completion callback: every callback records its caller.
func callerInventory(t *testing.T, log *callerLog) *inventory.Inventory {
	t.Helper()
	list := func(kind, base string) inventory.ListFunc {
		return func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
			log.add(kind, req.Principal)
			if req.After != "" {
				return inventory.Page{}, nil
			}
			return inventory.Page{Entries: []inventory.Entry{{Key: "k1", URI: base + "1", Name: "One"}}, HasMore: true}, nil
		}
	}
	search := func(kind string) inventory.SearchFunc {
		return func(_ context.Context, req inventory.SearchRequest) ([]inventory.SearchHit, error) {
			log.add(kind, req.Principal)
			return nil, nil
		}
	}
	read := func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
		log.add("read", req.Principal)
		return []inventory.Contents{{URI: req.URI, Text: "x"}}, nil
	}
	complete := func(_ context.Context, req inventory.CompleteRequest) (inventory.Completion, error) {
		log.add("complete", req.Principal)
		return inventory.Completion{}, nil
	}
	inv, err := inventory.New([]inventory.Resource{{URI: "docs://readme", Name: "Readme", Access: inventory.Public, Read: read}},
		[]inventory.Template{
			{Name: "mine", URITemplate: "docs://mine/{id}", Read: read, List: list("list", "docs://mine/"), Search: search("search"), Complete: map[string]inventory.CompleteFunc{"id": complete}},
			{Name: "apps", URITemplate: "docs://apps/{id}", Owner: inventory.OwnedByClient, Read: read, List: list("list-client", "docs://apps/"), Search: search("search-client")},
			{Name: "open", URITemplate: "docs://open/{id}", Access: inventory.Public, Read: read, Complete: map[string]inventory.CompleteFunc{"id": complete}},
		}, inventory.Options{PageSize: 1})
	require.NoError(t, err)
	return inv
}

// One spelling of the caller at every callback (*principal.Principal),
// and the promise of ListRequest and SearchRequest kept: an anonymous
// caller never reaches a list or search source (List and Search answer
// principal.ErrUnauthenticated first), and a caller without the identity
// a source keys on (a client-credentials token has no subject) never
// reaches that source. Read and Complete see nil only on a public
// resource or template. Every callback gets the caller the kit was given.
func TestCallbacksGetTheCallerAsAPointer(t *testing.T) {
	ctx := context.Background()
	alice := &principal.Principal{Subject: "alice", ClientID: "app", Scopes: []string{"s"}}
	service := &principal.Principal{ClientID: "batch"} // client credentials: no subject
	for _, caller := range []*principal.Principal{nil, service, alice} {
		var log callerLog
		inv := callerInventory(t, &log)

		cursor := ""
		for range 10 {
			next, err := inv.List(ctx, caller, cursor, nil)
			if caller == nil {
				require.ErrorIs(t, err, principal.ErrUnauthenticated)
				break
			}
			require.NoError(t, err)
			if cursor = next; next == "" {
				break
			}
		}
		_, err := inv.Search(ctx, caller, "one", 10)
		if caller == nil {
			require.ErrorIs(t, err, principal.ErrUnauthenticated)
		} else {
			require.NoError(t, err)
		}
		_, err = inv.Read(ctx, caller, "docs://readme")
		require.NoError(t, err)
		_, err = inv.Read(ctx, caller, "docs://open/1")
		require.NoError(t, err)
		_, err = inv.Read(ctx, caller, "docs://mine/1")
		if caller == nil {
			require.ErrorIs(t, err, principal.ErrUnauthenticated, "a protected template needs a caller")
		}
		_, err = inv.Complete(ctx, caller, "docs://open/{id}", "id", "", nil)
		require.NoError(t, err)
		_, err = inv.Complete(ctx, caller, "docs://mine/{id}", "id", "", nil)
		if caller == nil {
			require.ErrorIs(t, err, principal.ErrUnauthenticated)
		}

		for kind, got := range log.got {
			for _, p := range got {
				assert.Same(t, caller, p, "%s: the caller the kit was given", kind)
			}
		}
		switch caller {
		case nil:
			assert.Empty(t, log.got["list"], "no list source is asked for an anonymous caller")
			assert.Empty(t, log.got["list-client"])
			assert.Empty(t, log.got["search"], "no search source either")
			assert.Empty(t, log.got["search-client"])
			assert.Len(t, log.got["read"], 2, "the public static and template are read for nil")
			assert.Len(t, log.got["complete"], 1, "the public template completes for nil")
		case service:
			assert.Empty(t, log.got["list"], "a source keyed on the subject is never asked without one")
			assert.Empty(t, log.got["search"])
			assert.Len(t, log.got["list-client"], 2, "two pages")
			assert.Len(t, log.got["search-client"], 1)
		case alice:
			assert.Len(t, log.got["list"], 2)
			assert.Len(t, log.got["list-client"], 2)
			assert.Len(t, log.got["search"], 1)
			assert.Len(t, log.got["search-client"], 1)
			assert.Len(t, log.got["complete"], 2)
		}
	}
}
