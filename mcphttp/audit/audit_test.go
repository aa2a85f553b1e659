package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/audit"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/principal"
)

// auditLog is a JSON slog handler's output, safe for concurrent writes.
type auditLog struct{ logbuf.Buffer }

func (l *auditLog) logger() *slog.Logger { return slog.New(slog.NewJSONHandler(l, nil)) }

// records returns the records written since the last call.
func (l *auditLog) records(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(l.Take()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		out = append(out, m)
	}
	return out
}

// TestAuditOutcomes: one record per call that touched the inventory, for
// each outcome, with who, what and when.
func TestAuditOutcomes(t *testing.T) {
	var log auditLog
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	limiter, err := ratelimit.New(ratelimit.Limits{
		Read: ratelimit.Rate{PerSecond: 1, Burst: 1}, Now: func() time.Time { return now },
	})
	require.NoError(t, err)
	f := mcptest.New(t, mcptest.Options{}, mcphttp.Observe(audit.New(audit.Options{Logger: log.logger(), RefusalInterval: -1})), (limiter).Part())
	alice, carol := f.Token(t, "alice"), f.Token(t, "carol")
	noScope := f.Token(t, "dave", "other:scope")
	lh := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	read := func(id int, uri string) string {
		return mcptest.Legacy(id, "resources/read", map[string]any{"uri": uri})
	}

	for _, tc := range []struct {
		name string
		rq   mcptest.Request
		want map[string]any // attributes the record must have (and absent: nil)
	}{
		{"list ok", mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: alice, Headers: lh},
			map[string]any{"method": "resources/list", "outcome": "ok", "status": 200.0, "subject": "alice", "client": "client-1", "template": nil, "code": nil}},
		{"read ok", mcptest.Request{Body: read(2, "docs://documents/alice-0001"), Token: alice, Headers: lh},
			map[string]any{"method": "resources/read", "outcome": "ok", "template": "documents", "uri": "docs://documents/alice-0001", "subject": "alice"}},
		// Carol asks for bob's document: the trail shows who tried what.
		{"read not found", mcptest.Request{Body: read(3, "docs://documents/bob-0001"), Token: carol, Headers: lh},
			map[string]any{"outcome": "not_found", "code": -32002.0, "template": "documents", "uri": "docs://documents/bob-0001", "subject": "carol"}},
		{"denied", mcptest.Request{Body: read(4, "docs://documents/alice-0001"), Token: noScope, Headers: lh},
			map[string]any{"outcome": "denied", "status": 403.0, "subject": "dave"}},
		{"unauthenticated", mcptest.Request{Body: mcptest.Legacy(5, "resources/list", nil), Headers: lh},
			map[string]any{"outcome": "unauthenticated", "status": 401.0, "subject": nil, "client": nil}},
		{"forged token", mcptest.Request{Body: mcptest.Legacy(6, "resources/list", nil), Token: alice[:len(alice)-2] + "xx", Headers: lh},
			map[string]any{"outcome": "unauthenticated", "status": 401.0, "subject": nil}},
		{"invalid cursor", mcptest.Request{Body: mcptest.Legacy(7, "resources/list", map[string]any{"cursor": "AAAAAAAA"}), Token: alice, Headers: lh},
			map[string]any{"outcome": "invalid_cursor", "cursor_reason": inventory.ReasonInvalid, "code": -32602.0}},
		{"templates", mcptest.Request{Body: mcptest.Legacy(8, "resources/templates/list", nil), Headers: lh},
			map[string]any{"method": "resources/templates/list", "outcome": "ok", "subject": nil}},
		{"completion", mcptest.Request{Body: mcptest.Legacy(9, "completion/complete", map[string]any{
			"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"}, "argument": map[string]any{"name": "id", "value": "1"}}), Headers: lh},
			map[string]any{"method": "completion/complete", "template": "template-data"}},
		// Alice's second read within the second: over her read limit.
		{"rate limited", mcptest.Request{Body: read(10, "docs://documents/alice-0002"), Token: alice, Headers: lh},
			map[string]any{"outcome": "rate_limited", "status": 429.0, "code": float64(ratelimit.CodeRateLimited), "subject": "alice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := time.Now()
			f.Do(t, tc.rq)
			recs := log.records(t)
			require.Len(t, recs, 1)
			rec := recs[0]
			assert.Equal(t, "mcp audit", rec["msg"])
			assert.Equal(t, "INFO", rec["level"])
			for k, v := range tc.want {
				if v == nil {
					assert.NotContains(t, rec, k)
				} else {
					assert.Equal(t, v, rec[k], k)
				}
			}
			at, err := time.Parse(time.RFC3339Nano, rec["time"].(string))
			require.NoError(t, err)
			assert.False(t, at.Before(before.Truncate(time.Millisecond)), "the time the call was received")
			assert.NotContains(t, rec, "issuer", "no issuer until principal.Principal has one")
		})
	}

	// Not audited: methods that do not touch the inventory, and unknown ones.
	for _, body := range []string{mcptest.Legacy(20, "ping", nil), mcptest.Legacy(21, "tools/teleport", nil), mcptest.Legacy(22, "resources/forge", nil),
		mcptest.Legacy(23, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}})} {
		f.Do(t, mcptest.Request{Body: body, Token: alice, Headers: lh})
	}
	assert.Empty(t, log.records(t))
}

