package flood

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// Each answer is sorted: 200s served; a 429 counts as limited only in the
// rate limits' full shape, any 429 short of it and any other status as
// other.
func TestFloodSortsAnswers(t *testing.T) {
	const good = `{"jsonrpc":"2.0","id":1,"error":{"code":-32023,"message":"Rate limit exceeded","data":{"retryAfterMs":2000}}}`
	answers := []func(w http.ResponseWriter){
		func(w http.ResponseWriter) { w.WriteHeader(http.StatusOK) },
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(429)
			_, _ = w.Write([]byte(good))
		},
		func(w http.ResponseWriter) { w.WriteHeader(429); _, _ = w.Write([]byte(good)) }, // no Retry-After
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(429)
			_, _ = w.Write([]byte(good))
		}, // not at least 1
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(429)
			_, _ = w.Write([]byte(`{"error":{"code":-32000,"data":{"retryAfterMs":2000}}}`)) // another code
		},
		func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "2")
			w.WriteHeader(429)
			_, _ = w.Write([]byte(`{"error":{"code":-32023}}`)) // no retryAfterMs
		},
		func(w http.ResponseWriter) { w.WriteHeader(http.StatusServiceUnavailable) },
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("MCP-Protocol-Version") != "2025-11-25" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		answers[int(n.Add(1)-1)%len(answers)](w)
	}))
	defer srv.Close()
	got := Start(srv.Client(), srv.URL, "tok", `{}`, len(answers), 1)()
	if want := (Counts{Served: 1, Limited: 1, Other: 5}); got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
