package audit_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/audit"
)

// The zero Audit is usable: it records every audited call to
// slog.Default().
func TestZeroAuditRecords(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	var a audit.Audit
	c := mcphttp.Call{Method: "resources/read", Start: time.Now(), Status: 200}
	require.NotPanics(t, func() { a.End(a.Start(context.Background(), c), c) })
	assert.Contains(t, buf.String(), "mcp audit")
}
