package inventory

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory/internal/contract"
	"github.com/mcpkit/mcpkit/principal"
)

// spoofers are the characters that change how the text around them is
// shown without being seen themselves (issue 27, "names cannot spoof"):
// bidirectional controls, zero-width and invisible characters, the byte
// order mark, and tag characters, each at the ends of its range.
var spoofers = []rune{
	0x00AD, 0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x180B, 0x180F, // issue 35: soft hyphen, fillers, selectors
	0x2028, 0x2029, 0x3164, 0xFFA0, 0xFE0F, 0xE0100, 0xE01EF,
	0x061C,         // ARABIC LETTER MARK (a bidi control)
	0x200B, 0x200F, // ZERO WIDTH SPACE … RIGHT-TO-LEFT MARK
	0x202A, 0x202E, // LEFT-TO-RIGHT EMBEDDING … RIGHT-TO-LEFT OVERRIDE
	0x2060, 0x2064, // WORD JOINER … INVISIBLE PLUS
	0x2066, 0x2069, // LEFT-TO-RIGHT ISOLATE … POP DIRECTIONAL ISOLATE
	0xFEFF,           // ZERO WIDTH NO-BREAK SPACE (BOM)
	0xE0000, 0xE007F, // tag characters
}

// refusedRef is the name rule computed from Go's unicode tables by the
// Unicode definitions (Cc, Zl, Zp, Cf, Bidi_Control and the derived
// Default_Ignorable_Code_Point), for the fuzz target's oracle.
func refusedRef(r rune) bool {
	is := func(t *unicode.RangeTable) bool { return unicode.Is(t, r) }
	di := (is(unicode.Other_Default_Ignorable_Code_Point) || is(unicode.Cf) || is(unicode.Variation_Selector)) &&
		!is(unicode.White_Space) && !(r >= 0xFFF9 && r <= 0xFFFB) && !(r >= 0x13430 && r <= 0x1343F) && !is(unicode.Prepended_Concatenation_Mark)
	return is(unicode.Cc) || is(unicode.Zl) || is(unicode.Zp) || is(unicode.Cf) || is(unicode.Bidi_Control) || di
}

// Their neighbours are ordinary text and stay accepted.
var neighbours = []rune{0x061B, 0x200A, 0x2010, 0x2027, 0x202F, 0x2070, 0xFEFE, 0xFF01, 0xDFFFF, 0xE1000, 'é', '文', '😀', 0xFFFD}

func TestNamesWithSpoofingCharactersAreRefused(t *testing.T) {
	for _, r := range spoofers {
		// "invoice_[RLO]fdp.exe" shows as "invoice_exe.pdf".
		name := "invoice_" + string(r) + "fdp.exe"
		t.Run(name, func(t *testing.T) {
			p := Page{Entries: []Entry{{Key: "k1", URI: "docs://documents/1", Name: name}}}
			err := ValidatePage(docsTemplate(), ListRequest{Limit: 1}, p)
			var ce *ContractError
			require.ErrorAs(t, err, &ce, "ValidatePage reports a listed entry's name to the developer")
			assert.Equal(t, RuleNameInvalid, ce.Rule)
			assert.Equal(t, 0, ce.Entry)

			_, err = New([]Resource{{URI: "docs://a", Name: name, Read: TextReader("text/plain", "x")}}, nil, Options{})
			assert.Error(t, err, "a static resource's name")
			_, err = New([]Resource{{URI: "docs://a", Name: "A", Title: name, Read: TextReader("text/plain", "x")}}, nil, Options{})
			assert.Error(t, err, "a static resource's title")
			lineBreak := r == 0x2028 || r == 0x2029 // a description may break lines
			_, err = New([]Resource{{URI: "docs://a", Name: "A", Description: name, Read: TextReader("text/plain", "x")}}, nil, Options{})
			assert.Equal(t, !lineBreak, err != nil, "a static resource's description")
			tmpl := Template{Name: name, URITemplate: "docs://documents/{id}", Read: readNothing}
			_, err = New(nil, []Template{tmpl}, Options{})
			assert.Error(t, err, "a template's name")
			tmpl.Name, tmpl.Title = "documents", name
			_, err = New(nil, []Template{tmpl}, Options{})
			assert.Error(t, err, "a template's title")
			tmpl.Title, tmpl.Description = "", name
			_, err = New(nil, []Template{tmpl}, Options{})
			assert.Equal(t, !lineBreak, err != nil, "a template's description")
		})
	}
	for _, r := range neighbours {
		name := "a" + string(r) + "b"
		p := Page{Entries: []Entry{{Key: "k1", URI: "docs://documents/1", Name: name}}}
		assert.NoError(t, ValidatePage(docsTemplate(), ListRequest{Limit: 1}, p), "%U", r)
		_, err := New([]Resource{{URI: "docs://a", Name: name, Title: name, Description: name, Read: TextReader("text/plain", "x")}}, nil, Options{})
		assert.NoError(t, err, "%U", r)
	}
}

