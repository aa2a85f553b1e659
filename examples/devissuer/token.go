package devissuer

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
)

// codeGrant is what an authorization code stands for. A code is kept,
// under its digest, until it expires, and marked used at its first
// redemption, so that a replay is recognised (and revokes the refresh
// tokens the first redemption got).
type codeGrant struct {
	clientID, redirectURI, challenge string
	subject, resource                string
	scopes                           []string
	refresh                          bool   // the client may get a refresh token
	family                           string // of the refresh tokens issued from it
	used                             bool
}

// refreshGrant is what a refresh token stands for. Each use rotates it: a
// new refresh token replaces it, and the old one stays, marked used, until
// it expires, so that its reuse is recognised: then every refresh token of
// its family (the sign-in) is revoked (OAuth 2.1 §4.3.1, RFC 9700 §4.14).
type refreshGrant struct {
	clientID, subject, resource string
	scopes                      []string
	family                      string
	used                        bool
}

// token serves the token endpoint: the authorization_code grant (PKCE
// checked) and the refresh_token grant (rotated). Clients are public: they
// name themselves with client_id and send no Authorization header. Errors
// are RFC 6749 §5.2's, and nothing is issued with one.
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	allowCORS(w, r, "POST")
	switch r.Method {
	case http.MethodOptions:
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "POST, OPTIONS")
		writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request", "the token endpoint takes a POST")
		return
	}
	if r.URL.RawQuery != "" {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "token request parameters go in the body, not the query")
		return
	}
	if s.opts.Exchange != nil && r.Header.Get("Authorization") != "" {
		s.tokenExchange(w, r) // the one confidential client (exchange.go)
		return
	}
	if r.Header.Get("Authorization") != "" {
		writeOAuthError(w, http.StatusUnauthorized, "invalid_client", "clients of this server are public: send client_id in the body and no Authorization header")
		return
	}
	p, err := readForm(w, r, "resource")
	if err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "the body must be application/x-www-form-urlencoded, each parameter at most once")
		return
	}
	if p.get("client_id") == "" {
		writeOAuthError(w, http.StatusUnauthorized, "invalid_client", "client_id is required")
		return
	}
	if e := s.checkResource(p["resource"]); e != nil {
		writeOAuthError(w, http.StatusBadRequest, e.code, e.description)
		return
	}
	switch p.get("grant_type") {
	case "authorization_code":
		s.redeemCode(w, p)
	case "refresh_token":
		s.refresh(w, p)
	case "":
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "grant_type is required")
	default:
		writeOAuthError(w, http.StatusBadRequest, "unsupported_grant_type", "the grant types are authorization_code and refresh_token")
	}
}

// redeemCode exchanges a code. Whatever the outcome, the code is used up:
// a wrong code_verifier does not leave it for another guess.
func (s *Server) redeemCode(w http.ResponseWriter, p params) {
	code, verifier := p.get("code"), p.get("code_verifier")
	if code == "" {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "code is required")
		return
	}
	if verifier == "" {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "code_verifier is required (PKCE)")
		return
	}
	var g codeGrant
	var replay bool
	found := s.codes.Update(digest(code), func(v **codeGrant) {
		g, replay = **v, (*v).used
		(*v).used = true
	})
	if !found {
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the code is unknown, expired or already used")
		return
	}
	if replay {
		// RFC 6749 §4.1.2: revoke what the code's first redemption got.
		s.revokeFamily(g.family)
		s.log.Warn("devissuer: an authorization code was used twice; the refresh tokens issued from it are revoked", "client_id", g.clientID)
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the code is unknown, expired or already used")
		return
	}
	switch {
	case p.get("client_id") != g.clientID:
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the code was issued to another client")
	case p.get("redirect_uri") != g.redirectURI:
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri must be the one of the authorization request")
	case !isPKCEString(verifier) || !s256Matches(verifier, g.challenge):
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the code_verifier does not match the code_challenge")
	default:
		s.issue(w, refreshGrant{clientID: g.clientID, subject: g.subject, resource: g.resource, scopes: g.scopes, family: g.family}, g.scopes, g.refresh)
	}
}

