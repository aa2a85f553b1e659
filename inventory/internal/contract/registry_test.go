package contract

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAnnotations(t *testing.T) {
	half, nan, over := 0.5, math.NaN(), 1.5
	assert.NoError(t, Annotations(nil, nil, ""))
	assert.NoError(t, Annotations([]string{"user", "assistant"}, &half, "2025-01-02T03:04:05Z"))
	assert.Error(t, Annotations([]string{"admin"}, nil, ""))
	assert.Error(t, Annotations(nil, &nan, ""))
	assert.Error(t, Annotations(nil, &over, ""))
	assert.Error(t, Annotations(nil, nil, "yesterday"))
}

func TestScopes(t *testing.T) {
	in := []string{"b", "a", "b"}
	got, err := Scopes(in, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, got)
	assert.Equal(t, []string{"b", "a", "b"}, in, "the caller's slice is left alone")
	_, err = Scopes([]string{"a"}, true)
	assert.Error(t, err, "a public resource requires no scope")
	_, err = Scopes([]string{"a b"}, false)
	assert.Error(t, err, "not a scope token")
	_, err = Scopes([]string{""}, false)
	assert.Error(t, err)
	got, err = Scopes(nil, true)
	require.NoError(t, err)
	assert.Empty(t, got)
}
