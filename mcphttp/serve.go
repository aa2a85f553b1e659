package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/jsonrpc"
)

// call is one JSON-RPC request or notification being served.
type call struct {
	id      jsonrpc.ID
	method  string
	params  []byte
	modern  bool   // 2026-07-28: stateless, results carry resultType and caching hints
	version string // the protocol version the call is served under
	caller  *authn.Principal
	session *session // the legacy session named by Mcp-Session-Id, if any
}

// reply is the outcome of serving one message.
type reply struct {
	status    int      // HTTP status; 0 means 200
	body      []byte   // the JSON-RPC response; nil for a notification (202)
	authErr   error    // when set, answer with the Authenticator's challenge
	sessionID string   // a session minted by initialize
	pooled    *respBuf // body's storage, returned to respPool once written
	// stream, when set, answers the request itself (an SSE response),
	// ending at until when that is not zero (the token's expiry).
	stream func(w http.ResponseWriter, r *http.Request, until time.Time)
	until  time.Time
}

// serveBody answers one request body that passed the transport checks.
func (e *Endpoint) serveBody(w http.ResponseWriter, r *http.Request, body []byte) {
	caller, until, ok := e.authenticate(w, r)
	if !ok {
		return
	}
	if jsonrpc.IsBatch(body) {
		e.serveBatch(w, r, body, caller)
		return
	}
	msg, err := jsonrpc.Decode(body, e.maxBody)
	if err != nil {
		e.write(w, r, decodeErrorReply(msg.ID, err))
		return
	}
	rep := e.serveMessage(r, msg, caller, false)
	if rep.stream != nil {
		rep.until = until
	}
	e.write(w, r, rep)
}

// authenticate returns the caller, nil for an anonymous request. A token
// that is present but does not verify is answered here (401, or 503 when it
// cannot be checked now).
// until is when the token expires (zero if unknown): streams end then.
func (e *Endpoint) authenticate(w http.ResponseWriter, r *http.Request) (caller *authn.Principal, until time.Time, ok bool) {
	if e.auth == nil {
		return nil, time.Time{}, true
	}
	p, until, err := e.auth.AuthenticateUntil(r)
	switch {
	case err == nil:
		return &p, until, true
	case errors.Is(err, authn.ErrNoCredentials):
		return nil, time.Time{}, true
	default:
		e.auth.WriteError(w, r, err)
		return nil, time.Time{}, false
	}
}

// serveMessage serves one decoded message. inBatch is set for the elements
// of a 2025-03-26 batch.
func (e *Endpoint) serveMessage(r *http.Request, msg jsonrpc.Message, caller *authn.Principal, inBatch bool) reply {
	c := call{id: msg.ID, method: msg.Method, params: msg.Params, caller: caller}
	if rep, ok := e.selectEra(r, msg, &c, inBatch); !ok {
		return rep
	}
	if !c.modern && e.sessions != nil && msg.Method != "initialize" {
		if id := r.Header.Get(headerSessionID); id != "" {
			if c.session = e.sessions.get(id, caller); c.session == nil {
				// Unknown, expired, ended, or another principal's session.
				return errorReply(http.StatusNotFound, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Session not found"))
			}
		}
	}
	switch msg.Kind {
	case jsonrpc.KindNotification:
		return reply{status: http.StatusAccepted}
	case jsonrpc.KindResponse:
		if c.modern {
			return errorReply(http.StatusBadRequest, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Clients do not send responses in protocol "+c.version))
		}
		return reply{status: http.StatusAccepted} // answers to requests this endpoint never sends
	}
	return e.dispatch(r.Context(), &c)
}

// selectEra decides the protocol era and version of a message and applies
// that era's header rules. ok is false when the message was refused.
func (e *Endpoint) selectEra(r *http.Request, msg jsonrpc.Message, c *call, inBatch bool) (rep reply, ok bool) {
	header := r.Header.Get(headerProtocolVersion)
	meta := gjson.GetBytes(msg.Params, `_meta.io\.modelcontextprotocol/protocolVersion`)
	if msg.Kind != jsonrpc.KindResponse && (meta.Exists() || isModernVersion(header)) {
		if inBatch {
			return errorReply(http.StatusBadRequest, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "Batches are not allowed in protocol "+Version20260728)), false
		}
		return e.modernChecks(r, msg, c, meta)
	}
	// Legacy era.
	switch {
	case msg.Method == "initialize":
		c.version = negotiate(gjson.GetBytes(msg.Params, "protocolVersion").String())
		if inBatch {
			return errorReply(0, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, "initialize must not be part of a batch")), false
		}
	case header == "":
		c.version = Version20250326 // what the specification says to assume
	case isLegacyVersion(header):
		c.version = header
	default:
		return unsupportedVersion(msg.ID, header), false
	}
	return reply{}, true
}

