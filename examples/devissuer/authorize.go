package devissuer

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

// pendingPerAddress bounds the sign-ins in progress of one address: a
// flood of authorization requests is refused once it holds that many.
// When the memory of sign-ins is full, a new sign-in pushes out the
// oldest of the address that holds the most, and only when that address
// holds more than the newcomer would (see memory.PutOwned): a crowd of
// addresses cannot keep a person's new sign-in out.
const pendingPerAddress = 20

// clientAddr is the address a request came from (its connection's IP;
// an IPv6 address by its /64, which one host holds), which the
// per-address bounds count by.
func clientAddr(r *http.Request) string {
	if ap, err := netip.ParseAddrPort(r.RemoteAddr); err == nil {
		a := ap.Addr().Unmap().WithZone("")
		if a.Is6() {
			p, _ := a.Prefix(64)
			return p.String()
		}
		return a.String()
	}
	if r.RemoteAddr == "" {
		return "?"
	}
	return r.RemoteAddr
}

// csrfCookie names the cookie the login form's CSRF token is bound to.
const csrfCookie = "mcpkit_dev_csrf"

// signIn is an authorization request that passed every check, waiting for
// the person at the login page.
type signIn struct {
	client      client
	redirectURI string
	state       string
	challenge   string // the S256 code_challenge
	scopes      []string
	resource    string
	// user is who was signed in in this browser when the request came
	// (a step-up: the client asks again, for more): the page shows them,
	// and only they may approve. "" for a first sign-in.
	user string
}

// authzError is an error the authorization endpoint returns to the
// client's redirect URI (RFC 6749 §4.1.2.1), with a fixed description.
type authzError struct{ code, description string }

// authorize serves the authorization endpoint (GET). The client and its
// redirect URI are checked first: when either is wrong the person gets an
// error page and nothing goes to the redirect URI (RFC 6749 §4.1.2.1).
// Every other problem goes back to the redirect URI as an RFC 6749 error,
// with state and iss. A valid request shows the login page.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		s.errorPage(w, http.StatusMethodNotAllowed, "The authorization endpoint takes a GET request from your browser.")
		return
	}
	if len(r.URL.RawQuery) > maxQueryBytes {
		s.errorPage(w, http.StatusRequestURITooLong, "The authorization request is too long.")
		return
	}
	p, err := parseParams(r.URL.RawQuery, "resource")
	if err != nil {
		s.errorPage(w, http.StatusBadRequest, "The authorization request is malformed: a parameter is given twice, or not valid UTF-8.")
		return
	}
	cl, msg, status := s.lookupClient(r.Context(), p.get("client_id"), clientAddr(r))
	if msg != "" {
		s.errorPage(w, status, msg)
		return
	}
	redirectURI := p.get("redirect_uri")
	if !matchRedirectURI(cl.redirectURIs, redirectURI) {
		s.errorPage(w, http.StatusBadRequest, "The redirect_uri of this request is not one the client registered, so the answer cannot be sent back to it. Check your client's configuration.")
		return
	}
	state := p.get("state")
	if state != "" && (len(state) > maxStateBytes || !isVSCHAR(state)) {
		s.authorizeError(w, r, cl, redirectURI, "", authzError{"invalid_request", "state must be at most 512 printable ASCII characters"})
		return
	}
	req, aerr := s.checkRequest(p, cl)
	if aerr != nil {
		s.authorizeError(w, r, cl, redirectURI, state, *aerr)
		return
	}
	req.redirectURI, req.state = redirectURI, state
	req.user = s.signedInUser(r)
	id := secret()
	switch err := s.pending.PutOwned(id, clientAddr(r), pendingPerAddress, req, s.now().Add(signInTTL)); {
	case errors.Is(err, errOwnerFull):
		w.Header().Set("Retry-After", "60")
		s.errorPage(w, http.StatusTooManyRequests, "Too many sign-ins are in progress from your address. Finish or close one, or wait a few minutes, then start again from your client.")
		return
	case err != nil:
		w.Header().Set("Retry-After", "60")
		s.errorPage(w, http.StatusServiceUnavailable, "Too many sign-ins are in progress. Try again in a few minutes.")
		return
	}
	s.loginPage(w, r, id, req, "", http.StatusOK)
}

