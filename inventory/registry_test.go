package inventory_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
)

func TestNewRejects(t *testing.T) {
	okStatic := func() inventory.Resource {
		return inventory.Resource{URI: "docs://readme", Name: "README", Access: inventory.Public, Read: inventory.TextReader("text/plain", "x")}
	}
	okTmpl := func() inventory.Template { return docsTemplate(emptyList) }
	prio := func(f float64) *float64 { return &f }
	for _, tc := range []struct {
		name      string
		resources []inventory.Resource
		templates []inventory.Template
		opts      inventory.Options
	}{
		// Static resources.
		{"static without Read", []inventory.Resource{{URI: "a://b", Name: "b"}}, nil, inventory.Options{}},
		{"static without URI", []inventory.Resource{{Name: "b", Read: readEcho}}, nil, inventory.Options{}},
		{"static URI with space", []inventory.Resource{{URI: "a://b c", Name: "b", Read: readEcho}}, nil, inventory.Options{}},
		{"static without name", []inventory.Resource{{URI: "a://b", Read: readEcho}}, nil, inventory.Options{}},
		{"duplicate static URI", []inventory.Resource{okStatic(), okStatic()}, nil, inventory.Options{}},
		{"static bad MIME", []inventory.Resource{{URI: "a://b", Name: "b", MIMEType: "plain", Read: readEcho}}, nil, inventory.Options{}},
		{"static negative size", []inventory.Resource{{URI: "a://b", Name: "b", Size: -1, Read: readEcho}}, nil, inventory.Options{}},
		{"static unknown access", []inventory.Resource{{URI: "a://b", Name: "b", Access: 7, Read: readEcho}}, nil, inventory.Options{}},
		{"public static with scopes", []inventory.Resource{{URI: "a://b", Name: "b", Access: inventory.Public, RequiredScopes: []string{"x"}, Read: readEcho}}, nil, inventory.Options{}},
		{"static invalid scope", []inventory.Resource{{URI: "a://b", Name: "b", RequiredScopes: []string{`a"b`}, Read: readEcho}}, nil, inventory.Options{}},
		{"static empty scope", []inventory.Resource{{URI: "a://b", Name: "b", RequiredScopes: []string{""}, Read: readEcho}}, nil, inventory.Options{}},
		{"static bad audience", []inventory.Resource{{URI: "a://b", Name: "b", Read: readEcho, Annotations: &inventory.Annotations{Audience: []string{"robot"}}}}, nil, inventory.Options{}},
		{"static bad priority", []inventory.Resource{{URI: "a://b", Name: "b", Read: readEcho, Annotations: &inventory.Annotations{Priority: prio(1.5)}}}, nil, inventory.Options{}},
		{"static bad lastModified", []inventory.Resource{{URI: "a://b", Name: "b", Read: readEcho, Annotations: &inventory.Annotations{LastModified: "yesterday"}}}, nil, inventory.Options{}},
		// Templates.
		{"template without Read", nil, []inventory.Template{{Name: "t", URITemplate: "t://{id}"}}, inventory.Options{}},
		{"template without name", nil, []inventory.Template{{URITemplate: "t://{id}", Read: readEcho}}, inventory.Options{}},
		{"invalid template", nil, []inventory.Template{{Name: "t", URITemplate: "t://{?q", Read: readEcho}}, inventory.Options{}},
		{"ambiguous template", nil, []inventory.Template{{Name: "t", URITemplate: "t://{a}{b}", Read: readEcho}}, inventory.Options{}},
		{"empty template", nil, []inventory.Template{{Name: "t", Read: readEcho}}, inventory.Options{}},
		{"duplicate names", nil, []inventory.Template{okTmpl(), func() inventory.Template { t := okTmpl(); t.URITemplate = "x://{id}"; return t }()}, inventory.Options{}},
		{"overlapping templates", nil, []inventory.Template{okTmpl(), {Name: "t2", URITemplate: "docs://{kind}/readme", Read: readEcho}}, inventory.Options{}},
		{"same template twice", nil, []inventory.Template{okTmpl(), func() inventory.Template { t := okTmpl(); t.Name = "again"; return t }()}, inventory.Options{}},
		{"List on a public template", nil, []inventory.Template{{Name: "t", URITemplate: "t://{id}", Access: inventory.Public, Read: readEcho, List: emptyList}}, inventory.Options{}},
		{"List on a hidden template", nil, []inventory.Template{{Name: "t", URITemplate: "t://{id}", Hidden: true, Read: readEcho, List: emptyList}}, inventory.Options{}},
		{"Validate on an unknown variable", nil, []inventory.Template{{Name: "t", URITemplate: "t://{id}", Read: readEcho, Validate: map[string]func(string) error{"name": func(string) error { return nil }}}}, inventory.Options{}},
		{"nil Validate rule", nil, []inventory.Template{{Name: "t", URITemplate: "t://{id}", Read: readEcho, Validate: map[string]func(string) error{"id": nil}}}, inventory.Options{}},
		{"Complete on an unknown variable", nil, []inventory.Template{{Name: "t", URITemplate: "t://{id}", Read: readEcho, Complete: map[string]inventory.CompleteFunc{"x": func(context.Context, inventory.CompleteRequest) (inventory.Completion, error) {
			return inventory.Completion{}, nil
		}}}}, inventory.Options{}},
		{"nil completer", nil, []inventory.Template{{Name: "t", URITemplate: "t://{id}", Read: readEcho, Complete: map[string]inventory.CompleteFunc{"id": nil}}}, inventory.Options{}},
		{"template invalid scope", nil, []inventory.Template{{Name: "t", URITemplate: "t://{id}", Read: readEcho, RequiredScopes: []string{"a b"}}}, inventory.Options{}},
		{"public template with scopes", nil, []inventory.Template{{Name: "t", URITemplate: "t://{id}", Access: inventory.Public, RequiredScopes: []string{"a"}, Read: readEcho}}, inventory.Options{}},
		{"template bad MIME", nil, []inventory.Template{{Name: "t", URITemplate: "t://{id}", MIMEType: "text/plain\n", Read: readEcho}}, inventory.Options{}},
		// Options.
		{"page size 101", nil, nil, inventory.Options{PageSize: 101}},
		{"negative page size", nil, nil, inventory.Options{PageSize: -1}},
		{"negative timeout", nil, nil, inventory.Options{CallbackTimeout: -time.Second}},
		{"unknown discovery", nil, nil, inventory.Options{Discovery: 9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inv, err := inventory.New(tc.resources, tc.templates, tc.opts)
			assert.Error(t, err)
			assert.Nil(t, inv)
			if err != nil {
				assert.True(t, strings.HasPrefix(err.Error(), "inventory: "), err.Error())
			}
		})
	}
}

