package inventory

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory/internal/uritemplate"
)

func docsTemplate() *Template {
	return &Template{Name: "documents", URITemplate: "docs://documents/{id}"}
}

func entry(key, id string) Entry {
	return Entry{Key: key, URI: "docs://documents/" + id, Name: "Document " + id}
}

func TestValidatePageRules(t *testing.T) {
	ok := []Entry{entry("k1", "1"), entry("k2", "2")}
	with := func(i int, f func(*Entry)) []Entry {
		es := append([]Entry(nil), ok...)
		f(&es[i])
		return es
	}
	for _, tc := range []struct {
		name  string
		req   ListRequest
		page  Page
		rule  Rule
		entry int
	}{
		{"valid", ListRequest{Limit: 2}, Page{Entries: ok, HasMore: true}, "", 0},
		{"valid empty", ListRequest{Limit: 2}, Page{}, "", 0},
		{"too many", ListRequest{Limit: 1}, Page{Entries: ok}, RuleTooManyEntries, -1},
		{"has more without entries", ListRequest{Limit: 2}, Page{HasMore: true}, RuleHasMoreEmpty, -1},
		{"empty key", ListRequest{Limit: 2}, Page{Entries: with(1, func(e *Entry) { e.Key = "" })}, RuleKeyLength, 1},
		{"long key", ListRequest{Limit: 2}, Page{Entries: with(1, func(e *Entry) { e.Key = "k" + strings.Repeat("z", 256) })}, RuleKeyLength, 1},
		{"space in key", ListRequest{Limit: 2}, Page{Entries: with(1, func(e *Entry) { e.Key = "k 3" })}, RuleKeyCharset, 1},
		{"non-ASCII key", ListRequest{Limit: 2}, Page{Entries: with(1, func(e *Entry) { e.Key = "k\u00e9" })}, RuleKeyCharset, 1},
		{"keys out of order", ListRequest{Limit: 2}, Page{Entries: with(1, func(e *Entry) { e.Key = "k0" })}, RuleKeyOrder, 1},
		{"keys equal", ListRequest{Limit: 2}, Page{Entries: with(1, func(e *Entry) { e.Key = "k1" })}, RuleKeyOrder, 1},
		{"first key not after", ListRequest{After: "k1", Limit: 2}, Page{Entries: ok}, RuleKeyAfter, 0},
		{"empty URI", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.URI = "" })}, RuleURIEmpty, 0},
		{"long URI", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.URI = "docs://documents/" + strings.Repeat("9", 2040) })}, RuleURILength, 0},
		{"URI of another template", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.URI = "docs://notes/1" })}, RuleURIMatch, 0},
		{"URI duplicate", ListRequest{Limit: 2}, Page{Entries: with(1, func(e *Entry) { e.URI = ok[0].URI })}, RuleURIDuplicate, 1},
		{"empty name", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.Name = "" })}, RuleNameEmpty, 0},
		{"long name", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.Name = strings.Repeat("n", 513) })}, RuleNameLength, 0},
		// Lengths count UTF-16 code units, as the seed (a JavaScript
		// framework) counts them: 171 CJK characters are 513 bytes but 171
		// code units; 512 of them are fine, 513 are not; an emoji counts two.
		{"CJK title over 512 bytes", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.Name = strings.Repeat("文", 171) })}, "", 0},
		{"512 CJK characters", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.Name = strings.Repeat("文", 512) })}, "", 0},
		{"513 CJK characters", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.Name = strings.Repeat("文", 513) })}, RuleNameLength, 0},
		{"256 emoji", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.Name = strings.Repeat("😀", 256) })}, "", 0},
		{"257 emoji", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.Name = strings.Repeat("😀", 257) })}, RuleNameLength, 0},
		{"control in name", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.Name = "a\nb" })}, RuleNameInvalid, 0},
		{"C1 control in name", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.Name = "a\u0085b" })}, RuleNameInvalid, 0},
		{"invalid UTF-8 name", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.Name = "a\xffb" })}, RuleNameInvalid, 0},
		{"long MIME", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.MIMEType = "text/" + strings.Repeat("x", 124) })}, RuleMIMELength, 0},
		{"bad MIME", ListRequest{Limit: 2}, Page{Entries: with(0, func(e *Entry) { e.MIMEType = "text" })}, RuleMIMESyntax, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := ValidatePage(docsTemplate(), tc.req, tc.page)
			if tc.rule == "" {
				assert.NoError(t, err)
				return
			}
			var ce *ContractError
			require.True(t, errors.As(err, &ce), "got %v, want a *ContractError", err)
			assert.Equal(t, tc.rule, ce.Rule)
			assert.Equal(t, tc.entry, ce.Entry)
			assert.Equal(t, "documents", ce.Source)
			for _, e := range tc.page.Entries {
				if e.URI != "" {
					assert.NotContains(t, ce.Error(), e.URI, "the error never holds entry contents")
				}
				if e.Name != "" {
					assert.NotContains(t, ce.Error(), e.Name)
				}
			}
		})
	}
}

