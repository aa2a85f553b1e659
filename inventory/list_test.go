package inventory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
)

func TestListStaticsThenSourcesInOrder(t *testing.T) {
	f := newFixture(t, inventory.Options{PageSize: 4})
	for i := 1; i <= 3; i++ {
		f.docs.Insert("alice", docEntry(i))
		f.notes.Insert("alice", noteEntry(i))
		f.docs.Insert("bob", docEntry(100+i))
	}
	all, pages := walkAll(t, f.inv, alice())
	assert.Equal(t, []string{
		"docs://readme", "docs://policy",
		"docs://documents/d0001", "docs://documents/d0002", "docs://documents/d0003",
		"docs://notes/n1", "docs://notes/n2", "docs://notes/n3",
	}, all)
	assert.Equal(t, 2, pages, "8 items at 4 a page: the page size counts statics and entries together")
}

func TestListSkipsSourcesTheCallerMayNotUse(t *testing.T) {
	f := newFixture(t, inventory.Options{})
	f.docs.Insert("bob", docEntry(1))
	f.notes.Insert("bob", noteEntry(1)) // bob lacks notes:read
	all, _ := walkAll(t, f.inv, bob())
	assert.Equal(t, []string{"docs://readme", "docs://policy", "docs://documents/d0001"}, all)
}

func TestListRequiresAuthenticationWithSources(t *testing.T) {
	f := newFixture(t, inventory.Options{})
	_, err := listWire(context.Background(), f.inv, nil, "", testEnv)
	assert.ErrorIs(t, err, principal.ErrUnauthenticated)
}

func TestListScopeErrorNamesTheClosestSource(t *testing.T) {
	tmpls := []inventory.Template{
		{Name: "a", URITemplate: "a://{id}", RequiredScopes: []string{"a1", "a2", "a3"}, Read: readEcho, List: emptyList},
		{Name: "b", URITemplate: "b://{id}", RequiredScopes: []string{"b1", "b2"}, Read: readEcho, List: emptyList},
		{Name: "c", URITemplate: "c://{id}", RequiredScopes: []string{"c1", "c2"}, Read: readEcho, List: emptyList},
	}
	inv, err := inventory.New(nil, tmpls, inventory.Options{})
	require.NoError(t, err)
	for _, tc := range []struct {
		scopes []string
		want   []string
	}{
		{nil, []string{"b1", "b2"}},                        // b and c miss 2: b registered first
		{[]string{"c1"}, []string{"c1", "c2"}},             // c misses 1
		{[]string{"a1", "a2"}, []string{"a1", "a2", "a3"}}, // a misses 1, first registered
	} {
		_, err := listWire(context.Background(), inv, &principal.Principal{Subject: "s", Scopes: tc.scopes}, "", testEnv)
		var se *principal.ScopeError
		require.ErrorAs(t, err, &se)
		assert.ErrorIs(t, err, principal.ErrInsufficientScope)
		assert.Equal(t, tc.want, se.Required, "scopes %v", tc.scopes)
	}
}

func emptyList(context.Context, inventory.ListRequest) (inventory.Page, error) {
	return inventory.Page{}, nil
}

func TestListWithoutSources(t *testing.T) {
	inv, err := inventory.New(statics(), nil, inventory.Options{})
	require.NoError(t, err)
	assert.False(t, inv.HasListSources())
	anon, _ := walkAll(t, inv, nil)
	assert.Equal(t, []string{"docs://readme"}, anon, "anonymous callers see public statics only")
	signed, _ := walkAll(t, inv, bob())
	assert.Equal(t, []string{"docs://readme", "docs://policy"}, signed)
	none, _ := walkAll(t, inv, &principal.Principal{Subject: "eve"})
	assert.Equal(t, []string{"docs://readme"}, none, "protected statics need their scopes")

	empty, err := inventory.New(nil, nil, inventory.Options{})
	require.NoError(t, err)
	l, out := page(t, empty, nil, "")
	assert.Empty(t, l.Resources)
	assert.Nil(t, l.NextCursor)
	assert.JSONEq(t, `{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}`, string(out))
}

// recordingSource wraps a ListFunc and records each request.
type recordingSource struct {
	mu   sync.Mutex
	reqs []inventory.ListRequest
	next inventory.ListFunc
}

func (r *recordingSource) List(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, req)
	r.mu.Unlock()
	return r.next(ctx, req)
}

