package audit

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/mcphttp"
)

// Record is one audit event: who made a call that touched the
// inventory, what it named, how it ended, and when. It never holds token
// bytes or record contents.
type Record struct {
	// Time is when the call was received.
	Time time.Time
	// Issuer, Subject and ClientID identify the caller; all empty for an
	// anonymous call or one refused by authentication.
	Issuer, Subject, ClientID string
	// Method is the MCP method; Template the registered template or static
	// resource a read, subscription or completion concerned; URI the
	// resource URI (or completion reference) as the client sent it, its
	// first MaxURIBytes bytes when it is longer (URITruncated).
	Method, Template, URI string
	URITruncated          bool
	// Outcome is how the call ended; CursorReason why a cursor did not
	// open (OutcomeInvalidCursor).
	Outcome      mcphttp.Outcome
	CursorReason string
	// Status is the HTTP status, Code the JSON-RPC error code (0 for none).
	Status int
	Code   int64
	// SessionID is the legacy session of the call, if any.
	SessionID string
	// Duration is how long serving the call took.
	Duration time.Duration

	// Remote is the client address (without port; see
	// Options.ClientAddr) of a refusal — a call refused as
	// unauthenticated or rate-limited; empty for other calls,
	// and "*" for refusals counted together when too many addresses were
	// refused in one interval (see Options.RefusalInterval).
	Remote string
	// Count is how many calls the record stands for: 1, or for the
	// summary of an interval's refusals, how many were not recorded on
	// their own (Time is then the interval's start, Duration zero).
	Count int
}

// MaxURIBytes bounds the URI of an audit record: a client could send
// a URI of megabytes, and the trail must not grow by what a client chooses.
// Resource URIs are at most 2048 UTF-16 code units (inventory's limit), so
// every URI that can name a resource fits.
const MaxURIBytes = 2048

// Options configures an [Audit]. The zero value writes records to
// slog.Default() at Info.
type Options struct {
	// Issuer is recorded as the issuer of callers whose principal names
	// none: with one trusted issuer, verifiers leave Principal.Issuer
	// empty (identity keys stay bare subjects), and the trail still says
	// who issued the token. Empty means only what principals carry.
	Issuer string
	// Logger receives one record per audited call. Nil means
	// slog.Default(); give the audit trail a logger (and stream) of its
	// own so that it is kept apart from operator logs.
	Logger *slog.Logger
	// Level is the level of the records. The zero value is Info.
	Level slog.Level
	// OmitURIs leaves URIs out of the records (they are client input and
	// can name a user's record). False means they are recorded.
	OmitURIs bool
	// Record, when set, receives each record instead of the Logger (a
	// database, a queue). It runs on the request path: it must be safe for
	// concurrent use and quick.
	Record func(ctx context.Context, rec Record)

	// RefusalInterval aggregates refusals — calls refused as
	// unauthenticated or rate-limited, which a flood can make at any rate
	// — so that they cannot flood the trail: for each remote address,
	// caller, method and outcome, the first refusal of an interval is
	// recorded as it happens and the others are counted, then recorded
	// as one record with their Count once the interval is over (at the
	// next audited call, or at [Audit.Flush]). At most
	// MaxRefusalKeys such groups are kept an interval; refusals
	// beyond them are counted together (Remote "*"). Every other call
	// is recorded on its own. Zero means DefaultRefusalInterval;
	// negative records every refusal on its own.
	RefusalInterval time.Duration

	// ClientAddr returns the address of a request's client, recorded as
	// a refusal's remote and keying its aggregation (see
	// RefusalInterval). Nil, or an invalid result, means the host of
	// r.RemoteAddr. Behind a reverse proxy r.RemoteAddr is the proxy's,
	// so every client's refusals would be recorded and counted as the
	// proxy's: give the function the rate limits key on,
	// (*ratelimit.TrustedProxies).ClientAddr, which believes the named
	// proxies' X-Forwarded-For or Forwarded and nobody else's.
	ClientAddr func(r *http.Request) netip.Addr
}

// DefaultRefusalInterval is the interval over which an [Audit]
// aggregates refusals when Options.RefusalInterval is zero.
const DefaultRefusalInterval = 10 * time.Second

