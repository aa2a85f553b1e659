package interop_test

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/examples/documents/app"
	"github.com/mcpkit/mcpkit/examples/documents/store"
)

// signInSummary is what tsclient/signin.mjs prints.
type signInSummary struct {
	SDK, SDKVersion, PlaywrightVersion, Registration, User string
	SignIns                                                []struct {
		Label         string `json:"label"`
		Authorization struct {
			Endpoint            string `json:"endpoint"`
			ClientID            string `json:"clientId"`
			Scope               string `json:"scope"`
			Resource            string `json:"resource"`
			CodeChallengeMethod string `json:"codeChallengeMethod"`
			HasCodeChallenge    bool   `json:"hasCodeChallenge"`
			RedirectURI         string `json:"redirectUri"`
		} `json:"authorization"`
		Page struct {
			Status        int      `json:"status"`
			Title         string   `json:"title"`
			XFrameOptions string   `json:"xFrameOptions"`
			CSP           string   `json:"csp"`
			Banner        string   `json:"banner"`
			Heading       string   `json:"heading"`
			Client        string   `json:"client"`
			Scopes        []string `json:"scopes"`
			Users         []string `json:"users"`
			SignedIn      string   `json:"signedIn"`
			Scripts       int      `json:"scripts"`
			Screenshot    string   `json:"screenshot"`
		} `json:"page"`
		LandedOn string `json:"landedOn"`
		Callback struct {
			HasCode      bool   `json:"hasCode"`
			ISS          string `json:"iss"`
			StateMatches bool   `json:"stateMatches"`
		} `json:"callback"`
	} `json:"signIns"`
	Framing *struct {
		FrameURL  string `json:"frameURL"`
		FormShown int    `json:"formShown"`
	} `json:"framing"`
	ClientID string    `json:"clientId"`
	Token    tokenInfo `json:"token"`
	Listed   []string  `json:"listed"`
	Pages    int       `json:"pages"`
	Read     []struct {
		URI   string `json:"uri"`
		Bytes int    `json:"bytes"`
	} `json:"read"`
	ForeignRead []struct {
		URI      string `json:"uri"`
		Rejected bool   `json:"rejected"`
		Code     int    `json:"code"`
	} `json:"foreignRead"`
	StepUp *struct {
		URI         string    `json:"uri"`
		Text        string    `json:"text"`
		Challenge   string    `json:"challenge"`
		SignInsNeed int       `json:"signInsAfter"`
		Scope       string    `json:"scope"`
		Token       tokenInfo `json:"token"`
		ListsAfter  int       `json:"listsAfter"`
	} `json:"stepUp"`
	Refresh *struct {
		ListedAfter     int    `json:"listedAfter"`
		SignInsNeeded   int    `json:"signInsNeeded"`
		RefreshRequests int    `json:"refreshRequests"`
		Rotated         bool   `json:"rotated"`
		ResourceSent    string `json:"resourceSent"`
		OldReused       struct {
			Status int    `json:"status"`
			Error  string `json:"error"`
		} `json:"oldReused"`
		NextAfterReuse struct {
			Status int    `json:"status"`
			Error  string `json:"error"`
		} `json:"nextAfterReuse"`
	} `json:"refresh"`
	Requests []struct {
		Method    string `json:"method"`
		URL       string `json:"url"`
		RPCMethod string `json:"rpcMethod"`
		Status    int    `json:"status"`
	} `json:"requests"`
	Problems []string `json:"problems"`
	OK       bool     `json:"ok"`
}

type tokenInfo struct {
	Typ             string `json:"typ"`
	Sub             string `json:"sub"`
	Aud             any    `json:"aud"`
	ClientID        string `json:"client_id"`
	Scope           string `json:"scope"`
	Iss             string `json:"iss"`
	HasRefreshToken bool   `json:"hasRefreshToken"`
}

