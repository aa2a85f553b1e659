package tools

import (
	"context"

	"github.com/mcpkit/mcpkit/principal"
)

// Has and AppendList let the package's external tests reach has and
// appendList, which no user needs.
func (p *Part) Has(name string) bool { return p.has(name) }

func (p *Part) AppendList(ctx context.Context, dst []byte, caller *principal.Principal, version string) ([]byte, error) {
	return p.appendList(ctx, dst, caller, version)
}
