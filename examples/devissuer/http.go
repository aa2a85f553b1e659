package devissuer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// JWKSPath returns the path of the JWK Set: the issuer's path followed by
// "/jwks.json" ("/dev/jwks.json" for the issuer http://127.0.0.1:8080/dev).
func (is *Issuer) JWKSPath() string {
	u, _ := url.Parse(is.jwksURL) // checked by newIssuer
	return u.EscapedPath()
}

// MetadataPath returns the path of the authorization server metadata (RFC
// 8414 §3.1): the well-known prefix followed by the issuer's path
// ("/.well-known/oauth-authorization-server/dev").
func (is *Issuer) MetadataPath() string {
	u, _ := url.Parse(is.issuer) // checked by newIssuer
	return "/.well-known/oauth-authorization-server" + strings.TrimSuffix(u.EscapedPath(), "/")
}

// JWKSHandler serves the JWK Set (the public key only) for GET and HEAD.
func (is *Issuer) JWKSHandler() http.Handler {
	return staticJSON(is.jwks, "application/jwk-set+json")
}

// MetadataHandler serves the RFC 8414 authorization server metadata for
// GET and HEAD: issuer and jwks_uri, no endpoints (see the package
// documentation).
func (is *Issuer) MetadataHandler() http.Handler {
	return staticJSON(is.metadata, "application/json")
}

func (is *Issuer) metadataDocument() ([]byte, error) {
	b, err := json.Marshal(struct {
		Issuer        string   `json:"issuer"`
		JWKSURI       string   `json:"jwks_uri"`
		ResponseTypes []string `json:"response_types_supported"`
		GrantTypes    []string `json:"grant_types_supported"`
		Note          string   `json:"mcpkit_development_issuer"`
	}{
		Issuer: is.issuer, JWKSURI: is.jwksURL, ResponseTypes: []string{}, GrantTypes: []string{},
		Note: "development only: tokens come from the server's token subcommand; there is no authorization or token endpoint",
	})
	if err != nil {
		return nil, fmt.Errorf("devissuer: metadata: %w", err)
	}
	return b, nil
}

func staticJSON(body []byte, contentType string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		h.Set("Content-Type", contentType)
		h.Set("Content-Length", strconv.Itoa(len(body)))
		h.Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}

// Client returns an http.Client that answers GET requests for the JWK Set
// URL in-process, from JWKSHandler, and fails every other request without
// touching the network. Give it to authn.JWTOptions.HTTPClient so that the
// verifier's warm-up fetch succeeds before the server listens.
func (is *Issuer) Client() *http.Client {
	return &http.Client{
		Transport: localTransport{url: is.jwksURL, h: is.JWKSHandler()},
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("devissuer: no redirects")
		},
	}
}

type localTransport struct {
	url string
	h   http.Handler
}

var errNotLocal = errors.New("devissuer: the in-process client serves only the JWK Set")

func (t localTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		req.Body.Close() // RoundTrip must close the body, even on errors
	}
	u := *req.URL
	u.RawQuery, u.Fragment = "", ""
	if req.Method != http.MethodGet || u.String() != t.url {
		return nil, errNotLocal
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	w := &memoryWriter{header: http.Header{}}
	t.h.ServeHTTP(w, req)
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return &http.Response{
		Status:     fmt.Sprintf("%d %s", w.code, http.StatusText(w.code)),
		StatusCode: w.code, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: w.header, Body: io.NopCloser(bytes.NewReader(w.body.Bytes())),
		ContentLength: int64(w.body.Len()), Request: req,
	}, nil
}

// memoryWriter is the http.ResponseWriter of an in-process request.
type memoryWriter struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (w *memoryWriter) Header() http.Header { return w.header }

func (w *memoryWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
}

func (w *memoryWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
