package upstream

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// Defaults of [GrantOptions].
const (
	DefaultLinkTTL  = 10 * time.Minute
	DefaultGrantTTL = 90 * 24 * time.Hour
)

// GrantOptions configures [Grants].
type GrantOptions struct {
	// Name names the upstream in messages and pages ("photos"): 1 to 64
	// letters, digits, '-', '_' or '.'. Required.
	Name string
	// AuthorizeURL and TokenURL are the upstream authorization server's
	// endpoints; RevokeURL, when set, its RFC 7009 revocation endpoint,
	// told of a disconnect. AuthorizeURL and TokenURL are required.
	AuthorizeURL, TokenURL, RevokeURL string
	// ClientID and ClientSecret are this MCP server's registration at the
	// upstream's authorization server (without a secret, a public client).
	ClientID, ClientSecret string
	// Scopes are asked of the upstream; Resource, when set, is sent as the
	// RFC 8707 resource indicator (the upstream API's URL).
	Scopes   []string
	Resource string
	// ConnectURL is the public URL where [Grants.ConnectHandler] is
	// mounted: the URL elicitations send the user to. CallbackURL is where
	// [Grants.CallbackHandler] is mounted: the redirect_uri registered at
	// the upstream. Both required, absolute http(s).
	ConnectURL, CallbackURL string
	// Keys seal the grants at rest and the links (the cursor key ring of
	// the fleet: every instance must be able to open what another sealed).
	// Required.
	Keys *sealedcursor.KeyRing
	// Store keeps grants and authorizations in progress. Required.
	Store Store
	// Identify, when set, tells who the browser opening the connect page
	// and arriving at the callback is (the sign-in session of the
	// service's own login, or of its authorization server), as a
	// principal key (principal.Principal.Key); a browser of someone else
	// is refused, which closes the forwarded-link hole (see the package
	// documentation). ok false means nobody is signed in: refused too.
	Identify func(r *http.Request) (key string, ok bool)
	// OnComplete, when set, is called after a grant was stored: the user
	// (its principal key) and the id of the elicitation the link came
	// from. The MCP endpoint uses it to send
	// notifications/elicitation/complete.
	OnComplete func(ctx context.Context, user, elicitationID string)
	// Message is the elicitation's message; empty means "Connect your
	// <Name> account so that this server can reach it as you."
	Message string
	// LinkTTL is how long a link and an authorization in progress stay
	// valid (default DefaultLinkTTL); GrantTTL how long a grant stays
	// usable after it was last refreshed (default DefaultGrantTTL).
	LinkTTL, GrantTTL time.Duration
	// HTTPClient reaches the token and revocation endpoints (nil: a
	// 10-second timeout).
	HTTPClient *http.Client
	// Transport carries the calls to the upstream made with Client; nil
	// means http.DefaultTransport.
	Transport http.RoundTripper
	// MaxEntries bounds the cached access tokens (default
	// DefaultMaxEntries); Leeway replaces one this long before it expires
	// (default DefaultLeeway).
	MaxEntries int
	Leeway     time.Duration
	Logger     *slog.Logger
	Now        func() time.Time
}

// Grants keeps per-user grants to one upstream, given on a page the kit
// serves after a URL-mode elicitation. It is safe for concurrent use.
type Grants struct {
	o        GrantOptions
	te       tokenEndpoint
	links    *sealedcursor.Sealer
	rows     *sealedcursor.Sealer
	pending  *sealedcursor.Sealer
	cache    *cache
	log      *slog.Logger
	now      func() time.Time
	message  string
	secure   bool // the callback is https: the browser cookie is Secure
	cookie   string
	cbPath   string
	revokeTE *tokenEndpoint
}

