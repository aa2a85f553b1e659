package mcphttp

import (
	"context"
	"log/slog"
	"time"
	"unicode/utf8"
)

// AuditRecord is one audit event: who made a call that touched the
// inventory, what it named, how it ended, and when. It never holds token
// bytes or record contents.
type AuditRecord struct {
	// Time is when the call was received.
	Time time.Time
	// Issuer, Subject and ClientID identify the caller; all empty for an
	// anonymous call or one refused by authentication.
	Issuer, Subject, ClientID string
	// Method is the MCP method; Template the registered template or static
	// resource a read, subscription or completion concerned; URI the
	// resource URI (or completion reference) as the client sent it, its
	// first MaxAuditURIBytes bytes when it is longer (URITruncated).
	Method, Template, URI string
	URITruncated          bool
	// Outcome is how the call ended; CursorReason why a cursor did not
	// open (OutcomeInvalidCursor).
	Outcome      Outcome
	CursorReason string
	// Status is the HTTP status, Code the JSON-RPC error code (0 for none).
	Status int
	Code   int64
	// SessionID is the legacy session of the call, if any.
	SessionID string
	// Duration is how long serving the call took.
	Duration time.Duration
}

// MaxAuditURIBytes bounds the URI of an audit record: a client could send
// a URI of megabytes, and the trail must not grow by what a client chooses.
// Resource URIs are at most 2048 UTF-16 code units (inventory's limit), so
// every URI that can name a resource fits.
const MaxAuditURIBytes = 2048

// AuditOptions configures an [Audit]. The zero value writes records to
// slog.Default() at Info.
type AuditOptions struct {
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
	Record func(ctx context.Context, rec AuditRecord)
}

// Audit is an [Observer] that writes one record per call that touched the
// inventory — resources/list, resources/read, resources/templates/list,
// resources/subscribe and unsubscribe, completion/complete,
// subscriptions/listen and tools/call — with its outcome: ok, not found,
// denied, unauthenticated, invalid cursor and its reason, rate-limited, and
// the rest (see [Outcome]). Other methods (initialize, ping, discovery,
// notifications) are not audited. As a slog record its message is
// "mcp audit", its time the time the call was received, and its attributes
//
//	method template uri uri_truncated outcome cursor_reason status code issuer subject client session duration
//
// (empty ones left out). It is safe for concurrent use.
type Audit struct {
	opts AuditOptions
}

var _ Observer = (*Audit)(nil)

// NewAudit returns an Audit configured by opts.
func NewAudit(opts AuditOptions) *Audit {
	if opts.Logger == nil && opts.Record == nil {
		opts.Logger = slog.Default()
	}
	return &Audit{opts: opts}
}

// Start returns ctx: the audit needs nothing before the call.
func (a *Audit) Start(ctx context.Context, _ *Call) context.Context { return ctx }

// End writes the record of c, when its method touches the inventory.
func (a *Audit) End(ctx context.Context, c *Call) {
	if !audited(c.Method) {
		return
	}
	rec := AuditRecord{
		Time: c.Start, Method: c.Method, Template: c.Target, URI: c.URI,
		Outcome: c.Outcome, CursorReason: c.CursorReason, Status: c.Status, Code: c.Code,
		SessionID: c.SessionID, Duration: c.Duration,
	}
	if p := c.Principal; p != nil {
		rec.Issuer, rec.Subject, rec.ClientID = issuerOf(p), p.Subject, p.ClientID
	}
	if a.opts.OmitURIs {
		rec.URI = ""
	}
	rec.URI, rec.URITruncated = clip(rec.URI, MaxAuditURIBytes)
	if a.opts.Record != nil {
		a.opts.Record(ctx, rec)
		return
	}
	h := a.opts.Logger.Handler()
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
