package mcphttp

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/mcpkit/mcpkit/principal"

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
	caller  *principal.Principal
	session *session // the legacy session named by Mcp-Session-Id, if any
	obs     *Call    // what the Observer is told; nil without one (see observe.go)
}

// reply is the outcome of serving one message.
type reply struct {
	status     int      // HTTP status; 0 means 200
	body       []byte   // the JSON-RPC response; nil for a notification (202)
	authErr    error    // when set, answer with the Authenticator's challenge
	sessionID  string   // a session minted by initialize
	pooled     *respBuf // body's storage, returned to respPool once written
	retryAfter int      // seconds for Retry-After; 0: none
	entries    int      // the items of a list page, for the Observer
	// stream, when set, answers the request itself (an SSE response).
	stream func(w http.ResponseWriter, r *http.Request)
}

// serveBody answers one decoded request body.
func (e *Endpoint) serveBody(w http.ResponseWriter, r *http.Request, b *jsonrpc.Body) {
	var received time.Time
	if e.obs != nil {
		received = time.Now()
	}
	caller, err := e.authenticate(r)
	if err != nil {
		if e.obs != nil {
			e.observeRefused(r, b, received, err)
		}
		e.auth.WriteError(w, r, err)
		return
	}
	if b.Batch {
		e.serveBatch(w, r, b.Items, caller, received)
		return
	}
	e.write(w, r, e.serveMessage(r, b.Message, caller, false, received))
}

// principal is authenticate, answering a refused token (401, or 503 when
// it cannot be checked now).
func (e *Endpoint) principal(w http.ResponseWriter, r *http.Request) (*principal.Principal, bool) {
	p, err := e.authenticate(r)
	if err != nil {
		e.auth.WriteError(w, r, err)
		return nil, false
	}
	return p, true
}

// authenticate returns the caller, nil for an anonymous request: the
// Principal an earlier middleware put in the context, else the one the
// Authenticator verifies. The error is that of a token that is present
// but does not verify, for the Authenticator to answer.
func (e *Endpoint) authenticate(r *http.Request) (*principal.Principal, error) {
	if p, ok := principal.FromContext(r.Context()); ok {
		return &p, nil
	}
	if e.auth == nil {
		return nil, nil
	}
	p, err := e.auth.Authenticate(r)
	switch {
	case err == nil:
		return &p, nil
	case errors.Is(err, authn.ErrNoCredentials):
		return nil, nil
	default:
		return nil, err
	}
}

// serveMessage serves one decoded message. inBatch is set for the elements
// of a 2025-03-26 batch; received is when the body arrived, for the
// Observer (zero without one).
func (e *Endpoint) serveMessage(r *http.Request, msg jsonrpc.Message, caller *principal.Principal, inBatch bool, received time.Time) reply {
	c := call{id: msg.ID, method: msg.Method, params: msg.Params, caller: caller}
	if e.obs != nil {
		return e.serveObserved(r, msg, &c, inBatch, received)
	}
	rep, err := e.serveCall(r.Context(), r, msg, &c, inBatch)
	if err != nil {
		return e.failure(&c, err)
	}
	return rep
}

// serveCall serves c; ctx is the request's context, or the one the
// Observer derived from it.
func (e *Endpoint) serveCall(ctx context.Context, r *http.Request, msg jsonrpc.Message, c *call, inBatch bool) (reply, error) {
	if err := e.selectEra(r, msg, c, inBatch); err != nil {
		return reply{}, err
	}
	if msg.Kind == jsonrpc.KindRequest && e.limiter != nil {
		if err := e.limiter.check(r, c.caller, msg.Method); err != nil {
			return reply{}, err
		}
	}
	if !c.modern && e.sessions != nil && msg.Method != "initialize" {
		if id := headerValue(r.Header, headerSessionID); id != "" {
			if c.session = e.sessions.get(id, c.caller); c.session == nil {
				// Unknown, expired, ended, or another principal's session.
				return reply{}, errSessionNotFound
			}
		}
	}
	switch msg.Kind {
	case jsonrpc.KindNotification:
		return reply{status: http.StatusAccepted}, nil
	case jsonrpc.KindResponse:
		if c.modern {
			return reply{}, errClientResponse(c.version)
		}
		return reply{status: http.StatusAccepted}, nil // answers to requests this endpoint never sends
	}
	return e.dispatch(ctx, c)
}

// selectEra decides the protocol era and version of a message and applies
// that era's header rules. ok is false when the message was refused.
func (e *Endpoint) selectEra(r *http.Request, msg jsonrpc.Message, c *call, inBatch bool) error {
	header := headerValue(r.Header, headerProtocolVersion)
	meta := gjson.GetBytes(msg.Params, `_meta.io\.modelcontextprotocol/protocolVersion`)
	if msg.Kind != jsonrpc.KindResponse && (meta.Exists() || isModernVersion(header)) {
		if msg.Kind == jsonrpc.KindNotification {
			// The 2026-07-28 schema puts _meta and the header rules on
			// requests; a client notification (notifications/cancelled, say)
			// is accepted as it is, and never answered.
			c.modern, c.version = true, Version20260728
			return nil
		}
		if inBatch {
			return errBatchModern
		}
		return e.modernChecks(r, msg, c, meta)
	}
	// Legacy era.
	switch {
	case msg.Method == "initialize":
		c.version = negotiate(gjson.GetBytes(msg.Params, "protocolVersion").String())
		if inBatch {
			return errBatchInitialize
		}
	case header == "":
		c.version = Version20250326 // what the specification says to assume
	case isLegacyVersion(header):
		c.version = header
	default:
		return errUnsupportedVersion(header)
	}
	return nil
}