// A URI of megabytes does not make a record of megabytes.
func TestAuditClipsLongURIs(t *testing.T) {
	var got []audit.Record
	trail := audit.New(audit.Options{Record: func(_ context.Context, r audit.Record) { got = append(got, r) }})
	f := mcptest.New(t, mcptest.Options{MaxBody: 8 << 20}, mcphttp.Observe(trail))
	long := "docs://documents/" + strings.Repeat("é", 1<<20) // 2 MiB, two bytes a rune
	f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/read", map[string]any{"uri": long}), Token: f.Token(t, "alice")})
	f.Do(t, mcptest.Request{Body: mcptest.Legacy(2, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"}), Token: f.Token(t, "alice")})
	require.Len(t, got, 2)
	assert.True(t, got[0].URITruncated)
	assert.LessOrEqual(t, len(got[0].URI), audit.MaxURIBytes)
	assert.True(t, strings.HasPrefix(long, got[0].URI))
	assert.True(t, utf8.ValidString(got[0].URI), "cut on a rune boundary")
	assert.Equal(t, mcphttp.OutcomeNotFound, got[0].Outcome)
	assert.False(t, got[1].URITruncated)
	assert.Equal(t, "docs://documents/alice-0001", got[1].URI)

	var log auditLog
	f = mcptest.New(t, mcptest.Options{MaxBody: 8 << 20}, mcphttp.Observe(audit.New(audit.Options{Logger: log.logger()})))
	f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/read", map[string]any{"uri": long}), Token: f.Token(t, "bob")}) // signed in: an anonymous body of megabytes is 413
	assert.Less(t, len(log.String()), 3*audit.MaxURIBytes)
	assert.Equal(t, true, log.records(t)[0]["uri_truncated"])
}

func TestAuditOptions(t *testing.T) {
	var got []audit.Record
	var mu sync.Mutex
	trail := audit.New(audit.Options{OmitURIs: true, Record: func(_ context.Context, r audit.Record) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r)
	}})
	f := mcptest.New(t, mcptest.Options{}, mcphttp.Observe(trail))
	f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/read", map[string]any{"uri": "docs://documents/alice-0003"}), Token: f.Token(t, "alice")})
	require.Len(t, got, 1)
	r := got[0]
	assert.Equal(t, "alice", r.Subject)
	assert.Equal(t, "client-1", r.ClientID)
	assert.Equal(t, "documents", r.Template)
	assert.Empty(t, r.URI, "OmitURIs")
	assert.Equal(t, mcphttp.OutcomeOK, r.Outcome)
	assert.Equal(t, http.StatusOK, r.Status)
	assert.False(t, r.Time.IsZero())

	// A level the logger does not enable writes nothing.
	var log auditLog
	quiet := audit.New(audit.Options{Logger: log.logger(), Level: slog.LevelDebug})
	f = mcptest.New(t, mcptest.Options{}, mcphttp.Observe(quiet))
	f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/templates/list", nil)})
	assert.Empty(t, log.String())
}

// TestAuditNeverHoldsTokens is a property test: whatever a client sends,
// with its token in the Authorization header, the query, the cursor, the
// _meta or a completion value, no audit record holds any part of a token
// longer than a few bytes: not the whole, not its signature, not its
// payload.
func TestAuditNeverHoldsTokens(t *testing.T) {
	var log auditLog
	f := mcptest.New(t, mcptest.Options{}, mcphttp.Observe(audit.New(audit.Options{Logger: log.logger()})))
	rng := rand.New(rand.NewPCG(14, 14))
	subjects := []string{"alice", "bob", "carol"}
	var tokens []string
	for i := range 40 {
		tok := f.Token(t, subjects[i%len(subjects)])
		if i%4 == 3 {
			tok = tok[:len(tok)-4] + "AAAA" // a forged signature
		}
		tokens = append(tokens, tok)
	}
	methods := []func(tok string) (string, string){
		func(string) (string, string) { return mcptest.Legacy(1, "resources/list", nil), "" },
		func(tok string) (string, string) {
			return mcptest.Legacy(2, "resources/list", map[string]any{"cursor": tok}), "" // a token as a cursor
		},
		func(string) (string, string) {
			return mcptest.Legacy(3, "resources/read", map[string]any{"uri": fmt.Sprintf("docs://documents/%s-%04d", subjects[rng.IntN(3)], rng.IntN(14))}), ""
		},
		func(tok string) (string, string) {
			return `{"jsonrpc":"2.0","id":4,"method":"resources/templates/list","params":{"_meta":{"traceparent":"` + tok + `","x":"` + tok + `"}}}`, ""
		},
		func(tok string) (string, string) {
			return mcptest.Legacy(5, "completion/complete", map[string]any{"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"},
				"argument": map[string]any{"name": "id", "value": tok}}), ""
		},
		func(tok string) (string, string) {
			return mcptest.Legacy(6, "resources/list", nil), "access_token=" + tok
		},
	}
	for range 400 {
		tok := tokens[rng.IntN(len(tokens))]
		body, query := methods[rng.IntN(len(methods))](tok)
		rq := mcptest.Request{Body: body, Query: query, Headers: map[string]string{"MCP-Protocol-Version": "2025-11-25"}}
		if rng.IntN(5) > 0 {
			rq.Token = tok
		}
		f.Do(t, rq)
	}
	out := log.String()
	require.NotEmpty(t, out)
	assert.Contains(t, out, `"outcome":"ok"`)
	assert.Contains(t, out, `"outcome":"unauthenticated"`)
	for _, tok := range tokens {
		parts := strings.Split(tok, ".")
		require.Len(t, parts, 3)
		for _, p := range append(parts, tok) {
			for i := 0; i+16 <= len(p); i += 8 { // every 16-byte window
				if strings.Contains(out, p[i:i+16]) {
					t.Fatalf("an audit record holds token bytes %q", p[i:i+16])
				}
			}
		}
	}
}

// With one trusted issuer principals carry none (identity keys stay bare
// subjects); the trail records the configured one (issue 21), and a
// principal's own issuer (several trusted) wins.
func TestAuditRecordsTheConfiguredIssuer(t *testing.T) {
	var got []audit.Record
	trail := audit.New(audit.Options{Issuer: "https://issuer.example", Record: func(_ context.Context, r audit.Record) { got = append(got, r) }})
	f := mcptest.New(t, mcptest.Options{}, mcphttp.Observe(trail))
	f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: f.Token(t, "alice")})
	require.Len(t, got, 1)
	assert.Equal(t, "https://issuer.example", got[0].Issuer)
	assert.Equal(t, "alice", got[0].Subject)

	got = nil
	trail.End(context.Background(), mcphttp.Call{Method: "resources/list", Principal: &principal.Principal{Issuer: "https://other.example", Subject: "bob"}})
	require.Len(t, got, 1)
	assert.Equal(t, "https://other.example", got[0].Issuer)
}
