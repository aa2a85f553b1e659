package jsonrpc

import "strconv"

// The envelope: what the scan of a message's top-level object captures, and
// how the captured members make a Message.

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

type span struct{ start, end int }

type top struct {
	seen        uint16 // 1<<member for each envelope member present
	errSeen     uint16 // 1<<member for each error-object member present
	idKind      uint8
	idAmbiguous bool // a duplicate "id": echo none
	idLong      bool // longer than the limit: echo none
	id          span
	method      span // string body, without quotes
	methodEsc   bool
	params      span
	result      span
	errCode     int64
	errMsg      span // string body, without quotes
	errMsgEsc   bool
	errData     span
}

// memberOf names a member exactly (case-sensitive, after unescaping).
func memberOf(name []byte, esc bool) member {
	if esc {
		if len(name) > 48 { // longer than any known name fully escaped
			return mUnknown
		}
		var buf [48]byte
		name = appendUnescaped(buf[:0], name)
	}
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

// at returns the byte at s.i, or 0 at the end.
func (s *scanner) at() byte {
	if s.i < len(s.data) {
		return s.data[s.i]
	}
	return 0
}

// topMember scans the value of one envelope member at s.i.
func (s *scanner) topMember(name []byte, esc bool, depth int) bool {
	m := memberOf(name, esc)
	if m > mError {
		m = mUnknown
	}
	bit := uint16(1) << m
	if s.top.seen&bit != 0 { // a duplicate, already recorded: keep the first
		return s.value(depth)
	}
	s.top.seen |= bit
	t := &s.top
	c := s.at()
	switch m {
	case mJSONRPC:
		if c != '"' {
			s.invalid("jsonrpc is not \"2.0\"")
			return s.value(depth)
		}
		start := s.i + 1
		esc, ok := s.str()
		if ok {
			v := s.data[start : s.i-1]
			if esc && len(v) <= 18 {
				var buf [18]byte
				v = appendUnescaped(buf[:0], v)
			}
			if string(v) != "2.0" {
				s.invalid("jsonrpc is not \"2.0\"")
			}
		}
		return ok
	case mID:
		start := s.i
		var ok bool
		switch {
		case c == '"':
			_, ok = s.str()
			t.idKind = idString
		case c == '-' || isDigit(c):
			var isInt bool
			isInt, ok = s.number()
			t.idKind = idInt
			if !isInt {
				t.idKind = idBad
			}
		case c == 'n':
			ok = s.value(depth)
			t.idKind = idNull
		default:
			ok = s.value(depth)
			t.idKind = idBad
		}
		t.id = span{start, s.i}
		if ok && s.i-start > s.maxID {
			t.idLong = true
			s.invalid("id too long")
		}
		return ok
	case mMethod:
		if c != '"' {
			s.invalid("method is not a string")
			return s.value(depth)
		}
		start := s.i + 1
		esc, ok := s.str()
		t.method, t.methodEsc = span{start, s.i - 1}, esc
		if ok && t.method.end == start {
			s.invalid("method is empty")
		}
		return ok
	case mParams, mResult, mError:
		if c != '{' {
			s.invalid(notAnObject[m])
			return s.value(depth)
		}
		start := s.i
		mode := modeAny
		if m == mError {
			mode = modeError
		}
		ok := s.object(depth+1, mode)
		sp := span{start, s.i}
		switch m {
		case mParams:
			t.params = sp
		case mResult:
			t.result = sp
		}
		return ok
	}
	s.invalid("unknown member")
	return s.value(depth)
}

var notAnObject = [...]string{
	mParams: "params is not an object",
	mResult: "result is not an object",
	mError:  "error is not an object",
}

// errorMember scans the value of one member of a response's error object.
func (s *scanner) errorMember(name []byte, esc bool, depth int) bool {
	m := memberOf(name, esc)
	if m < mCode {
		m = mUnknown
	}
	bit := uint16(1) << m
	if s.top.errSeen&bit != 0 {
		return s.value(depth)
	}
	s.top.errSeen |= bit
	t := &s.top
	c := s.at()
	switch m {
	case mCode:
		if c != '-' && !isDigit(c) {
			s.invalid("error code is not an integer")
			return s.value(depth)
		}
		start := s.i
		isInt, ok := s.number()
		if ok {
			n, err := strconv.ParseInt(string(s.data[start:s.i]), 10, 64)
			if !isInt || err != nil {
				s.invalid("error code is not an integer")
			}
			t.errCode = n
		}
		return ok
	case mMessage:
		if c != '"' {
			s.invalid("error message is not a string")
			return s.value(depth)
		}
		start := s.i + 1
		esc, ok := s.str()
		t.errMsg, t.errMsgEsc = span{start, s.i - 1}, esc
		return ok
	case mData:
		start := s.i
		ok := s.value(depth)
		t.errData = span{start, s.i}
		return ok
	}
	s.invalid("unknown member in error object")
	return s.value(depth)
}

func (t *top) has(m member) bool { return t.seen&(1<<m) != 0 }

// id returns the id read from the envelope, if it is a valid request id and
// not ambiguous.
func (s *scanner) id() ID {
	t := &s.top
	if (t.idKind != idString && t.idKind != idInt) || t.idAmbiguous || t.idLong {
		return ID{}
	}
	return ID{raw: string(s.data[t.id.start:t.id.end])}
}

// message applies the envelope rules to a scanned top-level object.
func (s *scanner) message() (Message, error) {
	t := &s.top
	if s.bad == "" {
		s.classify()
	}
	if s.bad != "" {
		return Message{ID: s.id()}, errInvalid(s.bad)
	}
	msg := Message{ID: s.id()}
	if t.has(mMethod) {
		msg.Kind = KindRequest
		if t.idKind == idAbsent {
			msg.Kind = KindNotification
		}
		raw := s.data[t.method.start:t.method.end]
		if t.methodEsc {
			msg.Method = string(appendUnescaped(nil, raw))
		} else {
			msg.Method = methodString(raw)
		}
		if t.has(mParams) {
			msg.Params = s.data[t.params.start:t.params.end:t.params.end]
		}
		return msg, nil
	}
	msg.Kind = KindResponse
	if t.has(mResult) {
		msg.Result = s.data[t.result.start:t.result.end:t.result.end]
		return msg, nil
	}
	e := &Error{Code: t.errCode}
	raw := s.data[t.errMsg.start:t.errMsg.end]
	if t.errMsgEsc {
		e.Message = string(appendUnescaped(nil, raw))
	} else {
		e.Message = string(raw)
	}
	if t.errSeen&(1<<mData) != 0 {
		e.Data = s.data[t.errData.start:t.errData.end:t.errData.end]
	}
	msg.Error = e
	return msg, nil
}

// classify checks which members go together.
func (s *scanner) classify() {
	t := &s.top
	if !t.has(mJSONRPC) {
		s.invalid("jsonrpc is missing")
		return
	}
	if t.has(mMethod) {
		switch {
		case t.has(mResult) || t.has(mError):
			s.invalid("result or error in a request")
		case t.idKind == idNull:
			s.invalid("request id is null")
		case t.idKind == idBad:
			s.invalid("request id is not a string or an integer")
		}
		return
	}
	switch {
	case t.has(mParams):
		s.invalid("params without method")
	case t.has(mResult) == t.has(mError):
		if t.has(mResult) {
			s.invalid("both result and error")
		} else {
			s.invalid("no method, result or error")
		}
	case t.idKind == idAbsent:
		s.invalid("response without id")
	case t.idKind == idBad:
		s.invalid("response id is not a string or an integer")
	case t.idKind == idNull && t.has(mResult):
		s.invalid("result with a null id")
	case t.has(mError) && t.errSeen&(1<<mCode|1<<mMessage) != 1<<mCode|1<<mMessage:
		s.invalid("error object needs code and message")
	}
}

// methodString returns b as a string, without allocating for the methods
// MCP defines.
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
