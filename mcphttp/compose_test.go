package mcphttp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
)

// serviceAuth is a service's own authentication middleware: it accepts
// "Bearer user:<name>" and puts the principal in the context with
// principal.NewContext, and lets everything else through untouched.
func serviceAuth(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer user:"); ok {
			p := principal.Principal{Subject: name, ClientID: "client-1", Scopes: []string{"docs:read"}, Audience: mcptest.Resource}
			ctx, err := principal.NewContext(r.Context(), p)
			if err != nil {
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// challengeOnly is an Authenticator without a Verifier: the service's
// middleware authenticates, this one only writes the challenges.
func challengeOnly(t *testing.T) *authn.Authenticator {
	t.Helper()
	a, err := authn.NewAuthenticator(nil, authn.Options{Resource: mcptest.Resource, Scopes: []string{"docs:read"}})
	require.NoError(t, err)
	return a
}

func post(t *testing.T, h http.Handler, body, auth string, headers map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		r.Header.Set("Authorization", auth)
	}
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// The pieces compose on a standard ServeMux: the service's own auth
// middleware → one strict decode → the list handler for resources/list,
// the endpoint for everything else. What the client sees is the same as
// from the one-line assembly.
func TestCompositionMatchesTheOneLineAssembly(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{PageSize: 5})
	auth := challengeOnly(t)
	list, err := mcphttp.NewListHandler(f.Inv, mcphttp.Options{ServerInfo: mcphttp.Implementation{Name: "fixture", Version: "1.0.0"}, Authenticator: auth})
	require.NoError(t, err)
	ep, err := mcphttp.New(f.Inv, mcphttp.Options{ServerInfo: mcphttp.Implementation{Name: "fixture", Version: "1.0.0"},
		Instructions: "Private documents.", Authenticator: auth})
	require.NoError(t, err)

	// The service routes resources/list itself, on the decoded method.
	route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := jsonrpc.FromContext(r.Context()); ok && !b.Batch && b.Message.Method == "resources/list" {
			list.ServeHTTP(w, r)
			return
		}
		ep.ServeHTTP(w, r)
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", serviceAuth(jsonrpc.Decoder(jsonrpc.Limits{})(route)))

	// The one-line assembly, authenticating with real tokens.
	alice := "Bearer " + f.Token(t, "alice")
	composedAlice := "Bearer user:alice"

	listBody := mcptest.Legacy(1, "resources/list", nil)
	one := post(t, f.EP, listBody, alice, nil)
	two := post(t, mux, listBody, composedAlice, nil)
	require.Equal(t, http.StatusOK, one.Code, one.Body.String())
	assert.Equal(t, one.Code, two.Code)
	assert.Equal(t, one.Header().Get("Cache-Control"), two.Header().Get("Cache-Control"))
	assert.Equal(t, one.Header().Values("Vary"), two.Header().Values("Vary"))
	// The pages are the same but for the cursor, which is sealed with a
	// random nonce: compare the resources, then follow both cursors.
	p1, p2 := resultOf(t, one), resultOf(t, two)
	assert.Equal(t, p1.Resources, p2.Resources)
	require.NotEmpty(t, p2.NextCursor)
	next := post(t, mux, mcptest.Legacy(2, "resources/list", map[string]any{"cursor": p2.NextCursor}), composedAlice, nil)
	assert.Equal(t, resultOf(t, post(t, f.EP, mcptest.Legacy(2, "resources/list", map[string]any{"cursor": p1.NextCursor}), alice, nil)).Resources,
		resultOf(t, next).Resources)

	// Byte-identical answers where nothing is random.
	for _, body := range []string{
		mcptest.Legacy(3, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"}),
		mcptest.Legacy(4, "resources/read", map[string]any{"uri": "docs://documents/bob-0001"}), // not alice's: not found
		mcptest.Legacy(5, "resources/templates/list", nil),
		mcptest.Legacy(6, "initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}),
		mcptest.Legacy(7, "tools/list", nil),
	} {
		one, two := post(t, f.EP, body, alice, nil), post(t, mux, body, composedAlice, nil)
		assert.Equal(t, one.Code, two.Code, body)
		assert.Equal(t, one.Body.String(), two.Body.String(), body)
	}

	// Without a principal the composed endpoint challenges like the
	// one-line one, naming the resource metadata.
	one, two = post(t, f.EP, listBody, "", nil), post(t, mux, listBody, "", nil)
	assert.Equal(t, http.StatusUnauthorized, two.Code)
	assert.Equal(t, one.Header().Get("WWW-Authenticate"), two.Header().Get("WWW-Authenticate"))

	// A token the service's middleware did not accept is invalid, never
	// anonymous: the challenge-only Authenticator refuses it.
	w := post(t, mux, mcptest.Legacy(8, "resources/templates/list", nil), "Bearer forged", nil)
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Contains(t, w.Header().Get("WWW-Authenticate"), `error="invalid_token"`)
}

// The endpoint uses the principal an earlier middleware put in the context
// and never asks its Verifier again.
func TestEndpointUsesTheContextPrincipal(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	h := serviceAuth(f.EP) // f.EP's own Authenticator verifies JWTs only
	w := post(t, h, mcptest.Legacy(1, "resources/read", map[string]any{"uri": "docs://documents/bob-0002"}), "Bearer user:bob", nil)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Contains(t, w.Body.String(), "Contents of Document bob-0002")
	w = post(t, h, mcptest.Legacy(1, "resources/read", map[string]any{"uri": "docs://documents/alice-0002"}), "Bearer user:bob", nil)
	assert.Contains(t, w.Body.String(), `"code":-32002`, "ownership still applies")
}

// The list handler serves resources/list alone, with the private headers
// appended to what an outer layer set, and -32601 for anything else.
func TestListHandler(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	list, err := mcphttp.NewListHandler(f.Inv, mcphttp.Options{Authenticator: f.Auth})
	require.NoError(t, err)
	outer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Vary", "Origin")
		list.ServeHTTP(w, r)
	})
	tok := "Bearer " + f.Token(t, "alice")
	w := post(t, outer, mcptest.Legacy(1, "resources/list", nil), tok, nil)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Equal(t, "private, max-age=0", w.Header().Get("Cache-Control"))
	assert.Equal(t, []string{"Origin", "Authorization"}, w.Header().Values("Vary"), "appended, never replacing")
	assert.Len(t, resultOf(t, w).Resources, 14, "2 statics and alice's 12 documents")

	for _, body := range []string{mcptest.Legacy(2, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"}), mcptest.Legacy(3, "initialize", nil)} {
		w = post(t, list, body, tok, nil)
		assert.Contains(t, w.Body.String(), `"code":-32601`, body)
	}
	body, headers := mcptest.Modern(4, "resources/list", nil)
	w = post(t, list, body, tok, headers)
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Contains(t, w.Body.String(), `"cacheScope":"private"`)

	w = post(t, list, mcptest.Legacy(5, "resources/list", nil), "", nil)
	assert.Equal(t, http.StatusUnauthorized, w.Code)

	// Without an Authenticator the service's own middleware authenticates
	// (issue 20): its principal is the caller, and refusals are plain
	// RFC 6750 challenges without a resource_metadata URL nobody serves.
	own, err := mcphttp.NewListHandler(f.Inv, mcphttp.Options{})
	require.NoError(t, err)
	w = post(t, serviceAuth(own), mcptest.Legacy(6, "resources/list", nil), "Bearer user:alice", nil)
	assert.Equal(t, http.StatusOK, w.Code)
	w = post(t, own, mcptest.Legacy(7, "resources/list", nil), "", nil)
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Equal(t, "Bearer", w.Header().Get("WWW-Authenticate"))
	w = post(t, own, mcptest.Legacy(8, "resources/list", nil), "Bearer something", nil)
	assert.Equal(t, http.StatusUnauthorized, w.Code, "credentials the middleware did not accept are refused, never anonymous")
	assert.Equal(t, `Bearer error="invalid_token"`, w.Header().Get("WWW-Authenticate"))
	w = post(t, serviceAuth(own), mcptest.Legacy(9, "resources/read", map[string]any{"uri": "docs://documents/alice-0001"}), "Bearer user:noscope", nil)
	assert.NotContains(t, w.Header().Get("WWW-Authenticate"), "resource_metadata")
}

// Every response has header values of its own: a middleware that edits
// one response's Vary or Cache-Control changes no other response.
func TestResponseHeadersAreNotShared(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	edit := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.EP.ServeHTTP(w, r)
		if v := w.Header()["Vary"]; len(v) > 0 {
			v[0] = "tampered"
		}
		if v := w.Header()["Cache-Control"]; len(v) > 0 {
			v[0] = "public"
		}
	})
	body := mcptest.Legacy(1, "resources/templates/list", nil)
	_ = post(t, edit, body, "", nil)
	w := post(t, f.EP, body, "", nil)
	assert.Equal(t, []string{"Authorization"}, w.Header().Values("Vary"))
	assert.Equal(t, "private, max-age=0", w.Header().Get("Cache-Control"))

	// An outer Vary that already names Authorization is left as it is.
	outer := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Vary", "Accept-Encoding, authorization")
		f.EP.ServeHTTP(w, r)
	})
	w = post(t, outer, body, "", nil)
	assert.Equal(t, []string{"Accept-Encoding, authorization"}, w.Header().Values("Vary"))
}

