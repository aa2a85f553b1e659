package devissuer

import (
	"bytes"
	"encoding/json"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/principal"
)

// The limits on what clients send, checked before anything else.
const (
	maxQueryBytes    = 8 << 10  // an authorization request's query
	maxFormBytes     = 16 << 10 // a token request or a login form
	maxJSONBytes     = 16 << 10 // a registration request
	maxStateBytes    = 512      // state: the TypeScript SDK sends 43 characters
	maxRedirectBytes = 2000     // one redirect URI
	maxRedirectURIs  = 10       // per client
	maxClientName    = 200      // characters of a client's name
	maxClientIDLen   = 256      // a client id, as authn bounds it in a token
)

// errDuplicate is returned by parseParams for a parameter given twice.
var errDuplicate = errors.New("devissuer: parameter given more than once")

// errBadParams is returned by parseParams for a query or form that is not
// valid UTF-8 or not application/x-www-form-urlencoded.
var errBadParams = errors.New("devissuer: malformed parameters")

// params are the parameters of a request, each at most once (RFC 6749
// §3.1: "Request and response parameters MUST NOT be included more than
// once") except the ones multi allows (resource, RFC 8707), and empty
// values dropped ("parameters sent without a value MUST be treated as if
// they were omitted").
type params map[string][]string

// parseParams parses a query or form body strictly: url.ParseQuery's
// syntax (no ';' separators), valid UTF-8 only, each parameter once except
// those named in multi.
func parseParams(raw string, multi ...string) (params, error) {
	if !utf8.ValidString(raw) {
		return nil, errBadParams
	}
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, errBadParams
	}
	out := make(params, len(v))
	for k, vs := range v {
		if !utf8.ValidString(k) {
			return nil, errBadParams
		}
		kept := vs[:0]
		for _, s := range vs {
			if !utf8.ValidString(s) {
				return nil, errBadParams
			}
			if s != "" {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			continue
		}
		if len(kept) > 1 && !contains(multi, k) {
			return nil, errDuplicate
		}
		out[k] = kept
	}
	return out, nil
}

// get returns the value of name, or "".
func (p params) get(name string) string {
	if vs := p[name]; len(vs) > 0 {
		return vs[0]
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readForm reads an application/x-www-form-urlencoded body of at most
// maxFormBytes and parses it with parseParams. It never reads the query.
func readForm(w http.ResponseWriter, r *http.Request, multi ...string) (params, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/x-www-form-urlencoded" {
		return nil, errBadParams
	}
	var b bytes.Buffer
	if _, err := b.ReadFrom(http.MaxBytesReader(w, r.Body, maxFormBytes)); err != nil {
		return nil, errBadParams
	}
	return parseParams(b.String(), multi...)
}

// parseScope splits an RFC 6749 scope parameter: scope-tokens (the kit's
// grammar, principal.ValidScope) separated by single spaces. It returns
// them de-duplicated, in the order given, and false for anything else (two
// spaces, a leading space, a bad character).
func parseScope(s string) ([]string, bool) {
	var out []string
	for tok := range strings.SplitSeq(s, " ") {
		if !principal.ValidScope(tok) {
			return nil, false
		}
		if !contains(out, tok) {
			out = append(out, tok)
		}
	}
	return out, true
}

// isVSCHAR reports whether s is 1*VSCHAR (%x20-7E), the syntax of state
// (RFC 6749 Appendix A.5).
func isVSCHAR(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// isPKCEString reports whether s is 43–128 characters of
// [A-Za-z0-9-._~]: a code_verifier (RFC 7636 §4.1). An S256
// code_challenge is one too, of exactly 43 characters.
func isPKCEString(s string) bool {
	if len(s) < 43 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
			return false
		}
	}
	return true
}

// errJSON is returned by decodeObject for anything but one JSON object
// with distinct member names, in valid UTF-8, without trailing data.
var errJSON = errors.New("devissuer: malformed JSON object")

// decodeObject reads a JSON object strictly: valid UTF-8, no duplicate
// member names (encoding/json would keep the last one silently), nothing
// after it. Member values are left raw.
func decodeObject(b []byte) (map[string]json.RawMessage, error) {
	if !utf8.Valid(b) {
		return nil, errJSON
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errJSON
	}
	out := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, errJSON
		}
		name, ok := t.(string)
		if !ok {
			return nil, errJSON
		}
		if _, dup := out[name]; dup {
			return nil, errJSON
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, errJSON
		}
		out[name] = raw
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, errJSON
	}
	if _, err := dec.Token(); err == nil {
		return nil, errJSON // trailing data
	}
	return out, nil
}

// member decodes the member name of obj into v (a *string or *[]string);
// absent or null leaves v alone. A value of another type is an error.
func member(obj map[string]json.RawMessage, name string, v any) error {
	raw, ok := obj[name]
	if !ok || string(raw) == "null" {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return errJSON
	}
	if s, ok := v.(*[]string); ok && *s == nil {
		return errJSON // "null" inside was handled; an array is expected
	}
	return nil
}
