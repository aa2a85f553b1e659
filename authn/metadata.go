package authn

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/mcpkit/mcpkit/authn/internal/jose"
	"github.com/mcpkit/mcpkit/principal"
)

// WellKnownPrefix is the RFC 9728 well-known path of protected resource
// metadata.
const WellKnownPrefix = "/.well-known/oauth-protected-resource"

// Metadata is the RFC 9728 protected resource metadata document. Zero-valued
// fields are omitted; bearer_methods_supported is always ["header"].
type Metadata struct {
	// Resource is the canonical resource URI: an absolute https URL (http
	// only for loopback hosts) without fragment or query. It is published
	// byte for byte as given (RFC 9728 §3.3 requires identity).
	Resource string
	// AuthorizationServers lists the issuer identifiers of the
	// authorization servers; MCP requires at least one.
	AuthorizationServers []string
	// ScopesSupported lists the scopes clients may request (RFC 6749
	// scope-tokens). MCP advises listing the minimum needed, and not
	// offline_access.
	ScopesSupported []string
	// ResourceName is a human-readable name.
	ResourceName string
	// ResourceDocumentation is an absolute URL of documentation for developers.
	ResourceDocumentation string
	// DPoPSigningAlgorithms is published as
	// dpop_signing_alg_values_supported: the proof algorithms the
	// Authenticator accepts ([Authenticator.DPoPAlgorithms]); nil when
	// DPoP is off. Only asymmetric algorithms are allowed.
	DPoPSigningAlgorithms []string
	// DPoPBoundTokensRequired is published as
	// dpop_bound_access_tokens_required: true when the Authenticator's
	// DPoP mode is dpop.Required.
	DPoPBoundTokensRequired bool
}

type metadataDoc struct {
	Resource              string   `json:"resource"`
	AuthorizationServers  []string `json:"authorization_servers,omitempty"`
	ScopesSupported       []string `json:"scopes_supported,omitempty"`
	BearerMethods         []string `json:"bearer_methods_supported"`
	ResourceName          string   `json:"resource_name,omitempty"`
	ResourceDocumentation string   `json:"resource_documentation,omitempty"`
	DPoPAlgorithms        []string `json:"dpop_signing_alg_values_supported,omitempty"`
	DPoPRequired          bool     `json:"dpop_bound_access_tokens_required,omitempty"`
}

