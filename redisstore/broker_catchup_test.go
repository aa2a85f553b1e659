package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/redisstore"
)

// A listener that lost its connection (CLIENT KILL TYPE pubsub) catches
// up from the event log when it subscribes again: the events published
// meanwhile reach its subscriptions, each once, in order; without the
// log they are lost.
func TestBrokerCatchesUpFromTheLog(t *testing.T) {
	for _, withLog := range []bool{true, false} {
		t.Run(map[bool]string{true: "with the log", false: "without"}[withLog], func(t *testing.T) {
			b, client := startBackend(t)
			ctx := context.Background()
			elog, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{})
			require.NoError(t, err)
			o := redisstore.BrokerOptions{Log: elog, MinBackoff: 400 * time.Millisecond, MaxBackoff: 400 * time.Millisecond}
			if !withLog {
				o.Log = nil
			}
			pub := newInstance(t, b.Client(t), redisstore.BrokerOptions{Log: elog})
			sub := newInstance(t, client, o)
			bob := sub.hub.Subscribe("bob")
			defer bob.Close()
			pub.hub.ResourceUpdated(ctx, "bob", "docs://documents/before")
			require.Equal(t, updated("bob", "docs://documents/before"), next(t, bob))

			before, channels := sub.broker.Stats().Connects, uint64(1)
			kill := func(ctx context.Context, c *redis.Client) error {
				return c.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err()
			}
			if cc, ok := client.(*redis.ClusterClient); ok {
				channels = redisstore.BrokerShards
				require.NoError(t, cc.ForEachShard(ctx, kill))
			} else {
				require.NoError(t, kill(ctx, client.(*redis.Client)))
			}
			time.Sleep(50 * time.Millisecond) // sub is waiting 200–400 ms to subscribe again
			for _, u := range []string{"a", "b", "c"} {
				pub.hub.ResourceUpdated(ctx, "bob", "docs://documents/"+u)
			}
			waitStats(t, sub.broker, func(s redisstore.BrokerStats) bool { return s.Connects >= before+channels }, "never subscribed again")
			pub.hub.ResourceUpdated(ctx, "bob", "docs://documents/after")
			if withLog {
				for _, u := range []string{"a", "b", "c", "after"} {
					assert.Equal(t, updated("bob", "docs://documents/"+u), next(t, bob))
				}
				assert.Equal(t, uint64(3), sub.broker.Stats().CaughtUp)
			} else {
				assert.Equal(t, updated("bob", "docs://documents/after"), next(t, bob), "the three are lost")
			}
			select {
			case e := <-bob.Events():
				t.Fatalf("delivered twice: %+v", e)
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
}
