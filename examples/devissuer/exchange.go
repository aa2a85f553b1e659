package devissuer

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jws"
)

// RFC 8693 identifiers.
const (
	grantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
	tokenTypeAccessToken   = "urn:ietf:params:oauth:token-type:access_token"
	maxExchangeTokenLength = 16 << 10
)

// ExchangeOptions turns on OAuth 2.0 Token Exchange (RFC 8693) at the
// token endpoint, for one confidential client: an MCP server that trades
// a caller's access token (one this issuer signed for its own audience)
// for a token of an upstream API it knows, for the same user. The client
// authenticates with HTTP Basic (client_secret_basic); a request with an
// Authorization header is taken as one of its, and only the
// token-exchange grant is served to it.
type ExchangeOptions struct {
	// ClientID and ClientSecret authenticate the exchanging client.
	// Required.
	ClientID, ClientSecret string
	// Audiences are the upstreams tokens may be issued for, by audience
	// URL, with the scopes each token gets. An exchange for any other
	// audience is refused (invalid_target).
	Audiences map[string][]string
}

func (o *ExchangeOptions) check() error {
	if o.ClientID == "" || len(o.ClientSecret) < 16 || len(o.Audiences) == 0 {
		return errors.New("devissuer: ExchangeOptions needs a ClientID, a ClientSecret of at least 16 bytes and an audience")
	}
	for aud := range o.Audiences {
		if u, err := url.Parse(aud); err != nil || u.Scheme == "" || u.Host == "" {
			return errors.New("devissuer: ExchangeOptions.Audiences must be absolute URLs")
		}
	}
	return nil
}

// tokenExchange serves the token-exchange grant to the exchange client.
func (s *Server) tokenExchange(w http.ResponseWriter, r *http.Request) {
	x := s.opts.Exchange
	if err := x.check(); err != nil {
		writeOAuthError(w, http.StatusInternalServerError, "server_error", "token exchange is not configured")
		return
	}
	id, secret, ok := r.BasicAuth()
	if ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	if !ok || subtle.ConstantTimeCompare([]byte(id), []byte(x.ClientID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(secret), []byte(x.ClientSecret)) != 1 {
		w.Header().Set("WWW-Authenticate", `Basic realm="token"`)
		writeOAuthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return
	}
	p, err := readForm(w, r)
	if err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded, each parameter at most once")
		return
	}
	if p.get("grant_type") != grantTokenExchange {
		writeOAuthError(w, http.StatusBadRequest, "unsupported_grant_type", "this client may use the token-exchange grant only")
		return
	}
	if p.get("subject_token_type") != tokenTypeAccessToken || (p.get("requested_token_type") != "" && p.get("requested_token_type") != tokenTypeAccessToken) ||
		p.get("actor_token") != "" {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "an access token is exchanged for an access token, without an actor")
		return
	}
	audience := p.get("audience")
	if res := p.get("resource"); audience == "" || (res != "" && res != audience) {
		if audience == "" {
			audience = res
		} else {
			writeOAuthError(w, http.StatusBadRequest, "invalid_target", "audience and resource name different upstreams")
			return
		}
	}
	scopes, known := x.Audiences[audience]
	if !known {
		s.log.Warn("devissuer: token exchange for an unknown audience refused")
		writeOAuthError(w, http.StatusBadRequest, "invalid_target", "this server issues no tokens for that audience")
		return
	}
	if req := p.get("scope"); req != "" {
		asked, ok := parseScope(req)
		if !ok {
			writeOAuthError(w, http.StatusBadRequest, "invalid_scope", "the scope parameter is malformed")
			return
		}
		for _, sc := range asked {
			if !slices.Contains(scopes, sc) {
				writeOAuthError(w, http.StatusBadRequest, "invalid_scope", "a scope asked is not one of the upstream's")
				return
			}
		}
		scopes = asked
	}
	c, ok := s.verifyOwn(p.get("subject_token"))
	if !ok {
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the subject token is not a valid access token of this server")
		return
	}
	ttl := min(s.opts.AccessTokenTTL, time.Unix(c.Expires, 0).Sub(s.now()).Truncate(time.Second))
	if ttl <= 0 {
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the subject token has expired")
		return
	}
	at, err := s.is.mintFor(audience, c.Subject, c.ClientID, scopes, ttl)
	if err != nil {
		s.log.Error("devissuer: signing an exchanged token failed", "error", err)
		writeOAuthError(w, http.StatusInternalServerError, "server_error", "the token could not be issued")
		return
	}
	s.log.Info("devissuer: token exchanged", "user", c.Subject, "client_id", c.ClientID, "audience", audience)
	writeJSON(w, http.StatusOK, struct {
		AccessToken     string `json:"access_token"`
		IssuedTokenType string `json:"issued_token_type"`
		TokenType       string `json:"token_type"`
		ExpiresIn       int64  `json:"expires_in"`
		Scope           string `json:"scope"`
	}{at, tokenTypeAccessToken, "Bearer", int64(ttl / time.Second), strings.Join(scopes, " ")})
}

// verifyOwn checks that tok is an access token this issuer signed for its
// own audience, unexpired, and returns its claims.
func (s *Server) verifyOwn(tok string) (claims, bool) {
	var c claims
	if tok == "" || len(tok) > maxExchangeTokenLength {
		return c, false
	}
	payload, err := jws.Verify([]byte(tok), jws.WithKey(jwa.ES256, &s.is.key.PublicKey))
	if err != nil || json.Unmarshal(payload, &c) != nil {
		return c, false
	}
	now := s.now().Unix()
	return c, c.Issuer == s.is.issuer && c.Audience == s.is.audience && c.Subject != "" && c.Expires > now
}
