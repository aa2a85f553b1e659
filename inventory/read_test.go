package inventory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
)

// ownedDocs is a read handler that applies ownership: only "d1" of alice.
func ownedDocs(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
	if req.Principal == nil || req.Principal.Subject != "alice" || req.Params["id"] != "d1" {
		return nil, fmt.Errorf("documents: %w", inventory.ErrNotFound)
	}
	return []inventory.Contents{{URI: req.URI, MIMEType: "text/plain", Text: "alice's document"}}, nil
}

func readFixture(t *testing.T, opts inventory.Options) *inventory.Inventory {
	t.Helper()
	docs := docsTemplate(emptyList)
	docs.Read = ownedDocs
	docs.Validate = map[string]func(string) error{"id": func(v string) error {
		if !strings.HasPrefix(v, "d") {
			return errors.New("ids start with d: " + v)
		}
		return nil
	}}
	files := inventory.Template{
		Name: "files", URITemplate: "file:///{+path}", Access: inventory.Public,
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			return []inventory.Contents{{URI: req.URI, Blob: []byte(req.Params["path"])}}, nil
		},
	}
	pair := inventory.Template{
		Name: "pair", URITemplate: "pair://{a}/{b}", Access: inventory.Public, Read: readEcho,
		Validate: map[string]func(string) error{
			"a": func(string) error { return errors.New("no") },
			"b": func(string) error { return errors.New("no") },
		},
	}
	if opts.Logger == nil {
		opts.Logger = (&logBuffer{}).logger()
	}
	inv, err := inventory.New(statics(), []inventory.Template{docs, files, pair}, opts)
	require.NoError(t, err)
	return inv
}

