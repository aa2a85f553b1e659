package devissuer

import (
	"bytes"
	"container/list"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// dcrPrefix starts the client ids that registration issues, so that they
// can never be mistaken for a client ID metadata document URL.
const dcrPrefix = "dcr_"

// client is a client the server knows: registered dynamically (RFC 7591)
// or described by its client ID metadata document. Every client is a
// public client (token_endpoint_auth_method "none"): PKCE protects its
// codes.
type client struct {
	id           string
	name         string // as the client gave it; may be empty
	fromDocument bool   // the id is the URL of its metadata document
	redirectURIs []string
	refresh      bool // its grant_types include refresh_token
}

// metadataError is a problem with client metadata: RFC 7591's
// invalid_redirect_uri or invalid_client_metadata, with a fixed
// description.
type metadataError struct {
	code, description string
}

func (e *metadataError) Error() string { return "devissuer: " + e.code + ": " + e.description }

func badMetadata(description string) error {
	return &metadataError{code: "invalid_client_metadata", description: description}
}

// parseClientMetadata reads the client metadata of RFC 7591 §2 that the
// server uses, from a registration request or a metadata document:
// redirect_uris (required), client_name, grant_types, response_types,
// token_endpoint_auth_method. Unknown members are ignored (RFC 7591
// §3.1); a known one of the wrong type, or a value the server does not
// support, is an error. Secrets are refused: every client is public.
func parseClientMetadata(obj map[string]json.RawMessage) (client, error) {
	var c client
	var uris, grants, responses []string
	var auth string
	for _, m := range []struct {
		name string
		v    any
	}{
		{"redirect_uris", &uris}, {"client_name", &c.name}, {"grant_types", &grants},
		{"response_types", &responses}, {"token_endpoint_auth_method", &auth},
	} {
		if err := member(obj, m.name, m.v); err != nil {
			return client{}, badMetadata("a client metadata member has the wrong type")
		}
	}
	if _, ok := obj["client_secret"]; ok || obj["client_secret_expires_at"] != nil {
		return client{}, badMetadata("client secrets are not accepted: this server registers public clients")
	}
	if auth != "" && auth != "none" {
		return client{}, badMetadata("token_endpoint_auth_method must be none: this server registers public clients (PKCE protects their codes)")
	}
	if len(uris) == 0 || len(uris) > maxRedirectURIs {
		return client{}, &metadataError{code: "invalid_redirect_uri", description: "redirect_uris must hold 1 to 10 redirect URIs"}
	}
	for _, u := range uris {
		if checkRedirectURI(u) != nil {
			return client{}, &metadataError{code: "invalid_redirect_uri",
				description: "a redirect URI must be https, http on a loopback host, or a private-use scheme, without fragment or userinfo"}
		}
	}
	c.redirectURIs = uris
	if len(grants) == 0 {
		grants = []string{"authorization_code"} // RFC 7591 §2's default
	}
	for _, g := range grants {
		switch g {
		case "authorization_code":
		case "refresh_token":
			c.refresh = true
		default:
			return client{}, badMetadata("grant_types may hold authorization_code and refresh_token only")
		}
	}
	if !contains(grants, "authorization_code") {
		return client{}, badMetadata("grant_types must include authorization_code")
	}
	for _, r := range responses {
		if r != "code" {
			return client{}, badMetadata("response_types may hold code only")
		}
	}
	if utf8.RuneCountInString(c.name) > maxClientName || strings.IndexFunc(c.name, unicode.IsControl) >= 0 {
		return client{}, badMetadata("client_name must be at most 200 characters without control characters")
	}
	return c, nil
}

// registry holds the dynamically registered clients, in memory: at most
// max. An address (the registering connection's) that holds
// clientsPerAddress clients not yet used in an approved sign-in replaces
// its own oldest such client; when the registry is full, a registration
// replaces the oldest unused client of the address that holds the most
// of them, and is refused when every client has been used. So a flood of
// registrations cannot grow the memory, nor push out the clients people
// signed in with, nor the one a person just registered and is signing in
// with (unless one address is all the flood and the person).
type registry struct {
	mu     sync.Mutex
	max    int
	m      map[string]*list.Element // of *registered
	l      list.List                // oldest first
	unused map[string]int           // per address: its clients not yet used
}

type registered struct {
	c    client
	addr string
	used bool // an approved sign-in named it
}

// clientsPerAddress bounds the unused clients one address keeps.
const clientsPerAddress = 20

// errRegistryFull is returned by add when no client can make room.
var errRegistryFull = errors.New("devissuer: too many registered clients")

func newRegistry(max int) *registry {
	return &registry{max: max, m: make(map[string]*list.Element), unused: make(map[string]int)}
}

// add registers c for a client at addr.
func (g *registry) add(c client, addr string) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	victim := ""
	switch {
	case g.unused[addr] >= clientsPerAddress:
		victim = addr
	case len(g.m) >= g.max:
		for a, n := range g.unused {
			if victim == "" || n > g.unused[victim] {
				victim = a
			}
		}
		if victim == "" {
			return errRegistryFull
		}
	}
	if victim != "" {
		for e := g.l.Front(); e != nil; e = e.Next() {
			if r := e.Value.(*registered); !r.used && r.addr == victim {
				g.removeLocked(e)
				break
			}
		}
	}
	g.m[c.id] = g.l.PushBack(&registered{c: c, addr: addr})
	g.unused[addr]++
	return nil
}

