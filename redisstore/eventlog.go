package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/mcpkit/mcpkit/notify"
)

// DefaultEventLogPrefix begins the keys of an [EventLog] when
// EventLogOptions.Prefix is empty.
const DefaultEventLogPrefix = "mcpkit:events:"

// EventLogOptions configures an [EventLog]. The zero value is valid.
type EventLogOptions struct {
	// Prefix begins every key of the log. Empty means
	// DefaultEventLogPrefix. Give each application (or environment) its
	// own.
	Prefix string
	// Events is about how many events of one key the log keeps: the
	// stream is trimmed with MAXLEN ~ Events, which keeps at least that
	// many and, between trims, up to some 100 more. Zero means
	// notify.DefaultLogEvents.
	Events int
	// Age is how long a key's events are kept after its last one (the
	// stream's expiry). Zero means notify.DefaultLogAge.
	Age time.Duration
}

// EventLog is a [notify.EventLog] in Redis, shared by the instances of a
// fleet, so that a legacy stream that reconnects to any of them is given
// what it missed. Each key's events are a Redis stream (named by the
// prefix and the SHA-256 of the key, never an identity) of entries
// {k: kind, u: URI, r: the Redis run that wrote it}; an event's id is
// its entry's id (ms-seq, see appendScript: never given twice, even
// across a Redis restart). Append is one round trip (one script: XADD
// with MAXLEN ~, and PEXPIRE); Since one pipeline (a script that checks
// the stream, and XRANGE). A stream
// written in another replication history (Redis restarted, failed over
// without a proof that nothing was lost: see runLua) may have
// lost events: it is treated as gone (Since answers not found, and the
// next Append starts it again). It is safe for concurrent use.
type EventLog struct {
	client redis.UniversalClient
	prefix string
	events int64
	age    time.Duration
	gates  gates

	// starts are the brokers' hooks told of each stream start appended
	// through this log (see onStart).
	startsMu sync.Mutex
	starts   []func(key, id string)
}

// streamStartURI is the URI of the entries that notify.Hub.Mark appends
// when a stream of the key starts on this instance (the legacy era's
// priming event): no resource's, never delivered.
const streamStartURI = "<stream start>"

// onStart registers fn, called with the key and id of every stream start
// appended through l: a Broker whose Log is l so learns which subjects
// this instance has streams of, and from when.
func (l *EventLog) onStart(fn func(key, id string)) {
	l.startsMu.Lock()
	defer l.startsMu.Unlock()
	l.starts = append(l.starts, fn)
}

var _ notify.EventLog = (*EventLog)(nil)

// NewEventLog returns an EventLog on client. It does not connect.
func NewEventLog(client redis.UniversalClient, o EventLogOptions) (*EventLog, error) {
	if err := checkClient(client); err != nil {
		return nil, err
	}
	if o.Events < 0 || o.Age < 0 {
		return nil, errors.New("redisstore: negative EventLogOptions")
	}
	if o.Events == 0 {
		o.Events = notify.DefaultLogEvents
	}
	if o.Age == 0 {
		o.Age = notify.DefaultLogAge
	}
	if o.Age < time.Millisecond {
		return nil, errors.New("redisstore: EventLogOptions.Age below a millisecond")
	}
	if o.Prefix == "" {
		o.Prefix = DefaultEventLogPrefix
	}
	return &EventLog{client: client, prefix: o.Prefix, events: int64(o.Events), age: o.Age}, nil
}

// The wire names of an entry's fields and kinds.
const (
	fieldKind  = "k"
	fieldURI   = "u"
	logListed  = "l"
	logUpdated = "u"
	logElicit  = "e" // an elicitation completed; its id in the uri field
)

