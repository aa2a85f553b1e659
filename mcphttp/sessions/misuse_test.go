package sessions_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
)

// A typed-nil Options.Store is an error of New naming it, and a zero Part
// (not built by New) an error of mcphttp.New: never a panic on a request.
func TestNilStoreAndZeroPartAreErrors(t *testing.T) {
	_, err := sessions.New(notify.New(notify.Options{}), sessions.Options{Store: (*sessions.MemoryStore)(nil)})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Options.Store")

	f := mcptest.New(t, mcptest.Options{})
	require.NotPanics(t, func() { _, err = mcphttp.New(f.Inv, f.Opts, &sessions.Part{}) })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "sessions.New")
}

// A Setup that mcphttp.New did not make (a zero one) is an error of the
// part's Setup, never a panic.
func TestSetupNotMadeByNewIsAnError(t *testing.T) {
	p, err := sessions.New(notify.New(notify.Options{}), sessions.Options{})
	require.NoError(t, err)
	require.NotPanics(t, func() { err = p.Setup(&mcphttp.Setup{}) })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "mcphttp.New")
}