// playwright checks that MCPKIT_TS_SDK_DIR holds the pinned playwright-core
// (installed with the SDK by tsclient/install.sh): missing, it skips the
// test, or fails it under CI=true.
func playwright(t *testing.T, sdkDir string) {
	t.Helper()
	var pinned, installed struct {
		Version      string            `json:"version"`
		Dependencies map[string]string `json:"dependencies"`
	}
	readJSON(t, filepath.Join("tsclient", "package.json"), &pinned)
	b, err := os.ReadFile(filepath.Join(sdkDir, "node_modules", "playwright-core", "package.json"))
	if errors.Is(err, os.ErrNotExist) {
		if mustRun() {
			t.Fatalf(mustRunReason()+"no playwright-core in MCPKIT_TS_SDK_DIR=%s; %s", sdkDir, installHint)
		}
		t.Skipf("no playwright-core in MCPKIT_TS_SDK_DIR=%s; %s", sdkDir, installHint)
	}
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &installed))
	require.Equal(t, pinned.Dependencies["playwright-core"], installed.Version, "MCPKIT_TS_SDK_DIR holds another playwright-core; %s", installHint)
}

// runSignIn runs tsclient/signin.mjs against mcpURL with cfg (the browser
// and a fresh profile added) and returns its summary.
func runSignIn(t *testing.T, node, sdkDir, browser, mcpURL string, cfg map[string]any) signInSummary {
	t.Helper()
	cfg["chromium"], cfg["userDataDir"] = browser, t.TempDir()
	if _, ok := cfg["screenshotDir"]; !ok {
		cfg["screenshotDir"] = t.ArtifactDir()
	}
	b, err := json.Marshal(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a hang guard, not a timing assertion
	defer cancel()
	cmd := exec.CommandContext(ctx, node, filepath.Join("tsclient", "signin.mjs"), mcpURL)
	cmd.Env = append(os.Environ(), "MCPKIT_TS_SDK_DIR="+sdkDir, "MCPKIT_SIGNIN="+string(b))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var exit *exec.ExitError
	if errors.As(runErr, &exit) && exit.ExitCode() == 2 || runErr != nil && !errors.As(runErr, &exit) {
		t.Fatalf("signin.mjs could not run: %v\n%s", runErr, stderr.String())
	}
	var s signInSummary
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &s), "summary:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	if !s.OK {
		t.Logf("signin.mjs summary:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	assert.Empty(t, s.Problems)
	assert.True(t, s.OK)
	assert.NoError(t, runErr, "exit status 1 means a check failed")
	for _, si := range s.SignIns {
		if si.Page.Screenshot != "" {
			t.Logf("login page screenshot: %s", si.Page.Screenshot)
		}
	}
	return s
}

// clientDocuments serves the clients' metadata documents over https on
// loopback, as a client's web site would (the TypeScript SDK takes only an
// https URL with a path as its clientMetadataUrl).
type clientDocuments struct {
	srv  *httptest.Server
	docs map[string][]byte
}

func startClientDocuments(t *testing.T) *clientDocuments {
	t.Helper()
	c := &clientDocuments{docs: map[string][]byte{}}
	c.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, ok := c.docs[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "max-age=300")
		_, _ = w.Write(b)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

// add publishes a document at path and returns its URL, the client id.
// Its redirect URI has no port: a loopback redirect may use any (RFC 8252).
func (c *clientDocuments) add(t *testing.T, path, name string, grants []string) string {
	t.Helper()
	id := c.srv.URL + path
	b, err := json.Marshal(map[string]any{
		"client_id": id, "client_name": name, "redirect_uris": []string{"http://127.0.0.1/callback"},
		"grant_types": grants, "response_types": []string{"code"}, "token_endpoint_auth_method": "none",
	})
	require.NoError(t, err)
	c.docs[path] = b
	return id
}

func (c *clientDocuments) roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.srv.Certificate())
	return p
}

