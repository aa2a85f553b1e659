package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"time"

	"github.com/mcpkit/mcpkit/mcphttp/origin"
	"github.com/mcpkit/mcpkit/principal"

	"github.com/go-chi/chi/v5"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Request body limits of the REST API.
const (
	maxShareRequestBytes = 4 << 10
	// maxUpdateRequestBytes leaves room for a document body of
	// store.MaxBodyBytes written with JSON escapes.
	maxUpdateRequestBytes = 8 << 20
	// notifyTimeout bounds the notifications sent after a change: they
	// outlive the request (a client that hangs up after the change must
	// not cancel them), but not for long.
	notifyTimeout = 5 * time.Second
)

// apiError is the body of every REST API error: a stable code and a fixed
// message, never an internal error's text.
type apiError struct {
	Error   string `json:"error"`
	Message string `json:"message"`
}

// The REST API's error answers.
var (
	errDocNotFound    = apiError{"not_found", "document not found"}
	errRouteNotFound  = apiError{"not_found", "no such API route"}
	errBadMethod      = apiError{"method_not_allowed", "method not allowed on this route"}
	errBadJSON        = apiError{"invalid_request", "the body must be one JSON object with the documented members"}
	errBadMediaType   = apiError{"unsupported_media_type", "Content-Type must be application/json"}
	errTooLarge       = apiError{"too_large", "request body too large"}
	errBusy           = apiError{"busy", "server busy, retry later"}
	errBadGrantee     = apiError{"invalid_request", `"with" must name a user (1-256 bytes of printable UTF-8)`}
	errShareOwner     = apiError{"invalid_request", "the owner always has access: nothing to share or unshare"}
	errBadUser        = apiError{"invalid_request", "the user in the path is not a valid user name"}
	errBodyMissing    = apiError{"invalid_request", `"body" is required: the new text of the document`}
	errBodyInvalid    = apiError{"invalid_request", `"body" must be text without NUL characters`}
	errBodyTooLarge   = apiError{"too_large", "document body too large (at most 1 MiB)"}
	errInternalAPIErr = apiError{"internal", "internal error"}
)

// apiRoutes mounts the REST API under /api: bearer tokens checked by the
// same Authenticator as the MCP endpoint, with the scope documents:share.
//
//	POST   /api/documents/{id}/shares          {"with":"bob"}   share (owner only)
//	DELETE /api/documents/{id}/shares/{user}                    unshare (owner only)
//	PUT    /api/documents/{id}                 {"body":"…"}     replace the body (owner only)
//	POST   /api/skills/{id}/shares             {"with":"bob"}   share a skill (owner only)
//	DELETE /api/skills/{id}/shares/{user}                       revoke a skill share (owner only)
func (a *App) apiRoutes(r chi.Router, auth *authn.Authenticator, origins *origin.Guard) {
	r.Route("/api", func(r chi.Router) {
		// The same Origin and DNS-rebinding decision as the MCP endpoint
		// (and CORS for the allowed origins): a page on another origin
		// cannot drive the REST API with a user's token.
		r.Use(origins.Handler, auth.Handler, auth.RequireScopes(ScopeShare))
		r.NotFound(func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, http.StatusNotFound, errRouteNotFound) })
		r.MethodNotAllowed(func(w http.ResponseWriter, _ *http.Request) {
			writeJSON(w, http.StatusMethodNotAllowed, errBadMethod)
		})
		r.Post("/documents/{id}/shares", a.apiShare)
		r.Delete("/documents/{id}/shares/{user}", a.apiUnshare)
		r.Put("/documents/{id}", a.apiUpdate)
		r.Post("/skills/{id}/shares", a.apiShareSkill)
		r.Delete("/skills/{id}/shares/{user}", a.apiUnshareSkill)
	})
}

// apiShare shares one of the caller's documents with another user, who is
// told that their list changed.
func (a *App) apiShare(w http.ResponseWriter, r *http.Request) {
	caller := callerOf(r)
	id, with, grantee, ok := shareRequest(w, r, errDocNotFound)
	if !ok {
		return
	}
	if grantee == caller {
		a.refuseSelf(w, r, id)
		return
	}
	if !a.storeOK(w, r, "share", a.db.Share(r.Context(), caller, id, grantee), errBadGrantee) {
		return
	}
	ctx, cancel := notifyContext(r)
	defer cancel()
	a.hub.ListChanged(ctx, grantee)
	writeJSON(w, http.StatusOK, struct {
		URI        string `json:"uri"`
		SharedWith string `json:"sharedWith"`
	}{documentPrefix + id, with})
}