// MaxRefusalKeys bounds the groups of refusals an [Audit] counts in
// one interval.
const MaxRefusalKeys = 1024

// Audit is an [mcphttp.Observer] that writes one record per call that touched the
// inventory — resources/list, resources/read, resources/templates/list,
// resources/subscribe and unsubscribe, completion/complete,
// subscriptions/listen and tools/call — with its outcome: ok, not found,
// denied, unauthenticated, invalid cursor and its reason, rate-limited, and
// the rest (see [mcphttp.Outcome]). Other methods (initialize, ping, discovery,
// notifications) are not audited. As a slog record its message is
// "mcp audit", its time the time the call was received, and its attributes
//
//	method template uri uri_truncated outcome cursor_reason status code issuer subject client session duration
//
// (empty ones left out), and for refusals remote and count (see
// Options.RefusalInterval). It is safe for concurrent use. The zero
// Audit records every audited call on its own to slog.Default(); a nil
// *Audit is refused by mcphttp.Observe.
type Audit struct {
	opts Options

	counting atomic.Bool // groups holds some: an interval is being counted
	mu       sync.Mutex
	started  time.Time // the current refusal interval
	groups   map[refusalKey]*refusalGroup
}

// refusalKey groups refusals: who, from where, what, how it ended.
type refusalKey struct {
	remote, issuer, subject, client, method string
	outcome                                 mcphttp.Outcome
}

// refusalGroup is one key's refusals of an interval: the first, recorded,
// and how many followed it.
type refusalGroup struct {
	first Record
	more  int
}

var _ mcphttp.Observer = (*Audit)(nil)

// New returns an Audit configured by opts.
func New(opts Options) *Audit {
	if opts.Logger == nil && opts.Record == nil {
		opts.Logger = slog.Default()
	}
	if opts.RefusalInterval == 0 {
		opts.RefusalInterval = DefaultRefusalInterval
	}
	return &Audit{opts: opts, groups: map[refusalKey]*refusalGroup{}}
}

// Flush records the refusals counted and not yet recorded (see
// Options.RefusalInterval): call it when the server stops.
func (a *Audit) Flush(ctx context.Context) {
	a.mu.Lock()
	due := a.takeGroups(time.Time{})
	a.mu.Unlock()
	for _, rec := range due {
		a.write(ctx, rec)
	}
}

// takeGroups ends the current interval: it returns the summaries of its
// groups with refusals not yet recorded, and starts a new interval at now.
// a.mu is held.
func (a *Audit) takeGroups(now time.Time) []Record {
	var due []Record
	for _, g := range a.groups {
		if g.more > 0 {
			rec := g.first
			rec.Time, rec.Duration, rec.Count = a.started, 0, g.more
			due = append(due, rec)
		}
	}
	clear(a.groups)
	a.counting.Store(false)
	a.started = now
	return due
}

// refusal reports whether rec is a refusal that the interval's counts
// take: false when it is to be recorded now. due holds the summaries of
// an interval that ended.
func (a *Audit) refusal(rec *Record, now time.Time) (counted bool, due []Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if now.Sub(a.started) >= a.opts.RefusalInterval || now.Before(a.started) {
		due = a.takeGroups(now)
	}
	if !refused(rec.Outcome) {
		return false, due
	}
	k := refusalKey{rec.Remote, rec.Issuer, rec.Subject, rec.ClientID, rec.Method, rec.Outcome}
	g, ok := a.groups[k]
	if !ok && len(a.groups) >= MaxRefusalKeys {
		k = refusalKey{remote: "*", method: rec.Method, outcome: rec.Outcome}
		g, ok = a.groups[k]
		rec.Remote, rec.Issuer, rec.Subject, rec.ClientID = "*", "", "", ""
	}
	if ok {
		g.more++
		return true, due
	}
	// A new group: within the bound, or a "*" group (one per method and
	// outcome, so bounded too).
	a.groups[k] = &refusalGroup{first: *rec}
	a.counting.Store(true)
	return false, due
}

// refused reports whether an outcome is one a flood can make at any rate.
func refused(o mcphttp.Outcome) bool {
	return o == mcphttp.OutcomeUnauthenticated || o == mcphttp.OutcomeRateLimited
}