// A stored name that breaks the character rule — stored before the rule
// existed, or by code that skips it — is escaped on the way out (issue
// 35: U+FFFD in its place), never fails a list or a search; the other
// entries are listed as they are.
func TestStoredSpoofingNamesAreEscapedNotFatal(t *testing.T) {
	for _, r := range append(spoofers, 0x00, 0x1B, 0x85) {
		bad := "invoice_" + string(r) + "fdp.exe"
		tmpl := Template{Name: "documents", URITemplate: "docs://documents/{id}", Read: readNothing,
			List: func(context.Context, ListRequest) (Page, error) {
				return Page{Entries: []Entry{{Key: "1", URI: "docs://documents/1", Name: "plain"}, {Key: "2", URI: "docs://documents/2", Name: bad}, {Key: "3", URI: "docs://documents/3", Name: "a\xffb"}}}, nil
			},
			Search: func(context.Context, SearchRequest) ([]SearchHit, error) {
				return []SearchHit{{URI: "docs://documents/2", Name: bad}}, nil
			}}
		inv, err := New(nil, []Template{tmpl}, Options{Logger: slog.New(slog.DiscardHandler)})
		require.NoError(t, err)
		alice := &principal.Principal{Subject: "alice"}
		var names []string
		_, err = inv.List(context.Background(), alice, "", func(it *Item) bool { names = append(names, it.Name); return true })
		require.NoError(t, err, "%U", r)
		assert.Equal(t, []string{"plain", "invoice_\uFFFDfdp.exe", "a\uFFFDb"}, names, "%U", r)
		hits, err := inv.Search(context.Background(), alice, "invoice", 10)
		require.NoError(t, err, "%U", r)
		require.Len(t, hits, 1)
		assert.Equal(t, "invoice_\uFFFDfdp.exe", hits[0].Name, "%U", r)
	}
}

func readNothing(context.Context, ReadRequest) ([]Contents, error) { return nil, nil }

// FuzzDisplayName: a name is accepted exactly when it is 1..512 UTF-16
// code units of UTF-8 without control characters and without spoofing
// characters (checked here against the list above, independently).
func FuzzDisplayName(f *testing.F) {
	for _, s := range []string{"Report", "invoice_\u202Efdp.exe", "a\u200Bb", "\uFEFFx", "flag \U000E0067\U000E0062", "\u2066x\u2069", "é文😀", "\x00", "\xe2\x80", "\u061C", "\u2064"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		want := name != "" && utf8.ValidString(name) && countUTF16(name) <= contract.MaxNameLen &&
			!strings.ContainsFunc(name, func(r rune) bool {
				if r < 0x20 || r >= 0x7f && r <= 0x9f {
					return true
				}
				return refusedRef(r)
			})
		got := contract.Name(name) == contract.OK
		if got != want {
			t.Fatalf("checkName(%q) accepted %v, want %v", name, got, want)
		}
	})
}

// countUTF16 counts UTF-16 code units, independently of the package's own.
func countUTF16(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// ClipName, which a List callback over titles it does not control passes
// every title through, replaces spoofing characters with U+FFFD: a
// document that another user titled "invoice_<RLO>fdp.exe" and shared
// does not make the reader's whole list fail, and shows as what it is.
func TestClipNameDefusesSpoofingCharacters(t *testing.T) {
	for _, r := range spoofers {
		name := "invoice_" + string(r) + "fdp.exe"
		got := ClipName(name)
		assert.Equal(t, "invoice_\uFFFDfdp.exe", got)
		assert.Equal(t, Rule(""), broken(contract.Name(got)), "%U: a clipped name is a valid name", r)
	}
	long := strings.Repeat("\u202E", 600)
	assert.Equal(t, Rule(""), broken(contract.Name(ClipName(long))), "defused, then clipped")
	assert.Equal(t, "Report é文😀", ClipName("Report é文😀"), "nothing to defuse: unchanged")

	titles := []string{"Q3 report", "invoice_\u202Efdp.exe", "a\u200Bb", "flag \U000E0067"}
	tmpl := Template{Name: "documents", URITemplate: "docs://documents/{id}", RequiredScopes: []string{"docs:read"}, Read: readNothing,
		List: func(context.Context, ListRequest) (Page, error) {
			var p Page
			for i, title := range titles {
				p.Entries = append(p.Entries, Entry{Key: fmt.Sprintf("k%d", i), URI: fmt.Sprintf("docs://documents/%d", i), Name: ClipName(title)})
			}
			return p, nil
		}}
	inv, err := New(nil, []Template{tmpl}, Options{Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	var names []string
	_, err = inv.List(context.Background(), &principal.Principal{Subject: "bob", Scopes: []string{"docs:read"}}, "", func(it *Item) bool {
		names = append(names, it.Name)
		return true
	})
	require.NoError(t, err)
	assert.Equal(t, []string{"Q3 report", "invoice_\uFFFDfdp.exe", "a\uFFFDb", "flag \uFFFD"}, names)
}
