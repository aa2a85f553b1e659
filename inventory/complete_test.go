package inventory_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
)

func completeFixture(t *testing.T, got *inventory.CompleteRequest) *inventory.Inventory {
	t.Helper()
	repo := inventory.Template{
		Name: "repos", URITemplate: "repo://{owner}/{name}", RequiredScopes: []string{"repo:read"}, Read: readEcho,
		Complete: map[string]inventory.CompleteFunc{
			"name": func(_ context.Context, req inventory.CompleteRequest) (inventory.Completion, error) {
				*got = req
				var vals []string
				for i := 0; i < 150; i++ {
					vals = append(vals, fmt.Sprintf("%s%03d", req.Value, i))
				}
				return inventory.Completion{Values: vals}, nil
			},
			"owner": func(_ context.Context, req inventory.CompleteRequest) (inventory.Completion, error) {
				if req.Value == "fail" {
					return inventory.Completion{}, errors.New("backend down")
				}
				return inventory.Completion{Values: []string{"me"}, Total: 7}, nil
			},
		},
	}
	files := inventory.Template{Name: "files", URITemplate: "file:///{+path}", Access: inventory.Public, Read: readEcho}
	inv, err := inventory.New(nil, []inventory.Template{repo, files}, inventory.Options{Logger: (&logBuffer{}).logger()})
	require.NoError(t, err)
	return inv
}

func TestComplete(t *testing.T) {
	var got inventory.CompleteRequest
	inv := completeFixture(t, &got)
	assert.True(t, inv.Completes())
	caller := &principal.Principal{Subject: "alice", Scopes: []string{"repo:read"}}
	ctx := context.Background()

	c, err := inv.Complete(ctx, caller, "repo://{owner}/{name}", "name", "kit", map[string]string{"owner": "me", "other": "dropped", "name": "kit"})
	require.NoError(t, err)
	assert.Len(t, c.Values, 100, "at most 100 values")
	assert.True(t, c.HasMore)
	assert.Equal(t, 150, c.Total, "total is at least the number of values returned")
	assert.Equal(t, "kit000", c.Values[0])
	assert.Equal(t, "name", got.Argument)
	assert.Equal(t, "kit", got.Value)
	assert.Equal(t, map[string]string{"owner": "me", "name": "kit"}, got.Context, "only the template's variables")
	assert.Equal(t, "alice", got.Principal.Subject)

	c, err = inv.Complete(ctx, caller, "repo://{owner}/{name}", "owner", "m", nil)
	require.NoError(t, err)
	assert.Equal(t, inventory.Completion{Values: []string{"me"}, Total: 7}, c)

	c, err = inv.Complete(ctx, caller, "repo://me/kit", "owner", "m", nil)
	require.NoError(t, err, "a concrete URI matching the template also works")
	assert.Equal(t, []string{"me"}, c.Values)

	c, err = inv.Complete(ctx, nil, "file:///{+path}", "path", "a", nil)
	require.NoError(t, err)
	assert.Equal(t, inventory.Completion{Values: []string{}}, c, "no completer: an empty completion")
}

func TestCompleteErrors(t *testing.T) {
	var got inventory.CompleteRequest
	inv := completeFixture(t, &got)
	ctx := context.Background()
	caller := &principal.Principal{Subject: "alice", Scopes: []string{"repo:read"}}
	var pe *inventory.ParamsError

	_, err := inv.Complete(ctx, caller, "nope://{x}", "x", "", nil)
	require.ErrorAs(t, err, &pe, "unknown template")
	assert.NotContains(t, pe.Error(), "nope")
	_, err = inv.Complete(ctx, caller, "repo://{owner}/{name}", "branch", "", nil)
	require.ErrorAs(t, err, &pe, "not a variable")
	assert.NotContains(t, pe.Error(), "branch")
	_, err = inv.Complete(ctx, nil, "repo://{owner}/{name}", "name", "", nil)
	assert.ErrorIs(t, err, principal.ErrUnauthenticated)
	_, err = inv.Complete(ctx, &principal.Principal{Subject: "eve"}, "repo://{owner}/{name}", "name", "", nil)
	assert.ErrorIs(t, err, principal.ErrInsufficientScope)
	_, err = inv.Complete(ctx, caller, "repo://{owner}/{name}", "owner", "fail", nil)
	assert.Same(t, inventory.ErrInternal, err)
}

func TestCompletesIsFalseWithoutCompleters(t *testing.T) {
	inv, err := inventory.New(statics(), []inventory.Template{docsTemplate(emptyList)}, inventory.Options{})
	require.NoError(t, err)
	assert.False(t, inv.Completes())
	assert.True(t, inv.HasListSources())
}

