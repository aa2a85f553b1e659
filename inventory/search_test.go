package inventory_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
)

// searchable is a search source over fixed hits per subject, recording
// what it was asked.
type searchable struct {
	hits  map[string][]inventory.SearchHit // subject → hits
	asked []inventory.SearchRequest
	err   error
	panic bool
}

func (s *searchable) search(_ context.Context, req inventory.SearchRequest) ([]inventory.SearchHit, error) {
	s.asked = append(s.asked, req)
	if s.panic {
		panic("search exploded")
	}
	if s.err != nil {
		return nil, s.err
	}
	hs := s.hits[req.Principal.Subject]
	return hs[:min(len(hs), req.Limit)], nil
}

func docHit(id string) inventory.SearchHit {
	return inventory.SearchHit{URI: "docs://documents/" + id, Name: "Document " + id}
}

func noteHit(id string) inventory.SearchHit {
	return inventory.SearchHit{URI: "docs://notes/" + id, Name: "Note " + id}
}

// searchFixture is an inventory with searchable documents and notes.
func searchFixture(t *testing.T, docs, notes *searchable, opts inventory.Options) (*inventory.Inventory, *logBuffer) {
	t.Helper()
	lb := &logBuffer{}
	opts.Logger = lb.logger()
	d := docsTemplate(inventorytest.NewMemorySource().List)
	d.Search = docs.search
	n := notesTemplate(inventorytest.NewMemorySource().List)
	if notes != nil {
		n.Search = notes.search
	}
	inv, err := inventory.New(statics(), []inventory.Template{d, n}, opts)
	require.NoError(t, err)
	return inv, lb
}

func TestSearchRegistryRules(t *testing.T) {
	s := (&searchable{}).search
	for _, tc := range []struct {
		name string
		tmpl inventory.Template
	}{
		// A public template's callbacks may get anonymous callers: no
		// ownership to search by.
		{"public", inventory.Template{Name: "p", URITemplate: "p://{id}", Access: inventory.Public, Read: readEcho, Search: s}},
		// A hidden template must not reveal its URIs through search.
		{"hidden", inventory.Template{Name: "h", URITemplate: "h://{id}", Hidden: true, Read: readEcho, Search: s}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := inventory.New(nil, []inventory.Template{tc.tmpl}, inventory.Options{})
			assert.ErrorContains(t, err, "Search")
		})
	}
}

func TestSearchOwnershipOrderAndLimits(t *testing.T) {
	docs := &searchable{hits: map[string][]inventory.SearchHit{
		"alice": {docHit("a1"), docHit("a2"), docHit("a3")},
		"bob":   {docHit("b1")},
	}}
	notes := &searchable{hits: map[string][]inventory.SearchHit{"alice": {noteHit("n1"), noteHit("n2")}}}
	inv, _ := searchFixture(t, docs, notes, inventory.Options{})
	ctx := context.Background()
	require.True(t, inv.HasSearch())

	hits, err := inv.Search(ctx, alice(), "report", 4)
	require.NoError(t, err)
	assert.Equal(t, []inventory.SearchHit{docHit("a1"), docHit("a2"), docHit("a3"), noteHit("n1")}, hits,
		"sources in registration order, the second gets the room left")
	require.Len(t, notes.asked, 1)
	assert.Equal(t, 1, notes.asked[0].Limit)
	assert.Equal(t, "alice", notes.asked[0].Principal.Subject)
	assert.Equal(t, "report", notes.asked[0].Query)

	hits, err = inv.Search(ctx, bob(), "report", 10)
	require.NoError(t, err)
	assert.Equal(t, []inventory.SearchHit{docHit("b1")}, hits, "bob lacks notes:read: the notes source is skipped")

	docs.asked, notes.asked = nil, nil
	hits, err = inv.Search(ctx, alice(), "report", 3)
	require.NoError(t, err)
	assert.Len(t, hits, 3)
	assert.Empty(t, notes.asked, "a full answer asks no further source")
}

