package mcpwire

import "github.com/mcpkit/mcpkit/internal/jsonstrict"

// Reserved _meta keys of the modern protocol that the era's rules read.
const (
	MetaProtocolVersion    = "io.modelcontextprotocol/protocolVersion"
	MetaClientCapabilities = "io.modelcontextprotocol/clientCapabilities"
)

// MetaOf returns the string member name of params._meta, and whether
// _meta is there at all (kind None when it is not).
func MetaOf(params []byte, name string) (meta jsonstrict.Value, v jsonstrict.Value) {
	m, ok, _ := Member(params, "_meta")
	if !ok || m.Kind() != jsonstrict.Object {
		return m, v
	}
	_ = m.Members(func(n []byte, mv jsonstrict.Value) bool {
		if string(n) == name {
			v = mv
			return false
		}
		return true
	})
	return m, v
}

// Envelope is the one read of a call's params (issue 38: params read
// once): the top-level members the endpoint's steps use and the _meta
// members of the era's rules, found in one walk of the params and one of
// their _meta. selectEra and modernChecks read the era's members from it,
// the endpoint's own handlers their cursor or uri (paramView).
type Envelope struct {
	Err     error            // params neither an object nor empty or null: Invalid params
	Name    jsonstrict.Value // params.name; Kind None when absent
	Version jsonstrict.Value // params._meta's protocol version; None without an object _meta
	Caps    jsonstrict.Value // params._meta's client capabilities; likewise
	View    ParamView
}

// ParamView is what the endpoint's own handlers read of the params, kept
// with the call's Request.
type ParamView struct {
	Err         error
	URI, Cursor jsonstrict.Value
}

// CursorValue is CursorParam of the params the view was read from.
func (v *ParamView) CursorValue() (string, error) { return Cursor(StringValue(v.Cursor, v.Err)) }

// URIValue is URIParam of the params the view was read from.
func (v *ParamView) URIValue() (string, error) { return URI(StringValue(v.URI, v.Err)) }

// ReadEnvelope reads params (strictly decoded: no repeated member names).
func ReadEnvelope(params []byte) (env Envelope) {
	if len(params) == 0 {
		return env
	}
	var meta jsonstrict.Value
	err := jsonstrict.Members(params, func(n []byte, v jsonstrict.Value) bool {
		switch string(n) {
		case "_meta":
			meta = v
		case "name":
			env.Name = v
		case "uri":
			env.View.URI = v
		case "cursor":
			env.View.Cursor = v
		}
		return true
	})
	if err != nil {
		env = Envelope{}
		if !IsNull(params) { // null params decode into nothing
			env.Err = ErrParamsFit()
			env.View.Err = env.Err
		}
		return env
	}
	if meta.Kind() == jsonstrict.Object {
		_ = meta.Members(func(n []byte, v jsonstrict.Value) bool {
			switch string(n) {
			case MetaProtocolVersion:
				env.Version = v
			case MetaClientCapabilities:
				env.Caps = v
			}
			return true
		})
	}
	return env
}

// Member returns the top-level member name from the envelope, for the
// members it holds (ok false for another name): Kind None when absent.
func (env *Envelope) Member(name string) (v jsonstrict.Value, ok bool) {
	switch name {
	case "name":
		return env.Name, true
	case "uri":
		return env.View.URI, true
	case "cursor":
		return env.View.Cursor, true
	}
	return v, false
}
