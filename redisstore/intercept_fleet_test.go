package redisstore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/redisstore"
)

// sharedLegacy stands for a legacy server whose sessions every instance
// reaches (sticky routing, or a shared backend): initialize mints a
// session, a tools/call answers its caller, DELETE ends it.
type sharedLegacy struct {
	mu   sync.Mutex
	next int
	live map[string]bool
}

func (l *sharedLegacy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := r.Header.Get("Mcp-Session-Id")
	var msg struct {
		ID     json.RawMessage
		Method string
	}
	body, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(body, &msg)
	if msg.Method == "initialize" {
		l.next++
		id = fmt.Sprintf("shared-%d", l.next)
		l.live[id] = true
		w.Header().Set("Mcp-Session-Id", id)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}}`)
		return
	}
	if !l.live[id] {
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	if r.Method == http.MethodDelete {
		delete(l.live, id)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	who := "nobody"
	if p, ok := principal.FromContext(r.Context()); ok {
		who = p.Subject
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(msg.ID)+`,"result":{"content":[{"type":"text","text":"`+who+`"}]}}`)
}

// Intercept's binding of legacy sessions lives in the Redis session store
// of its Sessions part: a session alice begins through one instance is
// refused (404) to bob through another — his tool call and his DELETE
// never reach legacy — and served to alice there; her DELETE through the
// second instance ends the binding on the first too.
func TestInterceptBindingAcrossARedisFleet(t *testing.T) {
	redisSrv, _ := startRedis(t)
	is := testissuer.Start(t, testissuer.Options{Audience: testResource})
	quiet := slog.New(slog.DiscardHandler)
	legacy := &sharedLegacy{live: map[string]bool{}}
	var urls []string
	for range 2 {
		client := redisSrv.Client(t)
		v, err := authn.NewJWTVerifier(context.Background(), authn.JWTOptions{Issuer: is.ID(), Resource: testResource, JWKSURL: is.JWKSURL()})
		require.NoError(t, err)
		t.Cleanup(func() { _ = v.Close() })
		auth, err := authn.NewAuthenticator(authn.NewCache(v, authn.CacheOptions{}), authn.Options{Resource: testResource, Logger: quiet})
		require.NoError(t, err)
		inv, err := inventory.New(nil, nil, inventory.Options{})
		require.NoError(t, err)
		store, err := redisstore.NewSessionStore(client, redisstore.SessionOptions{})
		require.NoError(t, err)
		hub := notify.New(notify.Options{Logger: quiet})
		part, err := sessions.New(hub, sessions.Options{Store: store, KeepAlive: time.Hour})
		require.NoError(t, err)
		ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: auth, Logger: quiet}, part)
		require.NoError(t, err)
		h, err := intercept.New(ep, legacy, intercept.Options{Sessions: part, Logger: quiet})
		require.NoError(t, err)
		srv := httptest.NewServer(h)
		t.Cleanup(func() { hub.Close(); srv.Close() })
		urls = append(urls, srv.URL)
	}
	do := func(url, method, token, session, body string) (int, string) {
		req, err := http.NewRequest(method, url, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		req.Header.Set("Authorization", "Bearer "+token)
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if method == http.MethodPost && session == "" {
			return resp.StatusCode, resp.Header.Get("Mcp-Session-Id")
		}
		return resp.StatusCode, string(b)
	}
	alice := is.Token(t, testissuer.Claims{Subject: "alice", ClientID: "c"})
	bob := is.Token(t, testissuer.Claims{Subject: "bob", ClientID: "c"})
	code, sid := do(urls[0], http.MethodPost, alice, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	require.Equal(t, http.StatusOK, code)
	require.NotEmpty(t, sid)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"whoami"}}`

	code, _ = do(urls[1], http.MethodPost, bob, sid, call)
	assert.Equal(t, http.StatusNotFound, code, "bob's call through the other instance")
	code, _ = do(urls[1], http.MethodDelete, bob, sid, "")
	assert.Equal(t, http.StatusNotFound, code, "bob's DELETE through the other instance")
	code, body := do(urls[1], http.MethodPost, alice, sid, call)
	assert.Equal(t, http.StatusOK, code, body)
	assert.Contains(t, body, "alice")

	code, _ = do(urls[1], http.MethodDelete, alice, sid, "")
	require.Equal(t, http.StatusNoContent, code)
	code, _ = do(urls[0], http.MethodPost, alice, sid, call)
	assert.Equal(t, http.StatusNotFound, code, "ended on every instance")
}