// remoteHost is r's remote address without its port.
func remoteHost(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// remote is the address recorded for a refusal of r: its client's (see
// Options.ClientAddr), else its remote host, else "-".
func (a *Audit) remote(r *http.Request) string {
	if a.opts.ClientAddr != nil {
		if addr := a.opts.ClientAddr(r); addr.IsValid() {
			return addr.String()
		}
	}
	if r.RemoteAddr == "" {
		return "-"
	}
	return remoteHost(r.RemoteAddr)
}

// Start returns ctx: the audit needs nothing before the call.
func (a *Audit) Start(ctx context.Context, _ mcphttp.Call) context.Context { return ctx }

// End writes the record of c, when its method touches the inventory.
func (a *Audit) End(ctx context.Context, c mcphttp.Call) {
	if !audited(c.Method) {
		return
	}
	rec := Record{
		Time: c.Start, Method: c.Method, Template: c.Target, URI: c.URI,
		Outcome: c.Outcome, CursorReason: c.CursorReason, Status: c.Status, Code: c.Code,
		SessionID: c.SessionID, Duration: c.Duration, Count: 1,
	}
	if p := c.Principal; p != nil {
		rec.Issuer, rec.Subject, rec.ClientID = p.Issuer, p.Subject, p.ClientID
		if rec.Issuer == "" {
			rec.Issuer = a.opts.Issuer // one trusted issuer: principals carry none
		}
	}
	if a.opts.OmitURIs {
		rec.URI = ""
	}
	rec.URI, rec.URITruncated = clip(rec.URI, MaxURIBytes)
	if refused(rec.Outcome) {
		rec.Remote = "-" // no address to tell
		if c.HTTP != nil {
			rec.Remote = a.remote(c.HTTP)
		}
	}
	if a.opts.RefusalInterval > 0 && (rec.Remote != "" || a.counting.Load()) {
		counted, due := a.refusal(&rec, time.Now())
		for _, d := range due {
			a.write(ctx, d)
		}
		if counted {
			return
		}
	}
	a.write(ctx, rec)
}

// write records rec.
func (a *Audit) write(ctx context.Context, rec Record) {
	if a.opts.Record != nil {
		a.opts.Record(ctx, rec)
		return
	}
	lg := a.opts.Logger
	if lg == nil {
		lg = slog.Default() // a zero Audit
	}
	h := lg.Handler()
	if !h.Enabled(ctx, a.opts.Level) {
		return
	}
	r := slog.NewRecord(rec.Time, a.opts.Level, "mcp audit", 0)
	r.AddAttrs(slog.String("method", rec.Method))
	str := func(k, v string) {
		if v != "" {
			r.AddAttrs(slog.String(k, v))
		}
	}
	str("template", rec.Template)
	str("uri", rec.URI)
	if rec.URITruncated {
		r.AddAttrs(slog.Bool("uri_truncated", true))
	}
	r.AddAttrs(slog.String("outcome", rec.Outcome.String()))
	str("cursor_reason", rec.CursorReason)
	r.AddAttrs(slog.Int("status", rec.Status))
	if rec.Code != 0 {
		r.AddAttrs(slog.Int64("code", rec.Code))
	}
	str("issuer", rec.Issuer)
	str("subject", rec.Subject)
	str("client", rec.ClientID)
	str("session", rec.SessionID)
	str("remote", rec.Remote)
	if rec.Count != 1 {
		r.AddAttrs(slog.Int("count", rec.Count))
	}
	r.AddAttrs(slog.Duration("duration", rec.Duration))
	_ = h.Handle(ctx, r)
}

// clip returns s cut to at most n bytes on a UTF-8 boundary, and whether
// it was cut.
func clip(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// audited reports whether method touches the inventory. Only these exact
// names: a method is client input, and unknown ones are not recorded.
func audited(method string) bool {
	switch method {
	case "resources/list", "resources/read", "resources/templates/list",
		"resources/subscribe", "resources/unsubscribe", "completion/complete",
		"subscriptions/listen", "tools/call":
		return true
	}
	return false
}
