// Package jwks fetches and holds an issuer's JWK Set for authn's JWT
// verifier: a size-capped, single-flight fetcher with a refresher and a
// bounded reaction to unknown key ids, and the parser that keeps only the
// keys a verifier may use.
package jwks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Store fetches and holds the issuer's JWK Set. It is its own small
// fetcher rather than jwk.Cache: the body is size-capped, one fetch is in
// flight at a time and callers wait for it only as long as their own
// context allows, a failed fetch keeps the previous keys, and Close stops
// everything.
//
// An unknown kid triggers a fetch at most once per cooldown while the JWK
// Set answers, and at most once per failure backoff (1 s doubling up to the
// cooldown) after a fetch failed, so that a key the issuer rotated to
// during an outage is fetched as soon as the backoff — the Retry-After
// requests are told — has passed, and a flood of unknown kids still causes
// at most one fetch per backoff. A failed request-triggered fetch wakes the
// refresher, which then retries with the backoff rather than sleeping its
// refresh interval.
type Store struct {
	url      string
	client   *http.Client
	timeout  time.Duration
	maxBytes int64
	refresh  time.Duration
	cooldown time.Duration
	allowed  []string
	now      func() time.Time
	log      *slog.Logger
	after    func(time.Duration) <-chan time.Time // the refresher's timer (tests inject one)

	keys       atomic.Pointer[Set] // nil until the first successful fetch
	lastFailed atomic.Bool         // the most recent completed fetch failed
	backoff    atomic.Int64        // current retry delay after failures, ns

	mu        sync.Mutex
	inflight  *fetchCall
	lastStart time.Time
	retryAt   time.Time // after a failed fetch: the next may start then; zero after a success
	loggedAt  time.Time // the last log line of a failed request-triggered fetch
	closed    bool
	wake      chan struct{} // a request-triggered fetch failed: the refresher reschedules

	ctx    context.Context // the store's lifetime, canceled by close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

// ErrUnknownKey is Lookup's answer for a kid that a successfully fetched
// set does not hold.
var ErrUnknownKey = errors.New("authn: jwks: unknown key id")

// UnavailableError is Lookup's answer when the keys cannot be checked
// now; RetryAfter is when a request-triggered fetch may start again.
type UnavailableError struct{ RetryAfter time.Duration }

func (e *UnavailableError) Error() string { return "authn: jwks: keys unavailable" }

// Config configures a Store.
type Config struct {
	URL      string
	Client   *http.Client
	Timeout  time.Duration
	MaxBytes int64
	Refresh  time.Duration
	Cooldown time.Duration
	Allowed  []string
	Now      func() time.Time
	Log      *slog.Logger
	After    func(time.Duration) <-chan time.Time // the refresher's timer (tests inject one); nil: time.After
}

// New returns a Store for c; Start starts it.
func New(c Config) *Store {
	return &Store{url: c.URL, client: c.Client, timeout: c.Timeout, maxBytes: c.MaxBytes, refresh: c.Refresh,
		cooldown: c.Cooldown, allowed: c.Allowed, now: c.Now, log: c.Log, after: c.After}
}

type fetchCall struct {
	done chan struct{}
	err  error
}

const (
	minBackoff = time.Second
)

func (ks *Store) Start() {
	ks.ctx, ks.cancel = context.WithCancel(context.Background())
	if ks.after == nil {
		ks.after = time.After
	}
	ks.backoff.Store(int64(minBackoff))
	ks.wake = make(chan struct{}, 1)
}

// WarmUp fetches the keys once, waiting at most until ctx is done, then
// Starts the background refresher. A failure is logged, not returned:
// requests get "cannot check now" until keys arrive.
func (ks *Store) WarmUp(ctx context.Context) {
	c := ks.begin(fetchWarmUp)
	select {
	case <-c.done:
		if c.err != nil {
			ks.log.Warn("authn: jwks: warm-up fetch failed; tokens cannot be checked until keys arrive", slog.String("error", c.err.Error()))
		}
	case <-ctx.Done():
		ks.log.Warn("authn: jwks: warm-up fetch did not finish in time; continuing in the background")
	}
	ks.wg.Add(1)
	go ks.loop()
}

// fetchCause says who asked for a fetch.
type fetchCause uint8

const (
	fetchWarmUp    fetchCause = iota // construction
	fetchRefresher                   // the background refresher
	fetchRequest                     // a token with an unknown kid
)

// begin starts a fetch, or returns the one in flight. A request-triggered
// Fetch (fetchRequest) starts only when the gate is open: after a failed
// fetch, once its backoff has passed (retryAt); otherwise once the
// cooldown after the previous start has passed. A closed gate returns nil,
// as does begin after close.
func (ks *Store) begin(cause fetchCause) *fetchCall {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.inflight != nil {
		return ks.inflight
	}
	if ks.closed {
		return nil
	}
	now := ks.now()
	if cause == fetchRequest {
		if !ks.retryAt.IsZero() {
			if now.Before(ks.retryAt) {
				return nil
			}
		} else if !ks.lastStart.IsZero() && now.Sub(ks.lastStart) < ks.cooldown {
			return nil
		}
	}
	c := &fetchCall{done: make(chan struct{})}
	ks.inflight, ks.lastStart = c, now
	ks.wg.Add(1)
	go ks.run(c, cause)
	return c
}

func (ks *Store) run(c *fetchCall, cause fetchCause) {
	defer ks.wg.Done()
	err := ks.Fetch()
	now := ks.now()
	ks.mu.Lock()
	recovered := err == nil && !ks.retryAt.IsZero()
	if err != nil {
		b := min(2*time.Duration(ks.backoff.Load()), max(ks.cooldown, minBackoff))
		ks.backoff.Store(int64(b))
		ks.retryAt = now.Add(b)
	} else {
		ks.backoff.Store(int64(minBackoff))
		ks.retryAt = time.Time{}
	}
	ks.lastFailed.Store(err != nil)
	logFailure := err != nil && cause == fetchRequest && (ks.loggedAt.IsZero() || now.Sub(ks.loggedAt) >= ks.cooldown)
	if logFailure {
		ks.loggedAt = now
	}
	ks.inflight = nil
	ks.mu.Unlock()
	switch {
	case logFailure:
		// The error texts are fixed (no URL); the kid is never logged.
		ks.log.Warn("authn: jwks: fetch for an unknown key id failed; tokens signed with keys not yet fetched get 503 until the JWK Set answers (logged at most once per cooldown)",
			slog.String("error", err.Error()), slog.Duration("retry_after", time.Duration(ks.backoff.Load())))
	case recovered:
		ks.log.Info("authn: jwks: keys fetched again after failed fetches")
	}
	if err != nil && cause == fetchRequest {
		select { // the refresher retries with the backoff, not after its refresh interval
		case ks.wake <- struct{}{}:
		default:
		}
	}
	c.err = err
	close(c.done)
}

// Fetch performs one bounded GET of the JWK Set and installs the usable
// keys. A document without any usable key counts as a failure, so the
// previous keys stay in use.
func (ks *Store) Fetch() error {
	ctx, cancel := context.WithTimeout(ks.ctx, ks.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return errors.New("authn: jwks: cannot build the request") // the error would hold the URL
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := ks.client.Do(req)
	if err != nil {
		return errors.New("authn: jwks: request failed")
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return fmt.Errorf("authn: jwks: status %d", resp.StatusCode)
	}
	if resp.ContentLength > ks.maxBytes {
		return errors.New("authn: jwks: document too large")
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, ks.maxBytes+1))
	if err != nil {
		return errors.New("authn: jwks: reading the document failed")
	}
	if int64(len(body)) > ks.maxBytes {
		return errors.New("authn: jwks: document too large")
	}
	set, dropped, err := Parse(body, ks.allowed)
	if err != nil {
		return err
	}
	if len(set) == 0 {
		return errors.New("authn: jwks: no usable signature keys")
	}
	ks.keys.Store(&set)
	ks.log.Debug("authn: jwks: keys loaded", slog.Int("usable", len(set)), slog.Int("dropped", dropped))
	return nil
}

// loop refreshes the keys periodically, and retries with backoff while the
// last fetch failed. A failed request-triggered fetch wakes it so that it
// reschedules.
func (ks *Store) loop() {
	defer ks.wg.Done()
	for {
		select {
		case <-ks.ctx.Done():
			return
		case <-ks.wake:
			continue
		case <-ks.after(ks.nextWait()):
		}
		c := ks.begin(fetchRefresher)
		if c == nil {
			return
		}
		select {
		case <-ks.ctx.Done():
			return
		case <-c.done:
			if c.err != nil {
				ks.log.Warn("authn: jwks: refresh failed; keeping the previous keys", slog.String("error", c.err.Error()))
			}
		}
	}
}

// nextWait returns how long the refresher sleeps: until the failure
// backoff has passed after a failed fetch, the backoff while no fetch has
// completed yet, the refresh interval otherwise.
func (ks *Store) nextWait() time.Duration {
	if !ks.lastFailed.Load() {
		if ks.keys.Load() == nil {
			return time.Duration(ks.backoff.Load())
		}
		return ks.refresh
	}
	ks.mu.Lock()
	at := ks.retryAt
	ks.mu.Unlock()
	return max(at.Sub(ks.now()), 0)
}

// Lookup returns the keys with id kid. An unknown kid may trigger a fetch
// (at most one per cooldown, or per failure backoff after a failed fetch;
// concurrent callers share it) and waits for it until ctx is done. Errors: ErrUnknownKey when the kid is unknown to a
// successfully fetched set; an *UnavailableError when there are no keys,
// the last fetch failed, or ctx ended first.
func (ks *Store) Lookup(ctx context.Context, kid string) ([]Key, error) {
	if set := ks.keys.Load(); set != nil {
		if k, ok := (*set)[kid]; ok {
			return k, nil
		}
	}
	if c := ks.begin(fetchRequest); c != nil {
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, ks.unavailable()
		}
		if set := ks.keys.Load(); set != nil {
			if k, ok := (*set)[kid]; ok {
				return k, nil
			}
		}
	}
	if ks.keys.Load() == nil || ks.lastFailed.Load() {
		return nil, ks.unavailable()
	}
	return nil, ErrUnknownKey
}

