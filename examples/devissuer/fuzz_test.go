package devissuer

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// fuzzServer is an authorization server served in-process (no listener),
// with one registered client.
func fuzzServer(f *testing.F) (*Server, string) {
	f.Helper()
	is, err := New("http://127.0.0.1:8080/dev", "http://127.0.0.1:8080/mcp", Options{})
	if err != nil {
		f.Fatal(err)
	}
	s, err := is.NewServer(ServerOptions{Scopes: testScopes, Logger: discard()})
	if err != nil {
		f.Fatal(err)
	}
	s.docs.lookup = testLookup(&nameLog{}) // never real DNS,
	s.docs.client.Transport = refuseAll{}  // and never a connection
	id := dcrPrefix + "fuzzclient"
	if err := s.clients.add(client{id: id, redirectURIs: []string{"http://127.0.0.1/callback", "https://app.example/cb?x=1"}, refresh: true}, "127.0.0.1"); err != nil {
		f.Fatal(err)
	}
	return s, id
}

// refuseAll is the fuzzed server's transport: no request leaves the process.
type refuseAll struct{}

func (refuseAll) RoundTrip(*http.Request) (*http.Response, error) { return nil, errFetch }

// registeredRedirect matches the fuzz client's redirect URIs with response
// parameters added.
var registeredRedirect = regexp.MustCompile(`^(http://127\.0\.0\.1(:[1-9][0-9]{0,4})?/callback\?|https://app\.example/cb\?x=1&)[^#]*$`)

func serve(s *Server, req *http.Request) *httptest.ResponseRecorder {
	req.Host = "127.0.0.1:8080"
	w := httptest.NewRecorder()
	s.ServeHTTP(w, req)
	return w
}

// FuzzAuthorize sends any query to the authorization endpoint. Whatever it
// holds, the server never fails, never redirects anywhere but to a
// registered redirect URI, and shows a login form only for a request of
// the registered client with an S256 challenge.
func FuzzAuthorize(f *testing.F) {
	s, id := fuzzServer(f)
	valid := url.Values{
		"response_type": {"code"}, "client_id": {id}, "redirect_uri": {"http://127.0.0.1:5555/callback"},
		"code_challenge": {strings.Repeat("a", 43)}, "code_challenge_method": {"S256"}, "state": {"s"},
		"scope": {"documents:read"}, "resource": {"http://127.0.0.1:8080/mcp"},
	}.Encode()
	for _, seed := range []string{valid, valid + "&resource=https://x", valid + "&state=%00", valid + "&code_challenge_method=plain",
		strings.Replace(valid, "5555", "5555%2F..", 1), "client_id=https://10.0.0.1/x", "client_id=http://127.0.0.1:1/x&redirect_uri=x",
		"a=%zz", "client_id=" + id + "&client_id=" + id, ""} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		req := httptest.NewRequest(http.MethodGet, "/dev/authorize", nil)
		req.URL.RawQuery = raw
		w := serve(s, req)
		opens := func() bool { // a request that may start a sign-in
			q, err := url.ParseQuery(raw)
			return err == nil && q.Get("client_id") == id && q.Get("code_challenge_method") == "S256" && len(q.Get("code_challenge")) == 43
		}
		switch w.Code {
		case http.StatusOK:
			if !opens() {
				t.Fatalf("a login form for %q", raw)
			}
			if h := w.Header().Get("X-Frame-Options"); h != "DENY" {
				t.Fatalf("framable page for %q", raw)
			}
		case http.StatusTooManyRequests:
			// The fuzzer's sign-ins all come from one address: after 20
			// in progress, the next one is refused (see doc.go), never
			// anything that would not have started one.
			if !opens() || w.Header().Get("Retry-After") == "" {
				t.Fatalf("429 for %q", raw)
			}
		case http.StatusSeeOther:
			loc := w.Header().Get("Location")
			if !registeredRedirect.MatchString(loc) {
				t.Fatalf("redirect to %q for %q", loc, raw)
			}
			if strings.Contains(loc, "code=") && !strings.Contains(loc, "error=") {
				t.Fatalf("a code without sign-in for %q", raw)
			}
		case http.StatusBadRequest, http.StatusServiceUnavailable, http.StatusRequestURITooLong:
		default:
			t.Fatalf("status %d for %q", w.Code, raw)
		}
	})
}

