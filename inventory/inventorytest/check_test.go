package inventorytest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
)

var alice = principal.Principal{Subject: "alice", Scopes: []string{"docs:read"}}

func rec(i int) inventory.Entry {
	return inventory.Entry{Key: fmt.Sprintf("k%03d", i), URI: fmt.Sprintf("docs://documents/%d", i), Name: fmt.Sprintf("Doc %d", i)}
}

func records(n int) []inventory.Entry {
	out := make([]inventory.Entry, n)
	for i := range out {
		out[i] = rec(i + 1)
	}
	return out
}

// sliceSource is a correct keyset source over sorted records.
func sliceSource(recs []inventory.Entry) inventory.ListFunc {
	return func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
		i := sort.Search(len(recs), func(i int) bool { return recs[i].Key > req.After })
		end := min(i+req.Limit, len(recs))
		return inventory.Page{Entries: append([]inventory.Entry(nil), recs[i:end]...), HasMore: end < len(recs)}, nil
	}
}

func tmpl(list inventory.ListFunc) inventory.Template {
	return inventory.Template{Name: "documents", URITemplate: "docs://documents/{id}", List: list,
		Read: inventory.TextReader("text/plain", "")}
}

// withRecord returns a source of 30 records where the entry of record i
// is changed by f on its way out (the lookup still sees the good key).
func withRecord(i int, f func(*inventory.Entry)) inventory.ListFunc {
	good := sliceSource(records(30))
	key := rec(i + 1).Key
	return func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
		p, err := good(ctx, req)
		for j := range p.Entries {
			if p.Entries[j].Key == key {
				f(&p.Entries[j])
			}
		}
		return p, err
	}
}

func TestCheckAcceptsCorrectSources(t *testing.T) {
	for _, n := range []int{0, 1, 7, 49, 50, 100, 250} {
		vs, err := Check(context.Background(), tmpl(sliceSource(records(n))), alice, Options{})
		require.NoError(t, err)
		assert.Empty(t, vs, "%d records", n)
	}
	m := NewMemorySource()
	for _, r := range records(120) {
		m.Insert("alice", r)
	}
	m.Insert("bob", rec(500))
	CheckList(t, tmpl(m.List), alice, Options{})
}

