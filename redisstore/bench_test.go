package redisstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/redisstore"
)

// The benchmarks run the in-memory implementation and the Redis one
// (a redis-server on loopback) alternately in one loop, so that load from
// other processes hits both alike, and time a bare PING beside them: the
// round trip no Redis-backed call can skip. Reported: each one's mean,
// the ratio redis/memory, and what the Redis call adds over its round
// trip (redis − memory − ping).

// report writes the figures of an interleaved benchmark.
func report(b *testing.B, n int, mem, red, ping time.Duration) {
	f := float64(n)
	b.ReportMetric(float64(mem.Nanoseconds())/f, "memory-ns/op")
	b.ReportMetric(float64(red.Nanoseconds())/f, "redis-ns/op")
	b.ReportMetric(float64(ping.Nanoseconds())/f, "ping-ns/op")
	b.ReportMetric(float64(red)/float64(mem), "redis/memory")
	b.ReportMetric(float64((red-mem-ping).Nanoseconds())/f, "beyond-rtt-ns/op")
}

// setMarkers marks the store's Redis as one that lost nothing: no
// quarantine.
func setMarkers(client redis.UniversalClient, s *redisstore.ReplayStore) error {
	for _, m := range s.Markers() {
		if err := client.Set(context.Background(), m, "0", 0).Err(); err != nil {
			return err
		}
	}
	return nil
}

// timed runs fn and returns how long it took.
func timed(fn func()) time.Duration {
	t0 := time.Now()
	fn()
	return time.Since(t0)
}

// benchClient is a client of a fresh server, with the options the
// package documentation recommends.
func benchClient(b *testing.B) *redis.Client {
	b.Helper()
	_, c := startRedis(b)
	return c
}

func ping(b *testing.B, c *redis.Client) {
	if err := c.Ping(context.Background()).Err(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReplayInterleaved: a whole DPoP request's authentication (a
// cached token, the proof's parse, signature and checks, and its replay
// memory) with the in-memory cache and with the Redis store. The proofs
// are signed outside the timed part; shares are off in both (one caller).
func BenchmarkReplayInterleaved(b *testing.B) {
	client := benchClient(b)
	is := testissuer.Start(b, testissuer.Options{Audience: testResource})
	quiet := slog.New(slog.DiscardHandler)
	const bound = 1 << 22
	store, err := redisstore.NewReplayStore(client, redisstore.ReplayOptions{MaxEntries: bound, MaxEntriesPerCaller: bound, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	// A Redis that has held the store's memory for long: no quarantine.
	if err := setMarkers(client, store); err != nil {
		b.Fatal(err)
	}
	auth := func(rs dpop.ReplayStore) *authn.Authenticator {
		v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{Issuer: is.ID(), Resource: testResource, JWKSURL: is.JWKSURL(), Logger: quiet})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = v.Close() })
		a, err := authn.NewAuthenticator(authn.NewCache(v, authn.CacheOptions{}), authn.Options{Resource: testResource, Logger: quiet,
			DPoP: dpop.Options{Mode: dpop.Allowed, MaxReplayEntries: bound, MaxReplayEntriesPerCaller: bound, ReplayStore: rs}})
		if err != nil {
			b.Fatal(err)
		}
		return a
	}
	mem, red := auth(nil), auth(store)
	k, err := testissuer.NewProofKey(testissuer.EC256)
	if err != nil {
		b.Fatal(err)
	}
	jkt, _ := k.Thumbprint()
	tok := is.Token(b, testissuer.Claims{Subject: "alice", ClientID: "client-1", DPoPThumbprint: jkt}, testissuer.WithKey(testissuer.KidES256))
	req := func() *http.Request {
		p, err := k.Sign(testissuer.Proof{Method: http.MethodPost, URL: testURL, Token: tok})
		if err != nil {
			b.Fatal(err)
		}
		r := httptest.NewRequest(http.MethodPost, testURL, nil)
		r.Header.Set("Authorization", "DPoP "+tok)
		r.Header.Set("DPoP", p)
		return r
	}
	var memT, redT, pingT time.Duration
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		r1, r2 := req(), req()
		b.StartTimer()
		memT += timed(func() {
			if _, err := mem.Authenticate(r1); err != nil {
				b.Fatal(err)
			}
		})
		redT += timed(func() {
			if _, err := red.Authenticate(r2); err != nil {
				b.Fatal(err)
			}
		})
		pingT += timed(func() { ping(b, client) })
		n++
	}
	report(b, n, memT, redT, pingT)
}

