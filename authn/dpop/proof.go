package dpop

// The DPoP proof JWT (RFC 9449 §4.2), read by this package alone: the
// compact shape is checked before any decoding, the header, its jwk and
// the claims are read with the strict JSON engine, the key is built from
// the jwk's members here (never by jwx, which would pick keys from a token
// if asked), and jwx only checks the signature for one algorithm and this
// one key.

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rsa"
	"crypto/sha256"
	"math/big"
	"strings"
	"time"

	"github.com/lestrrat-go/jwx/v2/jws"

	"github.com/mcpkit/mcpkit/authn/internal/jose"
	"github.com/mcpkit/mcpkit/internal/jsonstrict"
)

// Proof is a parsed, not yet verified proof.
type Proof struct {
	alg   string
	fam   jose.KeyFamily
	key   any    // *ecdsa.PublicKey, ed25519.PublicKey or *rsa.PublicKey
	jkt   string // RFC 7638 thumbprint of the jwk
	input string // the signing input: header.payload
	sig   []byte

	htm, htu, jti, ath, nonce string
	iat                       time.Time
}

// maxJTIBytes bounds a proof's jti: enough for any identifier with the
// 96 bits of randomness RFC 9449 §11.1 asks for, written out generously.
const maxJTIBytes = 256

// proofJSON bounds the proof's JSON objects: small, shallow.
var proofJSON = jsonstrict.Options{MaxDepth: 8, MaxMembers: 64}

// parseProof checks the shape of a proof and reads its header, key and
// claims: a compact JWS of at most max bytes; a header with typ dpop+jwt,
// an allowed asymmetric alg that fits the key, and a public jwk (no
// private member, no symmetric key); claims jti, htm, htu, iat and ath of
// the right types (nonce optional). The signature is not checked here.
func parseProof(s string, max int, allowed []string) (*Proof, error) {
	d1, d2, ok := jose.SplitCompact(s, max)
	if !ok {
		return nil, errProofMalformed
	}
	var hbuf [1024]byte
	hdr, err := b64.AppendDecode(hbuf[:0], []byte(s[:d1]))
	if err != nil {
		return nil, errProofMalformed
	}
	pr := &Proof{input: s[:d2]}
	if err := pr.readHeader(hdr, allowed); err != nil {
		return nil, err
	}
	payload, err := b64.AppendDecode(nil, []byte(s[d1+1:d2]))
	if err != nil {
		return nil, errProofMalformed
	}
	if err := pr.readClaims(payload); err != nil {
		return nil, err
	}
	if pr.sig, err = b64.AppendDecode(nil, []byte(s[d2+1:])); err != nil {
		return nil, errProofMalformed
	}
	return pr, nil
}

// readHeader reads typ, alg and jwk. Parameters that name key material
// elsewhere (jku, x5u, x5c, x5t, x5t#S256), demand extensions (crit),
// change the signing (b64) or belong to JWE (enc, zip) reject the proof;
// kid and unknown parameters are ignored.
func (pr *Proof) readHeader(data []byte, allowed []string) error {
	var typ string
	var hasTyp bool
	var jwkv jsonstrict.Value
	bad := error(nil)
	err := proofJSON.Members(data, func(name []byte, v jsonstrict.Value) bool {
		ok := true
		switch string(name) {
		case "typ":
			typ, ok = v.Str()
			hasTyp = true
		case "alg":
			pr.alg, ok = v.Str()
		case "jwk":
			jwkv, ok = v, v.Kind() == jsonstrict.Object
		case "jku", "x5u", "x5c", "x5t", "x5t#S256", "crit", "b64", "enc", "zip":
			ok = false
		}
		if !ok {
			bad = errProofHeader
		}
		return ok
	})
	switch {
	case bad != nil:
		return bad
	case err != nil:
		return errProofMalformed
	case !hasTyp || !dpopType(typ):
		return errProofType
	case pr.alg == "" || !jose.Contains(allowed, pr.alg):
		return errProofAlg
	case jwkv.Kind() == jsonstrict.None:
		return errProofKey
	}
	return pr.readKey(jwkv)
}

