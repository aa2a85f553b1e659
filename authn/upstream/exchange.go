package upstream

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/principal"
)

// RFC 8693 identifiers.
const (
	grantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
	// TokenTypeAccessToken is the RFC 8693 token type of OAuth access
	// tokens: the subject token's and the requested one's.
	TokenTypeAccessToken = "urn:ietf:params:oauth:token-type:access_token"
)

// Defaults of [ExchangeOptions] and [GrantOptions].
const (
	DefaultMaxEntries = 10000
	DefaultLeeway     = 30 * time.Second
)

// ExchangeOptions configures an [Exchanger].
type ExchangeOptions struct {
	// TokenURL is the authorization server's token endpoint, which
	// supports the token-exchange grant. Required.
	TokenURL string
	// ClientID and ClientSecret authenticate this MCP server at the token
	// endpoint (client_secret_basic; without a secret, client_id in the
	// body). ClientID is required.
	ClientID, ClientSecret string
	// Audience names the upstream the token is for (the "audience"
	// parameter); Resource, when set, is sent as the RFC 8707 "resource".
	// At least one is required.
	Audience, Resource string
	// Scopes are requested for the upstream token ("scope"); empty asks
	// for the server's default.
	Scopes []string
	// StepUpScopes, when set, turn the server's invalid_scope refusal into
	// a *principal.ScopeError naming them: the MCP scopes the caller's
	// token needs for the exchange to succeed, which the endpoint answers
	// with a 403 insufficient_scope challenge. Unset, invalid_scope is
	// ErrRefused like every other refusal.
	StepUpScopes []string
	// HTTPClient reaches the token endpoint; nil means a client with a
	// 10-second timeout.
	HTTPClient *http.Client
	// Transport carries the calls to the upstream made with Client; nil
	// means http.DefaultTransport.
	Transport http.RoundTripper
	// MaxEntries bounds the cached tokens (default DefaultMaxEntries).
	MaxEntries int
	// Leeway: a token is replaced this long before it expires (default
	// DefaultLeeway).
	Leeway time.Duration
	// Logger receives the refusals' details (default slog.Default()).
	Logger *slog.Logger
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// An Exchanger obtains upstream access tokens for callers by OAuth 2.0
// Token Exchange (RFC 8693): the subject token is the caller's own access
// token, taken from the request ([CaptureSubjectToken]) and never stored;
// the result is cached per caller (identity and scopes), upstream and
// scopes until shortly before it expires, and concurrent calls of one
// caller make one exchange. It is safe for concurrent use.
type Exchanger struct {
	te       tokenEndpoint
	audience string
	resource string
	scope    string
	stepUp   []string
	leeway   time.Duration
	now      func() time.Time
	cache    *cache
	base     http.RoundTripper
}

// NewExchanger returns an Exchanger, or an error for options it cannot
// serve.
func NewExchanger(o ExchangeOptions) (*Exchanger, error) {
	if err := checkEndpoint("TokenURL", o.TokenURL); err != nil {
		return nil, err
	}
	if o.ClientID == "" {
		return nil, errors.New("upstream: ExchangeOptions.ClientID is required")
	}
	if o.Audience == "" && o.Resource == "" {
		return nil, errors.New("upstream: ExchangeOptions needs an Audience or a Resource")
	}
	for _, s := range append(append([]string(nil), o.Scopes...), o.StepUpScopes...) {
		if !principal.ValidScope(s) {
			return nil, errors.New("upstream: ExchangeOptions has an invalid scope")
		}
	}
	if o.MaxEntries < 0 || o.Leeway < 0 {
		return nil, errors.New("upstream: ExchangeOptions.MaxEntries and Leeway must not be negative")
	}
	if err := nilness.Refuse("upstream", "ExchangeOptions.Transport", o.Transport); err != nil {
		return nil, err
	}
	x := &Exchanger{
		te: tokenEndpoint{url: o.TokenURL, clientID: o.ClientID, clientSecret: o.ClientSecret,
			hc: cmpOr(o.HTTPClient, defaultHTTPClient()), log: cmpOr(o.Logger, slog.Default())},
		audience: o.Audience,
		resource: o.Resource,
		scope:    strings.Join(o.Scopes, " "),
		stepUp:   append([]string(nil), o.StepUpScopes...),
		base:     o.Transport,
		leeway:   cmpOr(o.Leeway, DefaultLeeway),
		now:      o.Now,
	}
	if x.now == nil {
		x.now = time.Now
	}
	x.cache = newCache(cmpOr(o.MaxEntries, DefaultMaxEntries), x.now)
	return x, nil
}

// Token returns an access token for the upstream as caller: the cached
// one, or a new one exchanged for the caller's token in ctx. Errors:
// ErrNoSubjectToken, ErrUnavailable, ErrRefused, a *principal.ScopeError
// (see StepUpScopes), or ctx's.
func (x *Exchanger) Token(ctx context.Context, caller principal.Principal) (string, error) {
	subject, ok := subjectToken(ctx)
	if !ok {
		return "", ErrNoSubjectToken
	}
	key := string(caller.AppendBinding(nil))
	return x.cache.get(ctx, key, func(ctx context.Context) (token, error) { return x.exchange(ctx, subject) })
}

func (x *Exchanger) exchange(ctx context.Context, subject string) (token, error) {
	form := url.Values{
		"grant_type":           {grantTokenExchange},
		"subject_token":        {subject},
		"subject_token_type":   {TokenTypeAccessToken},
		"requested_token_type": {TokenTypeAccessToken},
	}
	if x.audience != "" {
		form.Set("audience", x.audience)
	}
	if x.resource != "" {
		form.Set("resource", x.resource)
	}
	if x.scope != "" {
		form.Set("scope", x.scope)
	}
	start := x.now()
	tr, err := x.te.post(ctx, form)
	var oe *oauthError
	switch {
	case errors.As(err, &oe):
		if oe.Code == "invalid_scope" && len(x.stepUp) > 0 {
			return token{}, &principal.ScopeError{Required: append([]string(nil), x.stepUp...)}
		}
		return token{}, ErrRefused
	case err != nil:
		return token{}, err
	}
	if tr.IssuedTokenType != "" && tr.IssuedTokenType != TokenTypeAccessToken {
		x.te.log.Warn("upstream: token exchange issued another token type", "endpoint", x.te.url)
		return token{}, ErrRefused
	}
	return token{value: tr.AccessToken, expires: expiry(start, tr.ExpiresIn, x.leeway, 5*time.Minute)}, nil
}

// Client returns an HTTP client that calls the upstream as caller (see
// [Exchanger.Token]). A 401 from the upstream drops the token and retries
// once with a newly exchanged one (requests with a body only when it can
// be replayed); a second 401 is ErrRefused.
func (x *Exchanger) Client(ctx context.Context, caller principal.Principal) *http.Client {
	return &http.Client{Transport: &transport{src: exchangeSource{x, caller}, base: x.base}}
}

type exchangeSource struct {
	x      *Exchanger
	caller principal.Principal
}

func (s exchangeSource) token(ctx context.Context) (string, error) { return s.x.Token(ctx, s.caller) }
func (s exchangeSource) refused(_ context.Context, tok string) {
	s.x.cache.drop(string(s.caller.AppendBinding(nil)), tok)
}
func (s exchangeSource) refusedAgain(context.Context) error { return ErrRefused }

// subjectKey is the context key of the caller's token.
type subjectKey struct{}

// CaptureSubjectToken puts the request's bearer token (Authorization:
// Bearer) in the request context, where only an [Exchanger] reads it, for
// the handler after it; mount it in front of the MCP endpoint, whose
// authentication checks that very token. The token is held for the
// request only and never stored. A DPoP-bound token (Authorization: DPoP)
// is not captured: it cannot be presented without its key, so an
// exchange for it is ErrNoSubjectToken.
func CaptureSubjectToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if vals := r.Header.Values("Authorization"); len(vals) == 1 {
			scheme, tok, ok := strings.Cut(vals[0], " ")
			if ok && strings.EqualFold(scheme, "Bearer") && tok != "" && !strings.ContainsAny(tok, " \t") {
				r = r.WithContext(context.WithValue(r.Context(), subjectKey{}, tok))
			}
		}
		next.ServeHTTP(w, r)
	})
}

func subjectToken(ctx context.Context) (string, bool) {
	s, ok := ctx.Value(subjectKey{}).(string)
	return s, ok && s != ""
}

func defaultHTTPClient() *http.Client { return &http.Client{Timeout: 10 * time.Second} }

// cmpOr returns v, or def for v's zero value.
func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// checkEndpoint refuses a URL that is not absolute http(s).
func checkEndpoint(name, s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.Fragment != "" {
		return errors.New("upstream: " + name + " must be an absolute http(s) URL")
	}
	return nil
}