// TestCheckFindsEachViolation gives the checker a deliberately broken
// source per rule and expects that rule, with the page and entry.
func TestCheckFindsEachViolation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		list  inventory.ListFunc
		opts  Options
		rule  inventory.Rule
		page  int // expected page of the first violation in the walk with page size 1 (-1: any)
		entry int
	}{
		{"too many entries", func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
			req.Limit++ // the classic: the extra row is returned
			return sliceSource(records(30))(ctx, req)
		}, Options{}, inventory.RuleTooManyEntries, 0, -1},
		{"has more on an empty page", func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
			p, err := sliceSource(records(3))(ctx, req)
			p.HasMore = true // "there might be more"
			return p, err
		}, Options{}, inventory.RuleHasMoreEmpty, 3, -1},
		{"empty key", (withRecord(0, func(e *inventory.Entry) { e.Key = "" })), Options{}, inventory.RuleKeyLength, 0, 0},
		{"long key", (withRecord(29, func(e *inventory.Entry) { e.Key = "k029~" + strings.Repeat("z", 300) })), Options{}, inventory.RuleKeyLength, 29, 0},
		{"key with a space", (withRecord(4, func(e *inventory.Entry) { e.Key = "k004 b" })), Options{}, inventory.RuleKeyCharset, 4, 0},
		{"keys in another order", func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
			p, err := sliceSource(records(30))(ctx, req)
			if len(p.Entries) > 1 {
				p.Entries[0], p.Entries[1] = p.Entries[1], p.Entries[0]
			}
			return p, err
		}, Options{PageSizes: []int{7}}, inventory.RuleKeyOrder, 0, 1},
		{"After ignored", func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
			req.After = "" // OFFSET-less restart
			return sliceSource(records(30))(ctx, req)
		}, Options{}, inventory.RuleKeyAfter, 1, 0},
		{"After inclusive", func(ctx context.Context, req inventory.ListRequest) (inventory.Page, error) {
			if req.After != "" { // >= instead of >
				req.After = req.After[:len(req.After)-1] + string(req.After[len(req.After)-1]-1) + "~"
			}
			return sliceSource(records(30))(ctx, req)
		}, Options{}, inventory.RuleKeyAfter, 1, 0},
		{"empty URI", (withRecord(2, func(e *inventory.Entry) { e.URI = "" })), Options{}, inventory.RuleURIEmpty, 2, 0},
		{"long URI", (withRecord(2, func(e *inventory.Entry) { e.URI = "docs://documents/" + strings.Repeat("9", 2100) })), Options{}, inventory.RuleURILength, 2, 0},
		{"URI of another template", (withRecord(2, func(e *inventory.Entry) { e.URI = "docs://notes/3" })), Options{}, inventory.RuleURIMatch, 2, 0},
		{"URI not percent-encoded", (withRecord(2, func(e *inventory.Entry) { e.URI = "docs://documents/a b" })), Options{}, inventory.RuleURIMatch, 2, 0},
		{"URI twice in a page", (withRecord(2, func(e *inventory.Entry) { e.URI = "docs://documents/2" })), Options{PageSizes: []int{7}}, inventory.RuleURIDuplicate, 0, 2},
		{"URI twice in a walk", (withRecord(20, func(e *inventory.Entry) { e.URI = "docs://documents/2" })), Options{}, RuleURIRepeated, 20, 0},
		{"empty name", (withRecord(5, func(e *inventory.Entry) { e.Name = "" })), Options{}, inventory.RuleNameEmpty, 5, 0},
		{"long name", (withRecord(5, func(e *inventory.Entry) { e.Name = strings.Repeat("n", 513) })), Options{}, inventory.RuleNameLength, 5, 0},
		{"name with a newline", (withRecord(5, func(e *inventory.Entry) { e.Name = "a\nb" })), Options{}, inventory.RuleNameInvalid, 5, 0},
		{"long MIME type", (withRecord(6, func(e *inventory.Entry) { e.MIMEType = "text/" + strings.Repeat("x", 130) })), Options{}, inventory.RuleMIMELength, 6, 0},
		{"bad MIME type", (withRecord(6, func(e *inventory.Entry) { e.MIMEType = "markdown" })), Options{}, inventory.RuleMIMESyntax, 6, 0},
		{"never ends", func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
			n := len(req.After)
			return inventory.Page{Entries: []inventory.Entry{{Key: req.After + "a", URI: fmt.Sprintf("docs://documents/%d", n), Name: "x"}}, HasMore: true}, nil
		}, Options{MaxPages: 50}, RuleNoEnd, 50, -1},
		{"walks differ", func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
			// Off by one at page boundaries: skips the record right
			// after the cursor. Every page looks valid; the walks lose
			// different records.
			recs := records(30)
			i := sort.Search(len(recs), func(i int) bool { return recs[i].Key > req.After })
			if req.After != "" {
				i = min(i+1, len(recs))
			}
			end := min(i+req.Limit, len(recs))
			return inventory.Page{Entries: recs[i:end], HasMore: end < len(recs)}, nil
		}, Options{}, RuleWalksDiffer, -1, -1},
		{"panic", func(context.Context, inventory.ListRequest) (inventory.Page, error) {
			var m map[string]int
			//lint:ignore SA5000 the write to a nil map is the runtime panic this case feeds the checker
			m["x"]++
			return inventory.Page{}, nil
		}, Options{}, RulePanic, 0, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs, err := Check(context.Background(), tmpl(tc.list), alice, tc.opts)
			require.NoError(t, err)
			require.NotEmpty(t, vs, "the checker must find the violation")
			rules := make([]inventory.Rule, len(vs))
			for i, v := range vs {
				rules[i] = v.Rule
			}
			assert.Contains(t, rules, tc.rule)
			v := vs[0]
			if tc.page >= 0 {
				assert.Equal(t, tc.rule, v.Rule)
				assert.Equal(t, tc.page, v.Page, "page: %s", v)
				assert.Equal(t, tc.entry, v.Entry, "entry: %s", v)
			}
			assert.NotEmpty(t, v.String())
		})
	}
}

func TestCheckReportsErrors(t *testing.T) {
	_, err := Check(context.Background(), inventory.Template{Name: "x", URITemplate: "x://{id}"}, alice, Options{})
	assert.Error(t, err, "no List")
	_, err = Check(context.Background(), tmpl(sliceSource(nil)), alice, Options{PageSizes: []int{0}})
	assert.Error(t, err, "page size out of range")
	bad := tmpl(sliceSource(nil))
	bad.URITemplate = "x://{?q"
	_, err = Check(context.Background(), bad, alice, Options{})
	assert.Error(t, err, "invalid template")
	backend := errors.New("db down")
	_, err = Check(context.Background(), tmpl(func(context.Context, inventory.ListRequest) (inventory.Page, error) {
		return inventory.Page{}, backend
	}), alice, Options{})
	assert.ErrorIs(t, err, backend)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	m := NewMemorySource()
	_, err = Check(ctx, tmpl(m.List), alice, Options{})
	assert.ErrorIs(t, err, context.Canceled, "the context reaches the callback")
}

// CheckList fails the test it is given for a broken source.
func TestCheckListFailsTheTest(t *testing.T) {
	rt := &recordingTB{TB: t}
	CheckList(rt, tmpl((withRecord(3, func(e *inventory.Entry) { e.Name = "" }))), alice, Options{PageSizes: []int{1}})
	require.Len(t, rt.errors, 1)
	assert.Contains(t, rt.errors[0], "name-empty")
	assert.Contains(t, rt.errors[0], "page 3")
}

type recordingTB struct {
	testing.TB
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}
func (r *recordingTB) Helper() {}