// Current returns the current set for a token without kid. With no set
// yet it triggers (or shares) a gated fetch and waits for it until ctx is
// done; errors as Lookup's.
func (ks *Store) Current(ctx context.Context) (*Set, error) {
	if set := ks.keys.Load(); set != nil {
		return set, nil
	}
	if c := ks.begin(fetchRequest); c != nil {
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, ks.unavailable()
		}
	}
	if set := ks.keys.Load(); set != nil {
		return set, nil
	}
	return nil, ks.unavailable()
}

// Refetch is Lookup's reaction to an unknown kid for a token without kid
// whose keys did not do (none fitted, or the one that fitted did not
// verify: the issuer may have rotated): it triggers a fetch under the same
// gate (at most one per cooldown, or per failure backoff) and waits for it
// until ctx is done. It returns the set after it when that is another set
// than old, else nil: a forged token without kid costs what a random kid
// costs, and nothing more.
func (ks *Store) Refetch(ctx context.Context, old *Set) *Set {
	c := ks.begin(fetchRequest)
	if c == nil {
		return nil
	}
	select {
	case <-c.done:
	case <-ctx.Done():
		return nil
	}
	if set := ks.keys.Load(); set != nil && set != old {
		return set
	}
	return nil
}

// unavailable returns the error of a key that cannot be checked now. Its
// RetryAfter is the time until a request-triggered fetch may start again
// (the failure backoff's remainder), and at least a second: a client
// retrying then triggers, or shares, the next fetch.
func (ks *Store) unavailable() error {
	ks.mu.Lock()
	at := ks.retryAt
	ks.mu.Unlock()
	return &UnavailableError{RetryAfter: max(at.Sub(ks.now()), minBackoff)}
}

// Close stops the refresher and any fetch in flight and waits for them.
func (ks *Store) Close() {
	ks.once.Do(func() {
		ks.mu.Lock()
		ks.closed = true
		ks.mu.Unlock()
		ks.cancel()
		ks.wg.Wait()
	})
}
