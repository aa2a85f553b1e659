package inventory_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/principal"
)

// A Read callback's *principal.ScopeError is passed on (issue 37), as a
// sorted, de-duplicated copy the callback cannot change afterwards; for an
// anonymous caller it is ErrUnauthenticated; one that could not help a
// step-up (no scope, an invalid scope, scopes the caller holds) or that
// comes after the request ended is a failed callback, logged. Before,
// every ScopeError was logged and answered ErrInternal.
func TestReadScopeErrorPassedOn(t *testing.T) {
	var answer error
	read := func(ctx context.Context, req inventory.ReadRequest) ([]inventory.Contents, error) {
		return nil, answer
	}
	logs := &logBuffer{}
	inv, err := inventory.New([]inventory.Resource{{URI: "test://public", Name: "public", Access: inventory.Public, Read: read}},
		[]inventory.Template{{Name: "projects", URITemplate: "proj://projects/{id}", Read: read}},
		inventory.Options{Logger: logs.logger()})
	require.NoError(t, err)
	ctx := context.Background()

	shared := []string{"proj:7", "proj:1", "proj:7"}
	answer = fmt.Errorf("project 7: %w", &principal.ScopeError{Required: shared})
	_, err = inv.Read(ctx, alice(), "proj://projects/7")
	var se *principal.ScopeError
	require.ErrorAs(t, err, &se, logs.String())
	assert.Equal(t, []string{"proj:1", "proj:7"}, se.Required)
	shared[0] = "changed"
	assert.Equal(t, []string{"proj:1", "proj:7"}, se.Required, "a copy")

	answer = &principal.ScopeError{Required: []string{"proj:7"}}
	_, err = inv.Read(ctx, nil, "test://public")
	assert.ErrorIs(t, err, principal.ErrUnauthenticated, "anonymous: sign in first")
	assert.Empty(t, logs.String())

	for name, bad := range map[string]error{
		"no scope":          &principal.ScopeError{},
		"an invalid scope":  &principal.ScopeError{Required: []string{"proj 7"}},
		"a quote":           &principal.ScopeError{Required: []string{`proj"7`}},
		"a held scope only": &principal.ScopeError{Required: []string{alice().Scopes[0]}},
		"a typed nil":       (*principal.ScopeError)(nil),
	} {
		answer = bad
		_, err = inv.Read(ctx, alice(), "proj://projects/7")
		assert.ErrorIs(t, err, inventory.ErrInternal, name)
	}
	assert.Contains(t, logs.String(), "callback failed")

	answer = &principal.ScopeError{Required: []string{"proj:7"}}
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = inv.Read(done, alice(), "proj://projects/7")
	assert.False(t, errors.As(err, &se), "after the request ended: no challenge")
}
