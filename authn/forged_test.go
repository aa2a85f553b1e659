package authn

import (
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lestrrat-go/jwx/v2/jwk"
	"github.com/mcpkit/mcpkit/internal/testkit/testissuer"
	"github.com/stretchr/testify/require"
)

// forged is one token that must be rejected, the catalogue row it belongs
// to, and the reason it must be rejected for (nil: any invalid-token reason).
type forged struct {
	name   string
	row    string
	token  string
	reason *tokenError
}

// forgedTokens builds the negative table (S2): forged and malformed tokens
// against e's issuer, all of which a verifier for testResource must reject.
// Claim-level forgeries are validly signed, so they exercise the claim
// checks and not the signature.
func forgedTokens(t *testing.T, e *env) []forged {
	t.Helper()
	is := e.is
	now := e.clock.Now().Unix()
	iss, _ := json.Marshal(is.ID())
	aud, _ := json.Marshal(testResource)
	std := `{"alg":"RS256","kid":"rs256","typ":"at+jwt"}`
	// body replaces {ISS} {AUD} {EXP} {NOW} in a payload template.
	body := func(tpl string) []byte {
		return []byte(strings.NewReplacer("{ISS}", string(iss), "{AUD}", string(aud),
			"{EXP}", fmt.Sprint(now+3600), "{NOW}", fmt.Sprint(now)).Replace(tpl))
	}
	const good = `{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"iat":{NOW}}`
	// signed signs header and payload with the issuer's key kid under alg.
	signed := func(kid, alg, header string, payload []byte) string {
		tok, err := is.SignRaw(kid, alg, []byte(header), payload)
		require.NoError(t, err)
		return tok
	}
	claimsTok := func(tpl string) string { return signed(testissuer.KidRS256, "", std, body(tpl)) }
	hdrTok := func(header string) string { return signed(testissuer.KidRS256, "RS256", header, body(good)) }
	valid := claimsTok(good)
	parts := strings.Split(valid, ".")
	other := claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"mallory","exp":{EXP}}`)
	otherParts := strings.Split(other, ".")
	b64 := base64.RawURLEncoding.EncodeToString

	pemKey, err := is.PublicKeyPEM(testissuer.KidRS256)
	require.NoError(t, err)
	k, _ := is.Key(testissuer.KidRS256)
	der, err := x509.MarshalPKIXPublicKey(k.Public())
	require.NoError(t, err)
	jwkJSON, err := k.JWK()
	require.NoError(t, err)
	jk, err := jwk.ParseKey(jwkJSON)
	require.NoError(t, err)
	nBytes, _ := jk.(jwk.RSAPublicKey)
	hmac := func(alg string, secret []byte) string {
		tok, err := testissuer.Compact(alg, secret, []byte(`{"alg":"`+alg+`","kid":"rs256","typ":"at+jwt"}`), body(good))
		require.NoError(t, err)
		return tok
	}
	attacker, err := testissuer.GenerateKey(testissuer.RSA)
	require.NoError(t, err)
	attackerTok := func(header string) string {
		tok, err := testissuer.Compact("RS256", attacker, []byte(header), body(good))
		require.NoError(t, err)
		return tok
	}
	attackerJWK, err := jwk.FromRaw(attacker.Public())
	require.NoError(t, err)
	_ = attackerJWK.Set(jwk.KeyIDKey, "attacker")
	attackerJWKJSON, _ := json.Marshal(attackerJWK)
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	esTok := signed(testissuer.KidES256, "", `{"alg":"ES256","kid":"es256","typ":"at+jwt"}`, body(good))
	esParts := strings.Split(esTok, ".")
	edTok := signed(testissuer.KidEdDSA, "", `{"alg":"EdDSA","kid":"eddsa","typ":"at+jwt"}`, body(good))
	edParts := strings.Split(edTok, ".")
	jsonFlat, err := testissuer.ToJSON(claimsTok(`{"iss":{ISS},"aud":"https://elsewhere.example","sub":"alice","exp":1}`), false,
		map[string]any{"aud": testResource, "sub": "admin", "exp": now + 3600, "scope": "admin"})
	require.NoError(t, err)
	jsonGeneral, err := testissuer.ToJSON(valid, true, map[string]any{"sub": "admin"})
	require.NoError(t, err)

	deep := strings.Repeat(`{"a":`, 100) + "1" + strings.Repeat("}", 100)
	return []forged{
		// --- shape: the compact pre-check (A14, A8) ---
		{"empty", "A14", "", errMalformed},
		{"two segments", "A14", parts[0] + "." + parts[1], errMalformed},
		{"four segments", "A14", valid + ".x", errMalformed},
		{"empty header", "A14", "." + parts[1] + "." + parts[2], errMalformed},
		{"empty payload", "A14", parts[0] + ".." + parts[2], errMalformed},
		{"empty signature", "A1", parts[0] + "." + parts[1] + ".", errMalformed},
		{"leading space", "A14", " " + valid, errMalformed},
		{"trailing space", "A14", valid + " ", errMalformed},
		{"trailing newline", "A14", valid + "\n", errMalformed},
		{"CRLF inside", "A14", parts[0] + "\r\n." + parts[1] + "." + parts[2], errMalformed},
		{"padding", "A14", parts[0] + "==." + parts[1] + "." + parts[2], errMalformed},
		{"std base64 alphabet", "A14", strings.NewReplacer("-", "+", "_", "/").Replace(valid) + "+/", errMalformed},
		{"1 MiB of dots", "A14", strings.Repeat(".", 1<<20), errMalformed},
		{"dots only", "A14", "..", errMalformed},
		{"over 16 KiB", "A14", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"pad":"` + strings.Repeat("x", 16<<10) + `"}`), errMalformed},
		{"flattened JSON serialization with injected claims", "A8", jsonFlat, errMalformed},
		{"general JSON serialization", "A8", jsonGeneral, errMalformed},
		{"header not base64", "A14", "!!!!." + parts[1] + "." + parts[2], errMalformed},
		{"header length 1 mod 4", "A14", "eyJhb." + parts[1] + "." + parts[2], errMalformed},
		{"header non-canonical trailing bits", "A14", b64([]byte(std))[:len(b64([]byte(std)))-1] + "B." + parts[1] + "." + parts[2], nil},
		{"header not JSON", "A14", hdrTok(`alg=RS256`), errMalformed},
		{"header JSON array", "A14", hdrTok(`["RS256"]`), errMalformed},
		{"header trailing garbage", "A14", hdrTok(std + `x`), errMalformed},
		{"header invalid UTF-8", "A28", hdrTok("{\"alg\":\"RS256\",\"kid\":\"rs256\",\"typ\":\"at+jwt\",\"x\":\"\xff\"}"), errMalformed},
		{"header duplicate alg", "A3", hdrTok(`{"alg":"none","alg":"RS256","kid":"rs256","typ":"at+jwt"}`), errMalformed},
		{"header duplicate kid", "A5", hdrTok(`{"alg":"RS256","kid":"other","kid":"rs256","typ":"at+jwt"}`), errMalformed},
		{"header duplicate via escape", "A3", hdrTok(`{"alg":"RS256","\u0061lg":"RS256","kid":"rs256","typ":"at+jwt"}`), errMalformed},
		// A27 for token JSON: case variants are duplicates too (a peer that
		// reads names case-insensitively would see another header).
		{"header ALG beside alg", "A3", hdrTok(`{"alg":"RS256","ALG":"none","kid":"rs256","typ":"at+jwt"}`), errMalformed},
		{"header Kid beside kid", "A5", hdrTok(`{"alg":"RS256","kid":"rs256","Kid":"other","typ":"at+jwt"}`), errMalformed},
		{"header escaped TYP beside typ", "A12", hdrTok(`{"alg":"RS256","kid":"rs256","typ":"at+jwt","\u0054YP":"JWT"}`), errMalformed},
		{"header Kelvin-sign kid beside kid", "A5", hdrTok(`{"alg":"RS256","kid":"rs256","\u212aid":"other","typ":"at+jwt"}`), errMalformed},

		// --- alg: none, HMAC confusion, family swaps (A1, A2, A3) ---
		{"alg none, empty signature", "A1", noneToken(`{"alg":"none","kid":"rs256","typ":"at+jwt"}`, body(good), ""), errMalformed},
		{"alg none, RS256 signature kept", "A1", noneToken(`{"alg":"none","kid":"rs256","typ":"at+jwt"}`, body(good), parts[2]), errAlg},
		{"alg None", "A1", noneToken(`{"alg":"None","kid":"rs256","typ":"at+jwt"}`, body(good), parts[2]), errAlg},
		{"alg NONE", "A1", noneToken(`{"alg":"NONE","kid":"rs256","typ":"at+jwt"}`, body(good), parts[2]), errAlg},
		{"HS256 keyed with the PEM public key", "A2", hmac("HS256", pemKey), errAlg},
		{"HS256 keyed with the DER public key", "A2", hmac("HS256", der), errAlg},
		{"HS256 keyed with the JWK n", "A2", hmac("HS256", []byte(fmt.Sprint(nBytes.N()))), errAlg},
		{"HS256 keyed with the JWK JSON", "A2", hmac("HS256", jwkJSON), errAlg},
		{"HS384 keyed with the PEM public key", "A2", hmac("HS384", pemKey), errAlg},
		{"HS512 keyed with the PEM public key", "A2", hmac("HS512", pemKey), errAlg},
		{"header RS512 on an RS256 key", "A3", signed(testissuer.KidRS256, "RS256", `{"alg":"RS512","kid":"rs256","typ":"at+jwt"}`, body(good)), errAlg},
		{"header PS256 on an RS256 key", "A3", signed(testissuer.KidRS256, "PS256", `{"alg":"PS256","kid":"rs256","typ":"at+jwt"}`, body(good)), errAlg},
		{"header RS256 on a PS256 key", "A3", signed(testissuer.KidPS256, "RS256", `{"alg":"RS256","kid":"ps256","typ":"at+jwt"}`, body(good)), errAlg},
		{"header ES256 on an RSA key", "A3", signed(testissuer.KidES256, "ES256", `{"alg":"ES256","kid":"rsa-noalg","typ":"at+jwt"}`, body(good)), errAlg},
		{"header EdDSA on an EC key", "A3", signed(testissuer.KidEdDSA, "EdDSA", `{"alg":"EdDSA","kid":"ec-noalg","typ":"at+jwt"}`, body(good)), errAlg},
		{"header RS256 on an EC key without alg", "A3", hdrTok(`{"alg":"RS256","kid":"ec-noalg","typ":"at+jwt"}`), errAlg},
		{"header RS512 (not allowed) on an RSA key without alg", "A3", signed(testissuer.KidRSANoAlg, "RS512", `{"alg":"RS512","kid":"rsa-noalg","typ":"at+jwt"}`, body(good)), errAlg},
		{"header ES384 (not allowed)", "A3", hdrTok(`{"alg":"ES384","kid":"es256","typ":"at+jwt"}`), errAlg},
		{"header ES256K", "A3", hdrTok(`{"alg":"ES256K","kid":"es256","typ":"at+jwt"}`), errAlg},
		{"alg lowercase", "A3", hdrTok(`{"alg":"rs256","kid":"rs256","typ":"at+jwt"}`), errAlg},
		{"alg with a space", "A3", hdrTok(`{"alg":"RS256 ","kid":"rs256","typ":"at+jwt"}`), errAlg},
		{"alg a number", "A3", hdrTok(`{"alg":256,"kid":"rs256","typ":"at+jwt"}`), errBadHeader},
		{"alg missing", "A1", hdrTok(`{"kid":"rs256","typ":"at+jwt"}`), errAlg},

		// --- kid (A5) ---
		// The issuer's own key without kid: genuine when it is the one key
		// for RS256 (TestKidlessTokenOneCandidate); here rs256 and rsa-noalg
		// both fit, so it is refused without trying either.
		{"kid missing, two keys fit", "A5", hdrTok(`{"alg":"RS256","typ":"at+jwt"}`), &tokenError{"kid_absent"}},
		{"kid missing, attacker's key", "A5", attackerTok(`{"alg":"RS256","typ":"at+jwt"}`), &tokenError{"kid_absent"}},
		{"kid null", "A5", hdrTok(`{"alg":"RS256","kid":null,"typ":"at+jwt"}`), errBadHeader},
		{"kid empty", "A5", hdrTok(`{"alg":"RS256","kid":"","typ":"at+jwt"}`), errKeyID},
		{"kid path traversal", "A5", hdrTok(`{"alg":"RS256","kid":"../../../../etc/passwd","typ":"at+jwt"}`), errKeyID},
		{"kid SQL injection", "A5", hdrTok(`{"alg":"RS256","kid":"' OR 1=1 --","typ":"at+jwt"}`), errKeyID},
		{"kid NUL", "A5", hdrTok(`{"alg":"RS256","kid":"rs256\u0000","typ":"at+jwt"}`), errKeyID},
		{"kid 300 bytes", "A5", hdrTok(`{"alg":"RS256","kid":"` + strings.Repeat("k", 300) + `","typ":"at+jwt"}`), errKeyID},
		{"kid look-alike (Cyrillic s)", "A5", hdrTok(`{"alg":"RS256","kid":"r\u0455256","typ":"at+jwt"}`), errKeyID},
		{"kid a number", "A5", hdrTok(`{"alg":"RS256","kid":256,"typ":"at+jwt"}`), errBadHeader},
		{"kid unknown", "A5", hdrTok(`{"alg":"RS256","kid":"nope","typ":"at+jwt"}`), errKeyID},

		// --- key-bearing and extension headers (A6, A7) ---
		{"jku to the attacker", "A6", attackerTok(`{"alg":"RS256","kid":"attacker","typ":"at+jwt","jku":"` + e.attackerURL + `/jwks"}`), errBadHeader},
		{"x5u to the attacker", "A6", attackerTok(`{"alg":"RS256","kid":"attacker","typ":"at+jwt","x5u":"` + e.attackerURL + `/cert"}`), errBadHeader},
		{"embedded jwk (attacker key)", "A6", attackerTok(`{"alg":"RS256","kid":"attacker","typ":"at+jwt","jwk":` + string(attackerJWKJSON) + `}`), errBadHeader},
		{"embedded jwk with our kid", "A6", attackerTok(`{"alg":"RS256","kid":"rs256","typ":"at+jwt","jwk":` + string(attackerJWKJSON) + `}`), errBadHeader},
		{"x5c chain", "A6", hdrTok(`{"alg":"RS256","kid":"rs256","typ":"at+jwt","x5c":["MIIB"]}`), errBadHeader},
		{"crit unknown", "A7", hdrTok(`{"alg":"RS256","kid":"rs256","typ":"at+jwt","crit":["x-unknown"],"x-unknown":1}`), errBadHeader},
		{"crit b64 with b64 false", "A7", hdrTok(`{"alg":"RS256","kid":"rs256","typ":"at+jwt","crit":["b64"],"b64":false}`), errBadHeader},
		{"b64 false without crit", "A7", hdrTok(`{"alg":"RS256","kid":"rs256","typ":"at+jwt","b64":false}`), errBadHeader},
		{"JWE enc header", "A7", hdrTok(`{"alg":"RS256","kid":"rs256","typ":"at+jwt","enc":"A256GCM"}`), errBadHeader},
		{"zip header", "A7", hdrTok(`{"alg":"RS256","kid":"rs256","typ":"at+jwt","zip":"DEF"}`), errBadHeader},
		{"attacker key, unknown kid", "A6", attackerTok(`{"alg":"RS256","kid":"attacker","typ":"at+jwt"}`), errKeyID},

		// --- typ: ID tokens and other JWTs of the issuer (A12) ---
		{"typ JWT", "A12", hdrTok(`{"alg":"RS256","kid":"rs256","typ":"JWT"}`), errType},
		{"typ absent", "A12", hdrTok(`{"alg":"RS256","kid":"rs256"}`), errType},
		{"typ application/jwt", "A12", hdrTok(`{"alg":"RS256","kid":"rs256","typ":"application/jwt"}`), errType},
		{"typ with a trailing space", "A12", hdrTok(`{"alg":"RS256","kid":"rs256","typ":"at+jwt "}`), errType},
		{"typ dpop+jwt", "A12", hdrTok(`{"alg":"RS256","kid":"rs256","typ":"dpop+jwt"}`), errType},
		{"typ application/", "A12", hdrTok(`{"alg":"RS256","kid":"rs256","typ":"application/"}`), errType},
		{"typ a number", "A12", hdrTok(`{"alg":"RS256","kid":"rs256","typ":1}`), errBadHeader},
		{"ID token: typ JWT, aud the client", "A12", signed(testissuer.KidRS256, "", `{"alg":"RS256","kid":"rs256","typ":"JWT"}`,
			body(`{"iss":{ISS},"aud":"client-1","sub":"alice","exp":{EXP},"nonce":"n"}`)), errType},

		// --- signatures ---
		{"signed by an attacker key under our kid", "A2", attackerTok(std), errSignature},
		{"signature truncated", "A1", parts[0] + "." + parts[1] + "." + parts[2][:len(parts[2])-4], nil}, // length or trailing bits
		{"signature bit flip", "A1", parts[0] + "." + parts[1] + "." + flip(parts[2], 10), errSignature},
		{"payload swapped after signing", "A8", parts[0] + "." + otherParts[1] + "." + parts[2], errSignature},
		{"signature from another token", "A8", parts[0] + "." + parts[1] + "." + otherParts[2], errSignature},
		{"ES256 signature too short", "A1", esParts[0] + "." + esParts[1] + "." + esParts[2][:40], errSignature},
		{"ES256 signature bit flip", "A1", esParts[0] + "." + esParts[1] + "." + flip(esParts[2], 5), errSignature},
		{"EdDSA signature zeroed", "A1", edParts[0] + "." + edParts[1] + "." + b64(make([]byte, 64)), errSignature},
		{"EdDSA signature short", "A1", edParts[0] + "." + edParts[1] + "." + b64(make([]byte, 10)), errSignature},

		// --- time claims (A9) ---
		{"expired beyond leeway", "A9", claimsTok(fmt.Sprintf(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":%d}`, now-61)), errExpired},
		{"exp absent", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice"}`), errExpired},
		{"exp a numeric string", "A9", claimsTok(fmt.Sprintf(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":"%d"}`, now+3600)), errClaims},
		{"exp RFC 3339 string", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":"2099-01-01T00:00:00Z"}`), errClaims},
		// Fractions and exponents are NumericDates (RFC 7519 §2, issue 11;
		// accepted in TestFractionalNumericDates); absurd ones are not.
		{"exp expired fraction", "A9", claimsTok(fmt.Sprintf(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":%d.999999999}`, now-61)), errExpired},
		{"exp 1e30", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":1000000000000000000000000000000}`), errClaims},
		{"exp exponent 1e30", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":1e30}`), errClaims},
		{"exp exponent past year 9999", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":2.6e11}`), errClaims},
		{"exp exponent that overflows", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":1.8e400}`), errClaims},
		{"exp tiny exponent", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":18e-400}`), errClaims},
		{"exp with 40 fraction digits", "A9", claimsTok(fmt.Sprintf(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":%d.%s}`, now+3600, strings.Repeat("5", 40))), errClaims},
		{"exp negative", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":-1}`), errClaims},
		{"exp negative fraction", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":-0.5}`), errClaims},
		{"exp minus zero", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":-0}`), errClaims},
		{"exp null", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":null}`), errClaims},
		{"exp true", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":true}`), errClaims},
		{"exp year 10000", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":253402300800}`), errClaims},
		{"nbf in the future", "A9", claimsTok(fmt.Sprintf(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"nbf":%d}`, now+61)), errNotYet},
		{"iat in the future", "A9", claimsTok(fmt.Sprintf(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"iat":%d}`, now+120)), errNotYet},
		{"nbf a string", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"nbf":"0"}`), errClaims},
		{"iat huge", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"iat":99999999999999}`), errClaims},
		{"duplicate exp (expired first)", "A9", claimsTok(fmt.Sprintf(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":%d,"exp":{EXP}}`, now-3600)), errClaims},
		{"EXP beside exp (expired first)", "A9", claimsTok(fmt.Sprintf(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":%d,"EXP":{EXP}}`, now-3600)), errClaims},

		// --- issuer (A10) ---
		{"iss wrong", "A10", claimsTok(`{"iss":"https://evil.example","aud":{AUD},"sub":"alice","exp":{EXP}}`), errIssuer},
		{"iss trailing slash", "A10", claimsTok(`{"iss":` + mustJSON(is.ID()+"/") + `,"aud":{AUD},"sub":"alice","exp":{EXP}}`), errIssuer},
		{"iss upper case", "A10", claimsTok(`{"iss":` + mustJSON(strings.ToUpper(is.ID())) + `,"aud":{AUD},"sub":"alice","exp":{EXP}}`), errIssuer},
		{"iss missing", "A10", claimsTok(`{"aud":{AUD},"sub":"alice","exp":{EXP}}`), errIssuer},
		{"iss a number", "A10", claimsTok(`{"iss":1,"aud":{AUD},"sub":"alice","exp":{EXP}}`), errIssuer},
		{"iss in an array", "A10", claimsTok(`{"iss":[{ISS}],"aud":{AUD},"sub":"alice","exp":{EXP}}`), errIssuer},

		// --- audience (A11, A13) ---
		{"aud another resource", "A13", claimsTok(`{"iss":{ISS},"aud":"https://api.other.example/mcp","sub":"alice","exp":{EXP}}`), errAudience},
		{"aud sibling path", "A11", claimsTok(`{"iss":{ISS},"aud":"https://mcp.example.com/mcp2","sub":"alice","exp":{EXP}}`), errAudience},
		{"aud parent path", "A11", claimsTok(`{"iss":{ISS},"aud":"https://mcp.example.com","sub":"alice","exp":{EXP}}`), errAudience},
		{"aud trailing slash", "A11", claimsTok(`{"iss":{ISS},"aud":"https://mcp.example.com/mcp/","sub":"alice","exp":{EXP}}`), errAudience},
		{"aud upper-case host", "A11", claimsTok(`{"iss":{ISS},"aud":"https://MCP.example.com/mcp","sub":"alice","exp":{EXP}}`), errAudience},
		{"aud absent", "A11", claimsTok(`{"iss":{ISS},"sub":"alice","exp":{EXP}}`), errAudience},
		{"aud empty array", "A11", claimsTok(`{"iss":{ISS},"aud":[],"sub":"alice","exp":{EXP}}`), errAudience},
		{"aud empty string", "A11", claimsTok(`{"iss":{ISS},"aud":"","sub":"alice","exp":{EXP}}`), errAudience},
		{"aud a number", "A11", claimsTok(`{"iss":{ISS},"aud":1,"sub":"alice","exp":{EXP}}`), errAudience},
		{"aud array with a number", "A11", claimsTok(`{"iss":{ISS},"aud":[{AUD},1],"sub":"alice","exp":{EXP}}`), errAudience},
		{"aud nested array", "A11", claimsTok(`{"iss":{ISS},"aud":[[{AUD}]],"sub":"alice","exp":{EXP}}`), errAudience},
		{"aud object", "A11", claimsTok(`{"iss":{ISS},"aud":{"aud":{AUD}},"sub":"alice","exp":{EXP}}`), errAudience},
		{"duplicate aud, ours last", "A11", claimsTok(`{"iss":{ISS},"aud":"https://evil.example","aud":{AUD},"sub":"alice","exp":{EXP}}`), errClaims},
		{"duplicate aud, ours first", "A11", claimsTok(`{"iss":{ISS},"aud":{AUD},"aud":"https://evil.example","sub":"alice","exp":{EXP}}`), errClaims},
		{"duplicate aud via escape", "A11", claimsTok(`{"iss":{ISS},"aud":"https://evil.example","\u0061ud":{AUD},"sub":"alice","exp":{EXP}}`), errClaims},
		{"Aud beside aud", "A11", claimsTok(`{"iss":{ISS},"aud":"https://evil.example","Aud":{AUD},"sub":"alice","exp":{EXP}}`), errClaims},
		{"ISS beside iss", "A10", claimsTok(`{"iss":"https://evil.example","ISS":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP}}`), errClaims},
		{"Aud alone is not aud", "A11", claimsTok(`{"iss":{ISS},"Aud":{AUD},"sub":"alice","exp":{EXP}}`), errAudience},

		// --- subject, client id, scope, encoding (A28) ---
		{"a lone Sub in another case", "A27", claimsTok(`{"iss":{ISS},"aud":{AUD},"SUB":"admin","exp":{EXP}}`), errSubject},
		{"sub 129 emoji (258 UTF-16 code units)", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"` + strings.Repeat("😀", 129) + `","exp":{EXP}}`), errSubject},
		{"sub empty", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"","exp":{EXP}}`), errSubject},
		{"sub a number", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":42,"exp":{EXP}}`), errSubject},
		{"sub 257 characters", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"` + strings.Repeat("é", 257) + `","exp":{EXP}}`), errSubject},
		{"sub with a newline", "A24", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice\nlevel=ERROR","exp":{EXP}}`), errSubject},
		{"sub with NUL", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice\u0000","exp":{EXP}}`), errSubject},
		{"sub with C1 control", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice\u0085","exp":{EXP}}`), errSubject},
		{"duplicate sub via escape", "A11", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","s\u0075b":"admin","exp":{EXP}}`), errClaims},
		{"SUB beside sub", "A11", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","SUB":"admin","exp":{EXP}}`), errClaims},
		{"long-s sub beside sub", "A11", claimsTok(`{"iss":{ISS},"aud":{AUD},"ſub":"admin","sub":"alice","exp":{EXP}}`), errClaims},
		{"Sub alone is not sub", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"Sub":"admin","exp":{EXP}}`), errSubject},
		{"payload 513 members", "A14", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP}` + manyMembers(509) + `}`), errClaims},
		{"invalid UTF-8 in sub", "A28", claimsTok("{\"iss\":{ISS},\"aud\":{AUD},\"sub\":\"al\xffice\",\"exp\":{EXP}}"), errClaims},
		{"lone surrogate in sub", "A28", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"al\ud800ice","exp":{EXP}}`), errClaims},
		{"reversed surrogates in sub", "A28", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"\udc00\ud800","exp":{EXP}}`), errClaims},
		{"raw control character in a string", "A28", claimsTok("{\"iss\":{ISS},\"aud\":{AUD},\"sub\":\"a\tb\",\"exp\":{EXP}}"), errClaims},
		{"payload an array", "A14", claimsTok(`[{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP}}]`), errClaims},
		{"payload trailing garbage", "A14", claimsTok(good + `x`), errClaims},
		{"payload two objects", "A14", claimsTok(good + good), errClaims},
		{"payload with a BOM", "A14", claimsTok("\ufeff" + good), errClaims},
		{"payload deeply nested", "A14", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"x":` + deep + `}`), errClaims},
		{"payload empty object", "A9", claimsTok(`{}`), errIssuer},
		{"payload unterminated", "A14", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP}`), errClaims},
		{"payload single quotes", "A14", claimsTok(`{'iss':{ISS}}`), errClaims},
		{"payload NaN", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":NaN}`), errClaims},
		{"client_id a number", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"client_id":7}`), errClientID},
		{"client_id with a control character", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"client_id":"a\u0007"}`), errClientID},
		{"scope a number", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"scope":1}`), errScope},
		{"scope with a quote", "A24", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"scope":"read \"x"}`), errScope},
		{"scope with a backslash", "A24", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"scope":"read\\\\x"}`), errScope},
		{"scope non-ASCII", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"scope":"réad"}`), errScope},
		{"scp array with a number", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"scp":["read",1]}`), errScope},
		{"scp array with a space inside", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"scp":["read write"]}`), errScope},
		{"scp nested array", "A9", claimsTok(`{"iss":{ISS},"aud":{AUD},"sub":"alice","exp":{EXP},"scp":[["admin"]]}`), errScope},
	}
}

// manyMembers returns n members ,"m0":0,"m1":0… to append to an object.
func manyMembers(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `,"m%d":0`, i)
	}
	return b.String()
}

// noneToken builds header.payload.sig from raw parts (no signing).
func noneToken(header string, payload []byte, sig string) string {
	b64 := base64.RawURLEncoding.EncodeToString
	return b64([]byte(header)) + "." + b64(payload) + "." + sig
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
