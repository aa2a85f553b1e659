package jsonrpc

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMethodStringInterns(t *testing.T) {
	for _, m := range []string{
		"initialize", "ping", "notifications/initialized", "notifications/cancelled",
		"notifications/progress", "notifications/message", "resources/list", "resources/read",
		"resources/templates/list", "resources/subscribe", "resources/unsubscribe",
		"notifications/resources/updated", "notifications/resources/list_changed",
		"completion/complete", "logging/setLevel", "server/discover", "subscriptions/listen",
		"tools/list", "tools/call", "prompts/list", "prompts/get", "notifications/roots/list_changed",
	} {
		b := []byte(m)
		assert.Equal(t, m, methodString(b))
		assert.Zero(t, testing.AllocsPerRun(10, func() { _ = methodString(b) }), m)
	}
	assert.Equal(t, "vendor/x", methodString([]byte("vendor/x")))
}

func TestStandardMessages(t *testing.T) {
	for code, want := range map[int64]string{
		CodeParseError: "Parse error", CodeInvalidRequest: "Invalid Request", CodeMethodNotFound: "Method not found",
		CodeInvalidParams: "Invalid params", CodeInternalError: "Internal error", CodeResourceNotFound: "Resource not found",
		CodeHeaderMismatch: "Header mismatch", CodeMissingClientCapability: "Missing required client capability",
		CodeUnsupportedProtocolVersion: "Unsupported protocol version", -32000: "Server error",
	} {
		assert.Equal(t, want, standardMessage(code))
		assert.Contains(t, string(AppendError(nil, ID{}, &Error{Code: code})), `"message":"`+want+`"`)
	}
}