// TestSignInWithTypeScriptSDKs: a person signs in from real MCP clients to
// the documents server in development mode, in a real browser. The
// TypeScript SDK v1 and v2 clients' own OAuth support (an
// OAuthClientProvider with a loopback redirect URI) discovers the
// development authorization server from the resource metadata, registers
// once by a client ID metadata document (served over https) and once
// dynamically (RFC 7591), and sends the person to the login page; headless
// Chromium shows it (a screenshot is written to the test's artifact
// directory: go test -artifacts -outputdir DIR keeps it), and the person
// chooses alice (or bob) and approves; the SDK exchanges the code (PKCE
// S256, the resource parameter) and lists alice's documents, none of
// bob's (bob's flow: bob's, none of alice's). Alice then reads who may
// read her document, which needs documents:share: 403
// insufficient_scope, the SDK signs her in again through the page for both
// scopes, and goes on. The v2 flow of bob has its access token expire: the
// SDK refreshes without the person, the refresh token rotates, and the
// rotated-out one, used again, is refused and revokes the sign-in. The
// login page cannot be framed.
func TestSignInWithTypeScriptSDKs(t *testing.T) {
	node, sdkDir := tsSDK(t)
	playwright(t, sdkDir)
	browser := chromium(t)
	docs := startClientDocuments(t)
	v1Doc := docs.add(t, "/clients/v1.json", "mcpkit sign-in test (v1, metadata document)", []string{"authorization_code"})
	v2Doc := docs.add(t, "/clients/v2.json", "mcpkit sign-in test (v2, metadata document)", []string{"authorization_code", "refresh_token"})
	logs := &syncBuffer{}
	d := startDocumentsWith(t, func(c *app.Config) {
		c.DevClientMetadataRoots = docs.roots()
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	})
	issuer := d.app.URL() + "/dev"
	aliceList, _ := walk(t, d.connect(t, d.alice, "2025-11-25")) // with a printed token
	alices, bobs := documentsOf(aliceList), d.bobsDocuments(t)
	require.NotEmpty(t, alices)
	readers := "docs://readers/" + strings.TrimPrefix(alices[0], documentPrefix)

	for _, tc := range []struct {
		sdk, registration, user string
		cfg                     map[string]any
		clientID                string // "" for a registered one
		want, foreign           []string
	}{
		{"v1", "metadata-document", "alice", map[string]any{"clientMetadataUrl": v1Doc, "stepUp": readers}, v1Doc, alices, bobs},
		{"v1", "dynamic", "bob", map[string]any{}, "", bobs, alices},
		{"v2", "metadata-document", "alice", map[string]any{"clientMetadataUrl": v2Doc, "stepUp": readers, "checkFraming": true}, v2Doc, alices, bobs},
		{"v2", "dynamic", "bob", map[string]any{"refreshGrant": true, "checkRefresh": true}, "", bobs, alices},
	} {
		t.Run(tc.sdk+" "+tc.registration+" "+tc.user, func(t *testing.T) {
			cfg := tc.cfg
			cfg["sdk"], cfg["registration"], cfg["user"], cfg["login"] = tc.sdk, tc.registration, tc.user, "mcpkit"
			cfg["foreign"] = tc.foreign[:1]
			s := runSignIn(t, node, sdkDir, browser, d.mcpURL, cfg)
			t.Logf("TypeScript SDK %s %s (playwright-core %s): %d sign-ins, %d resources in %d pages", tc.sdk, s.SDKVersion, s.PlaywrightVersion, len(s.SignIns), len(s.Listed), s.Pages)

			wantSignIns := 1
			if s.StepUp != nil {
				wantSignIns = 2
			}
			require.Len(t, s.SignIns, wantSignIns)
			first := s.SignIns[0]
			a := first.Authorization
			assert.Equal(t, issuer+"/authorize", a.Endpoint, "discovered from the resource metadata")
			assert.Equal(t, app.ScopeRead, a.Scope, "the scope of the 401 challenge")
			assert.Equal(t, d.app.Resource(), a.Resource, "RFC 8707")
			assert.Equal(t, "S256", a.CodeChallengeMethod)
			assert.True(t, a.HasCodeChallenge)
			assert.True(t, strings.HasPrefix(a.RedirectURI, "http://127.0.0.1:"), a.RedirectURI)
			if tc.clientID != "" {
				assert.Equal(t, tc.clientID, a.ClientID, "the metadata document's URL is the client id")
			} else {
				assert.True(t, strings.HasPrefix(a.ClientID, "dcr_"), "registered dynamically: %s", a.ClientID)
			}
			assert.Equal(t, a.ClientID, s.ClientID)

			p := first.Page
			assert.Equal(t, http.StatusOK, p.Status)
			assert.Contains(t, p.Title, "development mode")
			assert.Contains(t, p.Banner, "Development mode")
			assert.Contains(t, p.Heading, "mcpkit documents")
			assert.Contains(t, p.Client, "mcpkit sign-in test ("+tc.sdk+", ")
			assert.Equal(t, []string{app.ScopeRead}, p.Scopes, "the requested scopes are shown")
			assert.Equal(t, []string{"alice", "bob", "carol", ""}, p.Users, "the users, and the field for another")
			assert.Zero(t, p.Scripts, "no scripts")
			assert.Equal(t, "DENY", p.XFrameOptions)
			assert.Contains(t, p.CSP, "frame-ancestors 'none'")
			require.NotEmpty(t, p.Screenshot)
			assert.FileExists(t, p.Screenshot)
			assert.Equal(t, "/callback", first.LandedOn, "the browser came back to the client")
			assert.True(t, first.Callback.HasCode)
			assert.True(t, first.Callback.StateMatches, "state came back unchanged")
			assert.Equal(t, issuer, first.Callback.ISS, "RFC 9207")

			tok := s.Token
			assert.Equal(t, "at+jwt", tok.Typ, "RFC 9068")
			assert.Equal(t, tc.user, tok.Sub)
			assert.Equal(t, d.app.Resource(), tok.Aud)
			assert.Equal(t, issuer, tok.Iss)
			assert.Equal(t, a.ClientID, tok.ClientID)

			assert.Equal(t, append([]string{app.AboutURI}, tc.want...), s.Listed, "%s's documents, every page", tc.user)
			if tc.user == "alice" && tc.sdk == "v1" {
				assert.Greater(t, s.Pages, 1, "alice has several pages (v2 follows nextCursor itself)")
			}
			for _, u := range tc.foreign {
				assert.NotContains(t, s.Listed, u)
			}
			require.Len(t, s.ForeignRead, 1)
			assert.True(t, s.ForeignRead[0].Rejected)
			notFound := -32002 // v1 speaks 2025-11-25
			if tc.sdk == "v2" {
				notFound = -32602 // v2 speaks 2026-07-28, where not found is invalid params
			}
			assert.Equal(t, notFound, s.ForeignRead[0].Code, "not found, as for a missing document")

			if s.StepUp != nil {
				su := s.StepUp
				assert.Contains(t, su.Challenge, `error="insufficient_scope"`)
				assert.Contains(t, su.Challenge, `scope="documents:read documents:share"`)
				assert.Equal(t, 1, su.SignInsNeed, "one more sign-in through the page")
				assert.ElementsMatch(t, []string{app.ScopeRead, app.ScopeShare}, strings.Fields(su.Scope))
				assert.ElementsMatch(t, []string{app.ScopeRead, app.ScopeShare}, strings.Fields(su.Token.Scope))
				assert.Equal(t, []string{app.ScopeRead, app.ScopeShare}, s.SignIns[1].Page.Scopes)
				assert.Equal(t, tc.user, s.SignIns[1].Page.SignedIn, "the step-up page names who is signed in")
				assert.Empty(t, s.SignIns[1].Page.Users, "and offers no other user to approve as")
				assert.Equal(t, "alice\n", su.Text, "alice's document, read by her alone")
				assert.Positive(t, su.ListsAfter, "and it goes on")
			}
			if s.Refresh != nil {
				r := s.Refresh
				assert.Zero(t, r.SignInsNeeded, "refreshed without the person")
				assert.Positive(t, r.ListedAfter)
				assert.Positive(t, r.RefreshRequests)
				assert.True(t, r.Rotated, "a new refresh token")
				assert.Equal(t, d.app.Resource(), r.ResourceSent)
				assert.Equal(t, http.StatusBadRequest, r.OldReused.Status)
				assert.Equal(t, "invalid_grant", r.OldReused.Error)
				assert.Equal(t, "invalid_grant", r.NextAfterReuse.Error, "reuse revoked the sign-in")
			}
			if s.Framing != nil {
				assert.Zero(t, s.Framing.FormShown, "the browser does not show the login page in a frame")
				assert.NotContains(t, s.Framing.FrameURL, "/dev/authorize")
			}
		})
	}
	assert.NotContains(t, logs.String(), "code=", "no code in the server log")
	assert.Contains(t, logs.String(), "sign-in approved")
}