// Append records e under key (see [notify.EventLog]). It fails with
// ErrInvalidEvent for an event no broker could carry, with ErrUnavailable
// for a while after Redis could not be reached, and with the client's
// error when the event may not be recorded.
func (l *EventLog) Append(ctx context.Context, key string, e notify.Event) (string, error) {
	if l == nil || l.client == nil {
		return "", errLogNotMade
	}
	kind, uri := logListed, ""
	switch {
	case key == "":
		return "", ErrInvalidEvent
	case e.Kind == notify.ListChanged && e.URI == "":
	case e.Kind == notify.ResourceUpdated && e.URI != "":
		kind, uri = logUpdated, e.URI
	case e.Kind == notify.ElicitationComplete && e.URI != "":
		kind, uri = logElicit, e.URI
	default:
		return "", ErrInvalidEvent
	}
	k := hashKey(l.prefix, key)
	g := l.gates.For(ctx, l.client, k)
	if !g.allow() {
		return "", ErrUnavailable
	}
	id, err := appendScript.run(ctx, l.client, []string{k}, l.events, l.age.Milliseconds(), kind, uri).Text()
	g.done(ctx, err)
	if err != nil {
		return "", fmt.Errorf("redisstore: event log: %w", err)
	}
	if uri == streamStartURI {
		l.startsMu.Lock()
		fns := l.starts
		l.startsMu.Unlock()
		for _, fn := range fns {
			fn(key, id)
		}
	}
	return id, nil
}

// appendScript adds an entry to a stream and sets its expiry. KEYS: the
// stream. ARGV: about how many entries to keep, the expiry (ms), the
// kind, the URI ("" for none). Returns the entry's id.
//
// Each entry carries the ident (field r, see runLua) of the replication
// history it was written in. A stream whose newest entry was written in a
// history the script cannot vouch for may have lost what followed (a restart from an older snapshot, a
// replica promoted before it synced): it is dropped, as a Redis found
// empty holds none, so that an id a client holds is never resumed from
// over a gap (Since answers not found). And ids never repeat across
// runs: an entry's id is "ms-seq" with ms the time (or the stream's
// newest ms, when the clock is behind it) and seq, within the ms, counted
// from the history's base (its replication id's first 32 bits times
// 2^20, drawn anew at every start and promotion), so that an id given
// before a restart, lost with it, is not given again to another
// event even when the clock of the Redis that follows is behind.
var appendScript = newScript(runLua + logLua + `
local last = newest(KEYS[1])
local t = redis.call('TIME')
local ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local seq = tonumber(string.sub(string.match(here, ':(%x*)$') .. '0', 1, 8), 16) * 1048576
if last then
  if not trusted(last[2]) then
    redis.call('DEL', KEYS[1])
  else
    local lms, lseq = string.match(last[1], '^(%d+)-(%d+)$')
    lms, lseq = tonumber(lms), tonumber(lseq)
    if lms >= ms then ms, seq = lms, lseq + 1 end
  end
end
local id = string.format('%.0f-%.0f', ms, seq)
if ARGV[4] == '' then
  id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], id, 'k', ARGV[3], 'r', here)
else
  id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], id, 'k', ARGV[3], 'u', ARGV[4], 'r', here)
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return id
`)

// logLua: newest(stream) returns the id of the stream's newest entry and
// the ident it carries, or nil.
const logLua = `
local function newest(key)
  local e = redis.call('XREVRANGE', key, '+', '-', 'COUNT', 1)[1]
  if not e then return nil end
  local r = ''
  for i = 1, #e[2], 2 do
    if e[2][i] == 'r' then r = e[2][i + 1] end
  end
  return {e[1], r}
end
`

// sinceScript tells whether a stream may be read. KEYS: the stream.
// Returns 1 when its newest entry was written by a Redis process the
// script can vouch for (see appendScript), else 0. Since sends it and the
// XRANGE in one pipeline, on one connection to the stream's node: nothing
// can run between them that changes which process answers.
var sinceScript = newScript(runLua + logLua + `
local last = newest(KEYS[1])
if last and trusted(last[2]) then return 1 end
return 0
`)

