package inventory

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory/internal/uritemplate"
)

// A template is plain exactly when its literals are ASCII; an entry of a
// template that is not plain is encoded with escapes (U+2028 is allowed in
// a literal, and JSON text must escape it for JavaScript).
func TestPlainTemplates(t *testing.T) {
	for tmpl, plain := range map[string]bool{
		"docs://documents/{id}":    true,
		"file:///{+path}":          true,
		"x://%C3%A9/{id}":          true,
		"docs://dokumente/é/{id}":  false,
		"x://a\u2028/{id}":         false,
		"repo://{o}/{r}/blob/{+p}": true,
	} {
		ut, err := uritemplate.Parse(tmpl)
		require.NoError(t, err, tmpl)
		assert.Equal(t, plain, ut.Plain(), tmpl)
	}
}

// A duplicate differing from the first URI only after the common prefix
// is found; URIs equal after the prefix are duplicates, with and without
// a prefix to skip.
func TestDuplicateURISkip(t *testing.T) {
	es := []Entry{{Key: "a", URI: "docs://documents/a", Name: "a"}, {Key: "b", URI: "docs://documents/b", Name: "b"}, {Key: "c", URI: "docs://documents/a", Name: "c"}}
	for _, tmpl := range []string{"docs://documents/{id}", "{+uri}"} {
		ut, err := uritemplate.Parse(tmpl)
		require.NoError(t, err)
		var c pageCheck
		require.Nil(t, c.start("s", ut, ListRequest{Limit: 3}, Page{Entries: es}))
		assert.Nil(t, c.entry(0))
		assert.Nil(t, c.entry(1))
		ce := c.entry(2)
		require.NotNil(t, ce, tmpl)
		assert.Equal(t, RuleURIDuplicate, ce.Rule)
		assert.Equal(t, 2, ce.Entry)
	}
	ut, err := uritemplate.Parse("docs://documents/{id}")
	require.NoError(t, err)
	assert.Equal(t, len("docs://documents/"), ut.Prefix())
	ut, err = uritemplate.Parse("{scheme}://x")
	require.NoError(t, err)
	assert.Equal(t, 0, ut.Prefix())
	assert.Equal(t, 0, (*uritemplate.Template)(nil).Prefix())
}
