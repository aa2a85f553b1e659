package redisstore_test

import (
	"context"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/redisstore"
	"github.com/mcpkit/mcpkit/redisstore/internal/redistest"
)

// BenchmarkClusterInterleaved: each store's call on one redis-server and
// on a Redis Cluster (3 masters + 3 replicas, a cluster client with
// ClusterOptions), alternately in one loop, so that load from other
// processes hits both alike. Reported: each one's mean and the ratio
// cluster/single.
func BenchmarkClusterInterleaved(b *testing.B) {
	_, single := startRedis(b)
	c := redistest.StartCluster(b, 3, 1)
	cluster := redisstore.NewClusterClient(c.Addrs()...)
	b.Cleanup(func() { _ = cluster.Close() })
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	type op func(i int) error
	// build returns the op of one store on client.
	builds := map[string]func(client redis.UniversalClient) op{
		"replay": func(client redis.UniversalClient) op {
			s, _ := redisstore.NewReplayStore(client, redisstore.ReplayOptions{Logger: quiet})
			_ = setMarkers(client, s)
			return func(i int) error {
				who := "caller-" + strconv.Itoa(i%1000)
				return s.Remember(ctx, "proof-"+strconv.Itoa(i)+"-"+strconv.FormatInt(time.Now().UnixNano(), 36), who, time.Now().Add(time.Minute))
			}
		},
		"rate": func(client redis.UniversalClient) op {
			s, _ := redisstore.NewRateStore(client, redisstore.RateOptions{})
			return func(i int) error {
				_, _, err := s.Take(ctx, ratelimit.Bucket{Key: "k" + strconv.Itoa(i%1000), PerSecond: 1e6, Burst: 1 << 20}, time.Now())
				return err
			}
		},
		"session-find": func(client redis.UniversalClient) op {
			s, _ := redisstore.NewSessionStore(client, redisstore.SessionOptions{})
			var ids []string
			var ps []*principal.Principal
			for i := range 100 {
				p := &principal.Principal{Subject: "s" + strconv.Itoa(i)}
				id := newID()
				if _, err := s.Create(ctx, id, p); err != nil {
					b.Fatal(err)
				}
				ids, ps = append(ids, id), append(ps, p)
			}
			return func(i int) error { _, err := s.Find(ctx, ids[i%100], ps[i%100]); return err }
		},
		"event-append": func(client redis.UniversalClient) op {
			l, _ := redisstore.NewEventLog(client, redisstore.EventLogOptions{})
			return func(i int) error {
				_, err := l.Append(ctx, "who-"+strconv.Itoa(i%1000), notify.Event{Kind: notify.ListChanged})
				return err
			}
		},
		"ping": func(client redis.UniversalClient) op {
			return func(int) error { return client.Ping(ctx).Err() }
		},
	}
	for _, name := range []string{"replay", "rate", "session-find", "event-append", "ping"} {
		b.Run(name, func(b *testing.B) {
			one, many := builds[name](single), builds[name](cluster)
			var t1, t2 time.Duration
			i := 0
			for b.Loop() {
				i++
				for k := range 2 { // in turn first
					f, t := one, &t1
					if (i+k)%2 == 1 {
						f, t = many, &t2
					}
					t0 := time.Now()
					if err := f(i); err != nil {
						b.Fatal(err)
					}
					*t += time.Since(t0)
				}
			}
			b.ReportMetric(float64(t1.Nanoseconds())/float64(i), "single-ns/op")
			b.ReportMetric(float64(t2.Nanoseconds())/float64(i), "cluster-ns/op")
			b.ReportMetric(float64(t2)/float64(t1), "cluster/single")
		})
	}
}
