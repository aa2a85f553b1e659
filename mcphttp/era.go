package mcphttp

import (
	"net/http"

	"github.com/mcpkit/mcpkit/internal/httpheader"
	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
)

// allVersions is every version the endpoint speaks, modern first.
var allVersions = mcpwire.Versions()

// Reserved _meta keys of the modern protocol.
const (
	metaProtocolVersion    = mcpwire.MetaProtocolVersion
	metaClientCapabilities = mcpwire.MetaClientCapabilities
	metaServerInfo         = "io.modelcontextprotocol/serverInfo"
)

// HTTP headers of the Streamable HTTP transport, in canonical form.
const (
	headerProtocolVersion = "Mcp-Protocol-Version"
	headerMethod          = "Mcp-Method"
	headerName            = "Mcp-Name"
)

// selectEra decides the protocol era and version of a message and applies
// that era's header rules.
func (e *Endpoint) selectEra(r *http.Request, msg jsonrpc.Message, c *record, env *mcpwire.Envelope, inBatch bool) error {
	header := mcpwire.HeaderValue(r.Header, headerProtocolVersion)
	version := env.Version
	if msg.Kind != jsonrpc.KindResponse && (version.Kind() != jsonstrict.None || mcpwire.IsModernVersion(header)) {
		if msg.Kind == jsonrpc.KindNotification {
			// The 2026-07-28 schema puts _meta and the header rules on
			// requests; a client notification (notifications/cancelled, say)
			// is accepted as it is, and never answered.
			c.Modern, c.ProtocolVersion = true, mcpwire.Version20260728
			return nil
		}
		if inBatch {
			return errBatchModern
		}
		return e.modernChecks(r, msg, c, env)
	}
	// Legacy era.
	switch {
	case msg.Method == "initialize":
		requested, _, _ := mcpwire.StringParam(msg.Params, "protocolVersion") // initialize's own member
		c.ProtocolVersion = negotiate(requested)
		if inBatch {
			return errBatchInitialize
		}
	case header == "":
		c.ProtocolVersion = mcpwire.Version20250326 // what the specification says to assume
	case mcpwire.IsLegacyVersion(header):
		c.ProtocolVersion = header
	default:
		return errUnsupportedVersion(header)
	}
	return nil
}

// modernChecks validates a 2026-07-28 request: the _meta fields and the
// Mcp-* headers that must repeat them. The header is compared before the
// version is looked at: a header that disagrees with the body is a
// mismatch (-32020), whatever the version says.
func (e *Endpoint) modernChecks(r *http.Request, msg jsonrpc.Message, c *record, env *mcpwire.Envelope) error {
	version, ok := env.Version.Str()
	if !ok {
		return errMeta(metaProtocolVersion)
	}
	headers := r.Header
	if vs := headers[headerProtocolVersion]; len(vs) != 1 || vs[0] != version {
		return errHeader(headerProtocolVersion)
	}
	if !mcpwire.IsModernVersion(version) {
		// Legacy versions are negotiated with initialize, never per request.
		return errUnsupportedVersion(version)
	}
	if env.Caps.Kind() != jsonstrict.Object {
		return errMeta(metaClientCapabilities)
	}
	if vs := headers[headerMethod]; len(vs) != 1 || vs[0] != msg.Method {
		return errHeader(headerMethod)
	}
	if m, ok := e.methods[msg.Method]; ok && m.opts.NameMember != "" {
		vs := headers[headerName]
		if len(vs) != 1 {
			return errHeader(headerName)
		}
		name, ok := httpheader.DecodeValue(vs[0])
		var value string
		var present bool
		var err error
		if v, read := env.Member(m.opts.NameMember); read {
			value, present, err = mcpwire.StringValue(v, env.Err)
		} else {
			value, present, err = mcpwire.StringParam(msg.Params, m.opts.NameMember)
		}
		if !ok || err != nil || !present || name != value {
			return errHeader(headerName)
		}
	}
	c.Modern, c.ProtocolVersion = true, version
	return nil
}

// negotiate answers an initialize: the client's version when the endpoint
// speaks it, else the newest legacy version.
func negotiate(requested string) string {
	if mcpwire.IsLegacyVersion(requested) {
		return requested
	}
	return mcpwire.NewestLegacy
}