// lookupClient finds the client of a client_id: a registered one, or the
// one its metadata document describes. It returns an error page's message
// and status when there is none.
func (s *Server) lookupClient(ctx context.Context, id, addr string) (client, string, int) {
	switch {
	case id == "":
		return client{}, "The authorization request names no client (client_id is missing).", http.StatusBadRequest
	case isClientIDURL(id):
		c, err := s.docs.get(ctx, id, addr)
		switch {
		case errors.Is(err, errClientID):
			return client{}, "The client_id is a URL this server does not fetch: a client ID metadata document must be at an https URL with a path (http only on a loopback host), without query, fragment or user name, and not on a private network address.", http.StatusBadRequest
		case errors.Is(err, errBusy):
			return client{}, "Too many client ID metadata documents are being fetched right now. Try again in a moment.", http.StatusServiceUnavailable
		case err != nil:
			s.log.Warn("devissuer: a client ID metadata document could not be used (unreachable, refused address, slow, redirected, not 200, over 5 KiB, or not a valid description naming itself)",
				"client_id_host", hostOf(id))
			return client{}, "The client's metadata document could not be fetched, or does not describe the client correctly, so this sign-in cannot go on.", http.StatusBadRequest
		}
		return c, "", 0
	case strings.HasPrefix(id, dcrPrefix):
		if c, ok := s.clients.get(id); ok {
			return c, "", 0
		}
	}
	return client{}, "This server does not know the client of this request. Registered clients are forgotten when the development server restarts: let your client register again.", http.StatusBadRequest
}

// hostOf returns the host of a URL, for logs ("" when it has none).
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Host
}

// checkRequest checks the parameters after client and redirect URI:
// response type, PKCE (S256 required), scope, resource.
func (s *Server) checkRequest(p params, cl client) (signIn, *authzError) {
	switch p.get("response_type") {
	case "code":
	case "":
		return signIn{}, &authzError{"invalid_request", "response_type is missing"}
	default:
		return signIn{}, &authzError{"unsupported_response_type", "only response_type code is supported"}
	}
	if m := p.get("response_mode"); m != "" && m != "query" {
		return signIn{}, &authzError{"invalid_request", "only response_mode query is supported"}
	}
	if p.get("request") != "" || p.get("request_uri") != "" {
		return signIn{}, &authzError{"invalid_request", "request objects are not supported"}
	}
	challenge, method := p.get("code_challenge"), p.get("code_challenge_method")
	switch {
	case challenge == "":
		return signIn{}, &authzError{"invalid_request", "code_challenge is required (PKCE)"}
	case method != "S256": // absent means plain (RFC 7636 §4.3), which is refused too
		return signIn{}, &authzError{"invalid_request", "code_challenge_method must be S256"}
	case len(challenge) != 43 || !isPKCEString(challenge):
		return signIn{}, &authzError{"invalid_request", "code_challenge must be the 43-character base64url SHA-256 of the code_verifier"}
	}
	scopes := s.opts.DefaultScopes
	if raw := p.get("scope"); raw != "" {
		got, ok := parseScope(raw)
		if !ok {
			return signIn{}, &authzError{"invalid_scope", "scope must be scope-tokens separated by single spaces"}
		}
		for _, sc := range got {
			if !contains(s.supported, sc) {
				return signIn{}, &authzError{"invalid_scope", "a requested scope is not offered by this server (see scopes_supported)"}
			}
		}
		scopes = got
	}
	if aerr := s.checkResource(p["resource"]); aerr != nil {
		return signIn{}, aerr
	}
	return signIn{client: cl, challenge: challenge, scopes: append([]string(nil), scopes...), resource: s.is.audience}, nil
}

// checkResource accepts no resource parameter or only this server's
// audience (RFC 8707): the token's audience is bound to it, and a token
// for another server is never issued.
func (s *Server) checkResource(values []string) *authzError {
	for _, v := range values {
		if v != s.is.audience {
			return &authzError{"invalid_target", "this server issues tokens for its own resource only"}
		}
	}
	return nil
}

