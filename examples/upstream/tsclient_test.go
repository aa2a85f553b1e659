package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tsClient returns node and the pinned TypeScript SDK's directory, or
// skips (fails under CI=true, where .ci installs them).
func tsClient(t *testing.T) (node, sdkDir string) {
	t.Helper()
	missing := func(msg string) {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatal(msg + " (CI=true: .ci/run installs it)")
		}
		t.Skip(msg + `; eval "$(bash examples/interop/tsclient/install.sh)"`)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
	}
	sdkDir = os.Getenv("MCPKIT_TS_SDK_DIR")
	if _, err := os.Stat(filepath.Join(sdkDir, "node_modules", "@modelcontextprotocol", "client", "package.json")); sdkDir == "" || err != nil {
		missing("MCPKIT_TS_SDK_DIR holds no @modelcontextprotocol/client")
	}
	return node, sdkDir
}

// TestTSClientURLElicitation: the official TypeScript SDK v2 client, with
// elicitation.url declared, is asked to open the connect page (-32042 in
// 2025-11-25, input_required in 2026-07-28); the test approves in a
// browser (net/http) and the client's retry succeeds.
func TestTSClientURLElicitation(t *testing.T) {
	node, sdkDir := tsClient(t)
	a := startApp(t, "elicit")
	for _, tc := range []struct{ era, user, uri, want string }{
		{"legacy", "alice", "photos://a1", ""},
		{"modern", "carol", "photos://c1", "Carol's garden"},
	} {
		t.Run(tc.era, func(t *testing.T) {
			tok, err := a.dev.Sign(tc.user, []string{scopeMCP}, time.Hour)
			require.NoError(t, err)
			cmd := exec.Command(node, filepath.Join("..", "interop", "tsclient", "upstream.mjs"), tc.era, a.base+"/mcp", tc.uri)
			cmd.Env = append(os.Environ(), "MCPKIT_TS_SDK_DIR="+sdkDir, "MCPKIT_TOKEN="+tok)
			stdin, err := cmd.StdinPipe()
			require.NoError(t, err)
			stdout, err := cmd.StdoutPipe()
			require.NoError(t, err)
			cmd.Stderr = os.Stderr
			require.NoError(t, cmd.Start())
			t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
			lines := bufio.NewScanner(stdout)
			require.True(t, lines.Scan(), "the client's first line")
			var first struct{ Elicit string }
			require.NoError(t, json.Unmarshal(lines.Bytes(), &first), "%s", lines.Text())
			require.NotEmpty(t, first.Elicit, "%s", lines.Text())
			assert.Contains(t, approve(t, a, first.Elicit, tc.user), "Connected to photos")
			_, err = stdin.Write([]byte("approved\n"))
			require.NoError(t, err)
			require.True(t, lines.Scan(), "the summary")
			var summary struct {
				Elicitations int
				URIs         []string `json:"uris"`
				Text, Error  string
			}
			require.NoError(t, json.Unmarshal(lines.Bytes(), &summary), "%s", lines.Text())
			assert.Empty(t, summary.Error)
			assert.Equal(t, 1, summary.Elicitations, "asked once")
			if tc.era == "legacy" {
				assert.Equal(t, []string{"photos://a1", "photos://a2", "photos://a3"}, summary.URIs, "the retry lists alice's photos")
			} else {
				assert.Contains(t, summary.Text, tc.want, "the SDK's retry reads carol's photo")
			}
			require.NoError(t, cmd.Wait(), "exit status 0")
		})
	}
}
