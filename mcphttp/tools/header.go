package tools

import (
	"net/http"

	"github.com/mcpkit/mcpkit/internal/httpheader"
	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
)

// Arguments bound to headers (2026-07-28, SEP-2243): an inputSchema
// property annotated "x-mcp-header": "Region" must be repeated in the
// request's Mcp-Param-Region header — as it is (visible ASCII), or as
// =?base64?…?= (padded standard Base64 of UTF-8) — so that a proxy can
// route on it without reading the body. A call whose header is missing,
// malformed or disagrees with the argument is refused (400, -32020), as
// a wrong Mcp-Name is.

// headerParam is an argument bound to a header.
type headerParam struct {
	arg    string // the property's name in arguments
	header string // the canonical header name, Mcp-Param-<x-mcp-header>
}

// headerParams returns the arguments an inputSchema binds to headers;
// bad names the first property whose x-mcp-header is not a header name
// token.
func headerParams(schema string) (params []headerParam, bad string) {
	v, err := jsonstrict.Parse([]byte(schema))
	if err != nil {
		return nil, ""
	}
	props, ok, _ := mcpwire.Member(v.Raw(), "properties")
	if !ok || props.Kind() != jsonstrict.Object {
		return nil, ""
	}
	_ = jsonstrict.Members(props.Raw(), func(name []byte, prop jsonstrict.Value) bool {
		if prop.Kind() != jsonstrict.Object {
			return true
		}
		h, ok, _ := mcpwire.Member(prop.Raw(), "x-mcp-header")
		if !ok {
			return true
		}
		suffix, isStr := h.Str()
		if !isStr || !headerToken(suffix) {
			bad = string(name)
			return false
		}
		params = append(params, headerParam{arg: string(name), header: http.CanonicalHeaderKey("Mcp-Param-" + suffix)})
		return true
	})
	if bad != "" {
		return nil, bad
	}
	return params, ""
}

// headerToken reports an HTTP token (RFC 9110) of at most 64 characters.
func headerToken(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !httpheader.IsTchar(s[i]) {
			return false
		}
	}
	return true
}

// checkHeaders checks the Mcp-Param headers of a modern call against its
// arguments: each bound argument present in the body must be repeated in
// its header, and a header must not name an argument the body lacks.
func checkHeaders(h http.Header, args []byte, params []headerParam) error {
	for _, p := range params {
		vs := h[p.header]
		v, present, _ := mcpwire.Member(args, p.arg)
		if !present || v.Kind() == jsonstrict.Null {
			if len(vs) > 0 {
				return errParamHeader(p.header)
			}
			continue
		}
		if len(vs) != 1 {
			return errParamHeader(p.header)
		}
		got, ok := httpheader.DecodeValue(vs[0])
		if !ok {
			return errParamHeader(p.header)
		}
		var want string
		switch v.Kind() {
		case jsonstrict.String:
			want, _ = v.Str()
		case jsonstrict.Number, jsonstrict.Bool:
			want = string(v.Raw())
		default:
			return errParamHeader(p.header) // an object or array cannot be a header
		}
		if got != want {
			return errParamHeader(p.header)
		}
	}
	return nil
}

// errParamHeader refuses a call whose header does not repeat its
// argument. The header name is the tool's own, never client input.
func errParamHeader(header string) error {
	return &mcphttp.Error{Status: http.StatusBadRequest, Code: jsonrpc.CodeHeaderMismatch,
		Message: "Header " + header + " is missing, invalid or does not match the request body"}
}