func TestListLimitIsTheRoomLeftAndSourcesHandOver(t *testing.T) {
	f := newFixture(t, inventory.Options{PageSize: 10})
	docs := &recordingSource{next: f.docs.List}
	notes := &recordingSource{next: f.notes.List}
	inv, err := inventory.New(statics(), []inventory.Template{docsTemplate(docs.List), notesTemplate(notes.List)}, inventory.Options{PageSize: 10, Sealer: f.sealer})
	require.NoError(t, err)
	for i := 1; i <= 3; i++ {
		f.docs.Insert("alice", docEntry(i))
	}
	for i := 1; i <= 20; i++ {
		f.notes.Insert("alice", noteEntry(i))
	}
	l, _ := page(t, inv, alice(), "")
	require.Len(t, l.Resources, 10)
	require.Len(t, docs.reqs, 1)
	assert.Equal(t, 8, docs.reqs[0].Limit, "10 minus 2 statics")
	assert.Equal(t, "", docs.reqs[0].After)
	assert.Equal(t, "alice", docs.reqs[0].Principal.Subject)
	require.Len(t, notes.reqs, 1, "documents ended with room left: notes fill the same page")
	assert.Equal(t, 5, notes.reqs[0].Limit)
	require.NotNil(t, l.NextCursor)

	l, _ = page(t, inv, alice(), *l.NextCursor)
	require.Len(t, docs.reqs, 1, "the cursor points into notes: documents is not called again")
	require.Len(t, notes.reqs, 2)
	assert.Equal(t, "n000005", notes.reqs[1].After)
	assert.Equal(t, 10, notes.reqs[1].Limit)
	assert.Equal(t, "docs://notes/n6", l.Resources[0].URI)
}

func TestListCallsAgainWhenASourceReturnsShortPagesWithMore(t *testing.T) {
	f := newFixture(t, inventory.Options{})
	for i := 1; i <= 9; i++ {
		f.docs.Insert("alice", docEntry(i))
	}
	// A source that returns at most 2 entries per call, truthfully saying
	// more may follow.
	stingy := &recordingSource{next: func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
		req.Limit = min(req.Limit, 2)
		return f.docs.List(ctx, req)
	}}
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(stingy.List)}, inventory.Options{PageSize: 5, Sealer: f.sealer})
	require.NoError(t, err)
	l, _ := page(t, inv, alice(), "")
	assert.Len(t, l.Resources, 5)
	require.Len(t, stingy.reqs, 3)
	assert.Equal(t, []int{5, 3, 1}, []int{stingy.reqs[0].Limit, stingy.reqs[1].Limit, stingy.reqs[2].Limit})
	assert.Equal(t, []string{"", "k000002", "k000004"}, []string{stingy.reqs[0].After, stingy.reqs[1].After, stingy.reqs[2].After})
	all, _ := walkAll(t, inv, alice())
	assert.Len(t, all, 9)
}

func TestListEntryMIMETypeInheritsTheTemplates(t *testing.T) {
	f := newFixture(t, inventory.Options{})
	f.docs.Insert("alice", docEntry(1))
	f.notes.Insert("alice", noteEntry(1))
	l, _ := page(t, f.inv, alice(), "")
	require.Len(t, l.Resources, 4)
	assert.Equal(t, "text/plain", l.Resources[2].MIMEType, "empty entry MIME type: the template's")
	assert.Equal(t, "text/markdown", l.Resources[3].MIMEType, "the entry's own")
}