// NewGrants returns Grants, or an error for options it cannot serve.
func NewGrants(o GrantOptions) (*Grants, error) {
	if !validName(o.Name) {
		return nil, errors.New("upstream: GrantOptions.Name must be 1 to 64 letters, digits, '-', '_' or '.'")
	}
	for name, u := range map[string]string{"AuthorizeURL": o.AuthorizeURL, "TokenURL": o.TokenURL, "ConnectURL": o.ConnectURL, "CallbackURL": o.CallbackURL} {
		if err := checkEndpoint(name, u); err != nil {
			return nil, err
		}
	}
	if o.RevokeURL != "" {
		if err := checkEndpoint("RevokeURL", o.RevokeURL); err != nil {
			return nil, err
		}
	}
	if o.ClientID == "" {
		return nil, errors.New("upstream: GrantOptions.ClientID is required")
	}
	if o.Keys == nil || o.Store == nil {
		return nil, errors.New("upstream: GrantOptions.Keys and Store are required")
	}
	for what, v := range map[string]any{"GrantOptions.Store": o.Store, "GrantOptions.Transport": o.Transport} {
		if err := nilness.Refuse("upstream", what, v); err != nil {
			return nil, err
		}
	}
	for _, s := range o.Scopes {
		if !principal.ValidScope(s) {
			return nil, errors.New("upstream: GrantOptions has an invalid scope")
		}
	}
	if o.LinkTTL < 0 || o.GrantTTL < 0 || o.MaxEntries < 0 || o.Leeway < 0 {
		return nil, errors.New("upstream: GrantOptions durations and bounds must not be negative")
	}
	g := &Grants{o: o, log: cmpOr(o.Logger, slog.Default()), now: o.Now}
	if g.now == nil {
		g.now = time.Now
	}
	g.o.LinkTTL = cmpOr(o.LinkTTL, DefaultLinkTTL)
	g.o.GrantTTL = cmpOr(o.GrantTTL, DefaultGrantTTL)
	g.o.Leeway = cmpOr(o.Leeway, DefaultLeeway)
	g.o.Scopes = append([]string(nil), o.Scopes...)
	g.message = cmpOr(o.Message, "Connect your "+o.Name+" account so that this server can reach it as you.")
	var err error
	if g.links, err = sealedcursor.New(sealedcursor.Options{Keys: o.Keys, TTL: g.o.LinkTTL, Now: g.now}); err != nil {
		return nil, err
	}
	if g.pending, err = sealedcursor.New(sealedcursor.Options{Keys: o.Keys, TTL: g.o.LinkTTL, Now: g.now}); err != nil {
		return nil, err
	}
	if g.rows, err = sealedcursor.New(sealedcursor.Options{Keys: o.Keys, TTL: g.o.GrantTTL, Now: g.now}); err != nil {
		return nil, err
	}
	hc := cmpOr(o.HTTPClient, defaultHTTPClient())
	g.te = tokenEndpoint{url: o.TokenURL, clientID: o.ClientID, clientSecret: o.ClientSecret, hc: hc, log: g.log}
	if o.RevokeURL != "" {
		g.revokeTE = &tokenEndpoint{url: o.RevokeURL, clientID: o.ClientID, clientSecret: o.ClientSecret, hc: hc, log: g.log}
	}
	g.cache = newCache(cmpOr(o.MaxEntries, DefaultMaxEntries), g.now)
	cb, _ := url.Parse(o.CallbackURL)
	g.secure = cb.Scheme == "https"
	g.cbPath = cmpOr(cb.Path, "/")
	g.cookie = "mcpkit_upstream_" + o.Name
	return g, nil
}

func validName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// ElicitationError says that the caller must visit URL (a URL-mode
// elicitation) before the call can succeed: the user has not connected
// the upstream, or its grant was refused. The MCP endpoint answers it in
// the protocol's form (see package mcphttp); ID is the elicitation's id,
// Message what the client shows the user.
type ElicitationError struct {
	ID, URL, Message string
}

func (e *ElicitationError) Error() string {
	return "upstream: the caller must authorize access at the elicitation URL"
}

// URLElicitation returns the elicitation's id, URL and message: what the
// MCP endpoint sends.
func (e *ElicitationError) URLElicitation() (id, url, message string) {
	return e.ID, e.URL, e.Message
}

// grantRow is the sealed payload of a grant.
type grantRow struct {
	Refresh string `json:"r,omitempty"`
	Access  string `json:"a"`
	Expires int64  `json:"e"` // unix seconds when Access stops being used
}

// pendingState is the sealed payload of an authorization in progress.
type pendingState struct {
	User        string `json:"u"`
	Elicitation string `json:"i"`
	State       string `json:"s"` // SHA-256 of the state, hex
	Verifier    string `json:"v"`
	Browser     string `json:"b"` // SHA-256 of the browser cookie, hex
	Expires     int64  `json:"e"` // unix seconds
}

func (g *Grants) storeKey(user string) string { return g.o.Name + "|" + user }

