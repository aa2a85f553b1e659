package mcphttp_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
	"github.com/mcpkit/mcpkit/mcphttp/internal/seam"
	"github.com/mcpkit/mcpkit/mcphttp/origin"
)

// The accessors give a handler in front of the endpoint the values the
// endpoint itself uses.
func TestFrontAccessors(t *testing.T) {
	guard, err := origin.New([]string{"https://app.example.com"})
	require.NoError(t, err)
	limits := jsonrpc.Limits{MaxBytes: 1234}
	notifying := mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		seam.Of(s).Notifying()
		s.Capability("tools", func(n bool) string {
			if n {
				return `{"listChanged":true}`
			}
			return `{"listChanged":false}`
		})
		return nil
	})
	f := mcptest.New(t, mcptest.Options{Endpoint: func(o *mcphttp.Options) { o.Origins, o.Limits = guard, limits }}, notifying)
	fv, ok := seam.EndpointOf(f.EP)
	require.True(t, ok)
	assert.Same(t, guard, fv.Origins)
	assert.Equal(t, limits, fv.Limits)
	assert.Same(t, f.Auth, fv.Authenticator)

	var plain, withStreams map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(fv.Capabilities(false), &plain))
	require.NoError(t, json.Unmarshal(fv.Capabilities(true), &withStreams))
	assert.JSONEq(t, `{"subscribe":false,"listChanged":false}`, string(plain["resources"]))
	assert.JSONEq(t, `{"subscribe":true,"listChanged":true}`, string(withStreams["resources"]))
	assert.JSONEq(t, `{}`, string(plain["completions"]), "the fixture has a template that completes")
	assert.JSONEq(t, `{"listChanged":false}`, string(plain["tools"]))
	assert.JSONEq(t, `{"listChanged":true}`, string(withStreams["tools"]))

	// The same capabilities as the endpoint's own initialize answer.
	w := f.Do(t, mcptest.Request{Body: mcptest.Legacy(1, "initialize", map[string]any{"protocolVersion": mcpwire.Version20251125})})
	require.Equal(t, http.StatusOK, w.Code)
	var init struct {
		Capabilities json.RawMessage `json:"capabilities"`
	}
	require.NoError(t, json.Unmarshal(mcptest.Decode(t, w).Result, &init))
	assert.JSONEq(t, string(fv.Capabilities(false)), string(init.Capabilities))

	// The caller's own copy: editing it changes no later answer.
	c := fv.Capabilities(false)
	c[0] = 'X'
	assert.Equal(t, byte('{'), fv.Capabilities(false)[0])

	// Without a guard, the closed one (never nil).
	g := mcptest.New(t, mcptest.Options{})
	gv, ok := seam.EndpointOf(g.EP)
	require.True(t, ok)
	require.NotNil(t, gv.Origins)
	r, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1/mcp", nil)
	r.Header.Set("Origin", "https://app.example.com")
	assert.ErrorIs(t, gv.Origins.Check(r), origin.ErrForbidden)
	assert.NoError(t, fv.Origins.Check(r))

	// Nothing for what mcphttp.New did not make.
	for _, x := range []any{nil, (*mcphttp.Endpoint)(nil), &mcphttp.Endpoint{}, "endpoint"} {
		_, ok := seam.EndpointOf(x)
		assert.False(t, ok, "%#v", x)
	}
}