func TestRead(t *testing.T) {
	inv := readFixture(t, inventory.Options{})
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		caller *principal.Principal
		uri    string
		want   string // text or blob as string; "" when an error is expected
		err    error
	}{
		{"public static, anonymous", nil, "docs://readme", "hello", nil},
		{"protected static, anonymous", nil, "docs://policy", "", principal.ErrUnauthenticated},
		{"protected static, no scope", &principal.Principal{Subject: "eve"}, "docs://policy", "", principal.ErrInsufficientScope},
		{"protected static, scope", bob(), "docs://policy", "policy", nil},
		{"template, owner", alice(), "docs://documents/d1", "alice's document", nil},
		{"template, not the owner", bob(), "docs://documents/d1", "", inventory.ErrNotFound},
		{"template, anonymous", nil, "docs://documents/d1", "", principal.ErrUnauthenticated},
		{"template, no scope", &principal.Principal{Subject: "alice"}, "docs://documents/d1", "", principal.ErrInsufficientScope},
		{"template, missing record", alice(), "docs://documents/d2", "", inventory.ErrNotFound},
		{"no match", alice(), "docs://nothing/here", "", inventory.ErrNotFound},
		{"no match: '/' in {id}", alice(), "docs://documents/d1/x", "", inventory.ErrNotFound},
		{"no match: too long", alice(), "file:///" + strings.Repeat("a", 2048), "", inventory.ErrNotFound},
		{"public template, decoded params", nil, "file:///a%20b/c.txt", "a b/c.txt", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := inv.Read(ctx, tc.caller, tc.uri)
			if tc.err != nil {
				assert.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			require.Len(t, cs, 1)
			got := cs[0].Text
			if cs[0].Blob != nil {
				got = string(cs[0].Blob)
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestReadScopeErrorNamesAllRequiredScopes(t *testing.T) {
	tmpl := inventory.Template{Name: "x", URITemplate: "x://{id}", RequiredScopes: []string{"b", "a", "c"}, Read: readEcho}
	inv, err := inventory.New(nil, []inventory.Template{tmpl}, inventory.Options{})
	require.NoError(t, err)
	_, err = inv.Read(context.Background(), &principal.Principal{Subject: "s", Scopes: []string{"a"}}, "x://1")
	var se *principal.ScopeError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, []string{"a", "b", "c"}, se.Required)
}

func TestReadValidateRules(t *testing.T) {
	inv := readFixture(t, inventory.Options{})
	_, err := inv.Read(context.Background(), alice(), "docs://documents/x%3Cscript%3E")
	var pe *inventory.ParamsError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, []string{`invalid value for variable "id"`}, pe.Problems)
	assert.NotContains(t, pe.Error(), "script", "values are never echoed")

	_, err = inv.Read(context.Background(), nil, "pair://1/2")
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, []string{`invalid value for variable "a"`, `invalid value for variable "b"`}, pe.Problems, "every failure, in variable order")

	_, err = inv.Read(context.Background(), nil, "docs://documents/x")
	assert.ErrorIs(t, err, principal.ErrUnauthenticated, "access is checked before the rules")
}

func TestReadContentsRules(t *testing.T) {
	for name, cs := range map[string][]inventory.Contents{
		"no contents":     {},
		"empty URI":       {{Text: "x"}},
		"long URI":        {{URI: "x://" + strings.Repeat("a", 2048), Text: "x"}},
		"bad MIME":        {{URI: "x://1", MIMEType: "text", Text: "x"}},
		"text not UTF-8":  {{URI: "x://1", Text: "\xff"}},
		"second item bad": {{URI: "x://1", Text: "a"}, {URI: "", Text: "b"}},
	} {
		t.Run(name, func(t *testing.T) {
			log := &logBuffer{}
			tmpl := inventory.Template{Name: "x", URITemplate: "x://{id}", Access: inventory.Public,
				Read: func(context.Context, inventory.ReadRequest) ([]inventory.Contents, error) { return cs, nil }}
			inv, err := inventory.New(nil, []inventory.Template{tmpl}, inventory.Options{Logger: log.logger()})
			require.NoError(t, err)
			_, err = inv.Read(context.Background(), nil, "x://1")
			assert.Same(t, inventory.ErrInternal, err)
			assert.EqualValues(t, inventory.RuleContentsInvalid, log.records(t)[0]["rule"])
		})
	}
}

func TestReadHandlerErrors(t *testing.T) {
	log := &logBuffer{}
	failing := inventory.Template{Name: "x", URITemplate: "x://{id}", Access: inventory.Public,
		Read: func(context.Context, inventory.ReadRequest) ([]inventory.Contents, error) {
			return nil, errors.New("disk on fire at /var/SECRET")
		}}
	inv, err := inventory.New(nil, []inventory.Template{failing}, inventory.Options{Logger: log.logger()})
	require.NoError(t, err)
	_, err = inv.Read(context.Background(), nil, "x://SECRETURI")
	assert.Same(t, inventory.ErrInternal, err)
	assert.NotContains(t, log.String(), "SECRETURI", "the requested URI is not logged")
	assert.EqualValues(t, inventory.RuleCallbackError, log.records(t)[0]["rule"])
}

func TestReadResponse(t *testing.T) {
	inv := readFixture(t, inventory.Options{})
	env := envelope{Head: []byte(`{"jsonrpc":"2.0","id":3,"result":`), Tail: []byte(`}`), Meta: []byte(`"ttlMs":0,"cacheScope":"private"`)}
	out, err := readWire(context.Background(), inv, nil, "file:///a%22b/%C3%A9", env)
	require.NoError(t, err)
	assert.Equal(t, `{"jsonrpc":"2.0","id":3,"result":{"contents":[{"uri":"file:///a%22b/%C3%A9","blob":"YSJiL8Op"}],"ttlMs":0,"cacheScope":"private"}}`, string(out))
	out, err = readWire(context.Background(), inv, alice(), "docs://documents/d1", envelope{})
	require.NoError(t, err)
	var res struct {
		Contents []map[string]string `json:"contents"`
	}
	require.NoError(t, json.Unmarshal(out, &res))
	assert.Equal(t, []map[string]string{{"uri": "docs://documents/d1", "mimeType": "text/plain", "text": "alice's document"}}, res.Contents)
	_, err = readWire(context.Background(), inv, bob(), "docs://documents/d1", env)
	assert.ErrorIs(t, err, inventory.ErrNotFound)

	// The byte limit is the transport's: it checks the whole response.
	_, err = readWire(context.Background(), inv, nil, "file:///"+strings.Repeat("a", 330), envelope{Head: make([]byte, 200), Limit: 600})
	assert.ErrorIs(t, err, errTooLarge, "the transport's check counts the envelope")
}

func TestTextAndBlobReaders(t *testing.T) {
	cs, err := inventory.TextReader("text/plain", "hi")(context.Background(), inventory.ReadRequest{URI: "a://b"})
	require.NoError(t, err)
	assert.Equal(t, []inventory.Contents{{URI: "a://b", MIMEType: "text/plain", Text: "hi"}}, cs)
	cs, err = inventory.BlobReader("application/octet-stream", nil)(context.Background(), inventory.ReadRequest{URI: "a://b"})
	require.NoError(t, err)
	assert.NotNil(t, cs[0].Blob, "an empty blob is still a blob")
	assert.Equal(t, []byte{}, cs[0].Blob)
}