func (g *registry) removeLocked(e *list.Element) {
	r := e.Value.(*registered)
	if !r.used {
		g.dropUnusedLocked(r.addr)
	}
	delete(g.m, r.c.id)
	g.l.Remove(e)
}

func (g *registry) dropUnusedLocked(addr string) {
	if g.unused[addr]--; g.unused[addr] <= 0 {
		delete(g.unused, addr)
	}
}

func (g *registry) get(id string) (client, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	e, ok := g.m[id]
	if !ok {
		return client{}, false
	}
	return e.Value.(*registered).c, true
}

// markUsed keeps a client through later floods: a sign-in approved it.
func (g *registry) markUsed(id string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if e, ok := g.m[id]; ok {
		if r := e.Value.(*registered); !r.used {
			r.used = true
			g.dropUnusedLocked(r.addr)
		}
	}
}

func (g *registry) len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.m)
}

// register serves the RFC 7591 registration endpoint: POST a JSON object
// of client metadata, get 201 and the client's information. No initial
// access token is needed (anyone who can reach a development server may
// register), and nothing is kept beyond the process.
func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	allowCORS(w, r, "POST")
	switch r.Method {
	case http.MethodOptions:
		w.WriteHeader(http.StatusNoContent)
		return
	case http.MethodPost:
	default:
		w.Header().Set("Allow", "POST, OPTIONS")
		writeOAuthError(w, http.StatusMethodNotAllowed, "invalid_request", "registration takes a POST")
		return
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "the request must be application/json")
		return
	}
	var body bytes.Buffer
	if _, err := body.ReadFrom(http.MaxBytesReader(w, r.Body, maxJSONBytes)); err != nil {
		writeOAuthError(w, http.StatusRequestEntityTooLarge, "invalid_client_metadata", "the request is too large")
		return
	}
	obj, err := decodeObject(body.Bytes())
	if err != nil {
		writeOAuthError(w, http.StatusBadRequest, "invalid_client_metadata", "the request must be one JSON object with distinct member names")
		return
	}
	c, err := parseClientMetadata(obj)
	if err != nil {
		me := &metadataError{code: "invalid_client_metadata", description: "the client metadata is invalid"}
		errors.As(err, &me)
		writeOAuthError(w, http.StatusBadRequest, me.code, me.description)
		return
	}
	c.id = dcrPrefix + secret()
	if err := s.clients.add(c, clientAddr(r)); err != nil {
		w.Header().Set("Retry-After", "60")
		writeOAuthError(w, http.StatusServiceUnavailable, "temporarily_unavailable", "too many clients are registered; restart the development server")
		return
	}
	grants := []string{"authorization_code"}
	if c.refresh {
		grants = append(grants, "refresh_token")
	}
	writeJSON(w, http.StatusCreated, struct {
		ClientID        string   `json:"client_id"`
		IssuedAt        int64    `json:"client_id_issued_at"`
		ClientName      string   `json:"client_name,omitempty"`
		RedirectURIs    []string `json:"redirect_uris"`
		GrantTypes      []string `json:"grant_types"`
		ResponseTypes   []string `json:"response_types"`
		TokenAuthMethod string   `json:"token_endpoint_auth_method"`
	}{c.id, s.now().Unix(), c.name, c.redirectURIs, grants, []string{"code"}, "none"})
}
