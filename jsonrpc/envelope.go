package jsonrpc

import (
	"bytes"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// The envelope: what the scan of a message's top-level object captures,
// and how the captured members make a Message.

// member names known to the envelope and to an error object.
type member uint8

const (
	mUnknown member = iota
	mJSONRPC
	mID
	mMethod
	mParams
	mResult
	mError
	mCode    // error object
	mMessage // error object
	mData    // error object
)

// id kinds
const (
	idAbsent uint8 = iota
	idString
	idInt
	idNull
	idBad
)

type envelope struct {
	maxID int    // the longest id text accepted
	bad   string // the first broken rule

	seen        uint16 // 1<<member for each envelope member present
	idKind      uint8
	idAmbiguous bool // "id" twice, or a case variant of it: echo none
	idLong      bool // longer than maxID: echo none

	id, method, params, result, errObj jsonstrict.Value
}

// errorObject is what a response's error object holds.
type errorObject struct {
	bad     string // the first broken rule
	seen    uint16 // 1<<member for each member present
	code    int64
	message jsonstrict.Value
	data    jsonstrict.Value
}

// invalid records a broken rule unless one is already recorded.
func (e *envelope) invalid(reason string) {
	if e.bad == "" {
		e.bad = reason
	}
}

// memberOf names a member exactly (case-sensitive, unescaped).
func memberOf(name []byte) member {
	switch string(name) {
	case "jsonrpc":
		return mJSONRPC
	case "id":
		return mID
	case "method":
		return mMethod
	case "params":
		return mParams
	case "result":
		return mResult
	case "error":
		return mError
	case "code":
		return mCode
	case "message":
		return mMessage
	case "data":
		return mData
	}
	return mUnknown
}

// variantOf names the envelope member of which name is a case variant
// ("Method", "ID", "jſonrpc"), or mUnknown.
func variantOf(name []byte) member {
	if len(name) > 24 { // longer than any variant, each rune at its widest
		return mUnknown
	}
	var buf [96]byte
	switch string(jsonstrict.AppendFold(buf[:0], name)) {
	case "JSONRPC":
		return mJSONRPC
	case "ID":
		return mID
	case "METHOD":
		return mMethod
	case "PARAMS":
		return mParams
	case "RESULT":
		return mResult
	case "ERROR":
		return mError
	}
	return mUnknown
}

// member takes one top-level member of the message, which the engine has
// validated. It always goes on: the engine must see the whole body.
//
// Complexity: one case per JSON-RPC member, each a few lines of the one check that member needs; split, the rules of the envelope would be read in several places.
//
//gocyclo:ignore
func (e *envelope) member(name []byte, v jsonstrict.Value) bool {
	m := memberOf(name)
	if m == mUnknown || m > mError {
		// Peers such as mcp-go decode names case-insensitively: "Method"
		// or "ID" would be method or id to them, so a message holding one
		// is ambiguous, whether or not the member itself is there too.
		switch variantOf(name) {
		case mUnknown:
			e.invalid("unknown member")
		case mID:
			e.idAmbiguous = true
			fallthrough
		default:
			e.invalid("case variant of a JSON-RPC member")
		}
		return true
	}
	bit := uint16(1) << m
	if e.seen&bit != 0 { // a duplicate: the engine reports it; echo no id
		if m == mID {
			e.idAmbiguous = true
		}
		return true
	}
	e.seen |= bit
	k := v.Kind()
	switch m {
	case mJSONRPC:
		if raw := v.Raw(); string(raw) != `"2.0"` && !v.EqualStr("2.0") {
			e.invalid("jsonrpc is not \"2.0\"")
		}
	case mID:
		e.id = v
		switch {
		case k == jsonstrict.String:
			e.idKind = idString
		case k == jsonstrict.Number && isInteger(v.Raw()):
			e.idKind = idInt
		case k == jsonstrict.Null:
			e.idKind = idNull
		default:
			e.idKind = idBad
		}
		if len(v.Raw()) > e.maxID {
			e.idLong = true
			e.invalid("id too long")
		}
	case mMethod:
		switch {
		case k != jsonstrict.String:
			e.invalid("method is not a string")
		case len(v.Raw()) == 2:
			e.invalid("method is empty")
		}
		e.method = v
	case mParams, mResult, mError:
		if k != jsonstrict.Object {
			e.invalid(notAnObject[m])
			break
		}
		switch m {
		case mParams:
			e.params = v
		case mResult:
			e.result = v
		default:
			e.errObj = v
		}
	}
	return true
}

// isInteger reports whether a validated number has no fraction and no
// exponent.
func isInteger(num []byte) bool {
	for _, c := range num {
		if c == '.' || c == 'e' || c == 'E' {
			return false
		}
	}
	return true
}

var notAnObject = [...]string{
	mParams: "params is not an object",
	mResult: "result is not an object",
	mError:  "error is not an object",
}

// member takes one member of a response's error object.
func (eo *errorObject) member(name []byte, v jsonstrict.Value) bool {
	m := memberOf(name)
	if m < mCode {
		eo.invalid("unknown member in error object")
		return true
	}
	bit := uint16(1) << m
	if eo.seen&bit != 0 {
		return true
	}
	eo.seen |= bit
	switch m {
	case mCode:
		n, ok := v.Int()
		if !ok {
			eo.invalid("error code is not an integer")
		}
		eo.code = n
	case mMessage:
		if v.Kind() != jsonstrict.String {
			eo.invalid("error message is not a string")
		}
		eo.message = v
	case mData:
		eo.data = v
	}
	return true
}

func (eo *errorObject) invalid(reason string) {
	if eo.bad == "" {
		eo.bad = reason
	}
}

func (e *envelope) has(m member) bool { return e.seen&(1<<m) != 0 }

// validID returns the id read from the envelope, if it is a valid request
// id, within the limit and not ambiguous.
func (e *envelope) validID() ID {
	if (e.idKind != idString && e.idKind != idInt) || e.idAmbiguous || e.idLong {
		return ID{}
	}
	return ID{raw: string(e.id.Raw())}
}

// capped returns the bytes of v, with no room to append over what follows.
func capped(v jsonstrict.Value) []byte {
	raw := v.Raw()
	return raw[:len(raw):len(raw)]
}

// message applies the envelope rules to a validated top-level object.
func (e *envelope) message() (Message, error) {
	var eo errorObject
	if e.has(mError) && e.errObj.Kind() == jsonstrict.Object {
		_ = e.errObj.Members(eo.member) // validated as part of the message
		e.invalid(eo.bad)
	}
	if e.bad == "" {
		e.classify(&eo)
	}
	if e.bad != "" {
		return Message{ID: e.validID()}, errInvalid(e.bad)
	}
	msg := Message{ID: e.validID()}
	if e.has(mMethod) {
		msg.Kind = KindRequest
		if e.idKind == idAbsent {
			msg.Kind = KindNotification
		}
		msg.Method = stringValue(e.method)
		if e.has(mParams) {
			msg.Params = capped(e.params)
		}
		return msg, nil
	}
	msg.Kind = KindResponse
	if e.has(mResult) {
		msg.Result = capped(e.result)
		return msg, nil
	}
	ee := &Error{Code: eo.code}
	ee.Message, _ = eo.message.Str()
	if eo.seen&(1<<mData) != 0 {
		ee.Data = capped(eo.data)
	}
	msg.Error = ee
	return msg, nil
}

// stringValue returns the text of a string value, without allocating for
// the methods MCP defines.
func stringValue(v jsonstrict.Value) string {
	raw := v.Raw()
	if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 {
		return methodString(body)
	}
	var buf [64]byte
	b, _ := v.AppendStr(buf[:0])
	return methodString(b)
}

// classify checks which members go together.
func (e *envelope) classify(eo *errorObject) {
	if !e.has(mJSONRPC) {
		e.invalid("jsonrpc is missing")
		return
	}
	if e.has(mMethod) {
		switch {
		case e.has(mResult) || e.has(mError):
			e.invalid("result or error in a request")
		case e.idKind == idNull:
			e.invalid("request id is null")
		case e.idKind == idBad:
			e.invalid("request id is not a string or an integer")
		}
		return
	}
	switch {
	case e.has(mParams):
		e.invalid("params without method")
	case e.has(mResult) == e.has(mError):
		if e.has(mResult) {
			e.invalid("both result and error")
		} else {
			e.invalid("no method, result or error")
		}
	case e.idKind == idAbsent:
		e.invalid("response without id")
	case e.idKind == idBad:
		e.invalid("response id is not a string or an integer")
	case e.idKind == idNull && e.has(mResult):
		e.invalid("result with a null id")
	case e.has(mError) && eo.seen&(1<<mCode|1<<mMessage) != 1<<mCode|1<<mMessage:
		e.invalid("error object needs code and message")
	}
}

// methodString returns b as a string, without allocating for the methods
// MCP defines.
//
// Complexity: one case per method MCP defines, a lookup table written as a switch so that it does not allocate.
//
//gocyclo:ignore
func methodString(b []byte) string {
	switch string(b) {
	case "initialize":
		return "initialize"
	case "ping":
		return "ping"
	case "notifications/initialized":
		return "notifications/initialized"
	case "notifications/cancelled":
		return "notifications/cancelled"
	case "notifications/progress":
		return "notifications/progress"
	case "notifications/message":
		return "notifications/message"
	case "resources/list":
		return "resources/list"
	case "resources/read":
		return "resources/read"
	case "resources/templates/list":
		return "resources/templates/list"
	case "resources/subscribe":
		return "resources/subscribe"
	case "resources/unsubscribe":
		return "resources/unsubscribe"
	case "notifications/resources/updated":
		return "notifications/resources/updated"
	case "notifications/resources/list_changed":
		return "notifications/resources/list_changed"
	case "completion/complete":
		return "completion/complete"
	case "logging/setLevel":
		return "logging/setLevel"
	case "server/discover":
		return "server/discover"
	case "subscriptions/listen":
		return "subscriptions/listen"
	case "tools/list":
		return "tools/list"
	case "tools/call":
		return "tools/call"
	case "prompts/list":
		return "prompts/list"
	case "prompts/get":
		return "prompts/get"
	case "notifications/roots/list_changed":
		return "notifications/roots/list_changed"
	}
	return string(b)
}