type rawPage struct {
	Resources  []json.RawMessage `json:"resources"`
	NextCursor string            `json:"nextCursor"`
}

func resultOf(t *testing.T, w *httptest.ResponseRecorder) rawPage {
	t.Helper()
	r := mcptest.Decode(t, w)
	require.Nil(t, r.Error, w.Body.String())
	var res rawPage
	require.NoError(t, json.Unmarshal(r.Result, &res))
	return res
}

// Attack (issue 20): a principal from the service's own middleware obeys
// the verifier's rules. A subject of 257 UTF-16 units or with a control
// character never reaches a List callback: the middleware's NewContext
// refuses it, and the request is answered 401.
func TestServiceMiddlewarePrincipalRules(t *testing.T) {
	f := mcptest.New(t, mcptest.Options{})
	reached := false
	f.Store.Seen = func(context.Context) { reached = true }
	ep, err := mcphttp.New(f.Inv, mcphttp.Options{Authenticator: challengeOnly(t)})
	require.NoError(t, err)
	h := serviceAuth(ep)
	for _, name := range []string{strings.Repeat("a", 257), "al\x01ice", "al\u0085ice"} {
		w := post(t, h, mcptest.Legacy(1, "resources/list", nil), "Bearer user:"+name, nil)
		assert.Equal(t, http.StatusUnauthorized, w.Code, "%q", name)
	}
	assert.False(t, reached, "no callback saw the principal")
	assert.Equal(t, http.StatusOK, post(t, h, mcptest.Legacy(1, "resources/list", nil), "Bearer user:"+strings.Repeat("a", 256), nil).Code)
}