// NewMetadataHandler validates m and returns a handler serving its document
// for GET and HEAD (200, application/json, Cache-Control: public,
// max-age=3600); other methods get 405 with Allow. The body is encoded once.
// Mount it at the path [WellKnownPath] returns for m.Resource (and, for
// clients that try it, at the root well-known path).
func NewMetadataHandler(m Metadata) (http.Handler, error) {
	if _, err := WellKnownPath(m.Resource); err != nil {
		return nil, err
	}
	if len(m.AuthorizationServers) == 0 {
		return nil, errors.New("authn: Metadata.AuthorizationServers needs at least one authorization server")
	}
	for _, as := range m.AuthorizationServers {
		if _, err := jose.ParseSecureURL("authorization server", as, true); err != nil {
			return nil, err
		}
	}
	for _, s := range m.ScopesSupported {
		if !principal.ValidScope(s) {
			return nil, fmt.Errorf("authn: Metadata.ScopesSupported: invalid scope %q", s)
		}
	}
	if m.ResourceDocumentation != "" {
		if _, err := jose.ParseSecureURL("Metadata.ResourceDocumentation", m.ResourceDocumentation, false); err != nil {
			return nil, err
		}
	}
	for _, a := range m.DPoPSigningAlgorithms {
		if jose.FamilyOf(a) == jose.FamNone {
			return nil, fmt.Errorf("authn: Metadata.DPoPSigningAlgorithms: %q is not an asymmetric algorithm this package verifies", a)
		}
	}
	if m.DPoPBoundTokensRequired && len(m.DPoPSigningAlgorithms) == 0 {
		return nil, errors.New("authn: Metadata.DPoPBoundTokensRequired needs DPoPSigningAlgorithms")
	}
	if strings.IndexFunc(m.ResourceName, unicode.IsControl) >= 0 {
		return nil, errors.New("authn: Metadata.ResourceName contains control characters")
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(metadataDoc{
		Resource:              m.Resource,
		AuthorizationServers:  m.AuthorizationServers,
		ScopesSupported:       m.ScopesSupported,
		BearerMethods:         []string{"header"},
		ResourceName:          m.ResourceName,
		ResourceDocumentation: m.ResourceDocumentation,
		DPoPAlgorithms:        m.DPoPSigningAlgorithms,
		DPoPRequired:          m.DPoPBoundTokensRequired,
	}); err != nil {
		return nil, fmt.Errorf("authn: encoding metadata: %w", err)
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return &metadataHandler{body: body, length: strconv.Itoa(len(body))}, nil
}

type metadataHandler struct {
	body   []byte
	length string
}

func (h *metadataHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	// The document is public and holds no secret, so any origin may read
	// it: browser-based MCP clients discover the authorization server from
	// it (their SDKs send MCP-Protocol-Version, hence the preflight).
	hdr.Set("Access-Control-Allow-Origin", "*")
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		hdr.Set("Access-Control-Allow-Methods", "GET, HEAD")
		hdr.Set("Access-Control-Allow-Headers", "MCP-Protocol-Version")
		hdr.Set("Access-Control-Max-Age", "86400")
		w.WriteHeader(http.StatusNoContent)
		return
	default:
		hdr.Set("Allow", "GET, HEAD, OPTIONS")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	hdr.Set("Content-Type", "application/json")
	hdr.Set("Cache-Control", "public, max-age=3600")
	hdr.Set("Content-Length", h.length)
	hdr.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodGet {
		_, _ = w.Write(h.body)
	}
}

// WellKnownPath returns the path at which the metadata of resource is
// served (RFC 9728 §3.1): the well-known prefix inserted between host and
// path, after removing a terminating "/" that directly follows the host.
//
//	https://api.example.com        → /.well-known/oauth-protected-resource
//	https://api.example.com/       → /.well-known/oauth-protected-resource
//	https://api.example.com/mcp    → /.well-known/oauth-protected-resource/mcp
//	https://api.example.com:8443/a/b/ → /.well-known/oauth-protected-resource/a/b/
//
// The path is taken byte for byte from resource (percent-encoding kept).
// It fails when resource is not an absolute https URL (http for loopback
// hosts), or has userinfo, a query or a fragment.
func WellKnownPath(resource string) (string, error) {
	_, path, err := jose.SplitResource(resource)
	if err != nil {
		return "", err
	}
	return WellKnownPrefix + path, nil
}

// MetadataURL returns the absolute URL of resource's metadata document:
// the resource's scheme and authority (port kept) followed by
// [WellKnownPath]. It is the resource_metadata value of challenges.
func MetadataURL(resource string) (string, error) {
	origin, path, err := jose.SplitResource(resource)
	if err != nil {
		return "", err
	}
	return origin + WellKnownPrefix + path, nil
}

// Metadata returns the RFC 9728 protected-resource metadata of a's
// resource (the document its challenges point clients to) and the path
// to serve it at, so that the resource URI is given once, to the
// Authenticator. m.Resource, when empty, is the Authenticator's resource
// (any other is an error: the document must describe the resource whose
// challenges link to it); m.ScopesSupported, when empty, the scopes of
// Options.Scopes. The rest is NewMetadataHandler's.
func (a *Authenticator) Metadata(m Metadata) (path string, h http.Handler, err error) {
	if !a.usable() {
		return "", nil, errAuthenticatorZero
	}
	switch m.Resource {
	case "":
		m.Resource = a.resource
	case a.resource:
	default:
		return "", nil, errors.New("authn: Metadata.Resource differs from the Authenticator's resource")
	}
	if len(m.ScopesSupported) == 0 {
		m.ScopesSupported = slices.Clone(a.scopes)
	}
	if h, err = NewMetadataHandler(m); err != nil {
		return "", nil, err
	}
	path, err = WellKnownPath(m.Resource)
	return path, h, err
}
