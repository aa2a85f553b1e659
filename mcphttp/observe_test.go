package mcphttp_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
)

// observed is a copy of what an Observer saw of one call.
type observed struct {
	mcphttp.Call
	subject     string // of the Principal at End
	startedWith string // Method at Start
	traceparent string // params._meta.traceparent, read at Start
	ctxMark     any    // the mark Start put in the context, as End got it
}

// recorder is an Observer that keeps copies of every call. Start puts a
// mark in the context, so that tests see which context callbacks and End
// got.
type recorder struct {
	mu    sync.Mutex
	calls []observed
	mark  string
	open  int // Start without End
}

type markKey struct{ name string }

func (o *recorder) Start(ctx context.Context, c mcphttp.Call) context.Context {
	o.mu.Lock()
	o.open++
	o.mu.Unlock()
	tp, _ := c.Meta("traceparent")
	return context.WithValue(ctx, markKey{o.mark}, observed{startedWith: c.Method, traceparent: tp})
}

func (o *recorder) End(ctx context.Context, c mcphttp.Call) {
	rec, _ := ctx.Value(markKey{o.mark}).(observed)
	rec.Call = c
	rec.HTTP = nil   // not compared
	rec.Params = nil // not compared
	rec.ctxMark = ctx.Value(markKey{o.mark})
	if c.Principal != nil {
		rec.subject = c.Principal.Subject
		rec.Principal = nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.open--
	o.calls = append(o.calls, rec)
}

func (o *recorder) take(t *testing.T) []observed {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	require.Zero(t, o.open, "every Start has its End")
	calls := o.calls
	o.calls = nil
	return calls
}

func (o *recorder) one(t *testing.T) observed {
	t.Helper()
	calls := o.take(t)
	require.Len(t, calls, 1)
	return calls[0]
}

// TestObserverOutcomes serves one call per row and checks what the
// Observer saw against what the client got: the status always equals the
// response's, the JSON-RPC code the body's.
func TestObserverOutcomes(t *testing.T) {
	obs := &recorder{mark: "outcomes"}
	f := mcptest.New(t, mcptest.Options{}, mcphttp.Observe(obs))
	alice := f.Token(t, "alice")
	noScope := f.Token(t, "alice", "other:scope")
	lh := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	body, mh := mcptest.Modern(7, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"})

	for _, tc := range []struct {
		name    string
		rq      mcptest.Request
		want    mcphttp.Outcome
		code    int64
		subject string
		target  string
		uri     string
		reason  string
		check   func(t *testing.T, got observed)
	}{
		{name: "list", rq: mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: alice, Headers: lh},
			want: mcphttp.OutcomeOK, subject: "alice",
			check: func(t *testing.T, got observed) {
				assert.Equal(t, 14, got.Entries, "2 static + 12 documents")
				assert.Equal(t, "2025-11-25", got.ProtocolVersion)
				assert.Equal(t, "1", got.ID.Raw())
			}},
		{name: "templates/list", rq: mcptest.Request{Body: mcptest.Legacy(2, "resources/templates/list", nil), Headers: lh},
			want: mcphttp.OutcomeOK, check: func(t *testing.T, got observed) { assert.Equal(t, 2, got.Entries) }},
		{name: "read", rq: mcptest.Request{Body: mcptest.Legacy(3, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"}), Token: alice, Headers: lh},
			want: mcphttp.OutcomeOK, subject: "alice", target: "documents", uri: "docs://documents/alice-0001"},
		{name: "read of a static resource", rq: mcptest.Request{Body: mcptest.Legacy(4, "resources/read", map[string]any{"uri": "test://static-text"}), Headers: lh},
			want: mcphttp.OutcomeOK, target: "static-text", uri: "test://static-text"},
		{name: "modern read", rq: mcptest.Request{Body: body, Token: alice, Headers: mh},
			want: mcphttp.OutcomeOK, subject: "alice", target: "documents", uri: "docs://documents/alice-0001",
			check: func(t *testing.T, got observed) { assert.Equal(t, mcpwire.Version20260728, got.ProtocolVersion) }},
		// Bob's document read by alice: not found, named by its template.
		{name: "read not found", rq: mcptest.Request{Body: mcptest.Legacy(5, "resources/read", map[string]any{"uri": "docs://documents/bob-0001"}), Token: alice, Headers: lh},
			want: mcphttp.OutcomeNotFound, code: jsonrpc.CodeResourceNotFound, subject: "alice", target: "documents", uri: "docs://documents/bob-0001"},
		{name: "read of nothing registered", rq: mcptest.Request{Body: mcptest.Legacy(6, "resources/read", map[string]any{"uri": "evil://x"}), Headers: lh},
			want: mcphttp.OutcomeNotFound, code: jsonrpc.CodeResourceNotFound, uri: "evil://x"},
		{name: "completion", rq: mcptest.Request{Body: mcptest.Legacy(7, "completion/complete", map[string]any{
			"ref": map[string]any{"type": "ref/resource", "uri": "test://template/{id}/data"}, "argument": map[string]any{"name": "id", "value": "12"}}), Headers: lh},
			want: mcphttp.OutcomeOK, target: "template-data", uri: "test://template/{id}/data"},
		{name: "tampered cursor", rq: mcptest.Request{Body: mcptest.Legacy(8, "resources/list", map[string]any{"cursor": "AAAA"}), Token: alice, Headers: lh},
			want: mcphttp.OutcomeInvalidCursor, code: jsonrpc.CodeInvalidParams, subject: "alice", reason: inventory.ReasonInvalid},
		{name: "list without a token", rq: mcptest.Request{Body: mcptest.Legacy(9, "resources/list", nil), Headers: lh},
			want: mcphttp.OutcomeUnauthenticated},
		{name: "read without the scope", rq: mcptest.Request{Body: mcptest.Legacy(10, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"}), Token: noScope, Headers: lh},
			want: mcphttp.OutcomeDenied, subject: "alice", target: "documents", uri: "docs://documents/alice-0001"},
		// A forged Token: refused before serving, observed all the same.
		{name: "invalid token", rq: mcptest.Request{Body: mcptest.Legacy(11, "resources/list", nil), Token: alice + "x", Headers: lh},
			want: mcphttp.OutcomeUnauthenticated},
		// A token in the query string: refused by the Authenticator (400).
		{name: "token in the query", rq: mcptest.Request{Query: "access_token=" + alice, Body: mcptest.Legacy(15, "ping", nil), Headers: lh},
			want: mcphttp.OutcomeInvalid},
		{name: "unknown method", rq: mcptest.Request{Body: mcptest.Legacy(12, "tools/teleport", nil), Headers: lh},
			want: mcphttp.OutcomeInvalid, code: jsonrpc.CodeMethodNotFound},
		{name: "bad params", rq: mcptest.Request{Body: mcptest.Legacy(13, "resources/read", map[string]any{}), Headers: lh},
			want: mcphttp.OutcomeInvalid, code: jsonrpc.CodeInvalidParams},
		{name: "unsupported protocol version", rq: mcptest.Request{Body: mcptest.Legacy(14, "ping", nil), Headers: map[string]string{"MCP-Protocol-Version": "1999-01-01"}},
			want: mcphttp.OutcomeInvalid, code: jsonrpc.CodeUnsupportedProtocolVersion,
			check: func(t *testing.T, got observed) { assert.Empty(t, got.ProtocolVersion) }},
		{name: "notification", rq: mcptest.Request{Body: `{"jsonrpc":"2.0","method":"notifications/initialized"}`, Headers: lh},
			want: mcphttp.OutcomeOK, check: func(t *testing.T, got observed) { assert.True(t, got.ID.IsZero()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := f.Do(t, tc.rq)
			got := obs.one(t)
			assert.Equal(t, tc.want, got.Outcome, "outcome %s", got.Outcome)
			assert.Equal(t, w.Code, got.Status, "the observed status is the response's")
			assert.Equal(t, tc.subject, got.subject)
			assert.Equal(t, tc.target, got.Target)
			assert.Equal(t, tc.uri, got.URI)
			assert.Equal(t, tc.reason, got.CursorReason)
			assert.Equal(t, got.startedWith, got.Method, "Start saw the method")
			assert.NotNil(t, got.ctxMark, "End got the context Start returned")
			assert.False(t, got.Start.IsZero())
			assert.Positive(t, got.Duration)
			if w.Code == http.StatusOK && w.Body.Len() > 0 {
				assert.Equal(t, w.Body.Len(), got.Bytes)
				if r := mcptest.Decode(t, w); r.Error != nil {
					assert.Equal(t, r.Error.Code, got.Code, "the observed code is the body's")
					if got.Message != "" {
						assert.Equal(t, r.Error.Message, got.Message)
					}
				}
			}
			assert.Equal(t, tc.code, got.Code)
			switch {
			case tc.want == mcphttp.OutcomeOK:
				assert.Empty(t, got.ErrorType)
			case got.Code != 0:
				assert.Equal(t, strconv.FormatInt(got.Code, 10), got.ErrorType)
			default:
				assert.Equal(t, strconv.Itoa(got.Status), got.ErrorType)
			}
			if tc.check != nil {
				tc.check(t, got)
			}
		})
	}
}

// TestObserverCallbackContext: the inventory's callbacks run under the
// context Start returned, so an application's spans nest under the MCP
// span.
func TestObserverCallbackContext(t *testing.T) {
	obs := &recorder{mark: "callbacks"}
	f := mcptest.New(t, mcptest.Options{}, mcphttp.Observe(obs))
	var seen []any
	f.Store.Seen = func(ctx context.Context) { seen = append(seen, ctx.Value(markKey{"callbacks"})) }
	alice := f.Token(t, "alice")
	lh := map[string]string{"MCP-Protocol-Version": "2025-11-25"}
	f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: alice, Headers: lh})
	f.Do(t, mcptest.Request{Body: mcptest.Legacy(2, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"}), Token: alice, Headers: lh})
	require.Len(t, seen, 2)
	for i, mark := range seen {
		assert.NotNil(t, mark, "callback %d ran under Start's context", i)
	}
	assert.Len(t, obs.take(t), 2)
}

// TestObserverBatch: each element of a batch is a call of its own; a
// batch refused by authentication is observed element by element too.
func TestObserverBatch(t *testing.T) {
	obs := &recorder{mark: "batch"}
	f := mcptest.New(t, mcptest.Options{}, mcphttp.Observe(obs))
	alice := f.Token(t, "alice")
	batch := "[" + mcptest.Legacy(1, "resources/list", nil) + "," + mcptest.Legacy(2, "ping", nil) + `,{"jsonrpc":"2.0","method":"notifications/initialized"}]`
	w := f.Do(t, mcptest.Request{Body: batch, Token: alice})
	require.Equal(t, http.StatusOK, w.Code)
	calls := obs.take(t)
	require.Len(t, calls, 2, "the requests; a batch's notifications are accepted, not served")
	assert.Equal(t, []string{"resources/list", "ping"}, []string{calls[0].Method, calls[1].Method})
	for _, c := range calls {
		assert.Equal(t, mcpwire.Version20250326, c.ProtocolVersion)
		assert.Equal(t, "alice", c.subject)
	}

	w = f.Do(t, mcptest.Request{Body: batch, Token: "not-a-token"})
	require.Equal(t, http.StatusUnauthorized, w.Code)
	calls = obs.take(t)
	require.Len(t, calls, 2)
	for _, c := range calls {
		assert.Equal(t, mcphttp.OutcomeUnauthenticated, c.Outcome)
		assert.Equal(t, http.StatusUnauthorized, c.Status)
		assert.Empty(t, c.subject)
	}
}

// TestObserverMeta: Call.Meta reads params._meta members, exactly.
func TestObserverMeta(t *testing.T) {
	obs := &recorder{mark: "meta"}
	f := mcptest.New(t, mcptest.Options{}, mcphttp.Observe(obs))
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tc := range []struct {
		name, params, want string
	}{
		{"present", `{"_meta":{"traceparent":"` + tp + `"}}`, tp},
		{"absent", `{"_meta":{"tracestate":"a=b"}}`, ""},
		{"no _meta", `{}`, ""},
		{"not a string", `{"_meta":{"traceparent":12}}`, ""},
		// A path-like key must not reach into nested objects.
		{"nested is not the member", `{"_meta":{"x":{"traceparent":"` + tp + `"}}}`, ""},
		{"outside _meta", `{"traceparent":"` + tp + `"}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f.Do(t, mcptest.Request{Body: `{"jsonrpc":"2.0","id":1,"method":"ping","params":` + tc.params + `}`})
			assert.Equal(t, tc.want, obs.one(t).traceparent)
		})
	}
}

// TestObservers: the fan-out chains contexts and gives each End the
// context of its own Start.
func TestObservers(t *testing.T) {
	a, b := &recorder{mark: "a"}, &recorder{mark: "b"}
	f := mcptest.New(t, mcptest.Options{}, mcphttp.Observe(a, nil, b))
	var sawA, sawB any
	f.Store.Seen = func(ctx context.Context) { sawA, sawB = ctx.Value(markKey{"a"}), ctx.Value(markKey{"b"}) }
	f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "resources/list", nil), Token: f.Token(t, "alice")})
	assert.NotNil(t, sawA)
	assert.NotNil(t, sawB, "the callback sees both observers' contexts")
	ga, gb := a.one(t), b.one(t)
	assert.NotNil(t, ga.ctxMark)
	assert.NotNil(t, gb.ctxMark)
	assert.Equal(t, mcphttp.OutcomeOK, ga.Outcome)
	assert.Equal(t, 14, gb.Entries)
}

func TestOutcomeString(t *testing.T) {
	want := map[mcphttp.Outcome]string{
		mcphttp.OutcomeOK: "ok", mcphttp.OutcomeInvalid: "invalid", mcphttp.OutcomeUnauthenticated: "unauthenticated",
		mcphttp.OutcomeDenied: "denied", mcphttp.OutcomeNotFound: "not_found", mcphttp.OutcomeInvalidCursor: "invalid_cursor",
		mcphttp.OutcomeRateLimited: "rate_limited", mcphttp.OutcomeUnavailable: "unavailable", mcphttp.OutcomeError: "error",
		mcphttp.Outcome(200): "outcome(200)",
	}
	for o, s := range want {
		assert.Equal(t, s, o.String())
	}
}

// A principal from the context (a service's own middleware) is observed
// like a verified one.
func TestObserverContextPrincipal(t *testing.T) {
	obs := &recorder{mark: "ctx"}
	f := mcptest.New(t, mcptest.Options{}, mcphttp.Observe(obs))
	w := post(t, serviceAuth(f.EP), mcptest.Legacy(1, "resources/list", nil), "Bearer user:bob", nil)
	require.Equal(t, http.StatusOK, w.Code)
	got := obs.one(t)
	assert.Equal(t, "bob", got.subject)
	assert.Equal(t, 5, got.Entries, "2 static + bob's 3")
}

// keeper is an Observer that keeps End's Call as given and reads it on
// another goroutine later, as one that queues records does.
type keeper struct {
	kept chan mcphttp.Call
}

func (k keeper) Start(ctx context.Context, _ mcphttp.Call) context.Context { return ctx }
func (k keeper) End(_ context.Context, c mcphttp.Call)                     { k.kept <- c }

// TestObserverKeepsEnd: End's Call is the observer's own: kept past
// End, read on another goroutine while later calls are served (the
// endpoint reuses its records and the body's buffer), it still tells its
// own call, its Params included (the call's own copy).
func TestObserverKeepsEnd(t *testing.T) {
	k := keeper{kept: make(chan mcphttp.Call, 64)}
	f := mcptest.New(t, mcptest.Options{}, mcphttp.Observe(k))
	f.Store.Add("alice", 3)
	token := f.Token(t, "alice")
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.Do(t, mcptest.Request{Body: mcptest.Legacy(i+1, "ping", map[string]any{"n": i}), Token: token})
			f.Do(t, mcptest.Request{Body: mcptest.Legacy(i+1, "resources/list", nil), Token: token})
		}()
	}
	wg.Wait()
	close(k.kept)
	methods := map[string]int{}
	params := map[string]bool{}
	for c := range k.kept {
		methods[c.Method]++
		if c.Method == "ping" {
			params[string(c.Params)] = true
		} else {
			assert.Nil(t, c.Params)
		}
		assert.Equal(t, http.StatusOK, c.Status)
		require.NotNil(t, c.Principal)
		assert.Equal(t, "alice", c.Principal.Subject)
		assert.Equal(t, "2025-03-26", c.ProtocolVersion) // no MCP-Protocol-Version header
		if c.Method == "resources/list" {
			assert.Equal(t, 17, c.Entries) // the same page every time: alice's 3 and the fixture's own
			assert.Equal(t, mcphttp.ClassList, c.Class(), "Class answers without Params")
		} else {
			assert.Zero(t, c.Entries)
		}
	}
	assert.Equal(t, map[string]int{"ping": 20, "resources/list": 20}, methods)
	for i := range 20 {
		assert.True(t, params[`{"n":`+strconv.Itoa(i)+`}`], "ping %d's params, kept", i)
	}
}