func TestNewErrorsNameTheTemplate(t *testing.T) {
	_, err := inventory.New(nil, []inventory.Template{{Name: "reports", URITemplate: "r://{x}{y}", Read: readEcho}}, inventory.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"reports"`)
	assert.Contains(t, err.Error(), `r://{x}{y}`)

	_, err = inventory.New(nil, []inventory.Template{docsTemplate(emptyList), {Name: "other", URITemplate: "docs://{a}/{b}", Read: readEcho}}, inventory.Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"documents" and "other"`)
}

func TestNewAccepts(t *testing.T) {
	prio := 0.5
	res := []inventory.Resource{{
		URI: "docs://readme", Name: "README", Title: "Read me", Description: "About", MIMEType: "text/markdown; charset=utf-8",
		Size: 12, Access: inventory.Public, Read: inventory.TextReader("text/markdown", "# hi"),
		Annotations: &inventory.Annotations{Audience: []string{"user", "assistant"}, Priority: &prio, LastModified: "2026-01-12T15:00:58Z"},
	}}
	inv, err := inventory.New(res, []inventory.Template{
		docsTemplate(emptyList),
		{Name: "versions", URITemplate: "docs://documents/{id}/versions/{v}", Read: readEcho}, // disjoint: {id} holds no '/'
	}, inventory.Options{PageSize: 100, CallbackTimeout: time.Second})
	require.NoError(t, err)
	prio = 0.9 // the registry keeps its own copy
	l, _ := page(t, inv, alice(), "")
	out, err := listWire(context.Background(), inv, alice(), "", envelope{})
	require.NoError(t, err)
	assert.Equal(t, `{"resources":[{"uri":"docs://readme","name":"README","title":"Read me","description":"About","mimeType":"text/markdown; charset=utf-8","annotations":{"audience":["user","assistant"],"priority":0.5,"lastModified":"2026-01-12T15:00:58Z"},"size":12}]}`, string(out))
	assert.Len(t, l.Resources, 1)
}

func TestNewDefaults(t *testing.T) {
	src := &recordingSource{next: emptyList}
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(src.List)}, inventory.Options{})
	require.NoError(t, err)
	_, err = listWire(context.Background(), inv, alice(), "", testEnv)
	require.NoError(t, err)
	assert.Equal(t, 50, src.reqs[0].Limit, "page size 0 means 50")
}

func TestRegistryIsACopy(t *testing.T) {
	scopes := []string{"docs:read"}
	tmpl := docsTemplate(emptyList)
	tmpl.RequiredScopes = scopes
	tmpl.Validate = map[string]func(string) error{"id": func(string) error { return nil }}
	inv, err := inventory.New(nil, []inventory.Template{tmpl}, inventory.Options{})
	require.NoError(t, err)
	scopes[0] = "nothing"
	tmpl.Validate["id"] = func(string) error { return assert.AnError }
	_, err = listWire(context.Background(), inv, alice(), "", testEnv)
	assert.NoError(t, err, "later edits of the caller's slices do not change the registry")
	_, err = inv.Read(context.Background(), alice(), "docs://documents/1")
	assert.NoError(t, err)
}
