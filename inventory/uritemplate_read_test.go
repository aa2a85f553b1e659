package inventory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/principal"
)

// A template with a query expression beside the one with a path: reads
// reach the right one with the variables the URI holds; what neither
// could have expanded to is not found.
func TestReadOperatorTemplates(t *testing.T) {
	var got map[string]string
	var validated []string
	read := func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
		got = req.Params
		return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: "ok"}}, nil
	}
	inv, err := inventory.New(nil, []inventory.Template{
		{Name: "document", URITemplate: "docs://documents/{id}", RequiredScopes: []string{"docs:read"}, Read: read},
		{Name: "listing", URITemplate: "docs://documents{?tag,sort}", RequiredScopes: []string{"docs:read"}, Read: read,
			Validate: map[string]func(string) error{"sort": func(v string) error {
				validated = append(validated, v)
				if v != "" && v != "new" && v != "old" {
					return errors.New("unknown order")
				}
				return nil
			}}},
		{Name: "file", URITemplate: "file:///{+path}{#section}", Access: inventory.Public, Read: read},
	}, inventory.Options{})
	require.NoError(t, err)
	ctx, caller := context.Background(), &principal.Principal{Subject: "alice", Scopes: []string{"docs:read"}}
	for _, tc := range []struct {
		uri  string
		want map[string]string // nil: not found
	}{
		{"docs://documents/7", map[string]string{"id": "7"}},
		{"docs://documents", map[string]string{}},
		{"docs://documents?tag=", map[string]string{"tag": ""}},
		{"docs://documents?tag=go", map[string]string{"tag": "go"}},
		{"docs://documents?tag=a%20b&sort=new", map[string]string{"tag": "a b", "sort": "new"}},
		{"docs://documents?sort=new", map[string]string{"sort": "new"}},
		{"docs://documents?sort=new&tag=go", nil}, // template order
		{"docs://documents?tag=go&tag=rust", nil}, // once
		{"docs://documents?tag", nil},             // an empty value is "tag="
		{"docs://documents?tag=a+b", nil},         // '+' is not a value character
		{"docs://documents?other=1", nil},         // no such variable
		{"docs://documents/", nil},
		{"file:///etc/a%20b.txt#intro", map[string]string{"path": "etc/a b.txt", "section": "intro"}},
		{"file:///etc/a.txt", map[string]string{"path": "etc/a.txt"}},
		{"file:///etc%2Fpasswd", nil}, // {+path} leaves '/' raw: %2F is no path of it
	} {
		validated = nil
		got = nil
		_, err := inv.Read(ctx, caller, tc.uri)
		if tc.want == nil {
			assert.ErrorIs(t, err, inventory.ErrNotFound, tc.uri)
			continue
		}
		require.NoError(t, err, tc.uri)
		assert.Equal(t, tc.want, got, tc.uri)
		if strings.HasPrefix(tc.uri, "docs://documents") && !strings.HasPrefix(tc.uri, "docs://documents/") {
			// The rule runs for the variable, present or not ("" when absent).
			assert.Equal(t, []string{tc.want["sort"]}, validated, tc.uri)
		}
	}
	var pe *inventory.ParamsError
	_, err = inv.Read(ctx, caller, "docs://documents?sort=random")
	require.ErrorAs(t, err, &pe)
}

// Templates that could match one URI are refused, whatever their
// operators; the error gives a URI both match.
func TestNewRefusesOverlappingOperatorTemplates(t *testing.T) {
	for _, tc := range []struct{ a, b, witness string }{
		{"docs://documents{?tag}", "docs://documents{?sort}", "docs://documents"},
		{"docs://documents{/id}", "docs://documents/{id}", "docs://documents/0"},
		{"file:///{+path}", "file:///etc{?q}", "file:///etc"},
		{"x://a{.ext}", "x://a.json", "x://a.json"},
	} {
		_, err := inventory.New(nil, []inventory.Template{
			{Name: "a", URITemplate: tc.a, Access: inventory.Public, Read: readEcho},
			{Name: "b", URITemplate: tc.b, Access: inventory.Public, Read: readEcho},
		}, inventory.Options{})
		require.Error(t, err, "%s / %s", tc.a, tc.b)
		assert.Contains(t, err.Error(), `"a" and "b" can match the same URI (for example "`+tc.witness+`")`)
	}
	_, err := inventory.New(nil, []inventory.Template{
		{Name: "a", URITemplate: "docs://documents{?tag}", Access: inventory.Public, Read: readEcho},
		{Name: "b", URITemplate: "docs://documents/{id}{?tag}", Access: inventory.Public, Read: readEcho},
		{Name: "c", URITemplate: "docs://documents/{id}/versions{/v}", Access: inventory.Public, Read: readEcho},
	}, inventory.Options{})
	assert.NoError(t, err, "disjoint templates")
}

// Optional variables of level 3 expressions: a missing one leaves its part
// out.
func ExampleExpand_operators() {
	for _, vals := range []map[string]string{{}, {"tag": "go"}, {"tag": "a b", "sort": "new"}, {"sort": "old"}} {
		uri, _ := inventory.Expand("docs://documents{?tag,sort}", vals)
		fmt.Println(uri)
	}
	uri, _ := inventory.Expand("repo://{owner}{/name}{.format}{#line}", map[string]string{"owner": "me", "name": "kit", "format": "md", "line": "L10"})
	fmt.Println(uri)
	// Output:
	// docs://documents
	// docs://documents?tag=go
	// docs://documents?tag=a%20b&sort=new
	// docs://documents?sort=old
	// repo://me/kit.md#L10
}
