package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/redisstore"
)

// BenchmarkEventLogInterleaved: the event log's calls, of a
// notify.MemoryLog and of the Redis log, 1 000 keys taking turns: append
// (what each published event costs its publisher) and since (what a
// stream that resumes asks: the 4 events after an id).
func BenchmarkEventLogInterleaved(b *testing.B) {
	client := benchClient(b)
	red, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{})
	if err != nil {
		b.Fatal(err)
	}
	mem := notify.NewMemoryLog(notify.MemoryLogOptions{})
	ctx := context.Background()
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = fmt.Sprintf("https://issuer.example\x00user-%04d", i)
	}
	ev := notify.Event{Kind: notify.ResourceUpdated, URI: "docs://documents/q3Xv0c7mS8e2N9Rk1pLwGA"}
	// since: per key, the id of the 5th event from the end.
	from := map[notify.EventLog][]string{}
	for _, l := range []notify.EventLog{mem, red} {
		for _, k := range keys {
			var ids []string
			for range 5 {
				id, err := l.Append(ctx, k, ev)
				if err != nil {
					b.Fatal(err)
				}
				ids = append(ids, id)
			}
			from[l] = append(from[l], ids[0])
		}
	}
	for _, op := range []string{"since", "append"} { // since first: append adds events
		b.Run(op, func(b *testing.B) {
			call := func(l notify.EventLog, i int) {
				if op == "append" {
					if _, err := l.Append(ctx, keys[i], ev); err != nil {
						b.Fatal(err)
					}
					return
				}
				evs, ok, err := l.Since(ctx, keys[i], from[l][i])
				if err != nil || !ok || len(evs) != 4 {
					b.Fatal("since", ok, len(evs), err)
				}
			}
			var memT, redT, pingT time.Duration
			n := 0
			b.ReportAllocs()
			for b.Loop() {
				i := n % len(keys)
				memT += timed(func() { call(mem, i) })
				redT += timed(func() { call(red, i) })
				pingT += timed(func() { ping(b, client) })
				n++
			}
			report(b, n, memT, redT, pingT)
		})
	}
}

// BenchmarkEventLogMemory reports the Redis memory (MEMORY USAGE) of one
// key's stream holding 1 and notify.DefaultLogEvents events, each an
// update of a URI of 39 bytes, as the documents example's. Run it alone,
// with -bench EventLogMemory -benchtime 1x.
func BenchmarkEventLogMemory(b *testing.B) {
	client := benchClient(b)
	ctx := context.Background()
	l, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{})
	if err != nil {
		b.Fatal(err)
	}
	ev := notify.Event{Kind: notify.ResourceUpdated, URI: "docs://documents/q3Xv0c7mS8e2N9Rk1pLwGA"}
	usage := func(key string) float64 {
		n, err := client.MemoryUsage(ctx, logKey(key), 0).Result()
		if err != nil {
			b.Fatal(err)
		}
		return float64(n)
	}
	for b.Loop() {
		if err := client.FlushAll(ctx).Err(); err != nil {
			b.Fatal(err)
		}
		for range notify.DefaultLogEvents {
			if _, err := l.Append(ctx, "full", ev); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := l.Append(ctx, "one", ev); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(usage("one"), "B/stream-of-1")
		b.ReportMetric(usage("full"), "B/stream-of-64")
	}
}
