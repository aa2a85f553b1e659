package intercept_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// Issue 27: Intercept authenticates before it reads a body, so a
// signed-in caller's large call for legacy is read under its share,
// while an anonymous caller's (or one whose token proves no one) is held
// to the small anonymous limit.
func TestInterceptReadsBodiesAsTheCaller(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	legacy := &permissiveLegacy{}
	h, err := intercept.New(f.EP, legacy, intercept.Options{Logger: quiet})
	require.NoError(t, err)
	legacy.reset() // New's probe
	big := mcptest.Legacy(1, "tools/call", map[string]any{"name": "upload", "arguments": map[string]any{"data": strings.Repeat("y", 200<<10)}})
	lh := map[string]string{"MCP-Protocol-Version": "2025-11-25"}

	w := serve(h, request(big, lh))
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code, "anonymous")
	w = serve(h, request(big, map[string]string{"MCP-Protocol-Version": "2025-11-25", "Authorization": "Bearer forged"}))
	assert.Equal(t, http.StatusRequestEntityTooLarge, w.Code, "a token that proves no one")
	w = serve(h, request(big, map[string]string{"MCP-Protocol-Version": "2025-11-25", "Authorization": "Bearer " + f.Token(t, "alice")}))
	assert.Equal(t, http.StatusOK, w.Code, "signed in: %s", w.Body)
	methods, _ := legacy.seen()
	assert.Equal(t, []string{"tools/call"}, methods, "only the signed-in call reached legacy")
}
