package devissuer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRefreshWithBadScopeSpendsNothing: a refresh that fails for its
// scope (wider than the grant, or malformed) issues nothing and leaves the
// refresh token usable: it was spent (rotated) before, so the client lost
// its sign-in to a typo.
func TestRefreshWithBadScopeSpendsNothing(t *testing.T) {
	h := newHarness(t, nil)
	id := h.register(defaultClient())
	for _, scope := range []string{"documents:read documents:share", "documents:read  x", "unknown:scope"} {
		t.Run(scope, func(t *testing.T) {
			rt := h.signIn(id, "alice")["refresh_token"].(string)
			_, refresh := h.issued()
			status, body := h.exchange(url.Values{"grant_type": {"refresh_token"}, "client_id": {id}, "refresh_token": {rt}, "scope": {scope}})
			assert.Equal(t, http.StatusBadRequest, status)
			assert.Equal(t, "invalid_scope", body["error"])
			assert.NotContains(t, body, "access_token")
			assert.NotContains(t, body, "refresh_token")
			_, after := h.issued()
			assert.Equal(t, refresh, after, "nothing issued")
			status, body = h.exchange(url.Values{"grant_type": {"refresh_token"}, "client_id": {id}, "refresh_token": {rt}})
			assert.Equal(t, http.StatusOK, status, "the refresh token still works: %v", body)
			assert.NotEmpty(t, body["access_token"])
		})
	}
}

// TestRegistrationRedirectURISchemes: registration takes https, http on a
// loopback host, and private-use schemes named by a reverse domain name
// (RFC 8252 §7.1: "com.example.app"); any other scheme is refused, with
// nothing registered.
func TestRegistrationRedirectURISchemes(t *testing.T) {
	h := newHarness(t, nil)
	for _, ok := range []string{
		"https://app.example/cb", "http://127.0.0.1:8765/cb", "http://[::1]/cb", "http://localhost/cb",
		"com.example.app:/oauth2redirect", "io.github.user.tool:/cb", "org.example-app.x:/cb",
	} {
		status, body := h.postJSON("/dev/register", map[string]any{"redirect_uris": []string{ok}})
		assert.Equal(t, http.StatusCreated, status, "%s: %s", ok, body)
	}
	registered := h.s.clients.len()
	for _, bad := range []string{
		"myapp:/cb", "cursor://callback", "vscode:/cb", "x:/cb", // no reverse domain
		"com.:/cb", ".com.example:/cb", "com..example:/cb", "com.example-:/cb", "com.-example:/cb", "1com.example:/cb",
		"Com.Example.App:/cb", // a scheme is compared as given: lower case only
		"javascript:alert(1)", "data:text/html,x", "file:///etc/passwd", "ws://127.0.0.1/cb", "ftp://app.example/cb",
		"http://evil.example/cb", "https:///cb", "https:cb",
	} {
		resp, err := http.Post(h.url+"/dev/register", "application/json",
			strings.NewReader(fmt.Sprintf(`{"redirect_uris":[%q]}`, bad)))
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		assert.Equal(t, http.StatusBadRequest, resp.StatusCode, "%s: %s", bad, body)
		assert.Contains(t, string(body), `"error":"invalid_redirect_uri"`, bad)
	}
	assert.Equal(t, registered, h.s.clients.len(), "nothing more registered")
}

// TestAllowedAddrRefusesSpecialPurpose: the metadata fetch's address
// filter refuses every special-purpose range, IPv4-mapped, IPv4-compatible
// and NAT64 forms of IPv4 ones included; loopback (development) and
// public addresses pass.
func TestAllowedAddrRefusesSpecialPurpose(t *testing.T) {
	for _, a := range []string{
		"0.0.0.0", "0.1.2.3", "10.1.2.3", "100.64.0.1", "169.254.169.254", "172.16.0.1", "172.31.255.255",
		"192.0.0.8", "192.0.2.1", "192.88.99.1", "192.168.1.1", "198.18.0.1", "198.51.100.1", "203.0.113.1",
		"224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
		"::", "::ffff:10.0.0.1", "::ffff:169.254.169.254", "::ffff:192.168.0.1", "::ffff:0.0.0.0",
		"::10.0.0.1", "::169.254.169.254", "::8.8.8.8", // IPv4-compatible (deprecated): never fetched
		"64:ff9b::a9fe:a9fe", "64:ff9b::808:808", "64:ff9b:1::1", "100::1", "2001::1", "2001:db8::1", "2002:a00:1::1",
		"fc00::1", "fd12:3456::1", "fe80::1", "fec0::1", "ff02::1", "3fff::1", "5f00::1",
		"::ffff:0:10.0.0.1", // IPv4-translated (RFC 2765)
		"fe80::1%eth0",
	} {
		ip, err := netip.ParseAddr(a)
		require.NoError(t, err, a)
		assert.False(t, allowedAddr(ip), "%s must be refused", a)
	}
	for _, a := range []string{"127.0.0.1", "127.1.2.3", "::1", "::ffff:127.0.0.1", "8.8.8.8", "93.184.216.34", "2606:4700:4700::1111", "::ffff:8.8.8.8"} {
		ip, err := netip.ParseAddr(a)
		require.NoError(t, err, a)
		assert.True(t, allowedAddr(ip), "%s must pass", a)
	}
}

