package testissuer

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"time"
)

// Paths served by the issuer's HTTP server.
const (
	JWKSPath          = "/jwks.json"
	IntrospectionPath = "/introspect"
)

// Options configures an [Issuer]. The zero value is valid.
type Options struct {
	// Issuer is the "iss" of minted tokens. Empty means the server's URL
	// (http://127.0.0.1:port).
	Issuer string
	// Audience is the default "aud" (a string) of minted tokens; empty
	// means none unless Claims.Audience is set.
	Audience string
	// TTL is the default token lifetime. Zero means one hour.
	TTL time.Duration
	// Now returns the current time for minting. Nil means time.Now.
	Now func() time.Time
	// UniqueKeys generates keys for this issuer alone instead of sharing
	// the process-wide default keys (see the package doc).
	UniqueKeys bool
	// IntrospectionClientID and IntrospectionClientSecret are the
	// credentials the introspection endpoint requires (HTTP Basic). Empty
	// means "resource-server" and "secret".
	IntrospectionClientID, IntrospectionClientSecret string
}

// TB is the part of testing.TB the helpers use; *testing.T satisfies it.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Cleanup(func())
}

// Issuer is a test authorization server. Its methods are safe for
// concurrent use.
type Issuer struct {
	opts    Options
	srv     *httptest.Server
	closing chan struct{}
	once    sync.Once

	mu          sync.Mutex
	keys        map[string]*Key
	order       []string // key ids in publication order
	unpublished map[string]bool
	rawJWKs     []json.RawMessage
	jwksH       http.Handler
	introH      http.Handler
	opaque      map[string][]byte

	jwksFetches    atomic.Int64
	introspections atomic.Int64
}

// New starts an issuer with the default keys (see the Kid constants).
func New(opts Options) (*Issuer, error) {
	keys, err := defaultKeys(opts.UniqueKeys)
	if err != nil {
		return nil, err
	}
	if opts.TTL == 0 {
		opts.TTL = time.Hour
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.IntrospectionClientID == "" {
		opts.IntrospectionClientID = "resource-server"
	}
	if opts.IntrospectionClientSecret == "" {
		opts.IntrospectionClientSecret = "secret"
	}
	is := &Issuer{
		opts:        opts,
		closing:     make(chan struct{}),
		keys:        make(map[string]*Key),
		unpublished: make(map[string]bool),
		opaque:      make(map[string][]byte),
	}
	for _, k := range keys {
		is.keys[k.ID] = k
		is.order = append(is.order, k.ID)
	}
	mux := http.NewServeMux()
	mux.HandleFunc(JWKSPath, func(w http.ResponseWriter, r *http.Request) {
		is.jwksFetches.Add(1)
		is.mu.Lock()
		h := is.jwksH
		is.mu.Unlock()
		if h == nil {
			h = is.DefaultJWKSHandler()
		}
		h.ServeHTTP(w, r)
	})
	mux.HandleFunc(IntrospectionPath, func(w http.ResponseWriter, r *http.Request) {
		is.introspections.Add(1)
		is.mu.Lock()
		h := is.introH
		is.mu.Unlock()
		if h == nil {
			h = http.HandlerFunc(is.introspect)
		}
		h.ServeHTTP(w, r)
	})
	is.srv = httptest.NewServer(mux)
	if is.opts.Issuer == "" {
		is.opts.Issuer = is.srv.URL
	}
	return is, nil
}

// Start is New for tests: it fails t on error and closes the issuer in
// t.Cleanup.
func Start(t TB, opts Options) *Issuer {
	t.Helper()
	is, err := New(opts)
	if err != nil {
		t.Fatalf("testissuer: %v", err)
	}
	t.Cleanup(is.Close)
	return is
}

// Close stops the HTTP server; stalled handlers are released first.
func (is *Issuer) Close() {
	is.once.Do(func() {
		close(is.closing)
		is.srv.CloseClientConnections()
		is.srv.Close()
	})
}

// URL returns the base URL of the HTTP server.
func (is *Issuer) URL() string { return is.srv.URL }

// ID returns the issuer identifier put in "iss".
func (is *Issuer) ID() string { return is.opts.Issuer }

// JWKSURL returns the URL of the JWK Set.
func (is *Issuer) JWKSURL() string { return is.srv.URL + JWKSPath }

// IntrospectionURL returns the URL of the RFC 7662 introspection endpoint.
func (is *Issuer) IntrospectionURL() string { return is.srv.URL + IntrospectionPath }

// IntrospectionCredentials returns the client id and secret the
// introspection endpoint requires.
func (is *Issuer) IntrospectionCredentials() (id, secret string) {
	return is.opts.IntrospectionClientID, is.opts.IntrospectionClientSecret
}

// JWKSFetches counts the requests the JWK Set endpoint has received.
func (is *Issuer) JWKSFetches() int64 { return is.jwksFetches.Load() }

// Introspections counts the requests the introspection endpoint has received.
func (is *Issuer) Introspections() int64 { return is.introspections.Load() }

// Key returns the key with id kid, published or not.
func (is *Issuer) Key(kid string) (*Key, bool) {
	is.mu.Lock()
	defer is.mu.Unlock()
	k, ok := is.keys[kid]
	return k, ok
}

// AddKey generates a key of type t with id kid and publishes it. alg is the
// algorithm it signs with; inJWK says whether the JWK names it.
func (is *Issuer) AddKey(kid string, t KeyType, alg string, inJWK bool) error {
	priv, err := GenerateKey(t)
	if err != nil {
		return err
	}
	if alg == "" {
		alg = defaultAlg(t)
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	if _, dup := is.keys[kid]; dup {
		return fmt.Errorf("testissuer: key %q exists", kid)
	}
	is.keys[kid] = &Key{ID: kid, Type: t, Alg: alg, InJWK: inJWK, Private: priv}
	is.order = append(is.order, kid)
	return nil
}

// Unpublish removes keys from the JWK Set; they can still sign (rotation:
// the old key disappears).
func (is *Issuer) Unpublish(kids ...string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	for _, k := range kids {
		is.unpublished[k] = true
	}
}

// Publish puts unpublished keys back into the JWK Set.
func (is *Issuer) Publish(kids ...string) {
	is.mu.Lock()
	defer is.mu.Unlock()
	for _, k := range kids {
		delete(is.unpublished, k)
	}
}

// AddRawJWK appends an arbitrary JSON object to the "keys" of the JWK Set
// (an "oct" key, a use:"enc" key, a broken key...).
func (is *Issuer) AddRawJWK(raw json.RawMessage) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.rawJWKs = append(is.rawJWKs, raw)
}

// JWKS returns the JWK Set document currently published.
func (is *Issuer) JWKS() ([]byte, error) {
	is.mu.Lock()
	defer is.mu.Unlock()
	keys := make([]json.RawMessage, 0, len(is.order)+len(is.rawJWKs))
	for _, id := range is.order {
		if is.unpublished[id] {
			continue
		}
		j, err := is.keys[id].JWK()
		if err != nil {
			return nil, err
		}
		keys = append(keys, j)
	}
	keys = append(keys, is.rawJWKs...)
	return json.Marshal(map[string]any{"keys": keys})
}

// SetJWKSHandler replaces the JWK Set handler; nil restores the default.
// The fetch counter still counts every request.
func (is *Issuer) SetJWKSHandler(h http.Handler) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.jwksH = h
}

