package mcphttp

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
)

func TestAcceptsType(t *testing.T) {
	cases := []struct {
		accept []string
		want   bool
	}{
		{nil, true},
		{[]string{"application/json"}, true},
		{[]string{"APPLICATION/JSON"}, true},
		{[]string{"application/json, text/event-stream"}, true},
		{[]string{"text/event-stream", "application/json"}, true},
		{[]string{"application/*;q=0.5"}, true},
		{[]string{"text/html, */*;q=0.1"}, true},
		{[]string{"application/json;q=0"}, false},
		{[]string{"application/json; q=0.0, text/html"}, false},
		{[]string{"application/json;q=0.001"}, true},
		{[]string{"text/event-stream"}, false},
		{[]string{"application/jsonx"}, false},
		{[]string{""}, false},
	}
	for _, tc := range cases {
		assert.Equal(t, tc.want, mcpwire.AcceptsType(tc.accept, "application/json", "application/*"), "%q", tc.accept)
	}
	assert.True(t, mcpwire.AcceptsType([]string{"text/*"}, "text/event-stream", "text/*"))
	assert.False(t, mcpwire.AcceptsType([]string{"application/json"}, "text/event-stream", "text/*"))
}

// The header names looked up directly in the map (headerValue, and the
// Origin and Accept lookups) are in canonical form, as net/http stores
// them: a lookup by a name in another form would find nothing.
func TestHeaderNamesAreCanonical(t *testing.T) {
	for _, name := range []string{headerProtocolVersion, mcpwire.HeaderSessionID, headerMethod, headerName, "Origin", "Accept"} {
		if got := http.CanonicalHeaderKey(name); got != name {
			t.Errorf("%q is not canonical (%q)", name, got)
		}
	}
	h := http.Header{}
	h.Set("mcp-protocol-version", "2025-11-25")
	if got := mcpwire.HeaderValue(h, headerProtocolVersion); got != "2025-11-25" {
		t.Errorf("headerValue = %q", got)
	}
}
