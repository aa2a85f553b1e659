package redisstore_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/internal/nilness/nilnesstest"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/redisstore"
)

// unreachable is a client of nothing: every call fails at once.
func unreachable(t *testing.T) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", DialTimeout: 50 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Misuse is an error, never a panic (issue 35): every option struct of
// the module, walked field by field with typed nils and zero values,
// and the kit's options that take this module's types (notify.Options,
// ratelimit.Limits, sessions.Options), are refused at construction or
// work; every constructor refuses a nil client and an interface
// holding a nil pointer.
func TestEveryOptionStructOfTheModule(t *testing.T) {
	ctx := context.Background()
	alice := &principal.Principal{Subject: "alice", ClientID: "app"}
	cases := []nilnesstest.Case{
		{Options: redisstore.UpstreamOptions{}, Build: func(t *testing.T, o any) error {
			_, err := redisstore.NewUpstreamStore(unreachable(t), o.(redisstore.UpstreamOptions))
			return err
		}},
		{Options: redisstore.BrokerOptions{}, Build: func(t *testing.T, o any) error {
			b, err := redisstore.NewBroker(unreachable(t), o.(redisstore.BrokerOptions))
			if err != nil {
				return err
			}
			_ = b.Publish(ctx, notify.Event{Subject: "alice", Kind: notify.ListChanged})
			return nil
		}},
		{Options: redisstore.EventLogOptions{}}, {Options: redisstore.RateOptions{}}, {Options: redisstore.ReplayOptions{}},
		{Options: redisstore.SessionOptions{}},
		{Options: notify.Options{}, Build: func(t *testing.T, o any) error {
			h := notify.New(o.(notify.Options))
			defer h.Close()
			s := h.Subscribe("alice")
			defer s.Close()
			h.ListChanged(ctx, "alice")
			if id, err := h.Mark(ctx, "alice"); err == nil {
				_, _, _ = h.Since(ctx, "alice", id)
			}
			_, _, _ = h.Since(ctx, "alice", "1-1")
			return h.Err() // Close, deferred, waits for the broker's listener
		}},
		{Options: ratelimit.Limits{List: ratelimit.Rate{PerSecond: 1}}, Build: func(t *testing.T, o any) error {
			l, err := ratelimit.New(o.(ratelimit.Limits))
			if err != nil {
				return err
			}
			l.Allow(httptest.NewRequest("POST", "/mcp", nil), alice, "list")
			return nil
		}},
		{Options: sessions.Options{}, Build: func(t *testing.T, o any) error {
			hub := notify.New(notify.Options{})
			defer hub.Close()
			_, err := sessions.New(hub, o.(sessions.Options))
			if st := o.(sessions.Options).Store; err == nil && st != nil {
				_, _ = st.Create(ctx, "abc", alice)
				_, _ = st.Find(ctx, "abc", alice)
				_ = st.End(ctx, "abc", alice)
			}
			return err
		}},
	}
	nilnesstest.Covers(t, nilnesstest.OptionStructs(t, "."), cases)
	pool := []any{(*redisstore.Broker)(nil), (*redisstore.EventLog)(nil), (*redisstore.RateStore)(nil),
		(*redisstore.ReplayStore)(nil), (*redisstore.SessionStore)(nil), (*redisstore.UpstreamStore)(nil)}
	nilnesstest.Walk(t, "github.com/mcpkit/mcpkit/redisstore", pool, cases)

	for _, client := range []redis.UniversalClient{nil, (*redis.Client)(nil), (*redis.ClusterClient)(nil), (*redis.Ring)(nil)} {
		for name, build := range map[string]func() error{
			"NewBroker":       func() error { _, err := redisstore.NewBroker(client, redisstore.BrokerOptions{}); return err },
			"NewEventLog":     func() error { _, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{}); return err },
			"NewRateStore":    func() error { _, err := redisstore.NewRateStore(client, redisstore.RateOptions{}); return err },
			"NewReplayStore":  func() error { _, err := redisstore.NewReplayStore(client, redisstore.ReplayOptions{}); return err },
			"NewSessionStore": func() error { _, err := redisstore.NewSessionStore(client, redisstore.SessionOptions{}); return err },
			"NewUpstreamStore": func() error {
				_, err := redisstore.NewUpstreamStore(client, redisstore.UpstreamOptions{})
				return err
			},
		} {
			var err error
			require.NotPanics(t, func() { err = build() }, "%s(%T)", name, client)
			assert.Error(t, err, "%s(%T)", name, client)
		}
	}
}