func TestSearchRefusals(t *testing.T) {
	docs := &searchable{hits: map[string][]inventory.SearchHit{"alice": {docHit("a1")}}}
	inv, _ := searchFixture(t, docs, nil, inventory.Options{})
	ctx := context.Background()
	var pe *inventory.ParamsError
	var se *principal.ScopeError
	for _, tc := range []struct {
		name   string
		caller *principal.Principal
		query  string
		limit  int
		check  func(t *testing.T, err error)
	}{
		{"anonymous", nil, "x", 10, func(t *testing.T, err error) { assert.ErrorIs(t, err, principal.ErrUnauthenticated) }},
		{"empty query", alice(), "", 10, func(t *testing.T, err error) { assert.ErrorAs(t, err, &pe) }},
		// 1025 code units: one over the limit.
		{"long query", alice(), strings.Repeat("q", 1025), 10, func(t *testing.T, err error) { assert.ErrorAs(t, err, &pe) }},
		// 513 emoji are 1026 UTF-16 code units, though 2052 bytes would be
		// the naive byte count and 513 the rune count.
		{"long query in code units", alice(), strings.Repeat("😀", 513), 10, func(t *testing.T, err error) { assert.ErrorAs(t, err, &pe) }},
		// A control character could smuggle syntax into a log line or a
		// query the application builds.
		{"control character", alice(), "a\nb", 10, func(t *testing.T, err error) { assert.ErrorAs(t, err, &pe) }},
		{"invalid UTF-8", alice(), "a\xffb", 10, func(t *testing.T, err error) { assert.ErrorAs(t, err, &pe) }},
		{"zero limit", alice(), "x", 0, func(t *testing.T, err error) { assert.ErrorAs(t, err, &pe) }},
		{"limit over the maximum", alice(), "x", inventory.MaxSearchLimit + 1, func(t *testing.T, err error) { assert.ErrorAs(t, err, &pe) }},
		// A service token without a subject never reaches a subject-owned
		// source: no hits, and no unrestricted query.
		{"no subject", &principal.Principal{ClientID: "svc", Scopes: []string{"docs:read"}}, "x", 10, func(t *testing.T, err error) { assert.NoError(t, err) }},
		{"missing scope", &principal.Principal{Subject: "carol"}, "x", 10, func(t *testing.T, err error) {
			require.ErrorAs(t, err, &se)
			assert.Equal(t, []string{"docs:read"}, se.Required)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			docs.asked = nil
			hits, err := inv.Search(ctx, tc.caller, tc.query, tc.limit)
			tc.check(t, err)
			assert.Empty(t, hits)
			assert.Empty(t, docs.asked, "the callback is never called")
		})
	}
	hits, err := inv.Search(ctx, alice(), strings.Repeat("😀", 512), 10)
	require.NoError(t, err, "512 emoji are 1024 code units: the longest query")
	assert.Len(t, hits, 1)
}

func TestSearchContract(t *testing.T) {
	long := strings.Repeat("n", 513)
	for _, tc := range []struct {
		name string
		hits []inventory.SearchHit
		rule inventory.Rule
	}{
		{"more hits than the limit", []inventory.SearchHit{docHit("1"), docHit("2"), docHit("3")}, inventory.RuleTooManyEntries},
		// A callback that returns another template's URI would let search
		// point at records its own source does not serve.
		{"URI of another template", []inventory.SearchHit{noteHit("1")}, inventory.RuleURIMatch},
		{"empty URI", []inventory.SearchHit{{Name: "x"}}, inventory.RuleURIEmpty},
		{"empty name", []inventory.SearchHit{{URI: "docs://documents/1"}}, inventory.RuleNameEmpty},
		{"long name", []inventory.SearchHit{{URI: "docs://documents/1", Name: long}}, inventory.RuleNameLength},
		{"duplicate URI", []inventory.SearchHit{docHit("1"), docHit("1")}, inventory.RuleURIDuplicate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := func(context.Context, inventory.SearchRequest) ([]inventory.SearchHit, error) { return tc.hits, nil }
			lb := &logBuffer{}
			d := docsTemplate(nil)
			d.Search = bad
			inv, err := inventory.New(nil, []inventory.Template{d}, inventory.Options{Logger: lb.logger()})
			require.NoError(t, err)
			hits, err := inv.Search(context.Background(), alice(), "x", 2)
			assert.Same(t, inventory.ErrInternal, err)
			assert.Empty(t, hits)
			recs := lb.records(t)
			require.Len(t, recs, 1)
			assert.Equal(t, string(tc.rule), recs[0]["rule"])
			assert.Equal(t, "documents", recs[0]["source"])
			assert.NotContains(t, lb.String(), "Document", "no names in the log")
		})
	}
	for _, tc := range []struct {
		name string
		s    *searchable
		rule inventory.Rule
	}{
		{"error", &searchable{err: errors.New("db down: secret dsn")}, inventory.RuleCallbackError},
		{"panic", &searchable{panic: true}, inventory.RuleCallbackPanic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, lb := searchFixture(t, tc.s, nil, inventory.Options{})
			_, err := inv.Search(context.Background(), alice(), "x", 2)
			assert.Same(t, inventory.ErrInternal, err, "the cause stays in the log")
			recs := lb.records(t)
			require.Len(t, recs, 1)
			assert.Equal(t, string(tc.rule), recs[0]["rule"])
		})
	}
}