// modernChecks validates a 2026-07-28 request: the _meta fields and the
// Mcp-* headers that must repeat them.
func (e *Endpoint) modernChecks(r *http.Request, msg jsonrpc.Message, c *call, meta gjson.Result) (reply, bool) {
	if !meta.Exists() || meta.Type != gjson.String {
		return errorReply(http.StatusBadRequest, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			"Missing or invalid _meta field "+metaProtocolVersion)), false
	}
	version := meta.Str
	if !isModernVersion(version) {
		// Legacy versions are negotiated with initialize, never per request.
		return unsupportedVersion(msg.ID, version), false
	}
	caps := gjson.GetBytes(msg.Params, `_meta.io\.modelcontextprotocol/clientCapabilities`)
	if !caps.IsObject() {
		return errorReply(http.StatusBadRequest, msg.ID, jsonrpc.NewError(jsonrpc.CodeInvalidParams,
			"Missing or invalid _meta field "+metaClientCapabilities)), false
	}
	headers := r.Header
	if vs := headers.Values(headerProtocolVersion); len(vs) != 1 || vs[0] != version {
		return headerMismatch(msg.ID, headerProtocolVersion), false
	}
	if vs := headers.Values(headerMethod); len(vs) != 1 || vs[0] != msg.Method {
		return headerMismatch(msg.ID, headerMethod), false
	}
	if msg.Method == "resources/read" {
		vs := headers.Values(headerName)
		if len(vs) != 1 {
			return headerMismatch(msg.ID, headerName), false
		}
		name, ok := decodeHeaderName(vs[0])
		uri := gjson.GetBytes(msg.Params, "uri")
		if !ok || uri.Type != gjson.String || name != uri.Str {
			return headerMismatch(msg.ID, headerName), false
		}
	}
	c.modern, c.version = true, version
	return reply{}, true
}

// negotiate answers an initialize: the client's version when the endpoint
// speaks it, else the newest legacy version.
func negotiate(requested string) string {
	if isLegacyVersion(requested) {
		return requested
	}
	return legacyVersions[0]
}

// dispatch routes a request to its method.
func (e *Endpoint) dispatch(ctx context.Context, c *call) reply {
	if c.modern {
		switch c.method {
		case "server/discover":
			return resultReply(c.id, e.discover)
		case "subscriptions/listen":
			if e.hub != nil {
				return e.listen(ctx, c)
			}
			return errorReply(http.StatusNotFound, c.id, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, ""))
		case "resources/list", "resources/read", "resources/templates/list", "completion/complete":
		default:
			return errorReply(http.StatusNotFound, c.id, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, ""))
		}
	}
	switch c.method {
	case "initialize":
		if !c.modern {
			return e.initialize(c)
		}
	case "ping":
		if !c.modern {
			return resultReply(c.id, []byte("{}"))
		}
	case "resources/list":
		return e.list(ctx, c)
	case "resources/read":
		return e.read(ctx, c)
	case "resources/templates/list":
		return e.templates(ctx, c)
	case "completion/complete":
		return e.complete(ctx, c)
	case "resources/subscribe", "resources/unsubscribe":
		if !c.modern && e.sessions != nil {
			return e.subscribe(ctx, c)
		}
	}
	return errorReply(0, c.id, jsonrpc.NewError(jsonrpc.CodeMethodNotFound, ""))
}