// modernChecks validates a 2026-07-28 request: the _meta fields and the
// Mcp-* headers that must repeat them.
func (e *Endpoint) modernChecks(r *http.Request, msg jsonrpc.Message, c *call, meta gjson.Result) error {
	if !meta.Exists() || meta.Type != gjson.String {
		return errMeta(metaProtocolVersion)
	}
	version := meta.Str
	if !isModernVersion(version) {
		// Legacy versions are negotiated with initialize, never per request.
		return errUnsupportedVersion(version)
	}
	caps := gjson.GetBytes(msg.Params, `_meta.io\.modelcontextprotocol/clientCapabilities`)
	if !caps.IsObject() {
		return errMeta(metaClientCapabilities)
	}
	headers := r.Header
	if vs := headers.Values(headerProtocolVersion); len(vs) != 1 || vs[0] != version {
		return errHeader(headerProtocolVersion)
	}
	if vs := headers.Values(headerMethod); len(vs) != 1 || vs[0] != msg.Method {
		return errHeader(headerMethod)
	}
	if member := e.nameMember(msg.Method); member != "" {
		vs := headers.Values(headerName)
		if len(vs) != 1 {
			return errHeader(headerName)
		}
		name, ok := decodeHeaderName(vs[0])
		v := gjson.GetBytes(msg.Params, member)
		if !ok || v.Type != gjson.String || name != v.Str {
			return errHeader(headerName)
		}
	}
	c.modern, c.version = true, version
	return nil
}

// nameMember is the params member that Mcp-Name repeats for a method the
// endpoint serves: uri for resources/read, name for tools/call with the
// tools bridge (prompts/get is not served; an unserved method gets 404).
func (e *Endpoint) nameMember(method string) string {
	switch {
	case method == "resources/read":
		return "uri"
	case method == "tools/call" && e.tools != nil:
		return "name"
	}
	return ""
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
func (e *Endpoint) dispatch(ctx context.Context, c *call) (reply, error) {
	if e.only != "" && c.method != e.only {
		return reply{}, errMethodNotFound
	}
	if c.modern {
		switch c.method {
		case "server/discover":
			return resultReply(c.id, e.discover), nil
		case "subscriptions/listen":
			if e.hub != nil {
				return e.listen(ctx, c)
			}
			return reply{}, errMethodNotFound
		case "resources/list", "resources/read", "resources/templates/list", "completion/complete", "tools/list", "tools/call":
		default:
			return reply{}, errMethodNotFound
		}
	}
	switch c.method {
	case "initialize":
		if !c.modern {
			return e.initialize(c)
		}
	case "ping":
		if !c.modern {
			return resultReply(c.id, []byte("{}")), nil
		}
	case "resources/list":
		return e.list(ctx, c)
	case "resources/read":
		return e.read(ctx, c)
	case "resources/templates/list":
		return e.templates(ctx, c)
	case "completion/complete":
		return e.complete(ctx, c)
	case "tools/list":
		return e.toolsList(ctx, c)
	case "tools/call":
		return e.toolsCall(ctx, c)
	case "resources/subscribe", "resources/unsubscribe":
		if !c.modern && e.sessions != nil {
			return e.subscribe(ctx, c)
		}
	}
	return reply{}, errMethodNotFound
}

// initialize answers the legacy handshake. In session mode it mints a
// session bound to a signed-in caller; an anonymous caller, and a
// signed-in one when the session table is full, are answered without a
// session (and without the notification capabilities), never refused.
func (e *Endpoint) initialize(c *call) (reply, error) {
	if e.sessions != nil && c.caller != nil {
		if s, ok := e.sessions.create(c.caller); ok {
			rep := resultReply(c.id, e.initializeResult(c.version, e.capabilities))
			rep.sessionID = s.id
			return rep, nil
		}
	}
	return resultReply(c.id, e.initializeResult(c.version, e.capsStateless)), nil
}

// subscribe serves resources/subscribe and resources/unsubscribe, which
// need a session: subscriptions live there, and updates arrive on its GET
// stream.
func (e *Endpoint) subscribe(ctx context.Context, c *call) (reply, error) {
	if c.session == nil {
		return reply{}, errNeedsSession(c.method)
	}
	uri, err := uriOf(c.params)
	if err != nil {
		return reply{}, err
	}
	c.noteURI(uri)
	if c.method == "resources/unsubscribe" {
		c.session.unsubscribe(uri)
		return resultReply(c.id, []byte("{}")), nil
	}
	if !e.canRead(ctx, c.caller, uri) {
		return reply{}, aboutURI(uri, inventory.ErrNotFound)
	}
	if !c.session.subscribe(uri, e.sessions.lim.MaxSubscriptions) {
		return reply{}, invalidParams("too many subscriptions in this session")
	}
	return resultReply(c.id, []byte("{}")), nil
}

// initializeResult is the legacy handshake's answer.
func (e *Endpoint) initializeResult(version string, caps []byte) []byte {
	b := make([]byte, 0, 256)
	b = append(b, `{"protocolVersion":"`...)
	b = append(b, version...)
	b = append(b, `","capabilities":`...)
	b = append(b, caps...)
	b = append(b, `,"serverInfo":`...)
	b = append(b, e.serverInfo...)
	if e.instructions != nil {
		b = append(b, `,"instructions":`...)
		b = append(b, e.instructions...)
	}
	return append(b, '}')
}