func TestSearchGates(t *testing.T) {
	docs := &searchable{hits: map[string][]inventory.SearchHit{"alice": {docHit("a1")}, "bob": {docHit("b1")}}}
	lb := &logBuffer{}
	d := docsTemplate(nil)
	d.Search = docs.search
	d.Gates = []string{"beta"}
	inv, err := inventory.New(nil, []inventory.Template{d}, inventory.Options{Logger: lb.logger(), Gates: []inventory.Gate{{Name: "beta"}}})
	require.NoError(t, err)
	ctx := context.Background()

	hits, err := inv.Search(ctx, alice(), "x", 10)
	require.NoError(t, err, "a hidden source is skipped, never a scope challenge")
	assert.Empty(t, hits)
	assert.Empty(t, docs.asked)
	r, err := inv.Reach(ctx, alice())
	require.NoError(t, err)
	assert.False(t, r.Search)
	assert.Empty(t, r.Templates)

	_, err = inv.Authorize(ctx, "alice", "beta")
	require.NoError(t, err)
	hits, err = inv.Search(ctx, alice(), "x", 10)
	require.NoError(t, err)
	assert.Equal(t, []inventory.SearchHit{docHit("a1")}, hits)
	r, err = inv.Reach(ctx, alice())
	require.NoError(t, err)
	assert.True(t, r.Search)
	assert.Equal(t, []string{"documents"}, r.Templates)

	hits, err = inv.Search(ctx, bob(), "x", 10)
	require.NoError(t, err)
	assert.Empty(t, hits, "alice's grant opens nothing for bob")
}

func TestReach(t *testing.T) {
	docs := &searchable{}
	inv, _ := searchFixture(t, docs, nil, inventory.Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		caller *principal.Principal
		want   inventory.Reach
	}{
		// Anonymous: the public README is readable; resources/list needs a
		// token once list sources exist.
		{"anonymous", nil, inventory.Reach{Read: true}},
		{"alice", alice(), inventory.Reach{List: true, Read: true, Search: true, Templates: []string{"documents", "notes"}}},
		{"bob", bob(), inventory.Reach{List: true, Read: true, Search: true, Templates: []string{"documents"}}},
		// No scopes: resources/list would answer 403; the public README
		// stays readable.
		{"no scopes", &principal.Principal{Subject: "carol"}, inventory.Reach{Read: true}},
		// A client-credentials token: no subject, so no subject-owned
		// template, but the scoped static resource.
		{"no subject", &principal.Principal{ClientID: "svc", Scopes: []string{"docs:read"}}, inventory.Reach{List: true, Read: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := inv.Reach(ctx, tc.caller)
			require.NoError(t, err)
			assert.Equal(t, tc.want, r)
		})
	}
}

func TestTemplateInfo(t *testing.T) {
	inv, _ := searchFixture(t, &searchable{}, nil, inventory.Options{})
	ti, ok := inv.Template("documents")
	require.True(t, ok)
	assert.Equal(t, "docs://documents/{id}", ti.URITemplate)
	assert.Equal(t, []string{"id"}, ti.Variables)
	assert.Equal(t, inventory.Protected, ti.Access)
	_, ok = inv.Template("docs://documents/{id}")
	assert.False(t, ok, "by name, not by pattern")
}

// TestReadTitleNotChecked: resources/read never sends Contents.Title, so
// no title can fail a read; the tools bridge cleans it for fetch.
func TestReadTitleNotChecked(t *testing.T) {
	for _, title := range []string{"Quarterly report", strings.Repeat("t", 513), "a\x1bb", "\xff"} {
		read := func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			return []inventory.Contents{{URI: req.URI, Text: "x", Title: title}}, nil
		}
		inv, err := inventory.New(nil, []inventory.Template{{Name: "d", URITemplate: "docs://documents/{id}", Read: read}}, inventory.Options{})
		require.NoError(t, err)
		cs, err := inv.Read(context.Background(), alice(), "docs://documents/1")
		require.NoError(t, err)
		assert.Equal(t, title, cs[0].Title)
	}
}
