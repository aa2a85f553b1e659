package authn

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/authn/internal/httpauth"
	"github.com/mcpkit/mcpkit/authn/internal/jose"
	"github.com/mcpkit/mcpkit/principal"
)

// IntrospectionOptions configures an [IntrospectionVerifier]. Endpoint,
// ClientID and Resource are required.
type IntrospectionOptions struct {
	// Endpoint is the authorization server's RFC 7662 introspection
	// endpoint: https, or http for loopback hosts.
	Endpoint string

	// ClientID and ClientSecret authenticate this resource server to the
	// endpoint with HTTP Basic (RFC 6749 §2.3.1: both form-encoded first).
	ClientID, ClientSecret string

	// Resource is this server's canonical resource URI; the response's
	// "aud" (a string or an array) must contain it.
	Resource string

	// Audience is the "aud" value this issuer uses for this resource,
	// when it is not Resource itself (an issuer that names APIs by an
	// identifier such as "api://mcp"). Empty means Resource. The
	// principal's Audience is Resource in either case.
	Audience string

	// Issuer, when set, must equal the response's "iss" exactly.
	Issuer string

	// Leeway is the clock skew tolerated for exp, nbf and iat. Zero means
	// 60 s; at most 5 minutes.
	Leeway time.Duration

	// Claims names the response members for the principal's fields, as
	// for JWTs; the zero value means sub / client_id then azp / scope then scp.
	Claims ClaimNames

	// HTTPClient calls the endpoint. Nil means a client with Timeout and no
	// redirects. Every call is bounded by Timeout and MaxResponseBytes.
	HTTPClient *http.Client

	// Timeout bounds one introspection call. Zero means 5 s.
	Timeout time.Duration

	// MaxResponseBytes caps the response body. Zero means 64 KiB.
	MaxResponseBytes int64

	// MaxTokenBytes bounds the token; a longer one is rejected without a
	// call. Zero means DefaultMaxTokenBytes (16 KiB).
	MaxTokenBytes int

	// Logger receives warnings when the endpoint fails; never tokens. Nil
	// means slog.Default().
	Logger *slog.Logger

	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// IntrospectionVerifier verifies opaque tokens with RFC 7662 token
// introspection. The response must say "active": true and carry exp and an
// aud containing the resource; nbf/iat, iss (when configured), sub,
// client_id and scope are checked exactly like JWT claims. An endpoint
// that cannot be reached, answers other than 200, or sends a malformed
// response yields [ErrUnavailable] (503), never invalid_token. Put a
// [Cache] in front of it to avoid one call per request. It is safe for
// concurrent use.
type IntrospectionVerifier struct {
	maxToken int
	endpoint string
	auth     string // Basic credentials, pre-encoded
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
	rules    claimRules
	log      *slog.Logger
	now      func() time.Time
}

var errIntrospectionZero = &misuseError{"authn: IntrospectionVerifier not made by NewIntrospectionVerifier"}

func (iv *IntrospectionVerifier) verifierResource() (string, bool) {
	if iv == nil || iv.client == nil {
		return "", false
	}
	return iv.rules.resource, true
}

var _ Verifier = (*IntrospectionVerifier)(nil)

// NewIntrospectionVerifier validates opts and returns a verifier.
func NewIntrospectionVerifier(opts IntrospectionOptions) (*IntrospectionVerifier, error) {
	if _, err := jose.ParseSecureURL("IntrospectionOptions.Endpoint", opts.Endpoint, false); err != nil {
		return nil, err
	}
	if _, err := jose.ParseSecureURL("IntrospectionOptions.Resource", opts.Resource, true); err != nil {
		return nil, err
	}
	if opts.ClientID == "" {
		return nil, errors.New("authn: IntrospectionOptions.ClientID is required (RFC 7662 §2.1)")
	}
	if opts.Timeout < 0 || opts.MaxResponseBytes < 0 {
		return nil, errors.New("authn: IntrospectionOptions: negative limits")
	}
	rules, err := newClaimRules(opts.Claims, opts.Issuer, opts.Resource, opts.Leeway, true)
	if err != nil {
		return nil, err
	}
	if err := rules.setAudience(opts.Audience); err != nil {
		return nil, err
	}
	maxTok, err := maxTokenBytes(opts.MaxTokenBytes)
	if err != nil {
		return nil, err
	}
	iv := &IntrospectionVerifier{
		maxToken: maxTok,
		endpoint: opts.Endpoint,
		client:   opts.HTTPClient,
		timeout:  durationOr(opts.Timeout, 5*time.Second),
		maxBytes: opts.MaxResponseBytes,
		rules:    rules,
		log:      opts.Logger,
		now:      opts.Now,
	}
	req, _ := http.NewRequest(http.MethodPost, opts.Endpoint, nil)
	req.SetBasicAuth(url.QueryEscape(opts.ClientID), url.QueryEscape(opts.ClientSecret))
	iv.auth = req.Header.Get("Authorization")
	if iv.maxBytes == 0 {
		iv.maxBytes = 64 << 10
	}
	if iv.client == nil {
		iv.client = &http.Client{
			Timeout:       iv.timeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		}
	}
	if iv.log == nil {
		iv.log = slog.Default()
	}
	if iv.now == nil {
		iv.now = time.Now
	}
	return iv, nil
}

// Verify introspects token. Tokens that break RFC 6750's b64token syntax or
// exceed MaxTokenBytes are rejected without a call.
func (iv *IntrospectionVerifier) Verify(ctx context.Context, token string) (principal.Principal, time.Time, error) {
	if iv == nil || iv.client == nil {
		return principal.Principal{}, time.Time{}, errIntrospectionZero
	}
	if len(token) > iv.maxToken || !httpauth.ValidB64Token(token) {
		return principal.Principal{}, time.Time{}, errMalformed
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, iv.timeout)
	defer cancel()
	form := "token=" + url.QueryEscape(token) + "&token_type_hint=access_token"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, iv.endpoint, strings.NewReader(form))
	if err != nil {
		return principal.Principal{}, time.Time{}, iv.unavailable("request")
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", iv.auth)
	resp, err := iv.client.Do(req)
	if err != nil {
		if parent.Err() != nil { // the caller gave up: not the endpoint's fault
			return principal.Principal{}, time.Time{}, &UnavailableError{RetryAfter: time.Second}
		}
		return principal.Principal{}, time.Time{}, iv.unavailable("unreachable")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return principal.Principal{}, time.Time{}, iv.unavailable("status")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, iv.maxBytes+1))
	if err != nil || int64(len(body)) > iv.maxBytes {
		return principal.Principal{}, time.Time{}, iv.unavailable("body")
	}
	var cv claimValues
	if err := iv.rules.read(body, &cv); err != nil {
		return principal.Principal{}, time.Time{}, iv.unavailable("malformed response")
	}
	return iv.rules.check(&cv, iv.now())
}

func (iv *IntrospectionVerifier) unavailable(what string) error {
	iv.log.Warn("authn: introspection failed", slog.String("problem", what))
	return &UnavailableError{RetryAfter: defaultRetryAfter}
}
