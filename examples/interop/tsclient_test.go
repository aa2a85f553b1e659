package interop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
)

const installHint = `install the pinned TypeScript SDK and export its directory:
	eval "$(bash examples/interop/tsclient/install.sh)"`

// tsSDK returns the node binary and the directory holding the pinned SDK.
// Outside CI, a missing piece skips the test; under CI=true it fails it.
func tsSDK(t *testing.T) (node, dir string) {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		if mustRun() {
			t.Fatalf(mustRunReason()+format, args...)
		}
		t.Skipf(format, args...)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node (Node.js >= 20) is not on PATH")
	}
	dir = os.Getenv("MCPKIT_TS_SDK_DIR")
	if dir == "" {
		missing("MCPKIT_TS_SDK_DIR is not set; " + installHint)
	}
	var pinned, installed struct {
		Version      string            `json:"version"`
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSON(t, filepath.Join("tsclient", "package.json"), &pinned)
	// Both pinned clients: v1 (@modelcontextprotocol/sdk) and v2
	// (@modelcontextprotocol/client).
	for _, pkg := range []string{"sdk", "client"} {
		b, err := os.ReadFile(filepath.Join(dir, "node_modules", "@modelcontextprotocol", pkg, "package.json"))
		if errors.Is(err, os.ErrNotExist) {
			missing("no @modelcontextprotocol/%s in MCPKIT_TS_SDK_DIR=%s; %s", pkg, dir, installHint)
		}
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(b, &installed))
		want := pinned.Dependencies["@modelcontextprotocol/"+pkg]
		require.Equal(t, want, installed.Version, "MCPKIT_TS_SDK_DIR holds another @modelcontextprotocol/%s version than tsclient/package.json pins; %s", pkg, installHint)
	}
	return node, dir
}

// runTSClient runs the tsclient/ script with args, with node, the
// TypeScript SDK at sdkDir and token (MCPKIT_TOKEN), under a two-minute
// hang guard (not a timing assertion), and decodes the JSON summary it
// prints into summary. A script that could not run (exit status 2, or
// none) fails t; otherwise runErr is its exit (status 1: a check failed).
func runTSClient(t *testing.T, node, sdkDir, token string, summary any, script string, args ...string) (runErr error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{filepath.Join("tsclient", script)}, args...)...)
	cmd.Env = append(os.Environ(), "MCPKIT_TS_SDK_DIR="+sdkDir, "MCPKIT_TOKEN="+token)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr = cmd.Run()
	var exit *exec.ExitError
	if errors.As(runErr, &exit) && exit.ExitCode() == 2 || runErr != nil && !errors.As(runErr, &exit) {
		t.Fatalf("%s could not run: %v\n%s", script, runErr, stderr.String())
	}
	require.NoError(t, json.Unmarshal(stdout.Bytes(), summary), "summary:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	return runErr
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, v))
}

// tsSummary is what client.mjs prints.
type tsSummary struct {
	SDKVersion          string `json:"sdkVersion"`
	ProtocolVersion     string `json:"protocolVersion"`
	ResourcesCapability bool   `json:"resourcesCapability"`
	ServerInfo          struct {
		Name string `json:"name"`
	} `json:"serverInfo"`
	Pages         int      `json:"pages"`
	Listed        []string `json:"listed"`
	ForeignListed []string `json:"foreignListed"`
	Read          []struct {
		URI        string `json:"uri"`
		OK         bool   `json:"ok"`
		ContentURI string `json:"contentUri"`
		Bytes      int    `json:"bytes"`
	} `json:"read"`
	ForeignRead []struct {
		URI      string  `json:"uri"`
		Rejected bool    `json:"rejected"`
		Error    tsError `json:"error"`
	} `json:"foreignRead"`
	Anonymous struct {
		Status                int      `json:"status"`
		ResourceMetadata      string   `json:"resourceMetadata"`
		Scope                 string   `json:"scope"`
		MetadataStatus        int      `json:"metadataStatus"`
		MetadataResource      string   `json:"metadataResource"`
		AuthorizationServers  []string `json:"authorizationServers"`
		SDKDiscoveredResource string   `json:"sdkDiscoveredResource"`
		SDKConnected          bool     `json:"sdkConnected"`
		SDKList               struct {
			Rejected bool    `json:"rejected"`
			Error    tsError `json:"error"`
		} `json:"sdkList"`
	} `json:"anonymous"`
	Problems []string `json:"problems"`
	OK       bool     `json:"ok"`
}

