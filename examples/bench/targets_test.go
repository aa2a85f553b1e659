package main

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// Every answer is checked: a 200 with a result counts, anything else is
// a bad answer (which fails the run).
func TestTargetsChecksAnswers(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "Bearer tok", r.Header.Get("Authorization"))
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"resources":[]}}`))
	}))
	defer ok.Close()
	limited := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-31429,"message":"rate limited"}}`))
	}))
	defer limited.Close()

	res, bad := loadTarget(http.DefaultClient, ok.URL, "tok", 2, 100*time.Millisecond)
	assert.Zero(t, bad)
	assert.Positive(t, res.rps)
	assert.LessOrEqual(t, res.p50, res.p99)

	_, bad = loadTarget(http.DefaultClient, limited.URL, "tok", 2, 100*time.Millisecond)
	assert.Positive(t, bad)
}
