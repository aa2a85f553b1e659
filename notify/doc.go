// Package notify fans change notifications out to the open streams of one
// principal, and only that principal: an event names a subject, and only
// subscriptions of that subject receive it. Nothing is ever broadcast.
//
//	hub := notify.New(notify.Options{})
//	defer hub.Close()
//
//	// An MCP stream of alice's (mcphttp does this for you):
//	sub := hub.Subscribe("alice")
//	defer sub.Close()
//	for {
//		select {
//		case ev := <-sub.Events(): // deliver ev to the stream
//		case <-sub.Done(): // ended: Close, hub.Close, or too slow (sub.Dropped())
//			return
//		case <-ctx.Done():
//			return
//		}
//	}
//
// Events() is never closed (a send on it could race with the end of the
// subscription); Done() is the signal that the subscription ended.
//
//	// The application, after alice's records changed:
//	hub.ListChanged(ctx, "alice")
//
// # Slow consumers
//
// Each subscription has a bounded queue (Options.QueueSize). A consumer
// that falls behind is not allowed to grow memory: when its queue is full,
// the subscription ends ([Subscription.Dropped] reports it) and the stream
// that owns it is closed; the client reconnects and lists again.
//
// # Fleets
//
// By default events stay in the process. Behind a load balancer, a
// principal's streams may be open on another instance than the one whose
// request changed the records: plug in a [Broker] that carries events to
// every instance (a message bus, Redis pub/sub, PostgreSQL LISTEN/NOTIFY —
// the documents example has one). Publish hands the event to the broker;
// every instance's hub receives it from the broker and delivers it to its
// own subscriptions of that subject.
//
// # Event ids and resuming
//
// Publish first records the event in the hub's [EventLog], which gives
// it its [Event.ID]; brokers carry the id, so every instance delivers an
// event with the same one. A stream that reconnects after the event with
// id x asks [Hub.Since] for key's events after x: the legacy era's
// Last-Event-ID (the sessions part does this). The log is bounded (per key
// a number of events and an age, and a [MemoryLog] a number of keys);
// an id it cannot place — unknown, too old, another log's — answers ok
// false, and the stream starts over (the client lists again). The default
// [MemoryLog] is the process's own: its ids mean nothing to another
// instance or to this one after a restart. A fleet shares one
// (redisstore.EventLog).
//
// # Nothing lost without a sign
//
// An event the log cannot record, or the broker cannot send (the Redis
// behind them down or stalled), is delivered at once to this instance's
// subscriptions (without an id if the log failed) and kept, at most 4,096
// (identical ones as one), to be recorded and sent again with backoff:
// the other instances then deliver it with its id, live or from the log
// when their listener catches up. What is given up is logged as lost. A
// broker's listener that cannot tell what a subject missed while it was
// cut off delivers a [Missed] to its own hub: the subject's streams end so
// that their clients resume (the legacy era's retry and Last-Event-ID),
// or are told to list and read again (the 2026-07-28 era's listen, which
// has no ids).
//
//	hub := notify.New(notify.Options{Broker: broker, Log: sharedLog})
//	missed, ok, err := hub.Since(ctx, caller.Key(), lastID) // the caller's own key, whatever lastID holds
//
// # Misuse
//
// New cannot fail: a Broker or Log that is an interface holding a nil
// pointer (a nil *redisstore.Broker, redisstore.NewBroker's result
// ignored with its error) is logged at ERROR, left out (the hub delivers
// in this process, with a MemoryLog) and reported by [Hub.Err], which
// sessions.New and the endpoint's sessions part check: such a hub is
// refused when the endpoint is built, never a panic on a request or in
// the listener's goroutine. Check Err after New where nothing else does.
package notify
