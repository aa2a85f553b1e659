package kit_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/mount/internal/kit"
	"github.com/mcpkit/mcpkit/internal/testissuer"
)

func mux(k *kit.Kit) http.Handler {
	m := http.NewServeMux()
	m.Handle("/mcp", k.MCP)
	m.Handle("/healthz", k.Health)
	return m
}

// TestRunDevelopmentMode runs a program as `go run` would with no flags
// but a free port: it prints its URL and development tokens that work,
// and stops cleanly when its context ends.
func TestRunDevelopmentMode(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- kit.Run(ctx, []string{"-addr", "127.0.0.1:0"}, pw, io.Discard, mux)
		_ = pw.Close()
	}()
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()

	first := <-lines
	base, ok := strings.CutPrefix(first, "listening on ")
	require.True(t, ok, first)
	tokens := map[string]string{}
	for l := range lines {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "export ALICE="); ok {
			tokens["alice"] = v
		}
		if v, ok := strings.CutPrefix(l, "export BOB="); ok {
			tokens["bob"] = v
			break
		}
	}
	go func() { // keep the pipe drained
		for range lines {
		}
	}()
	require.NotEmpty(t, tokens["alice"])

	r, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`))
	require.NoError(t, err)
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	r.Header.Set("Authorization", "Bearer "+tokens["alice"])
	res, err := http.DefaultClient.Do(r)
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode, string(body))
	assert.Contains(t, string(body), `"nextCursor"`)
	assert.Contains(t, string(body), "alice's note 1")
	assert.NotContains(t, string(body), "bob")

	cancel()
	assert.NoError(t, <-done)
}

func TestRunRejectsBadConfiguration(t *testing.T) {
	is := testissuer.Start(t, testissuer.Options{})
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"issuer without JWKS URL", []string{"-issuer", is.ID()}, "JWKS URL"},
		{"JWKS URL without issuer", []string{"-jwks-url", is.JWKSURL()}, "JWKS URL"},
		{"resource that is not a URL", []string{"-resource", "mcp"}, "resource"},
		{"an argument", []string{"extra"}, "unexpected argument"},
		{"an unknown flag", []string{"-nope"}, "not defined"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"-addr", "127.0.0.1:0"}, c.args...)
			err := kit.Run(context.Background(), args, io.Discard, io.Discard, mux)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestExternalIssuer uses an issuer given by flags' values: no development
// tokens, and tokens of that issuer work.
func TestExternalIssuer(t *testing.T) {
	is := testissuer.Start(t, testissuer.Options{})
	k, err := kit.New(context.Background(), kit.Config{Resource: "https://mcp.example.com/mcp", Issuer: is.ID(), JWKSURL: is.JWKSURL()})
	require.NoError(t, err)
	defer k.Close()
	assert.False(t, k.Dev())
	_, err = k.DevToken("alice")
	assert.Error(t, err)
	assert.Equal(t, "/.well-known/oauth-protected-resource/mcp", k.MetadataPath)
	assert.Equal(t, []string{"notes://notes/n013", "notes://notes/n014", "notes://notes/n015", "notes://notes/n016"}, k.Notes.URIs("bob"))
}