func TestListEnvelopeMeta(t *testing.T) {
	f := newFixture(t, inventory.Options{PageSize: 2})
	f.docs.Insert("alice", docEntry(1))
	env := envelope{
		Head: []byte(`{"jsonrpc":"2.0","id":"x","result":`), Tail: []byte(`}`),
		Meta: []byte(`"ttlMs":0,"cacheScope":"private"`),
	}
	out, err := listWire(context.Background(), f.inv, alice(), "", env)
	require.NoError(t, err)
	var resp struct {
		Result struct {
			Resources  []json.RawMessage `json:"resources"`
			NextCursor string            `json:"nextCursor"`
			TTL        *int              `json:"ttlMs"`
			Scope      string            `json:"cacheScope"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(out, &resp), "%s", out)
	assert.Len(t, resp.Result.Resources, 2)
	assert.NotEmpty(t, resp.Result.NextCursor)
	assert.Equal(t, "private", resp.Result.Scope)
	require.NotNil(t, resp.Result.TTL)
	assert.Regexp(t, `^\{"jsonrpc":"2.0","id":"x","result":\{"resources":\[.*\],"nextCursor":"[A-Za-z0-9_-]+","ttlMs":0,"cacheScope":"private"\}\}$`, string(out))
}

// List offers each item in order and continues after the last one fit
// accepted: fit decides where a page ends, and an item refused on an empty
// page is an error, never an endless walk.
func TestListFitDecidesThePageEnd(t *testing.T) {
	f := newFixture(t, inventory.Options{PageSize: 3})
	for i := 1; i <= 5; i++ {
		f.docs.Insert("alice", docEntry(i))
	}
	var uris []string
	next, err := f.inv.List(context.Background(), alice(), "", func(it *inventory.Item) bool {
		uris = append(uris, it.URI)
		return true
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"docs://readme", "docs://policy", "docs://documents/d0001"}, uris, "statics first, at most the page size")
	require.NotEmpty(t, next)

	// fit takes two items of the next page: the one after continues there.
	uris = nil
	taken := 0
	next2, err := f.inv.List(context.Background(), alice(), next, func(it *inventory.Item) bool {
		uris = append(uris, it.URI)
		if taken == 2 {
			return false
		}
		taken++
		assert.Equal(t, "text/plain", it.MIMEType, "the template's MIME type for an entry without one")
		return true
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"docs://documents/d0002", "docs://documents/d0003", "docs://documents/d0004"}, uris, "offered until refused")
	l, _ := page(t, f.inv, alice(), next2)
	assert.Equal(t, []string{"docs://documents/d0004", "docs://documents/d0005"}, l.uris(), "resumes at the refused item")

	// Refused on an empty page: an internal error, logged.
	_, err = f.inv.List(context.Background(), alice(), next, func(*inventory.Item) bool { return false })
	assert.Same(t, inventory.ErrInternal, err)
	assert.Contains(t, f.log.String(), `"rule":"entry-too-large"`)

	// A nil fit takes every item up to the page size.
	next3, err := f.inv.List(context.Background(), alice(), next, nil)
	require.NoError(t, err)
	l, _ = page(t, f.inv, alice(), next3)
	assert.Equal(t, []string{"docs://documents/d0005"}, l.uris())
}

func TestListByteBudget(t *testing.T) {
	// Entries of about 100 bytes; a limit that holds a few of them.
	f := newFixture(t, inventory.Options{})
	for i := 1; i <= 40; i++ {
		f.docs.Insert("alice", docEntry(i))
	}
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(f.docs.List)}, inventory.Options{Sealer: f.sealer})
	require.NoError(t, err)
	l, _ := page(t, inv, alice(), "")
	require.Len(t, l.Resources, 40)
	for _, limit := range []int{900, 1000, 1337, 2000} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			env := testEnv
			env.Limit = limit
			var all []string
			cursor := ""
			for {
				out, err := listWire(context.Background(), inv, alice(), cursor, env)
				require.NoError(t, err)
				assert.LessOrEqual(t, len(out), limit, "the whole response stays within the limit")
				var resp struct {
					Result listed `json:"result"`
				}
				require.NoError(t, json.Unmarshal(out, &resp))
				require.NotEmpty(t, resp.Result.Resources, "every page but possibly the last holds an entry")
				all = append(all, resp.Result.uris()...)
				if resp.Result.NextCursor == nil {
					break
				}
				cursor = *resp.Result.NextCursor
			}
			assert.Equal(t, allDocs(f), all, "byte-full pages resume right after the last entry")
		})
	}
}

func allDocs(f *fixture) []string {
	var out []string
	for _, e := range f.docs.Records("alice") {
		out = append(out, e.URI)
	}
	return out
}

func TestListEntryThatCannotFitIsAnInternalError(t *testing.T) {
	f := newFixture(t, inventory.Options{})
	big := inventory.Entry{Key: "k1", URI: "docs://documents/big", Name: longName(500)}
	f.docs.Insert("alice", big)
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(f.docs.List)}, inventory.Options{Sealer: f.sealer, Logger: f.log.logger()})
	require.NoError(t, err)
	env := testEnv
	env.Limit = 600
	_, err = listWire(context.Background(), inv, alice(), "", env)
	assert.Same(t, inventory.ErrInternal, err)
	assert.Contains(t, f.log.String(), `"rule":"entry-too-large"`)
}

func longName(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = 'n'
	}
	return string(b)
}

func TestListLastPageHasNoCursor(t *testing.T) {
	for _, n := range []int{0, 1, 3, 4, 5, 8} { // around multiples of the page size
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			f := newFixture(t, inventory.Options{PageSize: 4})
			for i := 1; i <= n; i++ {
				f.notes.Insert("alice", noteEntry(i))
			}
			all, pages := walkAll(t, f.inv, alice())
			assert.Len(t, all, n+2)
			assert.LessOrEqual(t, pages, (n+2)/4+1)
		})
	}
}

// The cursor binding holds the scopes as a set: a caller whose scopes
// came in another order (a principal made without principal.New) is the
// same caller.
func TestListScopeOrderIsOneBinding(t *testing.T) {
	f := newFixture(t, inventory.Options{PageSize: 2})
	f.notes.Insert("alice", noteEntry(1))
	p := alice()
	p.Scopes = []string{"notes:read", "docs:read", "docs:read"}
	l, _ := page(t, f.inv, p, "")
	require.NotNil(t, l.NextCursor)
	l, _ = page(t, f.inv, alice(), *l.NextCursor)
	assert.Equal(t, []string{"docs://notes/n1"}, l.uris(), "the same scope set, however ordered, is the same binding")
}

func TestListErrorsAreExactlyTheMappedOnes(t *testing.T) {
	f := newFixture(t, inventory.Options{})
	_, err := listWire(context.Background(), f.inv, alice(), "garbage", testEnv)
	var ce *inventory.CursorError
	require.True(t, errors.As(err, &ce))
	assert.Equal(t, inventory.ReasonInvalid, ce.Reason)
}