// shareRequest reads a share request: the path's id (notFound answers its
// absence) and the body's {"with": name}, whose grantee is a user of the
// sharer's own issuer (with several issuers trusted, users of different
// issuers never share). When ok is false, the request has been answered.
func shareRequest(w http.ResponseWriter, r *http.Request, notFound apiError) (id, with, grantee string, ok bool) {
	id, ok = pathParam(r, "id")
	if !ok {
		writeJSON(w, http.StatusNotFound, notFound)
		return "", "", "", false
	}
	var in struct {
		With *string `json:"with"`
	}
	if !decodeJSON(w, r, maxShareRequestBytes, &in) {
		return "", "", "", false
	}
	if in.With == nil {
		writeJSON(w, http.StatusBadRequest, errBadGrantee)
		return "", "", "", false
	}
	return id, *in.With, principal.SubjectKey(issuerOf(r), *in.With), true
}

// unshareParams reads an unshare route's record id and user (a user of
// the caller's own issuer) and the caller; it answers a bad id with
// notFound (404) and a bad user with 400, and then reports false.
func unshareParams(w http.ResponseWriter, r *http.Request, notFound any) (caller, id, user string, ok bool) {
	caller = callerOf(r)
	if id, ok = pathParam(r, "id"); !ok {
		writeJSON(w, http.StatusNotFound, notFound)
		return "", "", "", false
	}
	name, ok := pathParam(r, "user")
	if !ok {
		writeJSON(w, http.StatusBadRequest, errBadUser)
		return "", "", "", false
	}
	return caller, id, principal.SubjectKey(issuerOf(r), name), true
}

// apiUnshare takes a share away again; the former grantee is told that
// their list changed.
func (a *App) apiUnshare(w http.ResponseWriter, r *http.Request) {
	caller, id, user, ok := unshareParams(w, r, errDocNotFound)
	if !ok {
		return
	}
	if user == caller {
		a.refuseSelf(w, r, id)
		return
	}
	if !a.storeOK(w, r, "unshare", a.db.Unshare(r.Context(), caller, id, user), errBadUser) {
		return
	}
	ctx, cancel := notifyContext(r)
	defer cancel()
	a.hub.ListChanged(ctx, user)
	authn.SetPrivate(w.Header())
	w.WriteHeader(http.StatusNoContent)
}

// apiUpdate replaces the body of one of the caller's documents and tells
// every principal who may read it (the owner and the grantees), and nobody
// else, that it changed.
func (a *App) apiUpdate(w http.ResponseWriter, r *http.Request) {
	caller := callerOf(r)
	id, ok := pathParam(r, "id")
	if !ok {
		writeJSON(w, http.StatusNotFound, errDocNotFound)
		return
	}
	var in struct {
		Body *string `json:"body"`
	}
	if !a.decodeJSONBudgeted(w, r, maxUpdateRequestBytes, &in) {
		return
	}
	switch {
	case in.Body == nil:
		writeJSON(w, http.StatusBadRequest, errBodyMissing)
		return
	case len(*in.Body) > store.MaxBodyBytes:
		writeJSON(w, http.StatusRequestEntityTooLarge, errBodyTooLarge)
		return
	}
	if !a.storeOK(w, r, "update", a.db.Update(r.Context(), caller, id, *in.Body), errBodyInvalid) {
		return
	}
	ctx, cancel := notifyContext(r)
	defer cancel()
	readers, err := a.db.Readers(ctx, caller, id)
	if err != nil {
		// The update stands; only its notifications are lost.
		a.log.Error("update: the readers to notify could not be read", "error", err)
	}
	uri := documentPrefix + id
	for _, subject := range readers {
		a.hub.ResourceUpdated(ctx, subject, uri)
	}
	authn.SetPrivate(w.Header())
	w.WriteHeader(http.StatusNoContent)
}

