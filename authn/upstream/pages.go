package upstream

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"html"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// ConnectHandler serves the connect page, the URL of an elicitation
// (GET ?link=…): it checks the link (sealed by this server for one user,
// unexpired) and, with Identify, that the browser is that user; then it
// starts the authorization code flow with PKCE at the upstream: a fresh
// state (single use, bound to the user and the elicitation, expiring
// after LinkTTL), kept in the Store, and a cookie binding the flow to
// this browser.
func (g *Grants) ConnectHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pageHeaders(w)
		// GET only: a HEAD (a link preview's probe) starts nothing.
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			g.page(w, http.StatusMethodNotAllowed, "Method not allowed.")
			return
		}
		link := r.URL.Query().Get("link")
		payload, _, err := g.links.Open(bindingOf("link", g.o.Name, ""), link)
		if err != nil {
			g.page(w, http.StatusBadRequest, "This link is not valid or has expired. Ask your client to try again for a new one.")
			return
		}
		id, user, ok := strings.Cut(string(payload), "\n")
		if !ok || id == "" || user == "" {
			g.page(w, http.StatusBadRequest, "This link is not valid or has expired. Ask your client to try again for a new one.")
			return
		}
		if g.o.Identify != nil {
			if who, ok := g.o.Identify(r); !ok || !equalStrings(who, user) {
				g.log.Warn("upstream: a connect link was opened by someone other than the user it was made for", "upstream", g.o.Name)
				g.page(w, http.StatusForbidden, "This link was made for another user. Sign in as the user who asked, or ask your own client for a link.")
				return
			}
		}
		// One authorization in progress per elicitation: it is kept under
		// the elicitation id, and opening the link again replaces it (the
		// earlier state then opens nothing), so a link cannot fill the
		// store. The state is the id and a fresh secret; the row is bound
		// to the whole state.
		state := id + "." + randomString(32)
		verifier, browser := randomString(32), randomString(32)
		now := g.now()
		expires := now.Add(g.o.LinkTTL)
		ps, _ := json.Marshal(pendingState{User: user, Elicitation: id, State: sha256Hex(state), Verifier: verifier,
			Browser: sha256Hex(browser), Expires: expires.Unix()})
		row, err := sealRow(g.pending, bindingOf("pending", g.o.Name, id), ps, now)
		if err == nil {
			err = g.o.Store.SavePending(r.Context(), id, row, expires)
		}
		if err != nil {
			g.log.Error("upstream: cannot keep an authorization in progress", "upstream", g.o.Name, "err", err)
			g.page(w, http.StatusServiceUnavailable, "The server cannot start the authorization now. Try again later.")
			return
		}
		http.SetCookie(w, &http.Cookie{Name: g.cookie, Value: browser, Path: g.cbPath, MaxAge: int(g.o.LinkTTL / time.Second),
			HttpOnly: true, Secure: g.secure, SameSite: http.SameSiteLaxMode})
		challenge := sha256.Sum256([]byte(verifier))
		u, _ := url.Parse(g.o.AuthorizeURL)
		q := u.Query()
		q.Set("response_type", "code")
		q.Set("client_id", g.o.ClientID)
		q.Set("redirect_uri", g.o.CallbackURL)
		q.Set("state", state)
		q.Set("code_challenge", base64.RawURLEncoding.EncodeToString(challenge[:]))
		q.Set("code_challenge_method", "S256")
		if len(g.o.Scopes) > 0 {
			q.Set("scope", strings.Join(g.o.Scopes, " "))
		}
		if g.o.Resource != "" {
			q.Set("resource", g.o.Resource)
		}
		u.RawQuery = q.Encode()
		http.Redirect(w, r, u.String(), http.StatusFound)
	})
}

