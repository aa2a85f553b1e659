package mcphttp

import (
	"net/http"

	"github.com/mcpkit/mcpkit/inventory"
)

// ListHandler serves resources/list from an inventory and nothing else:
// the piece to mount where a service routes MCP methods itself, or in
// front of another MCP server for this one method. It follows the same
// rules as the [Endpoint] — one strict decode (a [jsonrpc.Decoder] in
// front is used when there is one), both protocol eras and their header
// rules, the context principal or the Authenticator, the byte budget and
// sealed cursors, the error table — and answers every other method with
// -32601. Its responses are private: Cache-Control: private, max-age=0,
// and Authorization appended to whatever Vary an outer handler set.
// It is safe for concurrent use.
type ListHandler struct {
	e *Endpoint
}

var _ http.Handler = (*ListHandler)(nil)

// NewListHandler returns a ListHandler for inv, configured like [New].
func NewListHandler(inv *inventory.Inventory, opts Options) (*ListHandler, error) {
	e, err := newEndpoint(inv, opts)
	if err != nil {
		return nil, err
	}
	e.methods["resources/list"] = method{h: e.list, opts: MethodOptions{Class: classOf(ClassList)}}
	if e, err = e.finish(nil); err != nil {
		return nil, err
	}
	return &ListHandler{e: e}, nil
}

// ServeHTTP answers a POST carrying a resources/list request.
func (h *ListHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h == nil || h.e == nil {
		unbuilt(w, "mcphttp: a ListHandler not built by mcphttp.NewListHandler cannot serve: use mcphttp.NewListHandler")
		return
	}
	h.e.ServeHTTP(w, r)
}
