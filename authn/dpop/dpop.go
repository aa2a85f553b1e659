package dpop

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpkit/mcpkit/authn/internal/htu"
	"github.com/mcpkit/mcpkit/authn/internal/jose"
	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/principal"

	"github.com/lestrrat-go/jwx/v2/jws"
)

// Mode says whether an authn.Authenticator accepts DPoP (RFC 9449)
// sender-constrained tokens. The zero value is Off.
type Mode uint8

const (
	// Off: only the Bearer scheme. "Authorization: DPoP …" is another
	// scheme, as if absent. A DPoP-bound token (one whose "cnf" names a
	// key, RFC 9449 §6) is still refused as a bearer token: presenting it
	// without a proof would make the binding worthless.
	Off Mode = iota
	// Allowed: both schemes. DPoP-bound tokens need the DPoP scheme
	// and a valid proof on every request; plain bearer tokens are accepted
	// with the Bearer scheme.
	Allowed
	// Required: only the DPoP scheme with a DPoP-bound token and a
	// valid proof; every Bearer request is refused (invalid_token).
	Required
)

// String returns "off", "allowed" or "required".
func (m Mode) String() string {
	switch m {
	case Off:
		return "off"
	case Allowed:
		return "allowed"
	case Required:
		return "required"
	}
	return "invalid"
}

// Options configures DPoP in [Options]. The zero value is DPoP off.
type Options struct {
	// Mode turns DPoP on. The zero value, Off, keeps the Bearer-only
	// behaviour (the challenges are exactly those without DPoP).
	Mode Mode

	// Algorithms is the allowlist of proof signature algorithms, published
	// in the challenges' algs and meant for the metadata's
	// dpop_signing_alg_values_supported. Nil means
	// [DefaultAlgorithms] (ES256, EdDSA, PS256, RS256). Only
	// asymmetric algorithms can be configured: RS*, PS*, ES256/384/512,
	// EdDSA.
	Algorithms []string

	// ProofWindow is how far a proof's iat may be from the server's clock,
	// before or after. Zero means 60 s; at most 10 minutes. A proof's jti
	// is remembered for twice the window, so it cannot be used twice.
	ProofWindow time.Duration

	// BaseURL is the scheme and authority (and path prefix, if a proxy
	// strips one) that clients use to reach this server: a proof's htu
	// must equal BaseURL followed by the request's path, after RFC 3986
	// normalization (RFC 9449 §4.3). Empty means the origin of
	// Options.Resource, which is already the external URL. The request's
	// Host header is never used: a proof made for another server must not
	// become valid here by a spoofed Host.
	BaseURL string

	// RequireNonce makes every proof carry a nonce this server issued
	// (RFC 9449 §9): a proof without one, or with an expired one, is
	// answered 401 use_dpop_nonce with a fresh DPoP-Nonce header, and the
	// client retries. Nonces bound how far ahead a client can make proofs.
	RequireNonce bool

	// NonceLifetime is how long an issued nonce is accepted. Zero means
	// 5 minutes; at most an hour.
	NonceLifetime time.Duration

	// NonceSecret keys the nonces (an HMAC over their issue time), so the
	// instances of a fleet accept each other's: at least 32 random bytes,
	// shared by them. Nil means a random key per process (a client that
	// moves to another instance is told to retry with a new nonce).
	NonceSecret []byte

	// MaxReplayEntries bounds the proofs remembered for replay detection
	// (in memory, per process). Zero means 100 000: at most about 9.5 MB
	// with the per-caller counters (both generations grown to the bound,
	// every proof another caller's; 4.7 MB for the proofs alone, about 95
	// and 47 bytes a proof). When it is full of live entries, new proofs are
	// refused with 503 and Retry-After rather than admitted unchecked.
	// Proofs are remembered per process: behind a load balancer without
	// affinity, a proof replayed to another instance is detected only by
	// that instance's own memory; use nonces, short windows, or affinity.
	MaxReplayEntries int

	// MaxReplayEntriesPerCaller is each caller's share of MaxReplayEntries,
	// so that no caller can fill the memory and lock the others out: a
	// caller holding its share gets 503 and Retry-After (when its oldest
	// proofs age out) for its new proofs, while everyone else's are still
	// remembered and accepted. A caller is the token's identity together
	// with the key the token is bound to (cnf.jkt): its issuer and
	// subject, else its issuer and client id, and the key. A proof's key
	// must be the token's, so an attacker cannot multiply shares by
	// minting proof keys, while instances of one client holding tokens
	// bound to keys of their own have shares of their own. Only a proof
	// that passed every other check, with its token, counts. A proof stays remembered between two and four
	// ProofWindows, so a caller can make about MaxReplayEntriesPerCaller /
	// (4 × ProofWindow) proofs a second, sustained, and its share at once.
	// Zero means MaxReplayEntries / 50 (2 000 by default: 8 proofs a
	// second with the default window, and 50 callers at their share to
	// fill the memory); at most MaxReplayEntries, which turns shares off.
	MaxReplayEntriesPerCaller int

	// ReplayStore remembers the accepted proofs. Nil means this
	// process's memory (bounded by MaxReplayEntries, with per-caller
	// shares). Instances of a fleet that share one (a Redis one, say) make
	// the replay protection the resource's: a proof accepted by one
	// instance is refused by every other. A store that cannot answer
	// refuses the proof (503, fail closed), never accepts it unremembered.
	ReplayStore ReplayStore

	// MaxProofBytes bounds the DPoP header; a longer proof is refused
	// (invalid_dpop_proof) before it is decoded. Zero means 8 KiB.
	MaxProofBytes int

	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
}

