package otelmcp

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// otherMethod stands for every method name that is not a known one.
const otherMethod = "_OTHER"

// knownMethods are the method names exported as they are: the values the
// conventions list (their generated attributes), and the 2026-07-28
// protocol's server/discover and subscriptions/listen.
var knownMethods = func() map[string]bool {
	m := map[string]bool{"server/discover": true, "subscriptions/listen": true}
	for _, kv := range []attribute.KeyValue{
		semconv.McpMethodNameNotificationsCancelled, semconv.McpMethodNameInitialize,
		semconv.McpMethodNameNotificationsInitialized, semconv.McpMethodNameNotificationsProgress,
		semconv.McpMethodNamePing, semconv.McpMethodNameResourcesList, semconv.McpMethodNameResourcesTemplatesList,
		semconv.McpMethodNameResourcesRead, semconv.McpMethodNameNotificationsResourcesListChanged,
		semconv.McpMethodNameResourcesSubscribe, semconv.McpMethodNameResourcesUnsubscribe,
		semconv.McpMethodNameNotificationsResourcesUpdated, semconv.McpMethodNamePromptsList,
		semconv.McpMethodNamePromptsGet, semconv.McpMethodNameNotificationsPromptsListChanged,
		semconv.McpMethodNameToolsList, semconv.McpMethodNameToolsCall,
		semconv.McpMethodNameNotificationsToolsListChanged, semconv.McpMethodNameLoggingSetLevel,
		semconv.McpMethodNameNotificationsMessage, semconv.McpMethodNameSamplingCreateMessage,
		semconv.McpMethodNameCompletionComplete, semconv.McpMethodNameRootsList,
		semconv.McpMethodNameNotificationsRootsListChanged, semconv.McpMethodNameElicitationCreate,
	} {
		m[kv.Value.AsString()] = true
	}
	return m
}()

// methodName returns method when it is a known one, else "_OTHER": method
// names are client input, and span names and metric dimensions must stay
// few.
func methodName(method string) string {
	if knownMethods[method] {
		return method
	}
	return otherMethod
}

// Bounds of exported client input: a client chooses its ids and URIs, and
// must not make spans of megabytes.
const (
	maxIDBytes  = 128
	maxURIBytes = 2048 // every URI that can name a resource fits (inventory's limit)
)

// requestID returns the string form of a request id (a string id without
// its quotes), at most maxIDBytes of it, and false for a notification or a
// null id, which the conventions leave out.
func requestID(id jsonrpc.ID) (string, bool) {
	raw := id.Raw()
	switch {
	case raw == "" || raw == "null":
		return "", false
	case raw[0] == '"':
		var s string
		if json.Unmarshal([]byte(raw), &s) != nil {
			return "", false
		}
		return clip(s, maxIDBytes), true
	}
	return clip(raw, maxIDBytes), true
}

// clip returns s cut to at most n bytes on a UTF-8 boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// protoVersion is network.protocol.version for HTTP/major.minor: "1.1",
// "2", "3".
func protoVersion(major, minor int) string {
	if major >= 2 && minor == 0 {
		return strconv.Itoa(major)
	}
	return strconv.Itoa(major) + "." + strconv.Itoa(minor)
}