// authorizeError answers an authorization request that breaks a rule
// after its client and redirect URI were verified. The error goes back
// to the redirect URI only when the user signed in in this browser has
// approved this client before; otherwise it is shown on a page (RFC 9700
// §4.11.2: an authorization server that redirected every client's errors
// would be an open redirector for any client that anyone can register
// with any redirect URI, with no consent ever given).
func (s *Server) authorizeError(w http.ResponseWriter, r *http.Request, cl client, redirectURI, state string, e authzError) {
	if user := s.signedInUser(r); user != "" {
		if _, ok := s.approved.Get(approvalKey(user, cl.id)); ok {
			s.redirectError(w, r, redirectURI, state, e)
			return
		}
	}
	s.errorPage(w, http.StatusBadRequest, "The client's authorization request is invalid ("+e.code+": "+e.description+"). It is shown here rather than sent back to the client because you have not approved this client in this browser. Check the client's configuration.")
}

// approvalKey is the key of user's approval of the client clientID in
// Server.approved.
func approvalKey(user, clientID string) string { return digest(user + "\x00" + clientID) }

// redirectError sends an authorization error to the client (303).
func (s *Server) redirectError(w http.ResponseWriter, r *http.Request, redirectURI, state string, e authzError) {
	v := url.Values{"error": {e.code}, "error_description": {e.description}, "iss": {s.is.issuer}}
	if state != "" {
		v.Set("state", state)
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, redirectTo(redirectURI, v), http.StatusSeeOther)
}

// csrfToken is the login form's token: bound to the browser's cookie and
// to the sign-in, so a form cannot be posted from another page, another
// browser, or for another sign-in.
func (s *Server) csrfToken(cookie, id string) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte("consent\x00"))
	m.Write([]byte(cookie))
	m.Write([]byte{0})
	m.Write([]byte(id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// browserCookie returns the CSRF cookie of the request, setting a new one
// when it has none (or a malformed one).
func (s *Server) browserCookie(w http.ResponseWriter, r *http.Request) string {
	if c, err := r.Cookie(csrfCookie); err == nil && len(c.Value) == 43 && isPKCEString(c.Value) {
		return c.Value
	}
	v := secret()
	http.SetCookie(w, &http.Cookie{
		Name: csrfCookie, Value: v, Path: s.cookiePath(),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: strings.HasPrefix(s.origin, "https:"),
	})
	return v
}

// userCookie names the cookie that says who signed in last in this
// browser: the user, and an HMAC binding it to the browser's CSRF cookie.
const userCookie = "mcpkit_dev_user"

// signedInMAC is the MAC of user for the browser whose CSRF cookie is
// browser.
func (s *Server) signedInMAC(browser, user string) string {
	m := hmac.New(sha256.New, s.csrfKey)
	m.Write([]byte("signed-in\x00"))
	m.Write([]byte(browser))
	m.Write([]byte{0})
	m.Write([]byte(user))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// signedInUser returns who signed in last in the browser of r ("" for
// nobody, or a cookie this server did not set for this browser).
func (s *Server) signedInUser(r *http.Request) string {
	b, err1 := r.Cookie(csrfCookie)
	u, err2 := r.Cookie(userCookie)
	if err1 != nil || err2 != nil {
		return ""
	}
	enc, mac, ok := strings.Cut(u.Value, ".")
	if !ok {
		return ""
	}
	user, err := base64.RawURLEncoding.DecodeString(enc)
	if err != nil || checkSubject(string(user)) != nil || !hmac.Equal([]byte(mac), []byte(s.signedInMAC(b.Value, string(user)))) {
		return ""
	}
	return string(user)
}

// setSignedIn remembers, in the browser of r, that user signed in.
func (s *Server) setSignedIn(w http.ResponseWriter, r *http.Request, user string) {
	b, err := r.Cookie(csrfCookie)
	if err != nil {
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: userCookie, Value: base64.RawURLEncoding.EncodeToString([]byte(user)) + "." + s.signedInMAC(b.Value, user),
		Path: s.cookiePath(), HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: strings.HasPrefix(s.origin, "https:"),
		MaxAge: int(s.opts.RefreshTokenTTL / time.Second),
	})
}

// clearSignedIn forgets who signed in in this browser.
func (s *Server) clearSignedIn(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: userCookie, Value: "", Path: s.cookiePath(), MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: strings.HasPrefix(s.origin, "https:")})
}