// initialize answers the legacy handshake; in session mode it mints a
// session bound to the caller.
func (e *Endpoint) initialize(c *call) reply {
	rep := resultReply(c.id, e.initializeResult(c.version))
	if e.sessions != nil {
		s, ok := e.sessions.create(c.caller)
		if !ok {
			return errorReply(http.StatusServiceUnavailable, c.id, jsonrpc.NewError(jsonrpc.CodeInternalError, "Too many sessions"))
		}
		rep.sessionID = s.id
	}
	return rep
}

// subscribe serves resources/subscribe and resources/unsubscribe, which
// need a session: subscriptions live there, and updates arrive on its GET
// stream.
func (e *Endpoint) subscribe(ctx context.Context, c *call) reply {
	if c.session == nil {
		return errorReply(0, c.id, jsonrpc.NewError(jsonrpc.CodeInvalidRequest, c.method+" needs a session: send initialize first, then Mcp-Session-Id"))
	}
	var p struct {
		URI *string `json:"uri"`
	}
	if err := jsonrpc.UnmarshalParams(c.params, &p); err != nil {
		return e.errorFor(c, err, "")
	}
	if p.URI == nil || *p.URI == "" {
		return e.errorFor(c, invalidParams("params.uri is required"), "")
	}
	if c.method == "resources/unsubscribe" {
		c.session.unsubscribe(*p.URI)
		return resultReply(c.id, []byte("{}"))
	}
	if !e.canRead(ctx, c.caller, *p.URI) {
		return e.errorFor(c, inventory.ErrNotFound, *p.URI)
	}
	if !c.session.subscribe(*p.URI) {
		return e.errorFor(c, invalidParams("too many subscriptions in this session"), "")
	}
	return resultReply(c.id, []byte("{}"))
}

// initializeResult is the legacy handshake's answer.
func (e *Endpoint) initializeResult(version string) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"protocolVersion":"`...)
	b = append(b, version...)
	b = append(b, `","capabilities":`...)
	b = append(b, e.capabilities...)
	b = append(b, `,"serverInfo":`...)
	b = append(b, e.serverInfo...)
	if e.instructions != nil {
		b = append(b, `,"instructions":`...)
		b = append(b, e.instructions...)
	}
	return append(b, '}')
}

// write sends a reply.
func (e *Endpoint) write(w http.ResponseWriter, r *http.Request, rep reply) {
	if rep.authErr != nil {
		e.auth.WriteError(w, r, rep.authErr)
		return
	}
	if rep.stream != nil {
		rep.stream(w, r, rep.until)
		return
	}
	h := w.Header()
	// Shared, never-modified values: setting them allocates nothing.
	h["Cache-Control"] = privateCache
	h["Vary"] = varyAuthorization
	if rep.sessionID != "" {
		h.Set(headerSessionID, rep.sessionID)
	}
	if rep.body == nil {
		w.WriteHeader(cmpOr(rep.status, http.StatusAccepted))
		return
	}
	h["Content-Type"] = contentTypeJSON
	h.Set("Content-Length", strconv.Itoa(len(rep.body)))
	w.WriteHeader(cmpOr(rep.status, http.StatusOK))
	_, _ = w.Write(rep.body)
	release(rep.pooled, rep.body)
}

// Header values of every JSON response (authn.SetPrivate's, without its
// allocations). Their capacity equals their length, so a later Add by a
// wrapping handler copies them instead of writing into them.
var (
	privateCache      = []string{"private, max-age=0"}
	varyAuthorization = []string{"Authorization"}
	contentTypeJSON   = []string{"application/json"}
)

func cmpOr(v, fallback int) int {
	if v == 0 {
		return fallback
	}
	return v
}