// DefaultAlgorithms are the proof algorithms accepted when
// [Options.Algorithms] is nil.
func DefaultAlgorithms() []string { return []string{"ES256", "EdDSA", "PS256", "RS256"} }

const (
	defaultProofWindow   = 60 * time.Second
	maxProofWindow       = 10 * time.Minute
	defaultNonceLifetime = 5 * time.Minute
	maxNonceLifetime     = time.Hour
	defaultMaxReplay     = 100_000
	replayShares         = 50 // MaxReplayEntries / MaxReplayEntriesPerCaller by default
	defaultMaxProofBytes = 8 << 10
)

// Checker verifies proofs for an authn.Authenticator. It is safe for
// concurrent use, and immutable after
// construction except for its replay cache.
type Checker struct {
	mode      Mode
	allowed   []string
	algs      string // space-separated, for challenges
	verifiers map[string]jws.Verifier
	window    time.Duration
	base      string // normalized, without a trailing "/"
	maxBytes  int
	nonces    *nonceSource // nil unless RequireNonce
	replay    *replayCache // when store is nil
	store     ReplayStore
	warned    atomic.Int64 // when a store failure was last logged (unix ns)
	now       func() time.Time
	log       *slog.Logger
}

// New validates o and returns the Checker of the resource given (its
// origin is the default Options.BaseURL), logging to log; nil when o.Mode
// is Off.
func New(o Options, resource string, log *slog.Logger) (*Checker, error) {
	if log == nil {
		log = slog.Default()
	}
	switch o.Mode {
	case Off:
		return nil, nil
	case Allowed, Required:
	default:
		return nil, fmt.Errorf("authn: dpop.Options.Mode %d is not a mode", o.Mode)
	}
	algs := o.Algorithms
	if algs == nil {
		algs = DefaultAlgorithms()
	}
	allowed, err := jose.CheckAlgorithms(algs)
	if err != nil {
		return nil, fmt.Errorf("authn: dpop.Options.Algorithms: %w", err)
	}
	if err := nilness.Refuse("authn", "dpop.Options.ReplayStore", o.ReplayStore); err != nil {
		return nil, err
	}
	verifiers, err := jose.Verifiers(allowed)
	if err != nil {
		return nil, err
	}
	c := &Checker{
		mode: o.Mode, allowed: allowed, algs: strings.Join(allowed, " "), verifiers: verifiers,
		window: o.ProofWindow, maxBytes: o.MaxProofBytes, now: o.Now, log: log, store: o.ReplayStore,
	}
	if c.now == nil {
		c.now = time.Now
	}
	for _, step := range []func(Options, string) error{c.setLimits, c.setBase, c.setReplay, c.setNonces} {
		if err := step(o, resource); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// setLimits applies ProofWindow and MaxProofBytes.
func (c *Checker) setLimits(Options, string) error {
	switch {
	case c.window < 0 || c.window > maxProofWindow:
		return fmt.Errorf("authn: dpop.Options.ProofWindow must be from 0 to %v", maxProofWindow)
	case c.window == 0:
		c.window = defaultProofWindow
	}
	switch {
	case c.maxBytes < 0:
		return errors.New("authn: dpop.Options.MaxProofBytes must not be negative")
	case c.maxBytes == 0:
		c.maxBytes = defaultMaxProofBytes
	}
	return nil
}

// setBase applies BaseURL, by default the origin of resource.
func (c *Checker) setBase(o Options, resource string) error {
	base := o.BaseURL
	if base == "" {
		origin, _, err := jose.SplitResource(resource)
		if err != nil {
			return err
		}
		base = origin
	} else if _, err := jose.ParseSecureURL("dpop.Options.BaseURL", base, true); err != nil {
		return err
	}
	n, ok := htu.Normalize(base)
	if !ok {
		return errors.New("authn: dpop.Options.BaseURL cannot be normalized as an http(s) URL")
	}
	c.base = strings.TrimSuffix(n, "/")
	return nil
}

// setReplay applies MaxReplayEntries and MaxReplayEntriesPerCaller.
func (c *Checker) setReplay(o Options, _ string) error {
	maxReplay := o.MaxReplayEntries
	switch {
	case maxReplay < 0:
		return errors.New("authn: dpop.Options.MaxReplayEntries must not be negative")
	case maxReplay == 0:
		maxReplay = defaultMaxReplay
	}
	share := o.MaxReplayEntriesPerCaller
	switch {
	case share < 0 || share > maxReplay:
		return errors.New("authn: dpop.Options.MaxReplayEntriesPerCaller must be from 0 to MaxReplayEntries")
	case share == 0:
		share = max(maxReplay/replayShares, 1)
	}
	c.replay = newReplayCache(maxReplay, share, 2*c.window+time.Second)
	return nil
}

// setNonces applies RequireNonce, NonceLifetime and NonceSecret.
func (c *Checker) setNonces(o Options, _ string) error {
	if !o.RequireNonce {
		if o.NonceSecret != nil || o.NonceLifetime != 0 {
			return errors.New("authn: dpop.Options.NonceSecret and NonceLifetime need RequireNonce")
		}
		return nil
	}
	life := o.NonceLifetime
	switch {
	case life < 0 || life > maxNonceLifetime:
		return fmt.Errorf("authn: dpop.Options.NonceLifetime must be from 0 to %v", maxNonceLifetime)
	case life == 0:
		life = defaultNonceLifetime
	}
	secret := o.NonceSecret
	if secret == nil {
		secret = make([]byte, 32)
		_, _ = rand.Read(secret) // crypto/rand.Read never fails (Go ≥ 1.24)
	} else if len(secret) < 32 {
		return errors.New("authn: dpop.Options.NonceSecret must have at least 32 bytes")
	}
	c.nonces = &nonceSource{secret: append([]byte(nil), secret...), life: life}
	return nil
}

// ProofOf returns the request's one DPoP proof, parsed but not yet
// verified. Errors: ErrInvalidProof (no DPoP header, several, or a
// proof that is malformed, oversized, or breaks the header rules).
func (c *Checker) ProofOf(r *http.Request) (*Proof, error) {
	if c == nil || c.verifiers == nil {
		return nil, errNotMade
	}
	values := r.Header["Dpop"]
	if len(values) != 1 {
		return nil, errProofHeaders
	}
	return parseProof(values[0], c.maxBytes, c.allowed)
}

// Check verifies a parsed proof for request r carrying token, whose
// verified principal p is bound to the key with thumbprint p.DPoPThumbprint
// (RFC 9449 §4.3 and §7.1): the signature by the proof's own key, htm,
// htu, iat, ath, the key binding, the nonce, and finally that the proof
// was not seen before (only a proof that passed every other check is
// remembered, and charged to p's share of the replay memory).
func (c *Checker) Check(r *http.Request, pr *Proof, token string, p *principal.Principal) error {
	if c == nil || c.verifiers == nil || pr == nil {
		return errNotMade
	}
	if err := pr.verify(c.verifiers[pr.alg]); err != nil {
		return err
	}
	if pr.htm != r.Method {
		return errProofMethod
	}
	if !c.htuOK(r, pr.htu) {
		return errProofURL
	}
	now := c.now()
	if pr.iat.Before(now.Add(-c.window)) || pr.iat.After(now.Add(c.window)) {
		return errProofTime
	}
	ath := sha256.Sum256([]byte(token))
	var want [43]byte
	b64.Encode(want[:], ath[:])
	if subtle.ConstantTimeCompare(want[:], []byte(pr.ath)) != 1 {
		return errProofATH
	}
	if subtle.ConstantTimeCompare([]byte(pr.jkt), []byte(p.DPoPThumbprint)) != 1 {
		return ErrKeyMismatch
	}
	if c.nonces != nil && !c.nonces.valid(pr.nonce, now) {
		return ErrUseNonce
	}
	if c.store != nil {
		return c.remember(r, pr, p)
	}
	res, retry, warn := c.replay.add(pr.replayKey(), c.identity(p), now)
	switch res {
	case replaySeen:
		return errProofReplay
	case replayFull:
		if warn { // once a rotation period, not on every refused request
			c.log.Warn("authn: dpop: the replay cache is full of live proofs; refusing new ones until it rotates (raise Options.MaxReplayEntries)")
		}
		return &UnavailableError{RetryAfter: retry}
	case replayOverShare:
		if warn {
			c.log.Warn("authn: dpop: a caller holds its share of the replay cache; refusing its new proofs until they age out (Options.MaxReplayEntriesPerCaller)")
		}
		return &UnavailableError{RetryAfter: retry}
	}
	return nil
}

// remember records an accepted proof in the shared ReplayStore: a replay
// is invalid_dpop_proof, anything else the store cannot do is 503.
func (c *Checker) remember(r *http.Request, pr *Proof, p *principal.Principal) error {
	k := pr.replayKey()
	err := c.store.Remember(r.Context(), b64.EncodeToString(k[:]), shareKey(p), pr.iat.Add(c.window))
	var ue *UnavailableError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrReplayed):
		return errProofReplay
	case errors.As(err, &ue):
		return ue // a full store, or the caller at its share: the store says when
	}
	if now := time.Now().UnixNano(); now-c.warned.Load() >= int64(time.Minute) {
		c.warned.Store(now)
		c.log.Warn("authn: dpop: the replay store cannot answer; refusing proofs until it does (fail closed)")
	}
	return &UnavailableError{RetryAfter: time.Second}
}