type tsError struct {
	Kind    string `json:"kind"`
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// TestTypeScriptSDKClient runs tsclient/client.mjs, the official TypeScript
// SDK client, against the documents server with alice's token and bob's
// document URIs, and checks its summary against what the go-sdk client
// sees.
func TestTypeScriptSDKClient(t *testing.T) {
	node, sdkDir := tsSDK(t)
	d := startDocuments(t)
	bobs := d.bobsDocuments(t)
	goList, _ := walk(t, d.connect(t, d.alice, "2025-11-25"))

	var s tsSummary
	runErr := runTSClient(t, node, sdkDir, d.alice, &s, "client.mjs", append([]string{d.mcpURL}, bobs...)...)
	t.Logf("TypeScript SDK %s, protocol %s: %d resources in %d pages", s.SDKVersion, s.ProtocolVersion, len(s.Listed), s.Pages)
	assert.Empty(t, s.Problems)
	assert.True(t, s.OK)
	assert.NoError(t, runErr, "exit status 1 means a check failed")

	// The walk: every page, alice's resources only, the same as the go-sdk saw.
	assert.Equal(t, "2025-11-25", s.ProtocolVersion, "the newest version this SDK speaks")
	assert.True(t, s.ResourcesCapability)
	assert.Equal(t, "mcpkit-documents", s.ServerInfo.Name)
	assert.Greater(t, s.Pages, 1, "alice's list spans several pages")
	assert.Equal(t, goList, s.Listed, "the TypeScript and go-sdk clients list the same")
	assert.Empty(t, s.ForeignListed)
	for _, u := range bobs {
		assert.NotContains(t, s.Listed, u)
	}
	// Reads: every listed resource, and not bob's.
	require.Len(t, s.Read, len(s.Listed))
	for i, r := range s.Read {
		assert.Equal(t, s.Listed[i], r.URI)
		assert.True(t, r.OK, r.URI)
		assert.Equal(t, r.URI, r.ContentURI)
		assert.Positive(t, r.Bytes, r.URI)
	}
	require.Len(t, s.ForeignRead, 1)
	assert.Equal(t, bobs[0], s.ForeignRead[0].URI)
	assert.True(t, s.ForeignRead[0].Rejected)
	assert.Equal(t, tsError{Kind: "mcp", Code: -32002}, tsError{Kind: s.ForeignRead[0].Error.Kind, Code: s.ForeignRead[0].Error.Code},
		"resource not found, as for a document that does not exist")

	// Without a token: 401, a resource_metadata URL that both a plain fetch
	// and the SDK's discovery load, and an SDK client that cannot list.
	metadataURL, err := authn.MetadataURL(d.app.Resource())
	require.NoError(t, err)
	an := s.Anonymous
	assert.Equal(t, 401, an.Status)
	assert.Equal(t, metadataURL, an.ResourceMetadata)
	assert.Equal(t, "documents:read", an.Scope)
	assert.Equal(t, 200, an.MetadataStatus)
	assert.Equal(t, d.app.Resource(), an.MetadataResource)
	assert.NotEmpty(t, an.AuthorizationServers)
	assert.Equal(t, d.app.Resource(), an.SDKDiscoveredResource)
	assert.True(t, an.SDKConnected, "initialize needs no token")
	assert.True(t, an.SDKList.Rejected)
	assert.Equal(t, tsError{Kind: "http", Code: 401}, tsError{Kind: an.SDKList.Error.Kind, Code: an.SDKList.Error.Code})
}
