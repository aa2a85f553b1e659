package kit_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/examples/mount/kit"
)

// startIssuer is an identity provider of the test: a development issuer
// whose JWK Set is served over real HTTP on loopback, minting tokens for
// audience.
func startIssuer(t *testing.T, audience string) (*devissuer.Issuer, string) {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	is, err := devissuer.New(srv.URL, audience, devissuer.Options{ClientID: "kit-test"})
	require.NoError(t, err)
	mux.Handle(is.JWKSPath(), is.JWKSHandler())
	return is, srv.URL + is.JWKSPath()
}

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

	// The development issuer's documents are served on the same origin,
	// and the resource metadata names it.
	res, err = http.Get(base + "/dev/jwks.json")
	require.NoError(t, err)
	body, _ = io.ReadAll(res.Body)
	_ = res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, string(body), `"kty":"EC"`)
	assert.NotContains(t, string(body), `"d"`, "no private key")
	res, err = http.Get(base + "/.well-known/oauth-authorization-server/dev")
	require.NoError(t, err)
	body, _ = io.ReadAll(res.Body)
	_ = res.Body.Close()
	assert.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, string(body), `"issuer":"`+base+`/dev"`)

	cancel()
	assert.NoError(t, <-done)
}

func TestRunRejectsBadConfiguration(t *testing.T) {
	is, jwksURL := startIssuer(t, "http://127.0.0.1/mcp")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"issuer without JWKS URL", []string{"-issuer", is.Issuer()}, "JWKS URL"},
		{"JWKS URL without issuer", []string{"-jwks-url", jwksURL}, "JWKS URL"},
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
	const resource = "https://mcp.example.com/mcp"
	is, jwksURL := startIssuer(t, resource)
	k, err := kit.New(context.Background(), kit.Config{Resource: resource, Issuer: is.Issuer(), JWKSURL: jwksURL})
	require.NoError(t, err)
	defer k.Close()
	assert.False(t, k.Dev())
	_, err = k.DevToken("alice")
	assert.Error(t, err)
	assert.Equal(t, "/.well-known/oauth-protected-resource/mcp", k.MetadataPath)
	assert.Equal(t, []string{"notes://notes/n013", "notes://notes/n014", "notes://notes/n015", "notes://notes/n016"}, k.Notes.URIs("bob"))

	// No development issuer in front of the router.
	w := httptest.NewRecorder()
	k.WithDevIssuer(mux(k)).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/dev/jwks.json", nil))
	assert.Equal(t, http.StatusNotFound, w.Code)

	tok, err := is.Sign("bob", []string{kit.Scope}, time.Hour)
	require.NoError(t, err)
	r := httptest.NewRequest(http.MethodPost, resource, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("MCP-Protocol-Version", "2025-11-25")
	r.Header.Set("Authorization", "Bearer "+tok)
	w = httptest.NewRecorder()
	k.MCP.ServeHTTP(w, r)
	assert.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Contains(t, w.Body.String(), "notes://notes/n013", "bob's notes, with the external issuer's token")
}
