package mcphttp

import (
	"encoding/json"
	"net/http"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/evict"
	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
)

// URLElicitation is an error a callback (List, Read, Search, a tool's
// handler) returns when the caller must visit a URL before the call can
// succeed: a URL-mode elicitation (SEP-1036), such as the connect page of
// an upstream the caller has not authorized (package authn/upstream's
// *ElicitationError). The endpoint answers it in the protocol's form, to
// clients that declared the elicitation.url capability:
//
//   - 2025-11-25 (a session whose initialize declared it): the error
//     -32042 URLElicitationRequiredError, data.elicitations holding one
//     {mode "url", elicitationId, url, message};
//   - 2026-07-28 (the request's _meta declared it), for resources/read,
//     tools/call and prompts/get: the result {resultType
//     "input_required", inputRequests: {id: elicitation/create request}};
//     the client calls again once the user is done.
//
// Other clients, and methods that cannot ask for input (resources/list
// in 2026-07-28), get -32603 whose message names the URL, as the
// specification's fallback for clients without URL elicitation; in
// 2026-07-28 a client without the capability gets -32021 with
// data.requiredCapabilities.
type URLElicitation interface {
	error
	URLElicitation() (id, url, message string)
}

// codeURLElicitationRequired is URLElicitationRequiredError
// (2025-11-25; reserved in 2026-07-28).
const codeURLElicitationRequired = -32042

// maxElicitSessions bounds the legacy sessions remembered as declaring
// elicitation.url; elicitSessionTTL is how long one is remembered.
const (
	maxElicitSessions = 100000
	elicitSessionTTL  = 24 * time.Hour
)

// elicitSessions remembers the legacy sessions whose initialize declared
// the elicitation.url capability (in this instance: another instance of
// a fleet answers that session with the fallback error).
type elicitSessions struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func (s *elicitSessions) add(id string, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string]time.Time{}
	}
	if _, ok := s.m[id]; !ok && len(s.m) >= maxElicitSessions {
		evict.Sample(s.m, func(t time.Time) bool { return now.Sub(t) > elicitSessionTTL })
	}
	s.m[id] = now
}

func (s *elicitSessions) has(id string, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[id]
	return ok && now.Sub(t) <= elicitSessionTTL
}

// declaresURLElicitation reports whether caps (a ClientCapabilities
// object) declares elicitation.url: an object (an empty elicitation
// object means form mode only).
func declaresURLElicitation(caps jsonstrict.Value) bool {
	if caps.Kind() != jsonstrict.Object {
		return false
	}
	var el jsonstrict.Value
	_ = caps.Members(func(n []byte, v jsonstrict.Value) bool {
		if string(n) == "elicitation" {
			el = v
			return false
		}
		return true
	})
	if el.Kind() != jsonstrict.Object {
		return false
	}
	found := false
	_ = el.Members(func(n []byte, v jsonstrict.Value) bool {
		if string(n) == "url" {
			found = v.Kind() == jsonstrict.Object
			return false
		}
		return true
	})
	return found
}

// noteInitialize remembers a legacy session whose initialize declared
// elicitation.url.
func (e *Endpoint) noteInitialize(req *Request) {
	if req.modern {
		return
	}
	id := req.sessionNoted()
	if id == "" {
		return
	}
	caps, ok, _ := mcpwire.Member(req.params, "capabilities")
	if ok && declaresURLElicitation(caps) {
		e.elicit.add(id, time.Now())
	}
}

// acceptsURLElicitation reports whether the client of c declared
// elicitation.url.
func (e *Endpoint) acceptsURLElicitation(c *record) bool {
	if c.Modern {
		_, caps := mcpwire.MetaOf(c.Params, metaClientCapabilities)
		return declaresURLElicitation(caps)
	}
	return c.SessionID != "" && e.elicit.has(c.SessionID, time.Now())
}

// inputRequiredMethods may answer with an input_required result
// (2026-07-28, basic/patterns/mrtr).
func inputRequiredMethod(method string) bool {
	return method == "resources/read" || method == "tools/call" || method == "prompts/get"
}

// elicitationReply answers a URLElicitation el for c: an input_required
// result (ok true) or the error of the table.
func (e *Endpoint) elicitationReply(c *record, el URLElicitation) (res Result, err error, ok bool) {
	id, u, msg := el.URLElicitation()
	capable := e.acceptsURLElicitation(c)
	elicit := func(dst []byte) []byte {
		dst = append(dst, `{"mode":"url","elicitationId":`...)
		dst = mcpwire.AppendString(dst, id)
		dst = append(dst, `,"url":`...)
		dst = mcpwire.AppendString(dst, u)
		dst = append(dst, `,"message":`...)
		dst = mcpwire.AppendString(dst, msg)
		return append(dst, '}')
	}
	switch {
	case capable && c.Modern && inputRequiredMethod(c.Method):
		b := []byte(`{"resultType":"input_required","inputRequests":{`)
		b = mcpwire.AppendString(b, id)
		b = append(b, `:{"method":"elicitation/create","params":`...)
		b = elicit(b)
		b = append(b, `}},"_meta":{"`+metaServerInfo+`":`...)
		b = append(b, e.serverInfo...)
		b = append(b, "}}"...)
		return resultReply(c.ID, b), nil, true
	case capable && !c.Modern:
		data := json.RawMessage(append(elicit([]byte(`{"elicitations":[`)), "]}"...))
		return Result{}, &Error{Code: codeURLElicitationRequired, Message: "This request requires more information.", Data: data}, false
	case !capable && c.Modern:
		return Result{}, &Error{Code: jsonrpc.CodeMissingClientCapability, Status: http.StatusBadRequest,
			Message: "This request needs the user to open " + u + " (a URL-mode elicitation, which the client did not declare)",
			Data:    json.RawMessage(`{"requiredCapabilities":{"elicitation":{"url":{}}}}`)}, false
	}
	return Result{}, &Error{Code: jsonrpc.CodeInternalError,
		Message: "This request needs the user to open " + u + " in a browser and then try again"}, false
}