// dpopType: "dpop+jwt", compared case-insensitively, with an optional
// "application/" prefix (RFC 7515 §4.1.9).
func dpopType(t string) bool {
	if len(t) > len("application/") && strings.EqualFold(t[:len("application/")], "application/") {
		t = t[len("application/"):]
	}
	return strings.EqualFold(t, "dpop+jwt")
}

// jwkPrivate are the JWK members that hold private or symmetric key
// material (RFC 7518 §6.2.2, §6.3.2, §6.4; RFC 8037 §2).
var jwkPrivate = [...]string{"d", "p", "q", "dp", "dq", "qi", "oth", "k"}

// readKey builds the public key from the proof's jwk: EC P-256/384/521
// with x and y of their exact lengths and on the curve, OKP Ed25519, or
// RSA of 2048–8192 bits with a small odd exponent, all values strict
// base64url without leading zero octets (so each key has one encoding and
// one thumbprint). A jwk with a private member (in any letter case), a
// symmetric key, an "alg" other than the header's, a "use" other than sig
// or key_ops without "verify" is refused. The thumbprint is computed from
// the required members (RFC 7638 §3.2).
func (pr *Proof) readKey(jwkv jsonstrict.Value) error {
	m, ok := readJWK(jwkv, pr.alg)
	if !ok {
		return errProofKey
	}
	var key any
	var fam jose.KeyFamily
	var thumb string // the RFC 7638 members, in order
	switch m.kty {
	case "EC":
		key, fam, ok = ecKey(m.crv, m.x, m.y)
		thumb = `{"crv":"` + m.crv + `","kty":"EC","x":"` + m.x + `","y":"` + m.y + `"}`
	case "OKP":
		key, fam, ok = okpKey(m.crv, m.x)
		thumb = `{"crv":"Ed25519","kty":"OKP","x":"` + m.x + `"}`
	case "RSA":
		key, fam, ok = rsaKey(m.n, m.e)
		thumb = `{"e":"` + m.e + `","kty":"RSA","n":"` + m.n + `"}`
	default: // oct, missing, unknown
		ok = false
	}
	if !ok {
		return errProofKey
	}
	pr.key, pr.fam = key, fam
	if jose.FamilyOf(pr.alg) != pr.fam {
		return errProofAlg
	}
	sum := sha256.Sum256([]byte(thumb))
	pr.jkt = b64.EncodeToString(sum[:])
	return nil
}

// jwkMembers are the members of a proof's jwk that make its key.
type jwkMembers struct{ kty, crv, x, y, n, e string }

// readJWK reads a jwk's key members; false for a private member (in any
// letter case), a member of the wrong type, an "alg" other than alg, a
// "use" other than sig, or key_ops without "verify".
func readJWK(jwkv jsonstrict.Value, alg string) (jwkMembers, bool) {
	var m jwkMembers
	ok := true
	_ = jwkv.Members(func(name []byte, v jsonstrict.Value) bool {
		ok = !privateMember(name) && m.read(string(name), v, alg)
		return ok
	})
	return m, ok
}

// privateMember reports whether name is a JWK member of private or
// symmetric key material, in any letter case.
func privateMember(name []byte) bool {
	for _, p := range jwkPrivate {
		if strings.EqualFold(string(name), p) {
			return true
		}
	}
	return false
}

// read takes one member; false when it refuses the key.
func (m *jwkMembers) read(name string, v jsonstrict.Value, alg string) bool {
	var s string
	ok := true
	switch name {
	case "kty", "crv", "x", "y", "n", "e", "alg", "use":
		s, ok = v.Str()
	case "key_ops":
		return keyOpsVerify(v)
	default:
		return true
	}
	switch name {
	case "kty":
		m.kty = s
	case "crv":
		m.crv = s
	case "x":
		m.x = s
	case "y":
		m.y = s
	case "n":
		m.n = s
	case "e":
		m.e = s
	case "alg":
		ok = ok && s == alg
	case "use":
		ok = ok && s == "sig"
	}
	return ok
}