// refuseSelf answers a share or unshare naming the caller: 400 for the
// owner (whose access never changes), 404 for anyone else, as for every
// other request about a document the caller does not own.
func (a *App) refuseSelf(w http.ResponseWriter, r *http.Request, id string) {
	_, err := a.db.Readers(r.Context(), callerOf(r), id)
	if a.storeOK(w, r, "share", err, errBadGrantee) {
		writeJSON(w, http.StatusBadRequest, errShareOwner)
	}
}

// storeOK answers a store error and reports whether there was none:
// ErrNotFound is 404 (not the caller's, or no such document: the same
// answer), ErrInvalid is 400 with the handler's message, anything else is
// logged and answered 500 with a generic message.
func (a *App) storeOK(w http.ResponseWriter, r *http.Request, op string, err error, invalid apiError) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, store.ErrNotFound):
		writeJSON(w, http.StatusNotFound, errDocNotFound)
	case errors.Is(err, store.ErrInvalid):
		writeJSON(w, http.StatusBadRequest, invalid)
	default:
		a.log.ErrorContext(r.Context(), op+": store failed", "error", err)
		writeJSON(w, http.StatusInternalServerError, errInternalAPIErr)
	}
	return false
}

// notifyContext is the context of the notifications after a change: not
// cancelled with the request, bounded by notifyTimeout.
func notifyContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(r.Context()), notifyTimeout)
}

// callerOf returns the identity key of the authenticated caller
// (auth.Handler put the principal in the context; the store refuses an
// empty key): the subject, issuer-qualified when several issuers are
// trusted (principal.Principal.Key).
func callerOf(r *http.Request) string {
	p, _ := principal.FromContext(r.Context())
	return p.Key()
}

// issuerOf returns the caller's issuer: empty with one trusted issuer.
func issuerOf(r *http.Request) string {
	p, _ := principal.FromContext(r.Context())
	return p.Issuer
}

// pathParam returns a path variable, percent-decoded: chi matches on the
// escaped path when the request's differs from the decoded one (a "%2F"
// in a user name), and then hands back the escaped value.
func pathParam(r *http.Request, name string) (string, bool) {
	v := chi.URLParam(r, name)
	if r.URL.RawPath == "" {
		return v, v != ""
	}
	u, err := url.PathUnescape(v)
	return u, err == nil && u != ""
}

// decodeJSON reads one JSON object of at most limit bytes into v, with no
// unknown members and nothing after it, and answers 415, 413 or 400
// otherwise.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeJSON(w, http.StatusUnsupportedMediaType, errBadMediaType)
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, limit))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			err = errors.New("trailing data")
		}
	}
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		writeJSON(w, http.StatusRequestEntityTooLarge, errTooLarge)
		return false
	case err != nil:
		writeJSON(w, http.StatusBadRequest, errBadJSON)
		return false
	}
	return true
}

// decodeJSONBudgeted is decodeJSON for a large body: read first under the
// caller's share of the body memory budget that the MCP endpoint's
// bodies count in too (storage growing with the bytes received, never
// sized by Content-Length), answering 503 with Retry-After when the share
// has no room, and decoded from there.
func (a *App) decodeJSONBudgeted(w http.ResponseWriter, r *http.Request, limit int64, v any) bool {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		writeJSON(w, http.StatusUnsupportedMediaType, errBadMediaType)
		return false
	}
	p, ok := principal.FromContext(r.Context())
	if !ok { // authentication runs in front: never
		writeJSON(w, http.StatusUnauthorized, errBadJSON)
		return false
	}
	raw, release, err := jsonrpc.Limits{Budget: a.bodyBudget()}.ReadRawFor(w, r, &p, limit)
	var tooLarge *jsonrpc.TooLargeError
	switch {
	case errors.As(err, &tooLarge):
		writeJSON(w, http.StatusRequestEntityTooLarge, errTooLarge)
		return false
	case errors.Is(err, jsonrpc.ErrBusy):
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, errBusy)
		return false
	case err != nil:
		writeJSON(w, http.StatusBadRequest, errBadJSON)
		return false
	}
	defer release()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			err = errors.New("trailing data")
		}
	}
	if err != nil {
		writeJSON(w, http.StatusBadRequest, errBadJSON)
		return false
	}
	return true
}

// writeJSON answers status with v as JSON, private to the caller.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"internal","message":"internal error"}`)
	}
	h := w.Header()
	authn.SetPrivate(h)
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
