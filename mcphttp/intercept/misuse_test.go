package intercept_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
)

// New refuses, with an error naming the argument, a nil or unbuilt
// endpoint, a typed-nil legacy handler and a typed-nil Options.Sessions,
// rather than panicking on the first request.
func TestNewRefusesNilsAndZeroValues(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	var mux *http.ServeMux
	var part *sessions.Part
	cases := map[string]struct {
		ep     *mcphttp.Endpoint
		legacy http.Handler
		opts   intercept.Options
		want   string
	}{
		"nil endpoint":      {nil, http.NewServeMux(), intercept.Options{}, "nil endpoint"},
		"zero endpoint":     {&mcphttp.Endpoint{}, http.NewServeMux(), intercept.Options{}, "mcphttp.New"},
		"nil legacy":        {f.EP, nil, intercept.Options{}, "legacy handler is nil"},
		"typed-nil legacy":  {f.EP, mux, intercept.Options{}, "legacy handler is nil"},
		"typed-nil session": {f.EP, http.NewServeMux(), intercept.Options{Sessions: part}, "Options.Sessions"},
	}
	for name, c := range cases {
		var err error
		require.NotPanics(t, func() { _, err = intercept.New(c.ep, c.legacy, c.opts) }, name)
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), c.want, name)
	}
}
