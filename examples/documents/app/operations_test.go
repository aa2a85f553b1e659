package app

import (
	"bytes"
	"encoding/json"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The audit trail is on its own stream: JSON lines with who read what and
// how it ended, never in the operator log, never a token.
func TestAuditTrail(t *testing.T) {
	audit := &syncBuffer{}
	s := start(t, func(c *Config) { c.AuditWriter = audit })
	alice, bob := s.token(t, "alice"), s.token(t, "bob")
	bobs := s.firstDocs(t, "bob", 1)[0]
	s.list(t, alice, "")
	s.read(t, alice, documentPrefix+bobs) // not alice's: not found
	s.post(t, "", "resources/list", nil)  // anonymous: 401

	var recs []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(audit.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &m), line)
		recs = append(recs, m)
	}
	var mine []map[string]any
	for _, r := range recs {
		if r["subject"] == "alice" || r["outcome"] == "unauthenticated" {
			mine = append(mine, r)
		}
	}
	require.Len(t, mine, 3, audit.String())
	assert.Equal(t, "resources/list", mine[0]["method"])
	assert.Equal(t, "ok", mine[0]["outcome"])
	assert.Equal(t, "resources/read", mine[1]["method"])
	assert.Equal(t, "not_found", mine[1]["outcome"])
	assert.Equal(t, "documents", mine[1]["template"])
	assert.Equal(t, documentPrefix+bobs, mine[1]["uri"])
	assert.Equal(t, "unauthenticated", mine[2]["outcome"])
	assert.EqualValues(t, 401, mine[2]["status"])

	for _, tok := range []string{alice, bob} {
		sig := tok[strings.LastIndex(tok, ".")+1:]
		assert.NotContains(t, audit.String(), sig, "no token bytes")
	}
	assert.NotContains(t, s.logs.String(), "mcp audit", "not in the operator log")
	assert.NotContains(t, s.stdout.String(), "mcp audit", "AuditWriter replaces stdout")
}

func TestAuditLogFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	s := start(t, func(c *Config) { c.AuditLog = path })
	s.list(t, s.token(t, "carol"), "")
	require.NoError(t, s.app.Close()) // closes the file
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"subject":"carol"`)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
}

// Rate limits per caller: past the burst 429 with Retry-After, while
// another caller is served.
func TestRateLimits(t *testing.T) {
	s := start(t, func(c *Config) { c.RateRead = "0.5:2" })
	alice, bob := s.token(t, "alice"), s.token(t, "bob")
	uri := documentPrefix + s.firstDocs(t, "alice", 1)[0]
	for range 2 {
		s.read(t, alice, uri)
	}
	res, _ := s.post(t, alice, "resources/read", map[string]any{"uri": uri})
	require.Equal(t, http.StatusTooManyRequests, res.StatusCode)
	assert.Equal(t, "2", res.Header.Get("Retry-After"))
	assert.Nil(t, s.read(t, bob, documentPrefix+s.firstDocs(t, "bob", 1)[0]).Error, "bob has his own bucket")
	s.list(t, alice, "") // and alice her own per class
}

// -otel exports traces and metrics over OTLP/HTTP: the MCP span, the store
// query span under it, and the duration histogram reach the collector.
func TestOTLPExport(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]byte{}
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.URL.Path] = append(got[r.URL.Path], b...)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer collector.Close()
	s := start(t, func(c *Config) { c.OTLPEndpoint = collector.URL })
	alice := s.token(t, "alice")
	s.list(t, alice, "")
	res, _ := s.post(t, alice, "tools/call", map[string]any{"name": "search", "arguments": map[string]any{"query": "report"}})
	require.Equal(t, http.StatusOK, res.StatusCode)
	require.NoError(t, s.app.Close()) // flushes
	mu.Lock()
	defer mu.Unlock()
	traces, metrics := got["/v1/traces"], got["/v1/metrics"]
	require.NotEmpty(t, traces)
	require.NotEmpty(t, metrics)
	assert.True(t, bytes.Contains(traces, []byte("resources/list")), "the MCP span")
	assert.True(t, bytes.Contains(traces, []byte("store.List")), "the store's span")
	assert.True(t, bytes.Contains(traces, []byte("tools/call search")), "the tool call's span")
	assert.True(t, bytes.Contains(traces, []byte("store.Search")), "the search query's span")
	assert.False(t, bytes.Contains(traces, []byte("report")), "never the query")
	assert.True(t, bytes.Contains(traces, []byte("mcpkit-documents")), "the service name")
	assert.False(t, bytes.Contains(traces, []byte("alice")), "no subject by default")
	assert.False(t, bytes.Contains(traces, []byte(alice[strings.LastIndex(alice, ".")+1:])), "no token")
	assert.True(t, bytes.Contains(metrics, []byte("mcp.server.operation.duration")))
}

// -metrics-addr serves the histogram for Prometheus on its own listener.
func TestPrometheusMetrics(t *testing.T) {
	s := start(t, func(c *Config) { c.MetricsAddr = "127.0.0.1:0" })
	require.NotEmpty(t, s.app.MetricsAddr())
	s.list(t, s.token(t, "alice"), "")
	res, body := get(t, "http://"+s.app.MetricsAddr()+"/metrics")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, "mcp_server_operation_duration_seconds_bucket")
	assert.Contains(t, body, `mcp_method_name="resources/list"`)
	assert.NotContains(t, body, "alice")
	res, _ = get(t, s.app.URL()+"/metrics")
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "not on the public listener")
}

func TestOperationsFlags(t *testing.T) {
	c, _, err := ParseFlags(nil, func(string) string { return "" }, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, AuditStdout, c.AuditLog)
	assert.Equal(t, []string{DefaultRateList, DefaultRateRead, DefaultRateSearch, DefaultRateOther, DefaultRateRefused}, []string{c.RateList, c.RateRead, c.RateSearch, c.RateOther, c.RateRefused})
	assert.Empty(t, c.OTLPEndpoint)
	assert.Empty(t, c.MetricsAddr)

	env := map[string]string{EnvOTLPEndpoint: "http://collector:4318"}
	c, _, err = ParseFlags(nil, func(k string) string { return env[k] }, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "http://collector:4318", c.OTLPEndpoint, "the standard variable")
	env[EnvName("otel")] = "http://mine:4318"
	c, _, err = ParseFlags([]string{"-rate-read", "off", "-audit-log", "off"}, func(k string) string { return env[k] }, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, "http://mine:4318", c.OTLPEndpoint, "MCPKIT_OTEL wins over the standard variable")
	assert.Equal(t, "off", c.RateRead)

	for _, tc := range []struct {
		cfg  Config
		flag string
	}{
		{Config{RateList: "fast"}, "rate-list"},
		{Config{RateRead: "-1"}, "rate-read"},
		{Config{RateSearch: "5:0"}, "rate-search"},
		{Config{RateOther: "NaN"}, "rate-other"},
		{Config{OTLPEndpoint: "collector:4318"}, "otel"},
		{Config{OTLPEndpoint: "http://u:p@collector:4318"}, "otel"},
		{Config{MetricsAddr: "9464"}, "metrics-addr"},
	} {
		assert.Equal(t, []string{tc.flag}, flagsOf(tc.cfg.Validate()), "%+v", tc.cfg)
	}
	assert.NoError(t, Config{RateList: "2.5", RateRead: "10:20", RateSearch: "off", RateOther: "0", OTLPEndpoint: "https://otel.example.com", MetricsAddr: ":9464"}.Validate())
}

// Attack (issue 19): forged tokens from one address. With the default
// -rate-refused the address gets 20 × 401 and then 429 with Retry-After,
// before any signature is checked, and the audit trail holds a handful
// of lines with a count, not one line per forged token.
func TestForgedTokenFloodDefaults(t *testing.T) {
	var audit syncBuffer
	s := start(t, func(c *Config) { c.RateRefused = DefaultRateRefused; c.AuditWriter = &audit })
	alice := s.token(t, "alice")
	forged := alice[:len(alice)-4] + "AAAA"
	codes := map[int]int{}
	began := time.Now()
	for range 300 {
		res, _ := s.post(t, forged, "resources/list", nil)
		codes[res.StatusCode]++
		if res.StatusCode == http.StatusTooManyRequests {
			assert.NotEmpty(t, res.Header.Get("Retry-After"))
		}
	}
	// The burst of 20, plus what the bucket refills (1 a second) while
	// the flood lasts: a slow machine gets a few more 401s, never fewer.
	refill := int(time.Since(began) / time.Second)
	assert.GreaterOrEqual(t, codes[http.StatusUnauthorized], 20, "the burst: got %v", codes)
	assert.LessOrEqual(t, codes[http.StatusUnauthorized], 20+refill+1, "the burst and its refill in %d s: got %v", refill, codes)
	assert.Equal(t, 300, codes[http.StatusUnauthorized]+codes[http.StatusTooManyRequests], "nothing but 401 and 429: got %v", codes)
	require.NoError(t, s.app.Close()) // flushes the counted refusals
	lines := strings.Count(audit.String(), "\n")
	assert.LessOrEqual(t, lines, 6, "audit lines for 300 refusals: %d\n%s", lines, audit.String())
	assert.Contains(t, audit.String(), `"count":`)
}

// Issue 21: OpenTelemetry's own errors (a failed export) reach the
// service's logger as records of its own, not the standard log package
// (which prints to stderr beside the slog output) nor the SDK's default
// logr logger (stderr). The collector refuses every export.
func TestOTLPExportErrorsGoToTheServiceLogger(t *testing.T) {
	var stdlog syncBuffer
	prev := log.Writer()
	log.SetOutput(&stdlog)
	defer log.SetOutput(prev)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		http.Error(w, "refused", http.StatusBadRequest) // not retried
	}))
	defer collector.Close()
	// A bad setting the SDK warns about through its logr logger.
	t.Setenv("OTEL_METRIC_EXPORT_INTERVAL", "not-a-duration")
	s := start(t, func(c *Config) { c.OTLPEndpoint = collector.URL })
	s.list(t, s.token(t, "alice"), "")
	_ = s.app.Close() // flushes: the trace export fails and is reported to otel's handler
	assert.Regexp(t, `level=ERROR msg="parse duration".*OTEL_METRIC_EXPORT_INTERVAL`, s.logs.String(), "the SDK's logr logger writes to the service's logger")

	require.Eventually(t, func() bool { return strings.Contains(s.logs.String(), "opentelemetry: ") }, 10*time.Second, 10*time.Millisecond)
	var line string
	for l := range strings.SplitSeq(s.logs.String(), "\n") {
		if strings.Contains(l, "opentelemetry: ") {
			line = l
			break
		}
	}
	assert.Contains(t, line, "level=WARN")
	assert.Contains(t, line, "400", "the exporter's error is in the record")
	assert.Empty(t, stdlog.String(), "nothing through the standard log package")
}