// DefaultJWKSHandler serves the current JWK Set.
func (is *Issuer) DefaultJWKSHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := is.JWKS()
		if err != nil {
			http.Error(w, "jwks", http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/jwk-set+json")
		_, _ = w.Write(body)
	})
}

// Status answers every request with the status code and an empty body.
func Status(code int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(code) })
}

// Body answers every request with 200 and body (garbage, an empty set...).
func Body(body []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}

// Huge answers with 200 and a JSON-looking body of n bytes, streamed
// without Content-Length; withLength announces it instead.
func Huge(n int64, withLength bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if withLength {
			w.Header().Set("Content-Length", fmt.Sprint(n))
		}
		prefix := []byte(`{"keys":[`)
		if n < int64(len(prefix)) {
			prefix = prefix[:n]
		}
		if _, err := w.Write(prefix); err != nil {
			return
		}
		chunk := make([]byte, 32<<10)
		for i := range chunk {
			chunk[i] = ' '
		}
		for sent := int64(len(prefix)); sent < n; {
			m := min(int64(len(chunk)), n-sent)
			if _, err := w.Write(chunk[:m]); err != nil {
				return
			}
			sent += m
		}
	})
}

// Stall holds each request until release is closed, the client gives up or
// the issuer closes, then serves next (nil: the current JWK Set).
func (is *Issuer) Stall(release <-chan struct{}, next http.Handler) http.Handler {
	if next == nil {
		next = is.DefaultJWKSHandler()
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
			next.ServeHTTP(w, r)
		case <-r.Context().Done():
		case <-is.closing:
		}
	})
}

// Drip sends the current JWK Set one byte every interval (a slow-drip body),
// until done, the client gives up or the issuer closes.
func (is *Issuer) Drip(every time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := is.JWKS()
		w.Header().Set("Content-Type", "application/json")
		rc := http.NewResponseController(w)
		t := time.NewTicker(every)
		defer t.Stop()
		for _, b := range body {
			if _, err := w.Write([]byte{b}); err != nil {
				return
			}
			_ = rc.Flush()
			select {
			case <-t.C:
			case <-r.Context().Done():
				return
			case <-is.closing:
				return
			}
		}
	})
}

// SetIntrospectionHandler replaces the introspection handler; nil restores
// the default.
func (is *Issuer) SetIntrospectionHandler(h http.Handler) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.introH = h
}

// Opaque registers a random opaque token whose introspection response is
// built from c (active as given, token_type "Bearer", or "DPoP" with the
// cnf of a DPoP-bound token) and returns it.
func (is *Issuer) Opaque(c Claims, active bool) (string, error) {
	m := is.claimsMap(c)
	m["active"] = active
	m["token_type"] = "Bearer"
	if c.DPoPThumbprint != "" {
		m["token_type"] = "DPoP" // RFC 9449 §6.2
	}
	for k, v := range c.Extra {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	body, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	return is.OpaqueRaw(body), nil
}

// OpaqueRaw registers a random opaque token whose introspection response
// body is exactly body.
func (is *Issuer) OpaqueRaw(body []byte) string {
	var b [24]byte
	_, _ = rand.Read(b[:])
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	is.mu.Lock()
	defer is.mu.Unlock()
	is.opaque[tok] = body
	return tok
}

func (is *Issuer) introspect(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.WriteHeader(http.StatusMethodNotAllowed)
		return
	}
	id, secret, ok := r.BasicAuth()
	if ok {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	}
	if !ok || id != is.opts.IntrospectionClientID || secret != is.opts.IntrospectionClientSecret {
		w.Header().Set("WWW-Authenticate", `Basic realm="introspection"`)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
	if err := r.ParseForm(); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	is.mu.Lock()
	body, found := is.opaque[r.PostForm.Get("token")]
	is.mu.Unlock()
	if !found {
		body = []byte(`{"active":false}`)
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

var errUnknownKey = errors.New("testissuer: unknown key id")
