// Package redisstore keeps the state that the instances of an mcpkit fleet
// must share in Redis: the DPoP replay memory ([ReplayStore], a
// dpop.ReplayStore), the rate-limit buckets ([RateStore], a
// ratelimit.Store), legacy sessions and their subscriptions
// ([SessionStore], a sessions.Store), the change notifications between
// instances ([Broker], a notify.Broker over pub/sub) and the recent events
// of each principal's streams ([EventLog], a notify.EventLog), from which
// a legacy stream that reconnects to any instance with Last-Event-ID is
// given what it missed, and the users' sealed upstream grants
// ([UpstreamStore], an upstream.Store of package authn/upstream). It is a module of its own, so
// that the kit's module keeps requiring only jwx, gjson and testify; it
// uses github.com/redis/go-redis/v9.
//
//	opt, err := redis.ParseURL(os.Getenv("MCPKIT_REDIS_URL")) // redis://[:password@]host:6379/0, rediss:// for TLS
//	if err != nil {
//		log.Fatal(err)
//	}
//	opt.DialTimeout, opt.ReadTimeout, opt.WriteTimeout = time.Second, 500*time.Millisecond, 500*time.Millisecond
//	opt.MaxRetries = -1  // never run a store's call twice (see Faults)
//	opt.DialerRetries = 1
//	client := redis.NewClient(opt)
//	defer client.Close()
//
//	replay, err := redisstore.NewReplayStore(client, redisstore.ReplayOptions{})
//	auth, err := authn.NewAuthenticator(cache, authn.Options{Resource: "https://mcp.example.com/mcp",
//		DPoP: dpop.Options{Mode: dpop.Allowed, ReplayStore: replay}})
//
//	rates, err := redisstore.NewRateStore(client, redisstore.RateOptions{})
//	limiter, err := ratelimit.New(ratelimit.Limits{Read: ratelimit.Rate{PerSecond: 50, Burst: 200}, Store: rates})
//
//	broker, err := redisstore.NewBroker(client, redisstore.BrokerOptions{})
//	events, err := redisstore.NewEventLog(client, redisstore.EventLogOptions{})
//	hub := notify.New(notify.Options{Broker: broker, Log: events})
//	defer hub.Close() // before client.Close: it stops the listener
//
//	store, err := redisstore.NewSessionStore(client, redisstore.SessionOptions{})
//	part, err := sessions.New(hub, sessions.Options{Store: store})
//	ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth}, part, limiter.Part())
//
//	grantStore, err := redisstore.NewUpstreamStore(client, redisstore.UpstreamOptions{})
//	photosOpts.Store = grantStore // photosOpts: the upstream's endpoints and keys
//	photos, err := upstream.NewGrants(photosOpts)
//
// One client serves all three; each store names its keys (or channel) by
// a prefix of its own, which applications sharing a Redis must set apart.
// For Redis Cluster, see ClusterOptions and the Redis Cluster section.
// Nothing starts in the background except the hub's listener.
//
// # Round trips
//
// Every call a request makes is one round trip: Remember, Take/Peek and
// each session operation but Create are one script call each (EVALSHA;
// EVAL once after Redis lost its script cache), Publish one PUBLISH (or
// SPUBLISH), an event log's Append one script (XADD and PEXPIRE) and Since
// one XRANGE. A session's Create reads the principal's sessions first
// (two round trips; in a store of several families two more, its pointer
// and its seat, a third when it ends older sessions, and, the seat ledger
// full, two more for each hundred seats it checks; End one more there),
// and Subscribed and
// Subscriptions read the pointer of a session the instance has not seen
// (see Redis Cluster). On a Redis Cluster (BenchmarkClusterInterleaved, 3
// masters and 3 replicas on the same loaded 2-core machine as one
// redis-server, interleaved in one run) a call took 1.4–2.1 times as long
// as on one Redis (a Remember 1.7–2.1, a Take 1.6, a session's Find
// 1.4–1.5, an Append 1.6; a bare PING 1.1–1.5). Measured against the in-memory
// implementations, interleaved in one run on a loaded 2-core machine with
// redis-server on loopback (the Benchmark…Interleaved functions, which
// time a bare PING beside them; PING took 35–70 µs there): a DPoP request's
// authentication took 2.1–2.4 times as long (180–200 µs against 80–85 µs:
// the round trip and 30–40 µs of script), a resources/read through a
// rate-limited endpoint 6–8.6 times (82–90 µs against 10–13 µs), a Take
// itself 43–48 µs against 0.95 µs, an event from Publish to its
// subscription 75–83 µs against 1.2–1.9 µs, a session's Find 86–96 µs
// against 1.2–1.5 µs and Subscribed 57–60 µs against 1.2 µs. The event
// log (BenchmarkEventLogInterleaved, PING 62–135 µs in that run): an
// Append, which every published event costs its publisher, 150–230 µs
// against 1.8–2.5 µs of a notify.MemoryLog (84–93 times; 18–92 µs beyond
// the round trip), a Since of 4 events 88–130 µs against 3.2–3.7 µs (27–35
// times; 14–22 µs beyond it). On a network, add its round trip to each.
//
// # The replay memory
//
// [ReplayStore.Remember] does in one script what the in-memory cache does
// under its lock: a proof seen before is a replay (dpop.ErrReplayed,
// whoever presents it, on whichever instance); else, if its caller holds
// its share or the store its bound, it is refused with an
// *dpop.UnavailableError saying when to retry (503 and Retry-After); else
// it is remembered (SET with the proof's remaining lifetime and
// ReplayOptions.ClockSkew as its TTL, so an instance whose clock is behind
// still finds it). Shares and the bound are counted as the in-memory
// cache counts them, in counters of the current and the previous period
// (two proof windows and the skew), so the defaults mean the same thing:
// 100 000 proofs fleet-wide (about 13.5 MB of Redis, 135 bytes a proof,
// measured), 2 000 a caller. Keys hold the Authenticator's digests, never
// an identity.
//
// Of two instances remembering one proof at once, exactly one succeeds
// (the script is atomic), so a proof is accepted once by the whole fleet.
//
// Redis without persistence forgets everything when it restarts; a
// forgotten proof could then be replayed within its window. The store
// keeps a marker key in each family, naming the Redis process that wrote
// it (see Redis that may have lost data, below): a Redis found without it
// (new, restarted empty, flushed, or the marker evicted), or one that is
// not the process that wrote it (restarted, even from a snapshot holding
// the marker; a replica promoted), refuses every proof for one period
// (two proof windows, the skew and a second: 126 s by default) with
// Retry-After, after which every proof it may have forgotten is too old
// to be accepted. A new deployment starts so too. Give the store a Redis
// with maxmemory-policy noeviction (the default): an eviction policy could
// drop live proofs without the marker, and a full Redis then answers
// errors instead, which refuse proofs.
//
// # Rate limits
//
// [RateStore] runs GCRA in one script: a bucket is one key holding the
// time at which it will be full again, the key is the prefix and the
// SHA-256 of the Limiter's bucket key (which holds an identity key or an
// address), and it expires when the bucket is full again, so Redis holds
// only the callers that spent tokens lately (about 83 bytes each,
// measured). Its answers are those of the in-memory buckets for the same
// calls at the same times (TestRateStoreAsInMemory), and every Limiter
// that uses one store shares each caller's budget. Times are the
// Limiters' clocks: instances whose clocks disagree by d give a caller up
// to d × rate tokens more or fewer. A Redis that restarts empty starts
// every bucket full.
//
// # Sessions
//
// [SessionStore] keeps what a sessions part asks of its store, with the
// rules of sessions.MemoryStore (its tests run against it too) and its
// bounds fleet-wide: a session minted by one instance is found by every
// other, bound to its principal, and ends at its lifetime, at its
// credential's expiry and when idle; a principal holds at most
// MaxSessionsPerPrincipal (a new one ends its oldest), the store at most
// MaxSessions (then initialize is answered without a session), a session
// at most MaxSubscriptions URIs, and everything expires with its session.
// About 520 bytes of one Redis a session (measured with a principal of
// its own each, the worst case; 720 in the same run when one Redis held
// 16 families and a pointer a session), plus its URIs. A Redis that restarts empty,
// or that may have lost data (see below), forgets the sessions: their
// clients get 404 and initialize again; an ended session never comes
// back.
//
// # The event log
//
// [EventLog] keeps each key's recent events (a principal's identity key:
// the hub appends every event it publishes) as a Redis stream named by
// the prefix and the SHA-256 of the key, trimmed with MAXLEN ~ Events
// (64 by default; between trims up to some 100 more) and expiring Age (30
// minutes by default) after its last event. An event's id is the entry's
// id (ms-seq), unique per key and never given twice, even across a Redis
// restart (the sequence of each Redis run begins at a base of its own);
// Since(key, id) reads from
// id on and answers ok only when id is still there, which proves nothing
// after it was trimmed; an id trimmed, expired, of a Redis that restarted
// empty or may have lost data (see below), or of a form the log does not
// give (checked before any round trip)
// makes the stream start over. A stream costs about 4.8 KB of Redis with
// 1 event and 9.9 KB with 64 (MEMORY USAGE, BenchmarkEventLogMemory:
// Redis 7 allocates a stream's node whole; each entry carries the Redis
// run that wrote it, which doubled the 64's 4.8 KB, measured in one run),
// so count up to 10 KB for each principal with an event in the last Age. Redis out of reach: Append
// fails (the hub delivers the event at once on its instance and records
// and sends it again when Redis is back) and Since fails (the stream
// starts over: list_changed); both come back with Redis.
//
// # Notifications
//
// [Broker] publishes each event as a compact JSON message on one channel —
// {"subject":"bob","kind":"list_changed","id":"1764680000000-0"} or
// {"subject":"alice","kind":"resource_updated","uri":"docs://documents/x"},
// with the event's log id when it has one (instances of earlier versions
// ignore it; an id no log gives is dropped), the documents example's
// PostgreSQL broker's messages, at most
// [MaxPayloadBytes] — and [Broker.Listen] holds one subscribed connection,
// delivering every valid message to the hub. A message that is not exactly
// one valid event (read with the kit's strict JSON reader: no repeated or
// case-variant names) is ignored and logged by size only. When the
// connection is lost, or stops answering the ping sent after
// BrokerOptions.HealthCheck of silence, Listen subscribes again with
// capped exponential backoff and jitter, and returns only when its
// context ends (a hub listens once). Pub/sub keeps nothing: events
// published while an instance is not subscribed are lost for its streams,
// as with LISTEN/NOTIFY, unless the Broker has the hubs' event log
// (BrokerOptions.Log): a listener that subscribes again then first
// delivers what the log holds after the last event it delivered of each
// subject it delivered one of lately (TestBrokerCatchesUpFromTheLog),
// and after the start of each stream that opened on its instance,
// before or during the cut (notify.Hub.Mark, appended through the same
// EventLog, which legacy GET and listen streams call as they open:
// TestBrokerCatchesUpNewStreams). A subject whose events the log cannot
// tell (trimmed or expired meanwhile, Redis back empty, the log out of
// reach) gets a notify.Missed, which ends its legacy streams with retry
// and restarts its listen streams in place (TestStreamsAcrossARedisOutage,
// TestStreamEndsWhenRedisLosesItsSession); without a Log every stream of
// the instance gets one at each re-subscription. Not caught up: a subject
// with neither a delivered event nor a mark (a stream opened while the
// log was out of reach); the subjects beyond the 65,536 the listener
// remembers. Any
// client of the Redis can publish on the channel and so address events to
// any subject; events carry no data, only "list again" or "read this
// again" for the client's own credentials, but give the channel (and the
// Redis) to the application alone.
//
// # Faults
//
// Each store has a gate for each Redis node (one for a single-node
// client; one per master for a cluster client): after a call could not
// reach a node, the store's calls to that node fail at once with
// [ErrUnavailable] for 50 ms, doubling to a second, while one call at a
// time probes; the first answer opens it. An outage so costs one probe,
// not a connection attempt (up to DialTimeout when the network drops
// packets) per request, the stores come back within a second of Redis,
// and a dead master of a cluster closes only the calls on its slots'
// keys. What a failure means is the caller's choice: the Authenticator
// refuses the proof (503, Retry-After: 1; never a proof accepted
// unremembered), the Limiter follows Limits.FailClosed (by default it
// lets calls through and logs once a minute), the hub logs a failed
// publish. No error text reaches a client, and the Authenticator and the
// Limiter log none.
//
// No call is ever sent twice: a retried script whose first run landed but
// whose answer was lost would refuse a fresh proof as its own replay, or
// charge a bucket twice. Configure a single-node client with MaxRetries
// -1. A cluster client retries a call after a timeout up to MaxRedirects
// times whatever MaxRetries says; the stores' calls tell it not to
// (go-redis's NoRetry), so it follows only the answers after which the
// call cannot have run (MOVED, ASK, READONLY, NOSCRIPT, TRYAGAIN;
// TestOnCluster/stall stalls a node past ReadTimeout: the bucket is
// charged once, where go-redis's own Script.Run ran twice).
//
// # Redis that may have lost data
//
// A Redis restarted from a snapshot older than its last writes (its
// default save points after a crash; the dump.rdb that a node that was
// ever a replica keeps from its last full resync, even with an empty save setting),
// restarted empty, flushed, or a replica promoted before it had every
// write of its master, has forgotten writes without knowing it. Every
// store's script therefore names the replication history of the Redis
// that runs it — its run id (INFO server) and replication id (INFO
// replication master_replid), drawn anew at each start and at each
// promotion of a replica, and on a cluster its node id (CLUSTER MYID) —
// and marks what it writes with it:
// the replay families' markers, each session family's epoch (a session
// carries the epoch it was created in), each event-log entry. Data found
// marked with another history is not trusted, and the store does what it
// does for a Redis found empty: the replay store refuses its family's
// proofs for a period (TestReplayAfterAnOlderSnapshot: SAVE, 200 more
// proofs, kill -9, restart from the dump: 200 of 200 were accepted twice
// before, none now; TestOnCluster/older_snapshot, a master restarted
// faster than cluster-node-timeout: 92 of 92 before, none now), the
// session store begins a new epoch (the family's sessions are gone, so
// none that ended comes back), the event log drops the stream (a client's
// id is then unknown: it starts over). Two kinds of data of another
// history are trusted. Data moved with its slot from another master in
// good health (a reshard). And, on a cluster, data written in the history
// that a promoted replica continued when the failover lost nothing: the
// store asks the old master, named by the mark, and trusts the link only
// when that node now follows the new master having continued its history
// without a full resync at exactly the point where the new master's
// began (its master_replid2 and second_repl_offset equal the new
// master's), which Redis grants only when the old master held nothing the
// new one lacked. A manual failover (CLUSTER FAILOVER without FORCE or
// TAKEOVER) waits for the replica to catch up, so it proves its link
// within moments (the first call of the shard's families waits for it,
// up to 2 s) and costs nothing: TestBrokerFollowsManualFailovers (10
// manual failovers under load: no event lost, no stream started over),
// TestOnCluster/manual_failover (proofs still replays, sessions alive,
// after a failover and after failing back). Proven links are kept by
// each process and chained (a family idle over several failovers);
// a process started after a failover whose old master has since moved on
// cannot prove it, and treats that data as lost. A replica promoted
// before it synced, a master that failed and came back resynced in full,
// a restart, prove nothing. Outside a cluster no link is proven (the old
// master is not named): a Sentinel failover, like a planned restart,
// costs a quarantine of DPoP proofs, the sessions and the event logs of
// the Redis (of the master, on
// a cluster); an operator who knows that nothing was lost may set the
// replay markers to "0" (ReplayStore.Markers). Rate buckets are not
// checked: a Redis that lost them starts them full. An ACL user of the
// stores needs, besides the keys' commands and +eval +evalsha, +info, and
// on a cluster +cluster|myid +cluster|nodes (and +command +cluster|slots
// for go-redis's cluster client); [CheckClient] names the one missing, as
// it names a wrong password ([ErrAuth]). Give the stores a prefix whose
// '{', if any, opens a hash tag: the constructors refuse "app{}:".
//
// # Redis Cluster
//
// Give the stores a cluster client built with [ClusterOptions] (or
// [NewClusterClient], or [ApplyClusterSettings] on options from
// redis.ParseClusterURL): no retries, short timeouts, and the cluster's
// layout reloaded every second instead of go-redis's minute, so that a
// replica promoted after its master's failure is used within a second of
// its promotion (TestOnCluster/failover: every store answered on the dead
// master's keys about 3 s after the kill, 0.2–1 s after the promotion,
// with cluster-node-timeout 1 s; 60.2 s with go-redis's defaults, in one
// run). Run
// [CheckClient] at start-up: a single-node client of a cluster's node
// would serve only that node's keys.
//
// Every script touches the keys of one hash slot and declares them all.
// The stores spread over the masters: a replay store's keys are in up to
// 16 families (MaxEntries / (8 × MaxEntriesPerCaller): 6 by default), each
// caller's in one, and each family's hash tag names a slot in its own
// equal share of the 16384 slots, so a standard cluster (each master a
// contiguous range) holds a near-equal number of families on each master.
// Each family has its own marker and its part of MaxEntries (at least
// eight shares); a proof is a replay for every caller of its family (the
// Authenticator binds a proof to one token, so to one caller). Sessions
// are spread likewise by principal (up to 16 families on a cluster; one on
// one Redis); MaxSessions bounds the store as a whole, exactly, however
// unevenly principals hash: on a cluster through a ledger of seats on a
// slot of its own, which a Create and an End touch and no other call (so
// while the ledger's master is down, until its replica is promoted, no
// session is created and initialize is answered without one); Subscribed and
// Subscriptions, which know no principal, find a session's family in the
// instance's memory of the sessions it saw, else in a pointer key of its
// own (one round trip more), which expires with its session (moved on by
// a use, at most once a quarter of IdleTimeout) and goes with End. Rate
// buckets and event logs are keyed by a hash already. The broker
// publishes each subject's events on one of 8 channels (SPUBLISH), each
// on a slot of its own, and listens on all of them (SSUBSCRIBE, one
// connection each), subscribing again when Redis moves a channel's slot.
// With 1,000 principals on 3 masters the busiest master held 34 % of the
// keys (TestOnCluster/spread; 80 % with one hash tag per store). A prefix
// with a hash tag of its own ("{app}:") keeps a store's keys on one slot.
//
// While a slot moves from one master to another (redis-cli --cluster
// reshard or rebalance: about a second for 7,500 keys), Redis answers
// TRYAGAIN, without running it, to every script that declares several of
// the slot's keys of which some are new or already moved: a replay
// store's Remember and every session call. The stores send such a call
// again after 10 ms, then 20, 40, 80 and 100 ms waits, for up to 2 s in
// all (less when the call's context ends first), so a move of up to some
// 15,000 keys only slows the calls on its slot; a longer one fails them
// after 2 s. TestOnCluster/migration moves a slot holding a replay
// family, a session family, rate buckets and event logs (1,500 keys more,
// 20 a MIGRATE) while two instances call the stores on it: in one run,
// with the waits off, 1,220 of 2,898 calls failed (425 Remember, 795
// session calls, all TRYAGAIN) around a 1.0 s move; with them, none of
// 844 (the calls waited out the 1.0 s move), and in both no bucket
// was charged twice, no fresh proof was its own replay, no event was
// lost.
//
// A master's failure costs the calls on its slots' keys until its
// replica is promoted and seen (TestOnCluster/failover). Replication is
// asynchronous: the writes of its last moment may be lost with it, so the
// promoted replica is a Redis that may have lost data (see above): the
// replay store quarantines its families, its sessions are gone, its event
// logs start over; buckets stay as replicated. A
// broker listener on its channels subscribes again where they moved, and
// with BrokerOptions.Log catches up from the event log. After a manual
// failover (CLUSTER FAILOVER) its slot map may still name the old
// master, now a replica that does not yet receive what the new master
// publishes: a listener that subscribed again on a sharded channel sends
// itself a probe through the slot's master (a script that may write, so
// a replica answers MOVED) and catches up only when the probe comes back,
// holding what arrives before, and catches up once more 3 s later;
// without its probe back within about 2 s it reloads the slot map and
// subscribes again
// (TestBrokerFollowsManualFailovers: 0 events lost over 10 manual
// failovers under load).
package redisstore