// TestFloodsKeepASignInInProgress: a person has a login page open (a
// sign-in in progress) with the client they just registered. Then floods
// from other addresses: authorization requests past the per-address bound
// and past the whole bound, and registrations past both. Each flood is
// refused (429) or replaces only the flooding addresses' own sign-ins
// and unused clients; the person approves, the code is redeemed, and their
// client still starts a new sign-in. Before: the oldest sign-in (the
// person's) and the oldest unused client were dropped for the flood.
func TestFloodsKeepASignInInProgress(t *testing.T) {
	h := newHarness(t, func(o *ServerOptions) { o.MaxPending = 2*pendingPerAddress + 1; o.MaxClients = 3 * clientsPerAddress })
	person := h.register(defaultClient())
	b := h.browser()
	verifier, challenge := pkce()
	p := h.login(b, h.authQuery(person, challenge))
	require.Equal(t, http.StatusOK, p.status)

	flooder := h.register(defaultClient())
	authorize := func(ip string) int {
		_, ch := pkce()
		resp, err := clientFrom(ip).Get(h.url + "/dev/authorize?" + h.authQuery(flooder, ch).Encode())
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	for i := range 3 * pendingPerAddress {
		want := http.StatusOK
		if i >= pendingPerAddress {
			want = http.StatusTooManyRequests
		}
		require.Equal(t, want, authorize("127.0.0.2"), "request %d from one address", i)
	}
	for i := range pendingPerAddress {
		require.Equal(t, http.StatusOK, authorize("127.0.0.3"), "request %d from a second address", i)
	}
	// Full: a third address (holding none) is served by pushing out the
	// oldest sign-in of an address holding the most (issue 35: max-min,
	// not refused); the person's one sign-in is never the one pushed out.
	assert.Equal(t, http.StatusOK, authorize("127.0.0.4"), "full: the largest holder makes room")
	assert.Equal(t, 2*pendingPerAddress+1, h.s.pending.Len())

	register := func(ip string) int {
		resp, err := clientFrom(ip).Post(h.url+"/dev/register", "application/json", strings.NewReader(`{"redirect_uris":["`+testRedirect+`"]}`))
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, ip := range []string{"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"} {
		for i := range 2 * clientsPerAddress {
			require.Equal(t, http.StatusCreated, register(ip), "registration %d from %s", i, ip)
			require.LessOrEqual(t, h.s.clients.len(), 3*clientsPerAddress)
		}
	}

	q := h.approve(b, p, "alice")
	status, tok := h.exchange(codeForm(person, q.Get("code"), verifier))
	require.Equal(t, http.StatusOK, status, "%v", tok)
	assert.NotEmpty(t, tok["access_token"])
	h.signIn(person, "alice") // the person's client is still known (approved: kept for good)
}

// TestStepUpIsTheSignedInUsers: alice signs in; her client asks again,
// for more scopes (a step-up), in her browser: the page says she is signed
// in and offers no other user; a form posted as bob is refused with
// nothing issued, and alice can still approve; "Sign in as someone else"
// brings the list back. Another browser gets the list. Before, the page
// offered every user, and bob's approval got a token with the wider
// scope in alice's place.
func TestStepUpIsTheSignedInUsers(t *testing.T) {
	h := newHarness(t, nil)
	id := h.register(defaultClient())
	b := h.browser()
	_, challenge := pkce()
	h.approve(b, h.login(b, h.authQuery(id, challenge)), "alice")

	wider := func(b *http.Client) (page, string) {
		verifier, challenge := pkce()
		q := h.authQuery(id, challenge)
		q.Set("scope", "documents:read documents:share")
		return h.login(b, q), verifier
	}
	p, verifier := wider(b)
	require.Equal(t, http.StatusOK, p.status)
	assert.Contains(t, p.body, `Signed in as <strong>alice</strong>`)
	assert.NotContains(t, p.body, `value="bob"`, "no other user is offered")
	assert.NotContains(t, p.body, `name="other"`)

	codes, _ := h.issued()
	for _, form := range []url.Values{
		{"user": {"bob"}}, {"user": {""}, "other": {"mallory"}}, {"other": {"bob"}},
	} {
		form.Set("request", p.request)
		form.Set("csrf", p.csrf)
		form.Set("decision", "approve")
		resp := h.submit(b, form, nil)
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, "%v", form)
		assert.Empty(t, resp.Header.Get("Location"))
		after, _ := h.issued()
		assert.Equal(t, codes, after, "nothing issued")
	}
	q := h.approve(b, p, "alice")
	status, tok := h.exchange(codeForm(id, q.Get("code"), verifier))
	require.Equal(t, http.StatusOK, status, "%v", tok)
	pr, _, err := h.verifier.Verify(context.Background(), tok["access_token"].(string))
	require.NoError(t, err)
	assert.Equal(t, "alice", pr.Subject)

	// Sign in as someone else, explicitly: the list again.
	p, _ = wider(b)
	resp, err := b.Do(func() *http.Request {
		req, _ := http.NewRequest(http.MethodPost, h.url+"/dev/consent", strings.NewReader(url.Values{"request": {p.request}, "csrf": {p.csrf}, "decision": {"switch"}}.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("Origin", h.url)
		req.Header.Set("Sec-Fetch-Site", "same-origin")
		return req
	}())
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	assert.NotContains(t, string(body), "Signed in as")
	assert.Contains(t, string(body), `value="bob"`)

	// Another browser: nobody is signed in there.
	p, _ = wider(h.browser())
	assert.NotContains(t, p.body, "Signed in as")
	assert.Contains(t, p.body, `value="bob"`)
}
