package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/mcphttp/origin"
)

// healthTimeout bounds the database check of /healthz.
const healthTimeout = 2 * time.Second

// healthSubject is the subject /healthz lists (one row at most): a cheap
// query through the same index as every listing.
const healthSubject = "mcpkit-healthz"

// routes mounts everything on a chi router:
//
//	/mcp                                          the MCP endpoint (every method: GET and DELETE get its 405)
//	/.well-known/oauth-protected-resource[/mcp]   RFC 9728 metadata (the path follows -resource)
//	/api/documents/…                              the REST API (see apiRoutes)
//	/healthz                                      200 "ok" when the database answers
//	/dev/…, /.well-known/oauth-authorization-server/dev, …        development mode only: the sign-in (see mountSignIn)
func (a *App) routes(ep http.Handler, auth *authn.Authenticator, origins *origin.Guard) (http.Handler, error) {
	servers := []string{a.cfg.AuthorizationServer}
	switch {
	case a.dev != nil:
		servers = []string{a.dev.Issuer()}
	case len(a.issuers) > 0:
		servers = a.issuers // every trusted issuer
	}
	md, err := authn.NewMetadataHandler(authn.Metadata{
		Resource: a.resource, AuthorizationServers: servers,
		ScopesSupported: []string{ScopeRead, ScopeShare}, ResourceName: "mcpkit documents",
		DPoPSigningAlgorithms: auth.DPoPAlgorithms(), DPoPBoundTokensRequired: auth.DPoPMode() == dpop.Required,
	})
	if err != nil {
		return nil, fmt.Errorf("resource metadata (-resource, -authorization-server): %w", err)
	}
	mdPath, err := authn.WellKnownPath(a.resource)
	if err != nil {
		return nil, &ConfigError{Flag: "resource", Problem: "must be an absolute https URL (http only for loopback hosts)"}
	}

	r := chi.NewRouter()
	r.Use(a.requestLog)
	r.Handle("/mcp", ep)
	r.Handle(mdPath, md)
	if mdPath != authn.WellKnownPrefix {
		r.Handle(authn.WellKnownPrefix, md) // for clients that try the root first
	}
	a.apiRoutes(r, auth, origins)
	r.Get("/healthz", a.health)
	r.Head("/healthz", a.health)
	if a.dev != nil {
		if err := a.mountSignIn(r); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// health answers 200 "ok" when the database answers a listing query
// within healthTimeout, else 503.
func (a *App) health(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
	defer cancel()
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	if _, err := a.db.List(ctx, healthSubject, "", 1); err != nil {
		a.log.Warn("health check: database failed", "error", err)
		w.WriteHeader(http.StatusServiceUnavailable)
		fmt.Fprintln(w, "database unavailable")
		return
	}
	fmt.Fprintln(w, "ok")
}

// requestInfo collects, during a request, what the request log line adds.
type requestInfo struct{ subject, issuer string }

type requestInfoKey struct{}

// logMethod returns the standard methods as sent, any other as "OTHER".
func logMethod(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut,
		http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}

// requestLog writes one Info line per request: method, path, status,
// duration and, when a token verified, the subject (escaped: see
// escapeSubject) and, when several issuers are trusted, its issuer. The path logged is the
// matched route ("/mcp"), or "-" when none matched: never the raw path or
// the query, so nothing a client puts in a URL (a token, say) reaches the
// log; headers and bodies are never logged either.
func (a *App) requestLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		info := &requestInfo{}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, info)))

		path := "-"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			path = rc.RoutePattern()
		}
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		attrs := []slog.Attr{
			slog.String("method", logMethod(r.Method)), slog.String("path", path),
			slog.Int("status", sw.status), slog.Duration("duration", time.Since(start)),
		}
		if info.subject != "" {
			attrs = append(attrs, slog.String("subject", escapeSubject(info.subject)))
		}
		if info.issuer != "" { // several issuers: the subject alone is ambiguous
			attrs = append(attrs, slog.String("issuer", escapeSubject(info.issuer)))
		}
		a.log.LogAttrs(r.Context(), slog.LevelInfo, "request", attrs...)
	})
}

// escapeSubject returns s as the inside of a Go string literal with every
// non-ASCII and non-printable character escaped (strconv.QuoteToASCII, %+q):
// a subject that only looks like another ("\u0430lice", with a Cyrillic
// а, beside "alice") is visibly different in the log, and no subject can
// forge a line or a field. The logger adds the quotes when the result
// needs them (a space, a quote).
func escapeSubject(s string) string {
	q := strconv.QuoteToASCII(s)
	return q[1 : len(q)-1]
}

// statusWriter remembers the status code of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
