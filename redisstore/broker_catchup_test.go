package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/notify"
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
			o := redisstore.BrokerOptions{Log: elog, MinBackoff: 2 * time.Second, MaxBackoff: 2 * time.Second}
			if !withLog {
				o.Log = nil
			}
			pub := newInstance(t, b.Client(t), redisstore.BrokerOptions{Log: elog})
			sub := newInstance(t, client, o)
			bob := sub.hub.Subscribe("bob")
			defer bob.Close()
			pub.hub.ResourceUpdated(ctx, "bob", "docs://documents/before")
			require.Equal(t, updated("bob", "docs://documents/before"), next(t, bob))

			before, channels := sub.broker.Stats().Connects, cutListeners(t, client)
			time.Sleep(50 * time.Millisecond) // sub is waiting 1–2 s to subscribe again: a margin for a loaded machine
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
				assert.Equal(t, missed("bob"), next(t, bob), "the three are lost, with a sign")
				e := next(t, bob)
				for e == missed("bob") { // on a cluster, one per channel subscribed again
					e = next(t, bob)
				}
				assert.Equal(t, updated("bob", "docs://documents/after"), e)
			}
			select {
			case e := <-bob.Events():
				t.Fatalf("delivered twice: %+v", e)
			case <-time.After(200 * time.Millisecond):
			}
		})
	}
}

// cutListeners closes the pub/sub connections of every node of client
// (CLIENT KILL TYPE pubsub) and returns the number of channels a
// listener subscribes again.
func cutListeners(t *testing.T, client redis.UniversalClient) uint64 {
	t.Helper()
	ctx := context.Background()
	kill := func(ctx context.Context, c *redis.Client) error {
		return c.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub").Err()
	}
	if cc, ok := client.(*redis.ClusterClient); ok {
		require.NoError(t, cc.ForEachShard(ctx, kill))
		return redisstore.BrokerShards
	}
	require.NoError(t, kill(ctx, client.(*redis.Client)))
	return 1
}

// A listener cut off also catches up the subjects of the streams that
// started on its instance (notify.Hub.Mark, through the Broker's Log)
// though it had delivered none of their events: carol's stream started
// during the cut, dave's before it; both get what was published
// meanwhile, once each. The publisher has an EventLog of its own: only
// the listener's instance's starts count.
func TestBrokerCatchesUpNewStreams(t *testing.T) {
	b, client := startBackend(t)
	ctx := context.Background()
	subLog, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{})
	require.NoError(t, err)
	pubClient := b.Client(t)
	pubLog, err := redisstore.NewEventLog(pubClient, redisstore.EventLogOptions{})
	require.NoError(t, err)
	pub := newInstance(t, pubClient, redisstore.BrokerOptions{Log: pubLog})
	sub := newInstance(t, client, redisstore.BrokerOptions{Log: subLog, MinBackoff: 2 * time.Second, MaxBackoff: 2 * time.Second})
	open := func(subject string) *notify.Subscription { // as a legacy stream opens
		_, err := sub.hub.Mark(ctx, subject)
		require.NoError(t, err)
		return sub.hub.Subscribe(subject)
	}
	dave := open("dave")
	defer dave.Close()

	before, channels := sub.broker.Stats().Connects, cutListeners(t, client)
	time.Sleep(50 * time.Millisecond) // sub is waiting 1–2 s to subscribe again: a margin for a loaded machine
	carol := open("carol")
	defer carol.Close()
	for _, who := range []string{"carol", "dave"} {
		pub.hub.ResourceUpdated(ctx, who, "docs://documents/during")
	}
	waitStats(t, sub.broker, func(s redisstore.BrokerStats) bool { return s.Connects >= before+channels }, "never subscribed again")
	for _, who := range []string{"carol", "dave"} {
		pub.hub.ResourceUpdated(ctx, who, "docs://documents/after")
	}
	for who, s := range map[string]*notify.Subscription{"carol": carol, "dave": dave} {
		assert.Equal(t, updated(who, "docs://documents/during"), next(t, s), "%s: caught up", who)
		assert.Equal(t, updated(who, "docs://documents/after"), next(t, s))
		select {
		case e := <-s.Events():
			t.Fatalf("%s: delivered twice: %+v", who, e)
		case <-time.After(100 * time.Millisecond):
		}
	}
	// What was published during the cut came from the log; what was
	// published after may have too, when the catch-up read the log after
	// it was appended (the test publishes as soon as the listener has
	// subscribed, while its catch-up runs): once each either way.
	caught := sub.broker.Stats().CaughtUp
	assert.True(t, caught >= 2 && caught <= 4, "caught up %d", caught)
}

// Messages may arrive out of their ids' order (several publishers; a
// publisher whose slot map lags during a failover sends to the old
// master while another event went to the new one): a listener cut off
// after delivering a newer event still catches up an older one it never
// got. Here the older is logged but its message never sent; before the
// change the catch-up started from the newest id delivered and skipped
// it.
func TestBrokerCatchesUpOutOfOrder(t *testing.T) {
	b, client := startBackend(t)
	ctx := context.Background()
	elog, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{})
	require.NoError(t, err)
	pubClient := b.Client(t)
	pubLog, err := redisstore.NewEventLog(pubClient, redisstore.EventLogOptions{})
	require.NoError(t, err)
	pub := newInstance(t, pubClient, redisstore.BrokerOptions{Log: pubLog})
	sub := newInstance(t, client, redisstore.BrokerOptions{Log: elog, MinBackoff: 400 * time.Millisecond, MaxBackoff: 400 * time.Millisecond})
	bob := sub.hub.Subscribe("bob")
	defer bob.Close()
	pub.hub.ResourceUpdated(ctx, "bob", "docs://documents/first")
	require.Equal(t, updated("bob", "docs://documents/first"), next(t, bob))

	_, err = pubLog.Append(ctx, "bob", updated("bob", "docs://documents/late")) // logged; its message is late
	require.NoError(t, err)
	pub.hub.ResourceUpdated(ctx, "bob", "docs://documents/newer")
	require.Equal(t, updated("bob", "docs://documents/newer"), next(t, bob))

	before, channels := sub.broker.Stats().Connects, cutListeners(t, client)
	waitStats(t, sub.broker, func(s redisstore.BrokerStats) bool { return s.Connects >= before+channels }, "never subscribed again")
	assert.Equal(t, updated("bob", "docs://documents/late"), next(t, bob), "caught up")
	select {
	case e := <-bob.Events():
		t.Fatalf("delivered again: %+v", e)
	case <-time.After(200 * time.Millisecond):
	}
}
