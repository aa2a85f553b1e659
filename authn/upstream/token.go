package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxTokenResponse bounds what is read of a token endpoint's answer.
const maxTokenResponse = 64 << 10

// Errors a callback may see. Their text is the kit's own; the details of
// what the authorization server or the upstream said go to the operator
// log only.
var (
	// ErrUnavailable: the authorization server could not be reached, or
	// answered with something other than a token or an OAuth error.
	ErrUnavailable = errors.New("upstream: the authorization server is unavailable")
	// ErrRefused: the authorization server refused to issue a token for
	// the caller (an unknown audience, a subject token it does not
	// accept), or the upstream refused the token it issued.
	ErrRefused = errors.New("upstream: the authorization server refused the request")
	// ErrNoSubjectToken: a token exchange was asked for a request whose
	// credential was not captured ([CaptureSubjectToken] is missing in
	// front of the endpoint) or that has none.
	ErrNoSubjectToken = errors.New("upstream: no subject token in the context")
	// ErrNoSubject: the caller has no subject, so there is nobody to hold
	// a grant for.
	ErrNoSubject = errors.New("upstream: the caller has no subject")
)

// tokenResponse is a token endpoint's success answer (RFC 6749 §5.1,
// RFC 8693 §2.2.1).
type tokenResponse struct {
	AccessToken     string `json:"access_token"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in"`
	RefreshToken    string `json:"refresh_token"`
	Scope           string `json:"scope"`
	IssuedTokenType string `json:"issued_token_type"`
}

// oauthError is a token endpoint's error answer (RFC 6749 §5.2).
type oauthError struct {
	Code        string `json:"error"`
	Description string `json:"error_description"`
	status      int
}

func (e *oauthError) Error() string {
	return "upstream: token endpoint answered " + e.Code
}

// tokenEndpoint is a client of one OAuth token endpoint.
type tokenEndpoint struct {
	url          string
	clientID     string
	clientSecret string
	hc           *http.Client
	log          *slog.Logger
}

// post sends form to the token endpoint with the client's credentials
// (client_secret_basic, or client_id in the body for a public client)
// and returns its token, an *oauthError, or ErrUnavailable.
func (t *tokenEndpoint) post(ctx context.Context, form url.Values) (*tokenResponse, error) {
	if t.clientSecret == "" {
		form.Set("client_id", t.clientID)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if t.clientSecret != "" {
		req.SetBasicAuth(url.QueryEscape(t.clientID), url.QueryEscape(t.clientSecret))
	}
	resp, err := t.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		t.log.Warn("upstream: token endpoint unreachable", "endpoint", t.url, "err", err)
		return nil, ErrUnavailable
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTokenResponse+1))
	if err != nil || len(body) > maxTokenResponse {
		t.log.Warn("upstream: token endpoint answer unreadable or too large", "endpoint", t.url, "status", resp.StatusCode)
		return nil, ErrUnavailable
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		t.log.Warn("upstream: token endpoint answered without JSON", "endpoint", t.url, "status", resp.StatusCode)
		return nil, ErrUnavailable
	}
	if resp.StatusCode != http.StatusOK {
		var oe oauthError
		if json.Unmarshal(body, &oe) != nil || oe.Code == "" || resp.StatusCode >= 500 {
			t.log.Warn("upstream: token endpoint failed", "endpoint", t.url, "status", resp.StatusCode)
			return nil, ErrUnavailable
		}
		oe.status = resp.StatusCode
		t.log.Warn("upstream: token endpoint refused", "endpoint", t.url, "status", resp.StatusCode,
			"error", oe.Code, "description", oe.Description)
		return nil, &oe
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil || tr.AccessToken == "" || !strings.EqualFold(tr.TokenType, "bearer") || tr.ExpiresIn < 0 {
		t.log.Warn("upstream: token endpoint answered an unusable token", "endpoint", t.url)
		return nil, ErrUnavailable
	}
	return &tr, nil
}

// expiry is when a token issued at now with expires_in seconds stops
// being used: leeway before it expires, and defaultLife when the server
// named no lifetime.
func expiry(now time.Time, expiresIn int64, leeway, defaultLife time.Duration) time.Time {
	life := defaultLife
	if expiresIn > 0 {
		life = time.Duration(expiresIn) * time.Second
	}
	if life > leeway {
		life -= leeway
	} else {
		life /= 2
	}
	return now.Add(life)
}