// BenchmarkRateInterleaved: one Limiter.Allow (Take) and one Admit (Peek)
// with the in-memory table and with the Redis store, 1 000 callers taking
// turns, every call allowed.
func BenchmarkRateInterleaved(b *testing.B) {
	client := benchClient(b)
	store, err := redisstore.NewRateStore(client, redisstore.RateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	limits := ratelimit.Limits{Read: ratelimit.Rate{PerSecond: 1e6, Burst: 1e6}, Refused: ratelimit.Rate{PerSecond: 1e6, Burst: 1e6}}
	mem, _ := ratelimit.New(limits)
	limits.Store = store
	red, _ := ratelimit.New(limits)
	callers := make([]*principal.Principal, 1000)
	for i := range callers {
		callers[i] = &principal.Principal{Issuer: "https://issuer.example", Subject: fmt.Sprintf("user-%04d@example.com", i)}
	}
	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	for _, op := range []string{"take", "peek"} {
		b.Run(op, func(b *testing.B) {
			call := func(l *ratelimit.Limiter, c *principal.Principal) bool {
				if op == "peek" {
					ok, _ := l.Admit(r)
					return ok
				}
				ok, _ := l.Allow(r, c, mcphttp.ClassRead)
				return ok
			}
			var memT, redT, pingT time.Duration
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				c := callers[n%len(callers)]
				memT += timed(func() {
					if !call(mem, c) {
						b.Fatal("refused")
					}
				})
				redT += timed(func() {
					if !call(red, c) {
						b.Fatal("refused")
					}
				})
				pingT += timed(func() { ping(b, client) })
				n++
			}
			report(b, n, memT, redT, pingT)
		})
	}
}

