package jsonrpc

import "github.com/tidwall/gjson"

// Peeked is what [Peek] found in a body.
type Peeked struct {
	Kind   Kind
	Method string
	ID     ID
	Batch  bool // the body is an array: Kind, Method and ID are zero
}

// Peek reads the method, the id and the kind of a message with gjson,
// without decoding params and without validating anything. It is meant
// for a router that only forwards the body (to another handler, which
// decodes it).
//
// Peek is not a security check: for malformed, ambiguous or hostile input
// (duplicate members, invalid UTF-8, a non-integer id, …) its answer means
// nothing, and it may differ from what a strict decoder sees. Decide
// anything that matters with [Decode]. For every message Decode accepts,
// Peek reports the same Kind, Method and ID.
//
// Kind is KindRequest for a non-empty string method and an id that is not
// null, KindNotification for such a method without an id, KindResponse for
// an id without a method (result and error are not looked at), and
// KindInvalid otherwise.
func Peek(data []byte) Peeked {
	if IsBatch(data) {
		return Peeked{Batch: true}
	}
	var p Peeked
	id := gjson.GetBytes(data, "id")
	if id.Exists() && id.Type != gjson.Null {
		p.ID = ID{raw: id.Raw}
	}
	m := gjson.GetBytes(data, "method")
	switch {
	case m.Exists():
		if m.Type != gjson.String || m.Str == "" {
			return Peeked{}
		}
		p.Method = m.Str
		switch {
		case !id.Exists():
			p.Kind = KindNotification
		case id.Type != gjson.Null:
			p.Kind = KindRequest
		default:
			return Peeked{}
		}
	case id.Exists():
		p.Kind = KindResponse
	default:
		return Peeked{}
	}
	return p
}
