package inventory_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
)

func TestTarget(t *testing.T) {
	read := func(context.Context, inventory.ReadRequest) ([]inventory.Contents, error) {
		return nil, inventory.ErrNotFound
	}
	inv, err := inventory.New(
		[]inventory.Resource{{URI: "docs://about", Name: "about", Access: inventory.Public, Read: inventory.TextReader("text/plain", "hi")}},
		[]inventory.Template{
			{Name: "documents", URITemplate: "docs://documents/{id}", RequiredScopes: []string{"docs:read"}, Read: read},
			{Name: "hidden-notes", URITemplate: "notes://{owner}/{id}", Hidden: true, Read: read},
		}, inventory.Options{})
	require.NoError(t, err)
	for _, tc := range []struct {
		name, ref, want string
		ok              bool
	}{
		{"static resource by URI", "docs://about", "about", true},
		{"template by its URITemplate (completion ref)", "docs://documents/{id}", "documents", true},
		{"template by a matching URI", "docs://documents/d42", "documents", true},
		{"a hidden template is named too (operator data, never an answer)", "notes://alice/n1", "hidden-notes", true},
		// Attack rows: client input never comes back as a name.
		{"unknown scheme", "evil://documents/d1", "", false},
		{"prefix of a template", "docs://documents/", "", false},
		{"empty", "", "", false},
		{"over the URI limit", "docs://documents/" + strings.Repeat("a", 4096), "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := inv.Target(tc.ref)
			assert.Equal(t, tc.ok, ok)
			assert.Equal(t, tc.want, got)
		})
	}
}