// shareKey is identity's form that a shared store keeps: stable across
// processes (unlike identity's seeded hash), and revealing no identifier.
func shareKey(p *principal.Principal) string {
	h := sha256.New()
	for _, part := range []string{p.Issuer, p.Subject, p.ClientID, p.DPoPThumbprint} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	var sum [sha256.Size]byte
	return b64.EncodeToString(h.Sum(sum[:0])[:16])
}

// identity returns the replay-cache share p is charged to: a keyed hash
// of p's issuer, its subject (else its client id, else nothing) and its
// bound key (cnf.jkt, which every accepted proof's key equals). Each
// bound key of an identity has a share of its own, so that instances of
// one client (client-credentials tokens, whose subject is often the
// client id) with keys of their own never exhaust each other's share,
// while one token holder still cannot fill the memory: its proofs all
// come from the token's one key. The kinds are told apart by a leading
// byte, and the parts are separated by a NUL, which none of them
// contains.
func (c *Checker) identity(p *principal.Principal) uint64 {
	kind, who := byte('s'), p.Subject
	switch {
	case who != "":
	case p.ClientID != "":
		kind, who = 'c', p.ClientID
	default:
		kind = 'k'
	}
	var h maphash.Hash
	h.SetSeed(c.replay.seed)
	_ = h.WriteByte(kind)
	_, _ = h.WriteString(p.Issuer)
	_ = h.WriteByte(0)
	_, _ = h.WriteString(who)
	_ = h.WriteByte(0)
	_, _ = h.WriteString(p.DPoPThumbprint)
	return h.Sum64()
}