// cookiePath is the path of the server's cookies: its endpoints'.
func (s *Server) cookiePath() string { return strings.TrimSuffix(s.consentURL, "/consent") + "/" }

// consent serves the login form (POST): CSRF-checked, then approve (a code
// to the redirect URI) or deny (access_denied). A sign-in is answered at
// most once.
func (s *Server) consent(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		s.errorPage(w, http.StatusMethodNotAllowed, "The sign-in form is sent with POST.")
		return
	}
	if err := s.crossOff.Check(r); err != nil {
		s.errorPage(w, http.StatusForbidden, "This form was sent from another site, and is refused. Start again from your client.")
		return
	}
	p, err := readForm(w, r)
	if err != nil {
		s.errorPage(w, http.StatusBadRequest, "The sign-in form is malformed.")
		return
	}
	id := p.get("request")
	c, cerr := r.Cookie(csrfCookie)
	if cerr != nil || id == "" || !hmac.Equal([]byte(p.get("csrf")), []byte(s.csrfToken(c.Value, id))) {
		s.errorPage(w, http.StatusForbidden, "The sign-in form was not sent from the page this server showed (its CSRF token is missing or wrong). Nothing was granted: start again from your client.")
		return
	}
	req, ok := s.pending.Get(id)
	if !ok {
		s.errorPage(w, http.StatusBadRequest, "This sign-in has expired or was already answered. Start again from your client.")
		return
	}
	switch p.get("decision") {
	case "switch":
		// "Sign in as someone else": the page forgets who was signed in
		// and offers every user again, in this browser only (the CSRF
		// token is the browser's).
		s.pending.Update(id, func(v *signIn) { v.user = "" })
		req.user = ""
		s.clearSignedIn(w)
		s.loginPage(w, r, id, req, "", http.StatusOK)
		return
	case "deny":
		if _, ok := s.pending.Take(id); !ok {
			s.errorPage(w, http.StatusBadRequest, "This sign-in has expired or was already answered. Start again from your client.")
			return
		}
		s.log.Info("devissuer: sign-in denied", "client_id", req.client.id)
		s.redirectError(w, r, req.redirectURI, req.state, authzError{"access_denied", "the user denied the request"})
		return
	case "approve":
	default:
		s.errorPage(w, http.StatusBadRequest, "The sign-in form is malformed.")
		return
	}
	subject := p.get("user")
	if subject == "" {
		subject = strings.TrimSpace(p.get("other"))
	}
	if subject == "" || checkSubject(subject) != nil {
		s.loginPage(w, r, id, req, "Choose a user, or type a name of 1 to 256 characters without control characters.", http.StatusBadRequest)
		return
	}
	if req.user != "" && subject != req.user {
		// A step-up of the signed-in user's: nobody approves it in their
		// place. The sign-in stays for them; nothing is issued.
		s.log.Warn("devissuer: a step-up sign-in was approved as another user than the signed-in one; refused", "client_id", req.client.id)
		s.errorPage(w, http.StatusForbidden, "This sign-in continues the signed-in user's, and only they can approve it. To sign in as someone else, choose \"Sign in as someone else\" on the sign-in page.")
		return
	}
	if _, ok := s.pending.Take(id); !ok { // a second submission of the same form loses
		s.errorPage(w, http.StatusBadRequest, "This sign-in has expired or was already answered. Start again from your client.")
		return
	}
	code := secret()
	s.codes.Put(digest(code), &codeGrant{
		clientID: req.client.id, redirectURI: req.redirectURI, challenge: req.challenge,
		subject: subject, scopes: req.scopes, resource: req.resource, refresh: req.client.refresh, family: secret(),
	}, s.now().Add(s.opts.CodeTTL))
	if !req.client.fromDocument {
		s.clients.markUsed(req.client.id)
	}
	s.setSignedIn(w, r, subject)
	s.approved.Put(approvalKey(subject, req.client.id), struct{}{}, s.now().Add(s.opts.RefreshTokenTTL))
	s.log.Info("devissuer: sign-in approved", "user", subject, "client_id", req.client.id, "scope", strings.Join(req.scopes, " "))
	v := url.Values{"code": {code}, "iss": {s.is.issuer}}
	if req.state != "" {
		v.Set("state", req.state)
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, redirectTo(req.redirectURI, v), http.StatusSeeOther)
}
