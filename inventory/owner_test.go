package inventory_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
)

// ownerFixture has a user-owned documents template and a client-owned
// workspace template, whose callbacks fail the test if they ever see an
// empty identity.
func ownerFixture(t *testing.T) (*inventory.Inventory, *atomic.Int64) {
	t.Helper()
	var calls atomic.Int64
	entries := func(owner string, n int, tmpl string) []inventory.Entry {
		var es []inventory.Entry
		for i := range n {
			es = append(es, inventory.Entry{Key: fmt.Sprintf("k%03d", i), URI: fmt.Sprintf(tmpl, owner, i), Name: owner})
		}
		return es
	}
	docs := inventory.Template{
		Name: "documents", URITemplate: "docs://documents/{owner}/{id}", RequiredScopes: []string{"docs:read"},
		List: func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
			calls.Add(1)
			if req.Principal.Subject == "" {
				t.Error("a subject-owned List saw an empty subject")
				return inventory.Page{}, errors.New("unrestricted query")
			}
			return inventory.Page{Entries: entries(req.Principal.Subject, 2, "docs://documents/%s/%d")}, nil
		},
		Read: func(_ context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
			if req.Principal == nil || req.Principal.Subject == "" {
				t.Error("a subject-owned Read saw an empty subject")
			}
			if req.Params["owner"] != req.Principal.Subject {
				return nil, inventory.ErrNotFound
			}
			return []inventory.Contents{{URI: req.URI, Text: "doc"}}, nil
		},
		Complete: map[string]inventory.CompleteFunc{"id": func(_ context.Context, req inventory.CompleteRequest) (inventory.Completion, error) {
			if req.Principal == nil || req.Principal.Subject == "" {
				t.Error("a subject-owned Complete saw an empty subject")
			}
			return inventory.Completion{Values: []string{"0"}}, nil
		}},
	}
	workspace := inventory.Template{
		Name: "workspace", URITemplate: "ws://{client}/{id}", RequiredScopes: []string{"ws:read"}, Owner: inventory.OwnedByClient,
		List: func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
			calls.Add(1)
			if req.Principal.ClientID == "" {
				t.Error("a client-owned List saw an empty client id")
				return inventory.Page{}, errors.New("unrestricted query")
			}
			return inventory.Page{Entries: entries(req.Principal.ClientID, 3, "ws://%s/%d")}, nil
		},
		Read: inventory.TextReader("text/plain", "ws"),
	}
	inv, err := inventory.New([]inventory.Resource{{URI: "docs://about", Name: "about", Access: inventory.Public, Read: inventory.TextReader("text/plain", "about")}},
		[]inventory.Template{docs, workspace}, inventory.Options{})
	require.NoError(t, err)
	return inv, &calls
}

func uris(t *testing.T, inv *inventory.Inventory, p *principal.Principal) ([]string, error) {
	t.Helper()
	var out []string
	_, err := inv.List(context.Background(), p, "", func(r *inventory.Item) bool {
		out = append(out, r.URI)
		return true
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// A template declares whose records it lists; a caller without that
// identity never reaches its callbacks.
func TestTemplateOwner(t *testing.T) {
	inv, _ := ownerFixture(t)
	ctx := context.Background()
	both := []string{"docs:read", "ws:read"}

	user := &principal.Principal{Subject: "alice", ClientID: "app", Scopes: both}
	got, err := uris(t, inv, user)
	require.NoError(t, err)
	assert.Equal(t, []string{"docs://about", "docs://documents/alice/0", "docs://documents/alice/1", "ws://app/0", "ws://app/1", "ws://app/2"}, got)

	// A client-credentials token: a client id, no subject. The
	// client-owned workspace is listed; the user-owned documents are not
	// called at all, and their URIs look unknown.
	service := &principal.Principal{ClientID: "batch-job", Scopes: both}
	got, err = uris(t, inv, service)
	require.NoError(t, err)
	assert.Equal(t, []string{"docs://about", "ws://batch-job/0", "ws://batch-job/1", "ws://batch-job/2"}, got)
	_, err = inv.Read(ctx, service, "docs://documents/alice/0")
	assert.ErrorIs(t, err, inventory.ErrNotFound)
	_, err = inv.Complete(ctx, service, "docs://documents/{owner}/{id}", "id", "", nil)
	var pe *inventory.ParamsError
	assert.ErrorAs(t, err, &pe, "completion answers as for an unknown template")
	ok, err := inv.CanRead(ctx, service, "docs://documents/alice/0")
	require.NoError(t, err)
	assert.False(t, ok)
	_, err = inv.Read(ctx, service, "ws://batch-job/1")
	assert.NoError(t, err)

	// Neither identity: only the statics, without an error (more scopes
	// would not help).
	nobody := &principal.Principal{Scopes: both}
	got, err = uris(t, inv, nobody)
	require.NoError(t, err)
	assert.Equal(t, []string{"docs://about"}, got)

	// Missing scopes still answer 403 for a source the caller could use.
	got, err = uris(t, inv, &principal.Principal{ClientID: "batch-job", Scopes: []string{"docs:read"}})
	var se *principal.ScopeError
	require.ErrorAs(t, err, &se, "got %v", got)
	assert.Equal(t, []string{"ws:read"}, se.Required, "the workspace is the source this caller could use")
}

// Whatever the principal, the callbacks never see an empty identity, and
// a subject's records never appear for a caller of another subject.
func TestTemplateOwnerProperty(t *testing.T) {
	inv, calls := ownerFixture(t)
	subjects, clients := []string{"", "alice", "bob"}, []string{"", "app", "other"}
	scopeSets := [][]string{nil, {"docs:read"}, {"ws:read"}, {"docs:read", "ws:read"}}
	for _, s := range subjects {
		for _, c := range clients {
			for _, sc := range scopeSets {
				p := &principal.Principal{Subject: s, ClientID: c, Scopes: sc}
				got, err := uris(t, inv, p)
				var se *principal.ScopeError
				if err != nil && !errors.As(err, &se) {
					t.Fatalf("%+v: %v", p, err)
				}
				for _, u := range got {
					switch {
					case u == "docs://about":
					case s != "" && u == fmt.Sprintf("docs://documents/%s/0", s), s != "" && u == fmt.Sprintf("docs://documents/%s/1", s):
					case c != "" && len(u) > 5 && u[:5] == "ws://" && u[5:5+len(c)] == c:
					default:
						t.Errorf("%+v listed %s", p, u)
					}
				}
			}
		}
	}
	assert.Positive(t, calls.Load())
}

func TestTemplateOwnerValidation(t *testing.T) {
	_, err := inventory.New(nil, []inventory.Template{{
		Name: "x", URITemplate: "x://{id}", Owner: 7, Read: inventory.TextReader("text/plain", ""),
	}}, inventory.Options{})
	assert.Error(t, err)
	assert.Equal(t, "subject", inventory.OwnedBySubject.String())
	assert.Equal(t, "client", inventory.OwnedByClient.String())
}