// TestSignInWithOIDCProvider: the same client flow against a real
// authorization server, to show the kit needs nothing of its own
// development server. oidc-provider (oidcprovider/provider.mjs with a
// login form) issues the tokens; the documents server trusts it as its
// issuer (development mode off); the TypeScript SDK v2 client, with a
// pre-registered client id, discovers it from the resource metadata, and
// headless Chromium signs alice in through oidc-provider's login page
// (typing her name); the SDK exchanges the code and lists alice's
// documents, none of bob's.
func TestSignInWithOIDCProvider(t *testing.T) {
	node, sdkDir := tsSDK(t)
	playwright(t, sdkDir)
	providerDir := oidcProviderDir(t)
	browser := chromium(t)
	port, releasePort := reservePort(t)
	resource := fmt.Sprintf("http://127.0.0.1:%d/mcp", port)
	issuer, jwksURL := startOIDCProvider(t, node, providerDir, resource, "http://127.0.0.1/callback", "MCPKIT_LOGIN=form")

	dir := t.TempDir()
	dsn := "sqlite:" + filepath.Join(dir, "documents.db")
	ctx := context.Background()
	db, err := store.Open(ctx, dsn)
	require.NoError(t, err)
	require.NoError(t, store.Seed(ctx, db))
	ids := func(subject string) []string {
		rows, err := db.List(ctx, subject, "", 100)
		require.NoError(t, err)
		var out []string
		for _, r := range rows {
			out = append(out, documentPrefix+r.ID)
		}
		return out
	}
	alices, bobs := ids("alice"), ids("bob")
	require.NoError(t, db.Close())
	releasePort()
	a := startApp(t, app.Config{
		Addr: fmt.Sprintf("127.0.0.1:%d", port), DataDir: dir, DB: dsn, Seed: app.SeedNever,
		Issuer: issuer, JWKSURL: jwksURL, Resource: resource, Logger: slog.New(slog.DiscardHandler),
	})
	res, err := http.Get(a.URL() + "/dev/authorize")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusNotFound, res.StatusCode, "no development authorization server with a real issuer")

	s := runSignIn(t, node, sdkDir, browser, resource, map[string]any{
		"sdk": "v2", "registration": "pre-registered", "clientId": "mcp-interop", "user": "alice", "login": "oidc-provider",
		"foreign": bobs[:1],
	})
	require.Len(t, s.SignIns, 1)
	si := s.SignIns[0]
	assert.True(t, strings.HasPrefix(si.Authorization.Endpoint, issuer), "oidc-provider's authorization endpoint: %s", si.Authorization.Endpoint)
	assert.Equal(t, resource, si.Authorization.Resource)
	assert.Equal(t, "S256", si.Authorization.CodeChallengeMethod)
	assert.Contains(t, si.Page.Title, "oidc-provider")
	assert.True(t, si.Callback.StateMatches)
	assert.Equal(t, issuer, si.Callback.ISS)
	assert.Equal(t, "alice", s.Token.Sub)
	assert.Equal(t, issuer, s.Token.Iss)
	assert.Equal(t, resource, s.Token.Aud)
	assert.Equal(t, "at+jwt", s.Token.Typ)
	assert.Equal(t, append([]string{app.AboutURI}, alices...), s.Listed)
	require.Len(t, s.ForeignRead, 1)
	assert.True(t, s.ForeignRead[0].Rejected)
}