// Completion names one variable of a template, whatever its operator: a
// path segment, a query parameter, a name with dots.
func TestCompleteOperatorVariables(t *testing.T) {
	var got inventory.CompleteRequest
	complete := func(_ context.Context, req inventory.CompleteRequest) (inventory.Completion, error) {
		got = req
		return inventory.Completion{Values: []string{req.Argument + ":" + req.Value}}, nil
	}
	repo := inventory.Template{
		Name: "repos", URITemplate: "repo://{owner}{/name}{?ref,tab.v}", Access: inventory.Public, Read: readEcho,
		Complete: map[string]inventory.CompleteFunc{"name": complete, "ref": complete, "tab.v": complete},
	}
	inv, err := inventory.New(nil, []inventory.Template{repo}, inventory.Options{Logger: (&logBuffer{}).logger()})
	require.NoError(t, err)
	ctx := context.Background()

	for _, arg := range []string{"name", "ref", "tab.v"} {
		c, err := inv.Complete(ctx, nil, repo.URITemplate, arg, "m", map[string]string{"owner": "me", "name": "kit", "x": "dropped"})
		require.NoError(t, err, arg)
		assert.Equal(t, []string{arg + ":m"}, c.Values)
		assert.Equal(t, arg, got.Argument)
		assert.Equal(t, map[string]string{"owner": "me", "name": "kit"}, got.Context, "only the template's variables")
	}
	// A concrete URI that matches the template names it too, also with
	// optional variables absent.
	for _, ref := range []string{"repo://me/kit?ref=main", "repo://me", "repo://me?tab.v=x"} {
		c, err := inv.Complete(ctx, nil, ref, "ref", "ma", nil)
		require.NoError(t, err, ref)
		assert.Equal(t, []string{"ref:ma"}, c.Values, ref)
	}
	c, err := inv.Complete(ctx, nil, repo.URITemplate, "owner", "m", nil)
	require.NoError(t, err)
	assert.Equal(t, inventory.Completion{Values: []string{}}, c, "no completer: an empty completion")

	var pe *inventory.ParamsError
	for _, arg := range []string{"tab", "v", "?ref", "/name", "x"} {
		_, err = inv.Complete(ctx, nil, repo.URITemplate, arg, "", nil)
		require.ErrorAs(t, err, &pe, "%q is not a variable", arg)
	}
	for _, ref := range []string{"repo://me?ref=a&ref=b", "repo://me?tab.v=x&ref=main", "repo://me/kit/x"} {
		_, err = inv.Complete(ctx, nil, ref, "ref", "", nil)
		require.ErrorAs(t, err, &pe, "%q matches no template", ref)
	}
}

// The total is known when the callback sets it or returns every match;
// otherwise it stays zero with HasMore, which means unknown.
func TestCompleteTotal(t *testing.T) {
	values := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("v%03d", i)
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		from      inventory.Completion
		wantN     int
		wantTotal int
		wantMore  bool
	}{
		{name: "every match", from: inventory.Completion{Values: values(3)}, wantN: 3, wantTotal: 3},
		{name: "none", from: inventory.Completion{}, wantN: 0, wantTotal: 0},
		{name: "every match, more than the kit keeps", from: inventory.Completion{Values: values(150)}, wantN: 100, wantTotal: 150, wantMore: true},
		{name: "some, total unknown", from: inventory.Completion{Values: values(100), HasMore: true}, wantN: 100, wantTotal: 0, wantMore: true},
		{name: "some of more than the kit keeps, total unknown", from: inventory.Completion{Values: values(120), HasMore: true}, wantN: 100, wantTotal: 0, wantMore: true},
		{name: "some, total known", from: inventory.Completion{Values: values(100), Total: 400, HasMore: true}, wantN: 100, wantTotal: 400, wantMore: true},
		{name: "a total below the values is raised", from: inventory.Completion{Values: values(5), Total: 2, HasMore: true}, wantN: 5, wantTotal: 5, wantMore: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tmpl := inventory.Template{
				Name: "t", URITemplate: "t://{x}", Access: inventory.Public, Read: readEcho,
				Complete: map[string]inventory.CompleteFunc{"x": func(context.Context, inventory.CompleteRequest) (inventory.Completion, error) {
					return tc.from, nil
				}},
			}
			inv, err := inventory.New(nil, []inventory.Template{tmpl}, inventory.Options{})
			require.NoError(t, err)
			c, err := inv.Complete(context.Background(), nil, tmpl.URITemplate, "x", "", nil)
			require.NoError(t, err)
			assert.Len(t, c.Values, tc.wantN)
			assert.Equal(t, tc.wantTotal, c.Total)
			assert.Equal(t, tc.wantMore, c.HasMore)
		})
	}
}