func TestValidatePageWithoutTemplate(t *testing.T) {
	assert.NoError(t, ValidatePage(nil, ListRequest{Limit: 1}, Page{Entries: []Entry{{Key: "a", URI: "anything:x", Name: "x"}}}))
	err := ValidatePage(nil, ListRequest{Limit: 1}, Page{Entries: []Entry{{Key: "a", URI: "any thing", Name: "x"}}})
	var ce *ContractError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, RuleURIMatch, ce.Rule)
	err = ValidatePage(&Template{Name: "bad", URITemplate: "x://{?q"}, ListRequest{Limit: 1}, Page{})
	assert.Error(t, err, "an unparsable template is reported")
	assert.False(t, errors.As(err, &ce))
}

func TestDuplicateURIAgreesWithAMap(t *testing.T) {
	for _, n := range []int{0, 1, 2, 50, 100, 101, 300} {
		for _, dupAt := range []int{-1, 1, n / 2, n - 1} {
			es := make([]Entry, n)
			for i := range es {
				es[i].URI = "docs://documents/" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune('0'+i/26))
			}
			want := -1
			if dupAt > 0 && dupAt < n {
				es[dupAt].URI = es[dupAt/2].URI
				want = firstDuplicate(es)
			}
			got := -1
			var c pageCheck
			c.start("s", nil, ListRequest{Limit: n}, Page{Entries: es})
			for i := range es {
				if c.seen(i) {
					got = i
					break
				}
			}
			assert.Equal(t, want, got, "n %d, duplicate at %d", n, dupAt)
		}
	}
}

func TestUTF16Length(t *testing.T) {
	for s, want := range map[string]int{
		"": 0, "abc": 3, "é": 1, "文": 1, "😀": 2, "a😀b文": 5, "\xff": 1,
	} {
		assert.Equal(t, want, utf16Len(s), "%q", s)
		assert.Equal(t, want, len(utf16.Encode([]rune(s))), "%q: as JavaScript counts", s)
	}
	assert.False(t, longer(strings.Repeat("文", 512), 512))
	assert.True(t, longer(strings.Repeat("文", 513), 512))
}

func TestClipName(t *testing.T) {
	for _, name := range []string{
		"short", strings.Repeat("n", 512), strings.Repeat("文", 512),
		strings.Repeat("n", 513), strings.Repeat("文", 2000), strings.Repeat("😀", 300), "x" + strings.Repeat("😀", 300),
	} {
		got := ClipName(name)
		assert.True(t, utf8.ValidString(got))
		assert.LessOrEqual(t, len(utf16.Encode([]rune(got))), 512, "%d units", utf16Len(got))
		assert.Equal(t, Rule(""), checkName(got), "a clipped name is a valid name")
		if utf16Len(name) <= 512 {
			assert.Equal(t, name, got, "within the limit: unchanged")
		} else {
			assert.True(t, strings.HasSuffix(got, "…"))
			assert.True(t, strings.HasPrefix(name, strings.TrimSuffix(got, "…")), "a prefix of the name")
			assert.GreaterOrEqual(t, utf16Len(got), 510, "clipped no shorter than needed")
		}
	}
}

// The duplicate check in sorted order (issue 31): URIs that come in
// increasing order are compared with the one before only; the first one
// out of order hands over to the set, filled with those before it. Pages
// sorted for a while and then not, with duplicates anywhere, find the same
// first duplicate as a map.
func TestDuplicateURIInSortedOrderAgreesWithAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 31))
	for range 5000 {
		n := rng.IntN(120)
		es := make([]Entry, n)
		sortedFor := rng.IntN(n + 1)
		for i := range es {
			v := rng.IntN(40)
			if i < sortedFor {
				v = 2 * i // increasing, with room for an equal one
				if rng.IntN(30) == 0 && i > 0 {
					v = 2 * (i - 1) // the one before
				}
			}
			es[i].URI = fmt.Sprintf("docs://documents/d%03d", v)
		}
		want := firstDuplicate(es)
		ut, err := uritemplate.Parse("docs://documents/{id}")
		require.NoError(t, err)
		for _, tmpl := range []*uritemplate.Template{nil, ut} {
			var c pageCheck
			c.start("s", tmpl, ListRequest{Limit: n}, Page{Entries: es})
			got := -1
			for i := range es {
				if c.seen(i) {
					got = i
					break
				}
			}
			require.Equal(t, want, got, "%v", es)
		}
	}
}

// firstDuplicate is the index of the first entry whose URI an earlier
// entry has, or -1: the oracle of the page check's duplicate rule.
func firstDuplicate(es []Entry) int {
	seen := map[string]bool{}
	for i, e := range es {
		if seen[e.URI] {
			return i
		}
		seen[e.URI] = true
	}
	return -1
}