// FuzzToken sends any form to the token endpoint: no token is ever issued
// without a code or refresh token the server gave out, and nothing fails.
func FuzzToken(f *testing.F) {
	s, id := fuzzServer(f)
	for _, seed := range []string{
		"grant_type=authorization_code&client_id=" + id + "&code=abc&code_verifier=" + strings.Repeat("v", 43) + "&redirect_uri=http://127.0.0.1/callback",
		"grant_type=refresh_token&client_id=" + id + "&refresh_token=x&scope=documents:read",
		"grant_type=refresh_token&refresh_token=x&refresh_token=y", "resource=a&resource=b", "%ff=1", "",
	} {
		f.Add(seed, "application/x-www-form-urlencoded")
	}
	f.Add("{}", "application/json")
	f.Fuzz(func(t *testing.T, body, contentType string) {
		req := httptest.NewRequest(http.MethodPost, "/dev/token", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		w := serve(s, req)
		if w.Code == http.StatusOK || w.Code >= 500 || strings.Contains(w.Body.String(), "access_token") {
			t.Fatalf("status %d for %q: %s", w.Code, body, w.Body.String())
		}
		var e struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Error == "" {
			t.Fatalf("not an RFC 6749 error for %q: %s", body, w.Body.String())
		}
	})
}

// FuzzRegister sends any body to the registration endpoint: a client is
// registered only with valid redirect URIs and as a public client, and
// nothing fails.
func FuzzRegister(f *testing.F) {
	s, _ := fuzzServer(f)
	for _, seed := range []string{
		`{"redirect_uris":["http://127.0.0.1/cb"],"client_name":"x","grant_types":["authorization_code","refresh_token"]}`,
		`{"redirect_uris":["javascript:x"]}`, `{"redirect_uris":["http://127.0.0.1/cb"],"redirect_uris":[]}`,
		`{"redirect_uris":["com.example.app:/cb"],"token_endpoint_auth_method":"client_secret_basic"}`,
		`{"redirect_uris":null}`, `{"redirect_uris":[null]}`, `[]`, `{"a":{"b":[1,2,{"c":"\ud800"}]}}`, "",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest(http.MethodPost, "/dev/register", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := serve(s, req)
		switch w.Code {
		case http.StatusCreated:
			var out struct {
				ClientID     string   `json:"client_id"`
				RedirectURIs []string `json:"redirect_uris"`
				Auth         string   `json:"token_endpoint_auth_method"`
			}
			if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil || out.Auth != "none" || !strings.HasPrefix(out.ClientID, dcrPrefix) || len(out.RedirectURIs) == 0 {
				t.Fatalf("registered %q: %s", body, w.Body.String())
			}
			for _, u := range out.RedirectURIs {
				if checkRedirectURI(u) != nil {
					t.Fatalf("registered the redirect URI %q", u)
				}
			}
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d for %q", w.Code, body)
		}
	})
}

// FuzzRedirectURI checks matching against a registered URI: a match is a
// valid redirect URI, equal to the registered one but for an http
// loopback port.
func FuzzRedirectURI(f *testing.F) {
	for _, seed := range [][2]string{
		{"http://127.0.0.1/callback", "http://127.0.0.1:8080/callback"}, {"http://[::1]:1/x", "http://[::1]:65535/x"},
		{"http://localhost/cb", "http://localhost:080/cb"}, {"https://app.example/cb", "https://app.example:443/cb"},
		{"http://127.0.0.1/cb", "http://127.0.0.1.evil/cb"}, {"com.example:/cb", "com.example:/cb"},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, registered, requested string) {
		if checkRedirectURI(registered) != nil || !matchRedirectURI([]string{registered}, requested) {
			return
		}
		if checkRedirectURI(requested) != nil {
			t.Fatalf("matched an invalid redirect URI %q", requested)
		}
		if requested == registered {
			return
		}
		a, okA := withoutLoopbackPort(registered)
		b, okB := withoutLoopbackPort(requested)
		if !okA || !okB || a != b || !strings.HasPrefix(requested, "http://") {
			t.Fatalf("%q matched %q", requested, registered)
		}
		if u, err := url.Parse(requested); err != nil || !loopbackHost(u.Hostname()) || u.Path != mustParse(t, registered).Path || u.RawQuery != mustParse(t, registered).RawQuery {
			t.Fatalf("%q matched %q with another host, path or query", requested, registered)
		}
	})
}

func mustParse(t *testing.T, raw string) *url.URL {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// FuzzClientIDURL checks what the metadata fetcher would fetch: https (or
// http on a loopback host), a path, no query, fragment or userinfo, and
// never an address literal of a special-use block.
func FuzzClientIDURL(f *testing.F) {
	for _, seed := range []string{"https://app.example/client.json", "http://127.0.0.1:9/c", "https://10.0.0.1/c",
		"https://[::ffff:192.168.0.1]/c", "https://app.example/a/%2E%2E/c", "https://u@app.example/c", "http://localhost./c"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		u, err := checkClientIDURL(raw)
		if err != nil {
			return
		}
		if u.String() != raw || u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Path == "" || u.Path == "/" {
			t.Fatalf("accepted %q", raw)
		}
		if u.Scheme != "https" && !(u.Scheme == "http" && loopbackHost(u.Hostname())) {
			t.Fatalf("accepted the scheme of %q", raw)
		}
		if strings.Contains(raw, "/./") || strings.Contains(raw, "/../") || strings.HasSuffix(raw, "/..") || strings.HasSuffix(raw, "/.") {
			t.Fatalf("accepted a dot segment in %q", raw)
		}
	})
}
