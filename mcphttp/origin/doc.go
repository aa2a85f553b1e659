// Package origin decides which requests may reach an MCP endpoint, or any
// handler beside it: the defence against cross-origin requests from
// browsers and against DNS rebinding, with CORS for the origins allowed.
// [Guard.Check] is the decision and [Guard.Handler] the glue, like the
// standard library's http.CrossOriginProtection.
//
// One guard serves a whole service: wrap its REST API with g.Handler and
// give the same g to the MCP endpoint (mcphttp.Options.Origins), so that
// both answer the same origins the same way.
//
//	g, err := origin.New([]string{"https://app.example.com"})
//	mux.Handle("/api/", g.Handler(api))
//	ep, err := mcphttp.New(inv, mcphttp.Options{Origins: g})
package origin
