package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/internal/testkit/logbuf"
)

// syncBuffer is a log sink safe for concurrent writes.
type syncBuffer = logbuf.Buffer

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name   string
		args   []string
		env    map[string]string
		code   int
		stderr string
	}{
		{"help", []string{"-h"}, nil, 0, "token USER"},
		{"unknown flag", []string{"-nope"}, nil, 2, "flag provided but not defined"},
		{"bad flag value", []string{"-page-size", "0"}, nil, 2, "-page-size"},
		{"bad env value", nil, map[string]string{"MCPKIT_PAGE_SIZE": "many"}, 2, "MCPKIT_PAGE_SIZE"},
		{"invalid configuration", []string{"-issuer", "https://a.example", "-jwks-url", "https://a.example/k", "-resource", "http://mcp.example.com/mcp"}, nil, 2,
			"-resource: must be an absolute https URL"},
		{"development on a public address", []string{"-addr", "0.0.0.0:8080"}, nil, 2, "-addr: development mode"},
		{"unknown command", []string{"serve"}, nil, 2, "unknown command"},
		{"token without user", []string{"token"}, nil, 2, "usage"},
		{"token before the first start", []string{"-data-dir", dir, "token", "alice"}, nil, 1, "start the server once"},
		{"token before the first start, with -addr", []string{"-data-dir", dir, "token", "alice", "-addr", "127.0.0.1:8080"}, nil, 1, "start the server once"},
		{"token with a real issuer", []string{"token", "alice"}, map[string]string{
			"MCPKIT_ISSUER": "https://a.example", "MCPKIT_JWKS_URL": "https://a.example/k", "MCPKIT_RESOURCE": "https://m.example/mcp",
		}, 1, "a real issuer is configured"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, env(tc.env), &stdout, &stderr)
			assert.Equal(t, tc.code, code, stderr.String())
			assert.Contains(t, stderr.String(), tc.stderr)
		})
	}
}

// The program as a user runs it: serve on a free port, tokens from the
// "token" subcommand (a second run, as from another terminal), without
// -addr (for the server that recorded itself in -data-dir) and with it,
// that the running server accepts, then a clean stop on the signal (the
// context).
func TestServeAndTokenSubcommand(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stdout, stderr := &syncBuffer{}, &syncBuffer{}
	codec := make(chan int, 1)
	go func() {
		codec <- run(ctx, []string{"-addr", "127.0.0.1:0", "-data-dir", dir}, env(nil), stdout, stderr)
	}()

	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stdout.String(), "# 7.") {
		require.True(t, time.Now().Before(deadline), "no walk-through; stderr:\n%s", stderr.String())
		time.Sleep(10 * time.Millisecond)
	}
	mcp := regexp.MustCompile(`(?m)^MCP=(\S+)$`).FindStringSubmatch(stdout.String())
	require.Len(t, mcp, 2)
	addr := strings.TrimSuffix(strings.TrimPrefix(mcp[1], "http://"), "/mcp")

	var toks []string
	for _, args := range [][]string{
		{"-data-dir", dir, "token", "carol"},
		{"-data-dir", dir, "token", "carol", "-addr", addr},
	} {
		var tokOut, tokErr bytes.Buffer
		require.Equal(t, 0, run(context.Background(), args, env(nil), &tokOut, &tokErr), tokErr.String())
		tok := strings.TrimSpace(tokOut.String())
		toks = append(toks, tok)
		// stderr says which server and which data directory's key.
		assert.Equal(t, "documents: a token for "+mcp[1]+", signed with the development key in "+dir+"\n", tokErr.String(), "%v", args)

		req, err := http.NewRequest(http.MethodPost, mcp[1], strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		assert.Equal(t, http.StatusOK, res.StatusCode, "%v", args)
		assert.Contains(t, string(body), "Carol's thesis outline", "%v", args)
	}

	// An -addr that is not the recorded server's: the token is signed with
	// the key of -data-dir, and stderr says whose server that is.
	var tokOut, tokErr bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"-data-dir", dir, "token", "carol", "-addr", "127.0.0.1:1"}, env(nil), &tokOut, &tokErr), tokErr.String())
	assert.Contains(t, tokErr.String(), "documents: a token for http://127.0.0.1:1/mcp, signed with the development key in "+dir+"\n")
	assert.Contains(t, tokErr.String(), "the server that started last with that -data-dir listens on "+addr+", not 127.0.0.1:1")
	toks = append(toks, strings.TrimSpace(tokOut.String()))

	cancel()
	select {
	case code := <-codec:
		assert.Equal(t, 0, code, stderr.String())
	case <-time.After(20 * time.Second):
		t.Fatal("the server did not stop")
	}
	assert.Contains(t, stderr.String(), "level=WARN")
	assert.Contains(t, stderr.String(), "msg=stopped")
	for _, tok := range toks {
		assert.NotContains(t, stderr.String(), tok)
	}
}

// "documents token USER -addr A" beside a data directory that holds a key
// but no server record (a server started with another -data-dir, or none
// yet): the token comes, and stderr says which directory signed it and
// that the server on A must have been started with it.
func TestTokenSaysWhichDataDir(t *testing.T) {
	dir := t.TempDir()
	_, err := devissuer.Open(dir, "http://127.0.0.1:9/dev", "http://127.0.0.1:9/mcp", devissuer.Options{})
	require.NoError(t, err)
	var stdout, stderr bytes.Buffer
	require.Equal(t, 0, run(context.Background(), []string{"token", "alice", "-data-dir", dir, "-addr", "127.0.0.1:9"}, env(nil), &stdout, &stderr), stderr.String())
	assert.Regexp(t, `^[\w-]+\.[\w-]+\.[\w-]+\n$`, stdout.String(), "stdout holds the JWT alone")
	assert.Equal(t, "documents: a token for http://127.0.0.1:9/mcp, signed with the development key in "+dir+"\n"+
		"documents: no development server has recorded itself in that -data-dir; the server on 127.0.0.1:9 accepts the token only if it was started with the same -data-dir\n",
		stderr.String())
}
