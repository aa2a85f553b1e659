// Package audit writes an audit trail of the calls an MCP endpoint serves:
// one log/slog record per call that touched the inventory — who, what, how
// it ended, when — never token bytes or record contents, with refusals
// aggregated so that a flood cannot flood the trail. An [Audit] is an
// mcphttp.Observer:
//
//	trail := audit.New(audit.Options{Logger: slog.New(slog.NewJSONHandler(f, nil)), Issuer: issuer})
//	ep, err := mcphttp.New(inv, opts, mcphttp.Observe(trail))
//	// at shutdown:
//	trail.Flush(ctx)
package audit