// Elicit returns the elicitation that sends caller to the connect page:
// a new id, and a link sealed to the caller that expires after LinkTTL.
func (g *Grants) Elicit(caller principal.Principal) (*ElicitationError, error) {
	user := caller.Key()
	if user == "" {
		return nil, ErrNoSubject
	}
	id := randomString(16)
	payload := id + "\n" + user
	link, err := g.links.Seal(bindingOf("link", g.o.Name, ""), []byte(payload), g.now())
	if err != nil {
		return nil, err
	}
	u, _ := url.Parse(g.o.ConnectURL)
	q := u.Query()
	q.Set("link", link)
	u.RawQuery = q.Encode()
	return &ElicitationError{ID: id, URL: u.String(), Message: g.message}, nil
}

// Token returns an access token for the upstream as caller: the cached
// one, the stored grant's, or a refreshed one (one refresh per user at a
// time). Without a usable grant it returns an *ElicitationError.
func (g *Grants) Token(ctx context.Context, caller principal.Principal) (string, error) {
	return g.token(ctx, caller, "")
}

// token is Token that never returns stale (a token the upstream refused).
func (g *Grants) token(ctx context.Context, caller principal.Principal, stale string) (string, error) {
	user := caller.Key()
	if user == "" {
		return "", ErrNoSubject
	}
	tok, err := g.cache.get(ctx, g.storeKey(user), func(ctx context.Context) (token, error) { return g.fetch(ctx, user, stale) })
	if errors.Is(err, ErrNoGrant) {
		el, eerr := g.Elicit(caller)
		if eerr != nil {
			return "", eerr
		}
		return "", el
	}
	return tok, err
}

// fetch reads user's grant, refreshing its access token when it is stale.
func (g *Grants) fetch(ctx context.Context, user, stale string) (token, error) {
	return g.fetchOnce(ctx, user, stale, true)
}

// fetchOnce is fetch; again allows one more read of a grant another
// instance rotated meanwhile.
func (g *Grants) fetchOnce(ctx context.Context, user, stale string, again bool) (token, error) {
	key := g.storeKey(user)
	row, err := g.o.Store.LoadGrant(ctx, key)
	if err != nil {
		if !errors.Is(err, ErrNoGrant) {
			g.log.Error("upstream: grant store failed", "upstream", g.o.Name, "err", err)
			return token{}, ErrUnavailable
		}
		return token{}, ErrNoGrant
	}
	payload, err := openRow(g.rows, bindingOf("grant", g.o.Name, user), row)
	if err != nil {
		// Another user's row, a tampered one, one sealed with a retired
		// key or expired: nothing to use; the user connects again.
		g.log.Warn("upstream: a stored grant does not open; it is removed", "upstream", g.o.Name)
		_ = g.o.Store.DeleteGrant(ctx, key)
		return token{}, ErrNoGrant
	}
	var gr grantRow
	if json.Unmarshal(payload, &gr) != nil {
		return token{}, ErrNoGrant
	}
	now := g.now()
	if gr.Access != "" && gr.Access != stale && now.Before(time.Unix(gr.Expires, 0)) {
		return token{value: gr.Access, expires: time.Unix(gr.Expires, 0)}, nil
	}
	if gr.Refresh == "" {
		_ = g.o.Store.DeleteGrant(ctx, key)
		return token{}, ErrNoGrant
	}
	form := url.Values{"grant_type": {"refresh_token"}, "refresh_token": {gr.Refresh}}
	if g.o.Resource != "" {
		form.Set("resource", g.o.Resource)
	}
	tr, err := g.te.post(ctx, form)
	var oe *oauthError
	if errors.As(err, &oe) {
		if oe.Code == "invalid_grant" {
			// Revoked or expired at the upstream: the user connects again.
			// Another instance may have rotated the refresh token meanwhile.
			if cur, lerr := g.o.Store.LoadGrant(ctx, key); again && lerr == nil && cur != row {
				return g.fetchOnce(ctx, user, stale, false)
			}
			_ = g.o.Store.DeleteGrant(ctx, key)
			return token{}, ErrNoGrant
		}
		return token{}, ErrRefused
	}
	if err != nil {
		return token{}, err
	}
	if tr.RefreshToken == "" {
		tr.RefreshToken = gr.Refresh // the server kept the old one
	}
	t, err := g.save(ctx, user, tr, now)
	return t, err
}