// ecKey builds an EC public key: P-256/384/521 with x and y of their
// exact lengths, on the curve.
func ecKey(crv, x, y string) (any, jose.KeyFamily, bool) {
	var curve elliptic.Curve
	var size int
	var fam jose.KeyFamily
	switch crv {
	case "P-256":
		curve, size, fam = elliptic.P256(), 32, jose.FamP256
	case "P-384":
		curve, size, fam = elliptic.P384(), 48, jose.FamP384
	case "P-521":
		curve, size, fam = elliptic.P521(), 66, jose.FamP521
	default:
		return nil, 0, false
	}
	xb, okx := decodeFixed(x, size)
	yb, oky := decodeFixed(y, size)
	if !okx || !oky {
		return nil, 0, false
	}
	pub, err := ecdsa.ParseUncompressedPublicKey(curve, append(append([]byte{4}, xb...), yb...))
	if err != nil {
		return nil, 0, false
	}
	return pub, fam, true
}

// okpKey builds an Ed25519 public key.
func okpKey(crv, x string) (any, jose.KeyFamily, bool) {
	xb, ok := decodeFixed(x, ed25519.PublicKeySize)
	if crv != "Ed25519" || !ok {
		return nil, 0, false
	}
	return ed25519.PublicKey(xb), jose.FamEd25519, true
}

// rsaKey builds an RSA public key of 2048–8192 bits with a small odd
// exponent, n and e without leading zero octets.
func rsaKey(n, e string) (any, jose.KeyFamily, bool) {
	nb, ok1 := jose.DecodeB64URL(n)
	eb, ok2 := jose.DecodeB64URL(e)
	if !ok1 || !ok2 || len(nb) == 0 || nb[0] == 0 || len(eb) == 0 || len(eb) > 4 || eb[0] == 0 {
		return nil, 0, false
	}
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(nb)}
	for _, c := range eb {
		pub.E = pub.E<<8 | int(c)
	}
	if bits := pub.N.BitLen(); bits < jose.MinRSABits || bits > jose.MaxRSABits || pub.E < 3 || pub.E%2 == 0 {
		return nil, 0, false
	}
	return pub, jose.FamRSA, true
}

// decodeFixed decodes strict base64url of exactly size bytes.
func decodeFixed(s string, size int) ([]byte, bool) {
	if len(s) != b64.EncodedLen(size) {
		return nil, false
	}
	b, err := b64.DecodeString(s)
	return b, err == nil && len(b) == size
}

// keyOpsVerify: key_ops is an array of strings that contains "verify".
func keyOpsVerify(v jsonstrict.Value) bool {
	ops, ok := jose.StringArray(v)
	if !ok {
		return false
	}
	return jose.Contains(ops, "verify")
}

// readClaims reads the proof's claims: jti (1–256 bytes), htm, htu, iat
// (a NumericDate), ath (required: a proof at a resource server always
// accompanies a token) and nonce, when present, all strings but iat.
func (pr *Proof) readClaims(data []byte) error {
	var iat jsonstrict.Value
	var hasATH bool
	bad := false
	err := proofJSON.Members(data, func(name []byte, v jsonstrict.Value) bool {
		ok := true
		switch string(name) {
		case "jti":
			pr.jti, ok = v.Str()
		case "htm":
			pr.htm, ok = v.Str()
		case "htu":
			pr.htu, ok = v.Str()
		case "ath":
			pr.ath, ok = v.Str()
			hasATH = true
		case "nonce":
			pr.nonce, ok = v.Str()
			ok = ok && pr.nonce != ""
		case "iat":
			iat = v
		}
		bad = !ok
		return ok
	})
	if bad || err != nil {
		return errProofClaims
	}
	t, ok := jose.NumericDate(iat)
	if !ok || pr.jti == "" || len(pr.jti) > maxJTIBytes || pr.htm == "" || pr.htu == "" || !hasATH {
		return errProofClaims
	}
	pr.iat = t
	return nil
}

// verify checks the signature with the proof's own key.
func (pr *Proof) verify(vf jws.Verifier) error {
	if vf == nil || vf.Verify([]byte(pr.input), pr.sig, pr.key) != nil {
		return errProofSignature
	}
	return nil
}

// replayKey identifies the proof for replay detection: its jti within
// its key's namespace, so that one client's choice of jti never collides
// with another's.
func (pr *Proof) replayKey() [16]byte {
	h := sha256.New()
	h.Write([]byte(pr.jkt))
	h.Write([]byte{0})
	h.Write([]byte(pr.jti))
	var k [16]byte
	copy(k[:], h.Sum(nil))
	return k
}