// Since returns key's events after id (see [notify.EventLog]): ok only
// when id names an entry of key's stream that Redis still holds. An id
// not of the form Redis gives costs no round trip. It fails with
// ErrUnavailable for a while after Redis could not be reached, and with
// the client's error.
func (l *EventLog) Since(ctx context.Context, key, id string) ([]notify.Event, bool, error) {
	if l == nil || l.client == nil {
		return nil, false, errLogNotMade
	}
	if key == "" || !validStreamID(id) {
		return nil, false, nil
	}
	k := hashKey(l.prefix, key)
	g := l.gates.For(ctx, l.client, k)
	if !g.allow() {
		return nil, false, ErrUnavailable
	}
	// From id itself: found, it proves that nothing after it was trimmed
	// (a stream is trimmed from its oldest end). More than the stream
	// can hold between trims: not an id of this log's bounds, start over.
	limit := 2*l.events + 100
	var check *redis.Cmd
	var rng *redis.XMessageSliceCmd
	vouch := "" // see runLua
	read := func(eval bool) error {
		_, err := l.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			if eval {
				check = p.Eval(ctx, sinceScript.src, []string{k}, vouch)
			} else {
				check = p.EvalSha(ctx, sinceScript.hash, []string{k}, vouch)
			}
			rng = p.XRangeN(ctx, k, id, "+", limit)
			return nil
		})
		return err
	}
	err := read(false)
	// Reads only: sending them again is safe. A slot moved (a failover)
	// further than the client's redirects followed: its map read again.
	for try := 0; err != nil && try < 3 && (strings.HasPrefix(err.Error(), "MOVED") || strings.HasPrefix(err.Error(), "ASK")); try++ {
		if cc, ok := l.client.(*redis.ClusterClient); ok {
			cc.ReloadState(ctx)
		}
		t := time.NewTimer(time.Duration(try+1) * 20 * time.Millisecond)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		err = read(false)
	}
	if check != nil && check.Err() != nil && strings.HasPrefix(check.Err().Error(), "NOSCRIPT") {
		err = read(true)
	}
	if q, ok := continued(check.Err()); ok {
		vouch = vouchFor(ctx, l.client, q)
		err = read(false) // reads only
	}
	g.done(ctx, err)
	if err != nil {
		return nil, false, fmt.Errorf("redisstore: event log: %w", err)
	}
	trusted, _ := check.Int64()
	msgs := rng.Val()
	if trusted != 1 || len(msgs) == 0 || msgs[0].ID != id || int64(len(msgs)) == limit {
		return nil, false, nil // unknown, too old (trimmed or expired), or Redis restarted empty
	}
	out := make([]notify.Event, 0, len(msgs)-1)
	for _, m := range msgs[1:] {
		if e, ok := decodeEntry(m); ok {
			e.Subject = key
			out = append(out, e)
		}
	}
	return out, true, nil
}

// decodeEntry reads a stream entry the log wrote; anything else is
// skipped.
func decodeEntry(m redis.XMessage) (notify.Event, bool) {
	kind, _ := m.Values[fieldKind].(string)
	uri, _ := m.Values[fieldURI].(string)
	switch {
	case kind == logListed && uri == "":
		return notify.Event{Kind: notify.ListChanged, ID: m.ID}, true
	case kind == logUpdated && uri != "":
		return notify.Event{Kind: notify.ResourceUpdated, URI: uri, ID: m.ID}, true
	case kind == logElicit && uri != "":
		return notify.Event{Kind: notify.ElicitationComplete, URI: uri, ID: m.ID}, true
	}
	return notify.Event{}, false
}

// validStreamID reports whether id has the form of the ids Redis assigns
// a stream's entries, "ms-seq": two unsigned 64-bit decimal numbers
// without leading zeros (which Redis would read as another id).
func validStreamID(id string) bool {
	ms, seq, ok := strings.Cut(id, "-")
	return ok && canonicalUint(ms) && canonicalUint(seq)
}

func canonicalUint(s string) bool {
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}
