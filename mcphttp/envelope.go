package mcphttp

import (
	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
)

// envelope is the one read of a call's params (issue 38: params read
// once): the top-level members the endpoint's steps use and the _meta
// members of the era's rules, found in one walk of the params and one of
// their _meta. selectEra and modernChecks read the era's members from it,
// the endpoint's own handlers their cursor or uri (paramView).
type envelope struct {
	err     error            // params neither an object nor empty or null: Invalid params
	name    jsonstrict.Value // params.name; Kind None when absent
	version jsonstrict.Value // params._meta's protocol version; None without an object _meta
	caps    jsonstrict.Value // params._meta's client capabilities; likewise
	paramView
}

// paramView is what the endpoint's own handlers read of the params, kept
// with the call's Request.
type paramView struct {
	err         error
	uri, cursor jsonstrict.Value
}

// readEnvelope reads params (strictly decoded: no repeated member names).
func readEnvelope(params []byte) (env envelope) {
	if len(params) == 0 {
		return env
	}
	var meta jsonstrict.Value
	err := jsonstrict.Members(params, func(n []byte, v jsonstrict.Value) bool {
		switch string(n) {
		case "_meta":
			meta = v
		case "name":
			env.name = v
		case "uri":
			env.uri = v
		case "cursor":
			env.cursor = v
		}
		return true
	})
	if err != nil {
		env = envelope{}
		if !mcpwire.IsNull(params) { // null params decode into nothing
			env.err = mcpwire.ErrParamsFit()
			env.paramView.err = env.err
		}
		return env
	}
	if meta.Kind() == jsonstrict.Object {
		_ = meta.Members(func(n []byte, v jsonstrict.Value) bool {
			switch string(n) {
			case metaProtocolVersion:
				env.version = v
			case metaClientCapabilities:
				env.caps = v
			}
			return true
		})
	}
	return env
}

// member returns the top-level member name from the envelope, for the
// members it holds (ok false for another name): Kind None when absent.
func (env *envelope) member(name string) (v jsonstrict.Value, ok bool) {
	switch name {
	case "name":
		return env.name, true
	case "uri":
		return env.uri, true
	case "cursor":
		return env.cursor, true
	}
	return v, false
}

// cursor is mcpwire.CursorParam of the request's params.
func (r *Request) cursor() (string, error) {
	if r.notes == nil || !r.notes.viewed {
		return mcpwire.CursorParam(r.params)
	}
	v := &r.notes.view
	return mcpwire.Cursor(mcpwire.StringValue(v.cursor, v.err))
}

// uri is mcpwire.URIParam of the request's params.
func (r *Request) uri() (string, error) {
	if r.notes == nil || !r.notes.viewed {
		return mcpwire.URIParam(r.params)
	}
	v := &r.notes.view
	return mcpwire.URI(mcpwire.StringValue(v.uri, v.err))
}
