package inventory

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory/internal/contract"
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

func TestClipName(t *testing.T) {
	for _, name := range []string{
		"short", strings.Repeat("n", 512), strings.Repeat("文", 512),
		strings.Repeat("n", 513), strings.Repeat("文", 2000), strings.Repeat("😀", 300), "x" + strings.Repeat("😀", 300),
	} {
		got := ClipName(name)
		assert.True(t, utf8.ValidString(got))
		assert.LessOrEqual(t, len(utf16.Encode([]rune(got))), 512, "%d units", contract.UTF16Len(got))
		assert.Equal(t, Rule(""), broken(contract.Name(got)), "a clipped name is a valid name")
		if contract.UTF16Len(name) <= 512 {
			assert.Equal(t, name, got, "within the limit: unchanged")
		} else {
			assert.True(t, strings.HasSuffix(got, "…"))
			assert.True(t, strings.HasPrefix(name, strings.TrimSuffix(got, "…")), "a prefix of the name")
			assert.GreaterOrEqual(t, contract.UTF16Len(got), 510, "clipped no shorter than needed")
		}
	}
}

// Every rule of the internal contract package has its public name, each
// its own.
func TestContractRulesNamed(t *testing.T) {
	assert.Equal(t, Rule(""), broken(contract.OK))
	seen := map[Rule]bool{}
	for r := contract.OK + 1; r < contract.NumRules; r++ {
		name := broken(r)
		require.NotEmpty(t, name, "rule %d", r)
		require.False(t, seen[name], "rule %d: %s twice", r, name)
		seen[name] = true
	}
}
