// Package pgnotify carries mcpkit change notifications between the
// instances of a fleet over PostgreSQL LISTEN/NOTIFY: a [notify.Broker] for
// servers that already share a PostgreSQL database, with no other moving
// part.
//
//	pool, err := pgxpool.New(ctx, dsn)
//	if err != nil {
//		log.Fatal(err)
//	}
//	broker, err := pgnotify.New(pool, pgnotify.Options{}) // channel "mcpkit_notify"
//	if err != nil {
//		log.Fatal(err)
//	}
//	hub := notify.New(notify.Options{Broker: broker})
//	defer hub.Close() // before pool.Close: it stops the listener
//
// Every instance's hub publishes through the broker and listens to it: an
// event published by any instance (this one included) reaches the
// subscriptions of its subject on every instance, and nobody else's.
//
// # Publish
//
// [Broker.Publish] runs SELECT pg_notify(channel, payload) on a pooled
// connection, outside any transaction, so the notification is sent at once.
// The payload is compact JSON naming only the subject, the kind, for an
// update the URI, and the event's id in the hubs' event log when it has
// one (notify.Event.ID; instances of earlier versions ignore it, and an id
// no log gives is dropped on receipt):
//
//	{"subject":"bob","kind":"list_changed","id":"1764680000000-0"}
//	{"subject":"alice","kind":"resource_updated","uri":"docs://documents/q3Xv0c7mS8e2N9Rk1pLwGA"}
//
// PostgreSQL refuses payloads of 8000 bytes or more; Publish checks first
// and returns [ErrPayloadTooLarge] (a subject and URI within mcpkit's own
// limits always fit). Events without a subject, of an unknown kind, or
// holding invalid UTF-8 are refused with [ErrInvalidEvent]: JSON would
// otherwise replace bytes and address the event to somebody else.
//
// # Listen
//
// [Broker.Listen] takes one connection out of the pool for itself (it is
// not returned: a connection that LISTENs must not serve other queries),
// runs LISTEN on the channel and waits for notifications. Each payload is
// decoded and checked; a malformed one is ignored and logged by size only,
// never by content. When the connection is lost (a database restart, a
// failover, pg_terminate_backend, a network cut) Listen reconnects, waiting
// [Options.MinBackoff] at first and doubling up to [Options.MaxBackoff],
// with jitter so that a fleet does not reconnect in step. It returns only
// when its ctx ends.
//
// # Best effort
//
// Notifications are hints, not a log. Events published while an instance's
// listener is disconnected are lost for that instance's streams: NOTIFY
// delivers only to sessions listening at commit time, and nothing is
// replayed here. A client that misses a list_changed sees the change the
// next time it lists. The hubs' event log is what remembers: a legacy
// stream that reconnects with Last-Event-ID is given, from the log, what
// was published after its last event (on any instance when the log is
// shared, as redisstore's is; with each hub's own in-memory log, on the
// instance that published it). So that nothing is lost without a sign,
// a listener that listens again delivers a notify.Missed of every subject:
// the instance's legacy streams end with an SSE retry field and resume
// from the log with Last-Event-ID, its subscriptions/listen streams are
// told to list and read again ([Stats] counts reconnections).
//
// # Trust
//
// Any role that can connect to the database can NOTIFY on the channel and
// so address events to any subject. Events carry no data, only "your list
// changed" or "this URI changed", and clients answer them by listing or
// reading with their own credentials, so a forged event costs a request and
// reveals nothing; still, give the channel to this application alone
// ([Options.Channel] per application or per environment sharing a server).
package pgnotify
