// Package dpopcheck verifies DPoP proofs (RFC 9449) for authn's
// Authenticator: the checker behind authn/dpop's Options.
package dpopcheck

import (
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

	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/authn/internal/jose"

	"github.com/mcpkit/mcpkit/authn/internal/htu"
	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/principal"

	"github.com/lestrrat-go/jwx/v2/jws"
)

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
	mode      dpop.Mode
	allowed   []string
	algs      string // space-separated, for challenges
	verifiers map[string]jws.Verifier
	window    time.Duration
	base      string // normalized, without a trailing "/"
	maxBytes  int
	nonces    *nonceSource // nil unless RequireNonce
	replay    *replayCache // when store is nil
	store     dpop.ReplayStore
	warned    atomic.Int64 // when a store failure was last logged (unix ns)
	now       func() time.Time
	log       *slog.Logger
}

// New validates o and returns the Checker of the resource given (its
// origin is the default dpop.Options.BaseURL), logging to log; nil when o.Mode
// is dpop.Off.
func New(o dpop.Options, resource string, log *slog.Logger) (*Checker, error) {
	if log == nil {
		log = slog.Default()
	}
	switch o.Mode {
	case dpop.Off:
		return nil, nil
	case dpop.Allowed, dpop.Required:
	default:
		return nil, fmt.Errorf("authn: dpop.Options.Mode %d is not a mode", o.Mode)
	}
	algs := o.Algorithms
	if algs == nil {
		algs = dpop.DefaultAlgorithms()
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
	for _, step := range []func(dpop.Options, string) error{c.setLimits, c.setBase, c.setReplay, c.setNonces} {
		if err := step(o, resource); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// setLimits applies ProofWindow and MaxProofBytes.
func (c *Checker) setLimits(dpop.Options, string) error {
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
func (c *Checker) setBase(o dpop.Options, resource string) error {
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
func (c *Checker) setReplay(o dpop.Options, _ string) error {
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
func (c *Checker) setNonces(o dpop.Options, _ string) error {
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
// verified. Errors: dpop.ErrInvalidProof (no DPoP header, several, or a
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
		return dpop.ErrKeyMismatch
	}
	if c.nonces != nil && !c.nonces.valid(pr.nonce, now) {
		return dpop.ErrUseNonce
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
			c.log.Warn("authn: dpop: the replay cache is full of live proofs; refusing new ones until it rotates (raise dpop.Options.MaxReplayEntries)")
		}
		return &dpop.UnavailableError{RetryAfter: retry}
	case replayOverShare:
		if warn {
			c.log.Warn("authn: dpop: a caller holds its share of the replay cache; refusing its new proofs until they age out (dpop.Options.MaxReplayEntriesPerCaller)")
		}
		return &dpop.UnavailableError{RetryAfter: retry}
	}
	return nil
}

// remember records an accepted proof in the shared ReplayStore: a replay
// is invalid_dpop_proof, anything else the store cannot do is 503.
func (c *Checker) remember(r *http.Request, pr *Proof, p *principal.Principal) error {
	k := pr.replayKey()
	err := c.store.Remember(r.Context(), b64.EncodeToString(k[:]), shareKey(p), pr.iat.Add(c.window))
	var ue *dpop.UnavailableError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, dpop.ErrReplayed):
		return errProofReplay
	case errors.As(err, &ue):
		return ue // a full store, or the caller at its share: the store says when
	}
	if now := time.Now().UnixNano(); now-c.warned.Load() >= int64(time.Minute) {
		c.warned.Store(now)
		c.log.Warn("authn: dpop: the replay store cannot answer; refusing proofs until it does (fail closed)")
	}
	return &dpop.UnavailableError{RetryAfter: time.Second}
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

// errNotMade: a Checker not made by New.
var errNotMade = errors.New("authn: dpop.Checker not made by dpop.New")

// Mode returns the checker's mode: dpop.Allowed or dpop.Required (dpop.Off for nil).
func (c *Checker) Mode() dpop.Mode {
	if c == nil {
		return dpop.Off
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
// dpop.Options.RequireNonce is off.
func (c *Checker) Nonce() string {
	if c == nil || c.nonces == nil {
		return ""
	}
	return c.nonces.issue(c.now())
}

// Len returns how many proofs, and for how many callers, the in-process
// replay memory holds (zero with a dpop.ReplayStore).
func (c *Checker) Len() (proofs, callers int) {
	if c == nil || c.replay == nil {
		return 0, 0
	}
	return c.replay.len()
}