// BenchmarkBrokerInterleaved: an event from Publish to its subscription,
// in one hub without a broker and through Redis (PUBLISH, then the
// listener's delivery).
func BenchmarkBrokerInterleaved(b *testing.B) {
	client := benchClient(b)
	quiet := slog.New(slog.DiscardHandler)
	broker, err := redisstore.NewBroker(client, redisstore.BrokerOptions{Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	local, remote := notify.New(notify.Options{}), notify.New(notify.Options{Broker: broker, Logger: quiet})
	defer local.Close()
	defer remote.Close()
	for broker.Stats().Connects == 0 {
		time.Sleep(time.Millisecond)
	}
	sl, sr := local.Subscribe("alice"), remote.Subscribe("alice")
	defer sl.Close()
	defer sr.Close()
	ctx := context.Background()
	roundTrip := func(h *notify.Hub, s *notify.Subscription) {
		h.ListChanged(ctx, "alice")
		select {
		case <-s.Events():
		case <-time.After(5 * time.Second):
			b.Fatal("no event")
		}
	}
	var memT, redT, pingT time.Duration
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		memT += timed(func() { roundTrip(local, sl) })
		redT += timed(func() { roundTrip(remote, sr) })
		pingT += timed(func() { ping(b, client) })
		n++
	}
	report(b, n, memT, redT, pingT)
}

// BenchmarkRedisMemory reports the Redis memory (INFO used_memory) a
// remembered proof, a rate bucket and a session (of a principal of its
// own, without subscriptions) hold, over 100 000 of each, the default
// prefixes. Each iteration fills Redis anew: run it alone, with
// -bench RedisMemory -benchtime 1x.
func BenchmarkRedisMemory(b *testing.B) {
	client := benchClient(b)
	ctx := context.Background()
	used := func() int64 {
		info, err := client.Info(ctx, "memory").Result()
		if err != nil {
			b.Fatal(err)
		}
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		b.Fatal("no used_memory")
		return 0
	}
	const n = 100_000
	clk := newClock()
	replay, _ := redisstore.NewReplayStore(client, redisstore.ReplayOptions{MaxEntries: 1 << 22, MaxEntriesPerCaller: 1 << 22, Now: clk.Now, Logger: slog.New(slog.DiscardHandler)})
	rate, _ := redisstore.NewRateStore(client, redisstore.RateOptions{})
	for b.Loop() {
		if err := client.FlushAll(ctx).Err(); err != nil {
			b.Fatal(err)
		}
		_ = setMarkers(client, replay)
		before := used()
		for i := range n {
			// 22 characters, as the Authenticator's digests.
			proof := fmt.Sprintf("%022d", i)
			if err := replay.Remember(ctx, proof, "caller-digest-0000000", clk.Now().Add(time.Minute)); err != nil {
				b.Fatal(err)
			}
		}
		mid := used()
		for i := range n {
			if _, _, err := rate.Take(ctx, ratelimit.Bucket{Key: fmt.Sprintf("r:s%d", i), PerSecond: 1, Burst: 10}, clk.Now()); err != nil {
				b.Fatal(err)
			}
		}
		after := used()
		st, _ := redisstore.NewSessionStore(client, redisstore.SessionOptions{Limits: sessions.Limits{MaxSessions: 2 * n}, Now: clk.Now})
		for i := range n {
			p := &principal.Principal{Issuer: "https://issuer.example", Subject: fmt.Sprintf("user-%06d", i), ClientID: "client-1", Audience: testResource}
			if _, err := st.Create(ctx, newID(), p); err != nil {
				b.Fatal(err)
			}
		}
		sessionsDone := used()
		b.ReportMetric(float64(mid-before)/n, "B/proof")
		b.ReportMetric(float64(after-mid)/n, "B/bucket")
		b.ReportMetric(float64(sessionsDone-after)/n, "B/session")
	}
}

// BenchmarkRateRequestInterleaved: a whole resources/read request (a
// public static resource, the caller in the context) through an endpoint
// whose Limiter keeps its buckets in memory, and through one whose
// Limiter keeps them in Redis: what the Redis store costs a request.
func BenchmarkRateRequestInterleaved(b *testing.B) {
	client := benchClient(b)
	store, err := redisstore.NewRateStore(client, redisstore.RateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	inv, err := inventory.New([]inventory.Resource{{
		URI: "notes://welcome", Name: "welcome", Access: inventory.Public,
		Read: inventory.TextReader("text/plain", "Hello!"),
	}}, nil, inventory.Options{})
	if err != nil {
		b.Fatal(err)
	}
	endpoint := func(s ratelimit.Store) http.Handler {
		l, err := ratelimit.New(ratelimit.Limits{Read: ratelimit.Rate{PerSecond: 1e6, Burst: 1e6}, Store: s})
		if err != nil {
			b.Fatal(err)
		}
		ep, err := mcphttp.New(inv, mcphttp.Options{Logger: slog.New(slog.DiscardHandler)}, l.Part())
		if err != nil {
			b.Fatal(err)
		}
		return ep
	}
	mem, red := endpoint(nil), endpoint(store)
	const body = `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"notes://welcome"}}`
	serve := func(h http.Handler, subject string) {
		r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Accept", "application/json, text/event-stream")
		ctx, err := principal.NewContext(r.Context(), principal.Principal{Subject: subject, ClientID: "notes-app"})
		if err != nil {
			b.Fatal(err)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r.WithContext(ctx))
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
	subjects := make([]string, 1000)
	for i := range subjects {
		subjects[i] = fmt.Sprintf("user-%04d", i)
	}
	var memT, redT, pingT time.Duration
	n := 0
	b.ReportAllocs()
	for b.Loop() {
		s := subjects[n%len(subjects)]
		memT += timed(func() { serve(mem, s) })
		redT += timed(func() { serve(red, s) })
		pingT += timed(func() { ping(b, client) })
		n++
	}
	report(b, n, memT, redT, pingT)
}

// BenchmarkSessionInterleaved: what a request in a session asks the
// store — Find (checking the binding and recording the use) and, for each
// update a stream receives, Subscribed — of a sessions.MemoryStore and of
// the Redis store, 1 000 sessions of 1 000 principals taking turns.
func BenchmarkSessionInterleaved(b *testing.B) {
	client := benchClient(b)
	red, err := redisstore.NewSessionStore(client, redisstore.SessionOptions{})
	if err != nil {
		b.Fatal(err)
	}
	mem, err := sessions.NewMemoryStore(sessions.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	type sess struct {
		id string
		p  *principal.Principal
	}
	all := make([]sess, 1000)
	for i := range all {
		all[i] = sess{newID(), &principal.Principal{Issuer: "https://issuer.example", Subject: fmt.Sprintf("user-%04d", i), ClientID: "client-1",
			Audience: testResource, Expires: time.Now().Add(time.Hour)}}
		for _, st := range []sessions.Store{mem, red} {
			if _, err := st.Create(ctx, all[i].id, all[i].p); err != nil {
				b.Fatal(err)
			}
			if err := st.Subscribe(ctx, all[i].id, all[i].p, "docs://documents/0001"); err != nil {
				b.Fatal(err)
			}
		}
	}
	for _, op := range []string{"find", "subscribed"} {
		b.Run(op, func(b *testing.B) {
			call := func(st sessions.Store, s sess) {
				var err error
				if op == "find" {
					_, err = st.Find(ctx, s.id, s.p)
				} else {
					var ok bool
					ok, err = st.Subscribed(ctx, s.id, "docs://documents/0001")
					if !ok && err == nil {
						b.Fatal("not subscribed")
					}
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			var memT, redT, pingT time.Duration
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				s := all[n%len(all)]
				memT += timed(func() { call(mem, s) })
				redT += timed(func() { call(red, s) })
				pingT += timed(func() { ping(b, client) })
				n++
			}
			report(b, n, memT, redT, pingT)
		})
	}
}
