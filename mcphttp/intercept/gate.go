package intercept

import (
	"fmt"
	"slices"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/principal"
)

// Authentication of what legacy serves. When the endpoint has an
// Authenticator, a request reaches legacy only with credentials it
// accepts (refused ones are answered by the endpoint before this), or
// without credentials when Options.ForwardAnonymous says so, and with the
// scopes Options.MethodScopes and ToolScopes name for it.

// checkScopes refuses a scope table with an invalid scope.
func checkScopes(table map[string][]string, field string) error {
	for key, scopes := range table {
		for _, s := range scopes {
			if !principal.ValidScope(s) {
				return fmt.Errorf("intercept: Options.%s[%q] holds an invalid scope %q", field, key, s)
			}
		}
	}
	return nil
}

// permit returns the refusal of a request whose messages legacy serves
// (any of them, in a batch) that caller (nil: anonymous) may not send:
// principal.ErrUnauthenticated, or a *principal.ScopeError naming the
// scopes they need. It returns nil when the endpoint has no
// Authenticator, and for a request legacy serves nothing of.
func (h *handler) permit(b *jsonrpc.Body, caller *principal.Principal) error {
	if !h.enforce {
		return nil
	}
	var required []string
	legacys := false
	need := func(msg jsonrpc.Message) {
		if h.route(msg) == routeOwn {
			return
		}
		legacys = true
		for _, s := range h.opts.MethodScopes[msg.Method] {
			if !slices.Contains(required, s) {
				required = append(required, s)
			}
		}
		if msg.Method == "tools/call" && len(h.opts.ToolScopes) > 0 {
			name, _, _ := mcpwire.StringParam(msg.Params, "name")
			for _, s := range h.opts.ToolScopes[name] {
				if !slices.Contains(required, s) {
					required = append(required, s)
				}
			}
		}
	}
	if b.Batch {
		for _, it := range b.Items {
			if it.Err == nil {
				need(it.Message)
			}
		}
	} else {
		need(b.Message)
	}
	switch {
	case !legacys:
		return nil
	case caller == nil && (!h.opts.ForwardAnonymous || len(required) > 0):
		return principal.ErrUnauthenticated
	case caller != nil && !caller.HasScopes(required...):
		return &principal.ScopeError{Required: required}
	}
	return nil
}