// CallbackHandler serves the redirect_uri (GET ?code=…&state=…): it takes
// the state (once), checks the browser cookie and, with Identify, the
// user, redeems the code with the PKCE verifier, and keeps the grant
// sealed in the Store; then OnComplete.
func (g *Grants) CallbackHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		pageHeaders(w)
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			g.page(w, http.StatusMethodNotAllowed, "Method not allowed.")
			return
		}
		q := r.URL.Query()
		state := q.Get("state")
		id, _, _ := strings.Cut(state, ".")
		if id == "" || len(state) > 128 {
			g.page(w, http.StatusBadRequest, "This authorization is not valid or has expired. Ask your client to try again.")
			return
		}
		row, err := g.o.Store.TakePending(r.Context(), id)
		if err != nil {
			if !errors.Is(err, ErrNoPending) {
				g.log.Error("upstream: grant store failed", "upstream", g.o.Name, "err", err)
			}
			g.page(w, http.StatusBadRequest, "This authorization is not valid, was already used or has expired. Ask your client to try again.")
			return
		}
		payload, err := openRow(g.pending, bindingOf("pending", g.o.Name, id), row)
		var ps pendingState
		if err != nil || json.Unmarshal(payload, &ps) != nil || ps.Elicitation != id {
			g.page(w, http.StatusBadRequest, "This authorization is not valid or has expired. Ask your client to try again.")
			return
		}
		if !equalStrings(sha256Hex(state), ps.State) {
			// An earlier flow of the same elicitation (the link was opened
			// again since): refused, and the current one is left in place.
			if exp := time.Unix(ps.Expires, 0); g.now().Before(exp) {
				_ = g.o.Store.SavePending(r.Context(), id, row, exp)
			}
			g.page(w, http.StatusBadRequest, "This authorization was replaced by a newer one for the same link. Use the newest page.")
			return
		}
		c, err := r.Cookie(g.cookie)
		if err != nil || !equalStrings(sha256Hex(c.Value), ps.Browser) {
			g.log.Warn("upstream: an authorization came back to another browser than the one that started it", "upstream", g.o.Name)
			g.page(w, http.StatusForbidden, "This authorization was started in another browser. Ask your client for a new link and open it here.")
			return
		}
		if g.o.Identify != nil {
			if who, ok := g.o.Identify(r); !ok || !equalStrings(who, ps.User) {
				g.log.Warn("upstream: an authorization came back for someone other than the user it was made for", "upstream", g.o.Name)
				g.page(w, http.StatusForbidden, "This authorization was made for another user.")
				return
			}
		}
		http.SetCookie(w, &http.Cookie{Name: g.cookie, Value: "", Path: g.cbPath, MaxAge: -1, HttpOnly: true, Secure: g.secure, SameSite: http.SameSiteLaxMode})
		if e := q.Get("error"); e != "" || q.Get("code") == "" {
			g.log.Info("upstream: the user did not authorize", "upstream", g.o.Name, "error", truncate(e, 64))
			g.page(w, http.StatusOK, "Access to "+g.o.Name+" was not granted. You can close this page.")
			return
		}
		form := url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")}, "redirect_uri": {g.o.CallbackURL}, "code_verifier": {ps.Verifier}}
		if g.o.Resource != "" {
			form.Set("resource", g.o.Resource)
		}
		now := g.now()
		tr, err := g.te.post(r.Context(), form)
		if err != nil {
			g.page(w, http.StatusBadGateway, "The "+g.o.Name+" authorization server did not complete the authorization. Ask your client to try again.")
			return
		}
		if _, err := g.save(r.Context(), ps.User, tr, now); err != nil {
			g.page(w, http.StatusServiceUnavailable, "The server cannot keep the authorization now. Try again later.")
			return
		}
		g.cache.drop(g.storeKey(ps.User), "")
		if g.o.OnComplete != nil {
			g.o.OnComplete(r.Context(), ps.User, ps.Elicitation)
		}
		g.page(w, http.StatusOK, "Connected to "+g.o.Name+". You can close this page and return to your client.")
	})
}

func pageHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer") // the link and the code are in the URL
	h.Set("X-Frame-Options", "DENY")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
}

func (g *Grants) page(w http.ResponseWriter, status int, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte("<!doctype html><meta charset=utf-8><title>" + html.EscapeString(g.o.Name) + "</title><p>" + html.EscapeString(text) + "</p>\n"))
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}
