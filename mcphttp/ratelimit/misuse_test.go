package ratelimit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// nilStore is a Store type whose nil pointer is given by mistake.
type nilStore struct{}

func (*nilStore) Take(context.Context, ratelimit.Bucket, time.Time) (bool, time.Duration, error) {
	return true, 0, nil
}

func (*nilStore) Peek(context.Context, ratelimit.Bucket, time.Time) (bool, time.Duration, error) {
	return true, 0, nil
}

// A typed-nil Limits.Store is an error of New naming it.
func TestTypedNilStoreIsAnError(t *testing.T) {
	_, err := ratelimit.New(ratelimit.Limits{Read: ratelimit.Rate{PerSecond: 1}, Store: (*nilStore)(nil)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Limits.Store")
}
