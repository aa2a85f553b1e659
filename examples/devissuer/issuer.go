package devissuer

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jwa"
	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/mcpkit/mcpkit/principal"
)

// KeyFile is the name of the signing key's file in the data directory:
// a PEM "PRIVATE KEY" (PKCS #8) holding an EC P-256 key.
const KeyFile = "dev-issuer-key.pem"

// DefaultClientID is the client_id of minted tokens when
// Options.ClientID is empty.
const DefaultClientID = "mcpkit-dev"

// MaxTTL is the longest lifetime Sign accepts.
const MaxTTL = 24 * time.Hour

// ErrNoKey is returned by [Load] when the data directory holds no key yet.
var ErrNoKey = errors.New("devissuer: no development key yet")

// Options configures an Issuer. The zero value is valid.
type Options struct {
	// ClientID is the client_id claim of minted tokens. Empty means
	// DefaultClientID.
	ClientID string
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// Issuer mints development access tokens and serves its JWK Set and
// metadata. It is safe for concurrent use.
type Issuer struct {
	issuer, audience string
	jwksURL          string
	key              *ecdsa.PrivateKey
	kid              string
	jwks             []byte // the JWK Set document
	metadata         []byte // the RFC 8414 document
	opts             Options
}

// Open returns the issuer whose key is kept in dir, generating and storing
// the key when there is none yet (creating dir with mode 0700 if needed).
// issuer is the issuer URL (the "iss" of tokens; its JWK Set is served at
// issuer + "/jwks.json"), audience the resource URI tokens are for (the
// "aud"). Two processes opening the same fresh directory at once end up
// with the same key.
func Open(dir, issuer, audience string, opts Options) (*Issuer, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("devissuer: data directory: %w", err)
	}
	key, err := readKey(dir)
	if errors.Is(err, ErrNoKey) {
		key, err = createKey(dir)
	}
	if err != nil {
		return nil, err
	}
	return newIssuer(key, issuer, audience, opts)
}

// Load is like Open but never creates a key: it returns ErrNoKey when dir
// holds none (the server has not run in development mode yet).
func Load(dir, issuer, audience string, opts Options) (*Issuer, error) {
	key, err := readKey(dir)
	if err != nil {
		return nil, err
	}
	return newIssuer(key, issuer, audience, opts)
}

// New returns an issuer with a key generated now and kept only in memory:
// no file is written, no other process can mint tokens it accepts, and its
// tokens stop verifying when the process ends. issuer and audience are as
// for Open.
func New(issuer, audience string, opts Options) (*Issuer, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("devissuer: generate key: %w", err)
	}
	return newIssuer(key, issuer, audience, opts)
}

func newIssuer(key *ecdsa.PrivateKey, issuer, audience string, opts Options) (*Issuer, error) {
	u, err := url.Parse(issuer)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, errors.New("devissuer: issuer must be an absolute http(s) URL without query or fragment")
	}
	if audience == "" {
		return nil, errors.New("devissuer: empty audience")
	}
	if opts.ClientID == "" {
		opts.ClientID = DefaultClientID
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	pub, err := jwk.FromRaw(&key.PublicKey)
	if err != nil {
		return nil, fmt.Errorf("devissuer: public key: %w", err)
	}
	tp, err := pub.Thumbprint(crypto.SHA256)
	if err != nil {
		return nil, fmt.Errorf("devissuer: thumbprint: %w", err)
	}
	kid := base64.RawURLEncoding.EncodeToString(tp) // RFC 7638: stable for the key
	for k, v := range map[string]any{jwk.KeyIDKey: kid, jwk.KeyUsageKey: "sig", jwk.AlgorithmKey: jwa.ES256} {
		if err := pub.Set(k, v); err != nil {
			return nil, fmt.Errorf("devissuer: jwk: %w", err)
		}
	}
	jwks, err := json.Marshal(map[string]any{"keys": []jwk.Key{pub}})
	if err != nil {
		return nil, fmt.Errorf("devissuer: jwks: %w", err)
	}
	is := &Issuer{
		issuer: issuer, audience: audience, jwksURL: strings.TrimSuffix(issuer, "/") + "/jwks.json",
		key: key, kid: kid, jwks: jwks, opts: opts,
	}
	if is.metadata, err = is.metadataDocument(); err != nil {
		return nil, err
	}
	return is, nil
}

// Issuer returns the issuer URL, the "iss" of minted tokens.
func (is *Issuer) Issuer() string { return is.issuer }

// Audience returns the resource URI minted tokens are for.
func (is *Issuer) Audience() string { return is.audience }

// JWKSURL returns the absolute URL of the JWK Set.
func (is *Issuer) JWKSURL() string { return is.jwksURL }

// claims are the claims of a minted token, in this order.
type claims struct {
	Issuer   string `json:"iss"`
	Audience string `json:"aud"`
	Subject  string `json:"sub"`
	ClientID string `json:"client_id"`
	Scope    string `json:"scope,omitempty"`
	IssuedAt int64  `json:"iat"`
	Expires  int64  `json:"exp"`
	ID       string `json:"jti"`
}