// save seals and stores the grant of a token response.
func (g *Grants) save(ctx context.Context, user string, tr *tokenResponse, now time.Time) (token, error) {
	t := token{value: tr.AccessToken, expires: expiry(now, tr.ExpiresIn, g.o.Leeway, time.Hour)}
	payload, _ := json.Marshal(grantRow{Refresh: tr.RefreshToken, Access: tr.AccessToken, Expires: t.expires.Unix()})
	row, err := sealRow(g.rows, bindingOf("grant", g.o.Name, user), payload, now)
	if err != nil {
		g.log.Error("upstream: cannot seal a grant", "upstream", g.o.Name, "err", err)
		return token{}, ErrUnavailable
	}
	if err := g.o.Store.SaveGrant(ctx, g.storeKey(user), row); err != nil {
		g.log.Error("upstream: grant store failed", "upstream", g.o.Name, "err", err)
		return token{}, ErrUnavailable
	}
	return t, nil
}

// Connected reports whether caller has a stored grant (which may still
// fail to refresh).
func (g *Grants) Connected(ctx context.Context, caller principal.Principal) (bool, error) {
	user := caller.Key()
	if user == "" {
		return false, ErrNoSubject
	}
	_, err := g.o.Store.LoadGrant(ctx, g.storeKey(user))
	if errors.Is(err, ErrNoGrant) {
		return false, nil
	}
	return err == nil, err
}

// Disconnect removes caller's grant (and tells the upstream's
// revocation endpoint, when configured, best effort): the next call
// elicits again.
func (g *Grants) Disconnect(ctx context.Context, caller principal.Principal) error {
	user := caller.Key()
	if user == "" {
		return ErrNoSubject
	}
	key := g.storeKey(user)
	row, lerr := g.o.Store.LoadGrant(ctx, key)
	if err := g.o.Store.DeleteGrant(ctx, key); err != nil {
		return err
	}
	g.cache.drop(key, "")
	if g.revokeTE != nil && lerr == nil {
		if payload, err := openRow(g.rows, bindingOf("grant", g.o.Name, user), row); err == nil {
			var gr grantRow
			if json.Unmarshal(payload, &gr) == nil && gr.Refresh != "" {
				g.revoke(ctx, gr.Refresh)
			}
		}
	}
	return nil
}

func (g *Grants) revoke(ctx context.Context, refresh string) {
	form := url.Values{"token": {refresh}, "token_type_hint": {"refresh_token"}}
	if g.revokeTE.clientSecret == "" {
		form.Set("client_id", g.revokeTE.clientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.revokeTE.url, strings.NewReader(form.Encode()))
	if err != nil {
		return
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if g.revokeTE.clientSecret != "" {
		req.SetBasicAuth(url.QueryEscape(g.revokeTE.clientID), url.QueryEscape(g.revokeTE.clientSecret))
	}
	resp, err := g.revokeTE.hc.Do(req)
	if err != nil {
		g.log.Warn("upstream: revocation endpoint unreachable", "upstream", g.o.Name)
		return
	}
	drain(resp)
	if resp.StatusCode != http.StatusOK {
		g.log.Warn("upstream: revocation refused", "upstream", g.o.Name, "status", resp.StatusCode)
	}
}

// Client returns an HTTP client that calls the upstream as caller with
// the caller's grant. A 401 from the upstream refreshes the token once; a
// second one removes the grant and fails with a new *ElicitationError:
// the user connects again, never a loop. Without a grant, requests fail
// with an *ElicitationError (errors.As finds it through *url.Error).
func (g *Grants) Client(ctx context.Context, caller principal.Principal) *http.Client {
	return &http.Client{Transport: &transport{src: &grantSource{g: g, caller: caller}, base: g.o.Transport}}
}

type grantSource struct {
	g      *Grants
	caller principal.Principal
	mu     sync.Mutex
	stale  string // the token the upstream last refused
}

func (s *grantSource) token(ctx context.Context) (string, error) {
	s.mu.Lock()
	stale := s.stale
	s.mu.Unlock()
	return s.g.token(ctx, s.caller, stale)
}

func (s *grantSource) refused(_ context.Context, tok string) {
	s.mu.Lock()
	s.stale = tok
	s.mu.Unlock()
	s.g.cache.drop(s.g.storeKey(s.caller.Key()), tok)
}

func (s *grantSource) refusedAgain(ctx context.Context) error {
	key := s.g.storeKey(s.caller.Key())
	_ = s.g.o.Store.DeleteGrant(ctx, key)
	s.g.cache.drop(key, "")
	s.g.log.Warn("upstream: the upstream refused a refreshed token; the user must connect again", "upstream", s.g.o.Name)
	el, err := s.g.Elicit(s.caller)
	if err != nil {
		return err
	}
	return el
}

func randomString(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func sha256Hex(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func equalStrings(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