// s256Matches reports whether BASE64URL(SHA256(verifier)) is challenge
// (RFC 7636 §4.6), in constant time.
func s256Matches(verifier, challenge string) bool {
	h := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(h[:])), []byte(challenge)) == 1
}

// refresh serves the refresh_token grant, rotating the refresh token. A
// scope parameter may narrow the new access token's scopes (never widen
// them: RFC 6749 §6); the new refresh token keeps the whole grant.
func (s *Server) refresh(w http.ResponseWriter, p params) {
	rt := p.get("refresh_token")
	if rt == "" {
		writeOAuthError(w, http.StatusBadRequest, "invalid_request", "refresh_token is required")
		return
	}
	// The scope is checked before the token is spent: a refresh that
	// fails for its scope leaves the refresh token as it was.
	var want []string
	if raw := p.get("scope"); raw != "" {
		got, ok := parseScope(raw)
		if !ok {
			writeOAuthError(w, http.StatusBadRequest, "invalid_scope", "scope must be scope-tokens separated by single spaces")
			return
		}
		want = got
	}
	var g refreshGrant
	var reused, widens bool
	found := s.grants.Update(digest(rt), func(v **refreshGrant) {
		g, reused = **v, (*v).used
		widens = !subset(want, (*v).scopes)
		if (*v).clientID == p.get("client_id") && !widens {
			(*v).used = true
		}
	})
	switch {
	case !found:
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is unknown, expired, revoked or already used")
		return
	case reused:
		s.revokeFamily(g.family)
		s.log.Warn("devissuer: a refresh token was used again after rotation; the sign-in's refresh tokens are revoked", "client_id", g.clientID)
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is unknown, expired, revoked or already used")
		return
	case g.clientID != p.get("client_id"):
		writeOAuthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token was issued to another client")
		return
	case widens:
		writeOAuthError(w, http.StatusBadRequest, "invalid_scope", "a refresh cannot add scopes: sign in again for more")
		return
	}
	scopes := g.scopes
	if want != nil {
		scopes = want
	}
	s.issue(w, g, scopes, true)
}

// subset reports whether every scope of want is in have.
func subset(want, have []string) bool {
	for _, sc := range want {
		if !contains(have, sc) {
			return false
		}
	}
	return true
}

// revokeFamily revokes every refresh token of a sign-in.
func (s *Server) revokeFamily(family string) {
	s.grants.DeleteFunc(func(g *refreshGrant) bool { return g.family == family })
}

// issue writes a token response: an access token for the grant's user,
// client and resource with scopes, and, when refresh, a new refresh token
// for the whole grant.
func (s *Server) issue(w http.ResponseWriter, g refreshGrant, scopes []string, refresh bool) {
	at, err := s.is.mint(g.subject, g.clientID, scopes, s.opts.AccessTokenTTL)
	if err != nil {
		s.log.Error("devissuer: signing an access token failed", "error", err)
		writeOAuthError(w, http.StatusInternalServerError, "server_error", "the token could not be issued")
		return
	}
	resp := struct {
		AccessToken  string `json:"access_token"`
		TokenType    string `json:"token_type"`
		ExpiresIn    int64  `json:"expires_in"`
		Scope        string `json:"scope"`
		RefreshToken string `json:"refresh_token,omitempty"`
	}{at, "Bearer", int64(s.opts.AccessTokenTTL.Seconds()), strings.Join(scopes, " "), ""}
	if refresh {
		resp.RefreshToken = secret()
		next := g
		next.used = false
		s.grants.Put(digest(resp.RefreshToken), &next, s.now().Add(s.opts.RefreshTokenTTL))
	}
	s.log.Info("devissuer: token issued", "user", g.subject, "client_id", g.clientID, "scope", resp.Scope, "refresh_token", refresh)
	writeJSON(w, http.StatusOK, resp)
}