// Sign mints a compact JWS access token (typ "at+jwt", ES256) for subject
// with the given scopes, valid for ttl (at most MaxTTL). Its client_id is
// Options.ClientID.
func (is *Issuer) Sign(subject string, scopes []string, ttl time.Duration) (string, error) {
	return is.mint(subject, is.opts.ClientID, scopes, ttl)
}

// checkSubject reports whether subject is one a token may carry: 1–256
// UTF-16 code units of UTF-8 without control characters, as authn and the
// inventory count a subject (not bytes: a subject in any script fits):
// principal.ValidIdentifier, the kit's rule.
func checkSubject(subject string) error {
	if !principal.ValidIdentifier(subject) {
		return errors.New("devissuer: subject must be 1–256 UTF-16 code units of UTF-8 without control characters")
	}
	return nil
}

// mint signs an access token for subject and clientID.
func (is *Issuer) mint(subject, clientID string, scopes []string, ttl time.Duration) (string, error) {
	return is.mintFor(is.audience, subject, clientID, scopes, ttl)
}

// mintFor signs an access token for subject and clientID whose audience
// is audience.
func (is *Issuer) mintFor(audience, subject, clientID string, scopes []string, ttl time.Duration) (string, error) {
	if err := checkSubject(subject); err != nil {
		return "", err
	}
	if ttl <= 0 || ttl > MaxTTL {
		return "", fmt.Errorf("devissuer: ttl must be in (0, %v]", MaxTTL)
	}
	if checkSubject(clientID) != nil { // authn's rule for a client id is a subject's
		return "", errors.New("devissuer: invalid client id")
	}
	for _, s := range scopes {
		if !principal.ValidScope(s) {
			return "", errors.New("devissuer: invalid scope")
		}
	}
	var jti [16]byte
	_, _ = rand.Read(jti[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
	now := is.opts.Now()
	payload, err := json.Marshal(claims{
		Issuer: is.issuer, Audience: audience, Subject: subject, ClientID: clientID,
		Scope: strings.Join(scopes, " "), IssuedAt: now.Unix(), Expires: now.Add(ttl).Unix(),
		ID: base64.RawURLEncoding.EncodeToString(jti[:]),
	})
	if err != nil {
		return "", fmt.Errorf("devissuer: claims: %w", err)
	}
	h := jws.NewHeaders()
	if err := h.Set(jws.TypeKey, "at+jwt"); err != nil {
		return "", fmt.Errorf("devissuer: header: %w", err)
	}
	if err := h.Set(jws.KeyIDKey, is.kid); err != nil {
		return "", fmt.Errorf("devissuer: header: %w", err)
	}
	tok, err := jws.Sign(payload, jws.WithKey(jwa.ES256, is.key, jws.WithProtectedHeaders(h)))
	if err != nil {
		return "", fmt.Errorf("devissuer: sign: %w", err)
	}
	return string(tok), nil
}

// readKey loads the key file of dir, refusing one that others may read.
func readKey(dir string) (*ecdsa.PrivateKey, error) {
	path := filepath.Join(dir, KeyFile)
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", ErrNoKey, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("devissuer: key file: %w", err)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("devissuer: key file %s is accessible to other users (mode %v): chmod 600 it or delete it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("devissuer: key file: %w", err)
	}
	return parseKey(b)
}

func parseKey(b []byte) (*ecdsa.PrivateKey, error) {
	block, _ := pem.Decode(b)
	if block == nil || block.Type != "PRIVATE KEY" {
		return nil, errors.New("devissuer: key file is not a PEM private key")
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, errors.New("devissuer: key file does not hold a PKCS #8 key")
	}
	ec, ok := k.(*ecdsa.PrivateKey)
	if !ok || ec.Curve != elliptic.P256() {
		return nil, errors.New("devissuer: key file does not hold an EC P-256 key")
	}
	return ec, nil
}

// createKey generates a key and stores it in dir without ever replacing an
// existing file: it is written to a temporary file (mode 0600) and linked
// to its name, which fails if another process got there first, in which
// case that process's key is used.
func createKey(dir string) (*ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("devissuer: generate key: %w", err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, fmt.Errorf("devissuer: encode key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".dev-issuer-key-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("devissuer: write key: %w", err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return nil, fmt.Errorf("devissuer: write key: %w", err)
	}
	if err := pem.Encode(tmp, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("devissuer: write key: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return nil, fmt.Errorf("devissuer: write key: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return nil, fmt.Errorf("devissuer: write key: %w", err)
	}
	switch err := os.Link(tmp.Name(), filepath.Join(dir, KeyFile)); {
	case errors.Is(err, fs.ErrExist):
		return readKey(dir) // another process was faster: use its key
	case err != nil: // no hard links here: create the file exclusively instead
		switch err := writeExclusive(filepath.Join(dir, KeyFile), der); {
		case errors.Is(err, fs.ErrExist):
			return readKey(dir)
		case err != nil:
			return nil, err
		}
	}
	return key, nil
}

// writeExclusive creates path (mode 0600, failing if it exists) holding der.
func writeExclusive(path string, der []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("devissuer: write key: %w", err)
	}
	if err := pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}); err != nil {
		f.Close()
		return fmt.Errorf("devissuer: write key: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("devissuer: write key: %w", err)
	}
	return nil
}