// htuOK compares a proof's htu with the URL of r (BaseURL and the
// request's path), both normalized, query and fragment ignored.
func (c *Checker) htuOK(r *http.Request, claim string) bool {
	got, ok := htu.Normalize(claim)
	if !ok || r.URL == nil {
		return false
	}
	p := r.URL.EscapedPath()
	if p == "" {
		p = "/"
	}
	want, ok := htu.Normalize(c.base + p)
	return ok && got == want
}

// ReplayStore remembers the DPoP proofs an authn.Authenticator accepted, so
// that none is accepted twice (RFC 9449 §11.1), across the processes that
// share it (Options.ReplayStore). Implementations must be safe for
// concurrent use and answer in one round trip, atomically: of two
// processes remembering the same proof at once, exactly one succeeds.
type ReplayStore interface {
	// Remember records proof — an opaque digest of the proof's key and
	// jti, unique to one proof — charged to caller (an opaque digest of
	// the identity and its bound key: the share it counts against) until
	// expires, after which the proof could not be accepted anyway. It
	// returns ErrReplayed when proof is remembered already, an
	// *UnavailableError (with RetryAfter) when it will not remember it
	// now (full, or the caller at its share), and any other error when it
	// cannot answer: every error refuses the proof.
	Remember(ctx context.Context, proof, caller string, expires time.Time) error
}

// errNotMade: a Checker not made by New.
var errNotMade = errors.New("authn: dpop.Checker not made by dpop.New")

// Mode returns the checker's mode: Allowed or Required (Off for nil).
func (c *Checker) Mode() Mode {
	if c == nil {
		return Off
	}
	return c.mode
}

// Algorithms returns the proof algorithms accepted, sorted.
func (c *Checker) Algorithms() []string {
	if c == nil {
		return nil
	}
	return slices.Clone(c.allowed)
}

// Nonce returns a fresh server nonce for a DPoP-Nonce header, or "" when
// Options.RequireNonce is off.
func (c *Checker) Nonce() string {
	if c == nil || c.nonces == nil {
		return ""
	}
	return c.nonces.issue(c.now())
}

// Len returns how many proofs, and for how many callers, the in-process
// replay memory holds (zero with a ReplayStore).
func (c *Checker) Len() (proofs, callers int) {
	if c == nil || c.replay == nil {
		return 0, 0
	}
	return c.replay.len()
}
