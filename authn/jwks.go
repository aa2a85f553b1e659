package authn

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

// keyStore fetches and holds the issuer's JWK Set. It is its own small
// fetcher rather than jwk.Cache: the body is size-capped, one fetch is in
// flight at a time and callers wait for it only as long as their own
// context allows, an unknown kid triggers at most one fetch per cooldown, a
// failed fetch keeps the previous keys, and Close stops everything.
type keyStore struct {
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

	keys       atomic.Pointer[keySet] // nil until the first successful fetch
	lastFailed atomic.Bool            // the most recent completed fetch failed
	backoff    atomic.Int64           // current retry delay after failures, ns

	mu        sync.Mutex
	inflight  *fetchCall
	lastStart time.Time
	closed    bool

	ctx    context.Context // the store's lifetime, canceled by close
	cancel context.CancelFunc
	wg     sync.WaitGroup
	once   sync.Once
}

type fetchCall struct {
	done chan struct{}
	err  error
}

const (
	minBackoff = time.Second
)

func (ks *keyStore) start() {
	ks.ctx, ks.cancel = context.WithCancel(context.Background())
	if ks.after == nil {
		ks.after = time.After
	}
	ks.backoff.Store(int64(minBackoff))
}

// warmUp fetches the keys once, waiting at most until ctx is done, then
// starts the background refresher. A failure is logged, not returned:
// requests get "cannot check now" until keys arrive.
func (ks *keyStore) warmUp(ctx context.Context) {
	c := ks.begin(true)
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

// begin starts a fetch, or returns the one in flight. Unless force is set,
// it starts none within the cooldown after the previous start and returns
// nil. It returns nil after close.
func (ks *keyStore) begin(force bool) *fetchCall {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.inflight != nil {
		return ks.inflight
	}
	if ks.closed {
		return nil
	}
	now := ks.now()
	if !force && !ks.lastStart.IsZero() && now.Sub(ks.lastStart) < ks.cooldown {
		return nil
	}
	c := &fetchCall{done: make(chan struct{})}
	ks.inflight, ks.lastStart = c, now
	ks.wg.Add(1)
	go ks.run(c)
	return c
}

func (ks *keyStore) run(c *fetchCall) {
	defer ks.wg.Done()
	err := ks.fetch()
	if err != nil {
		b := time.Duration(ks.backoff.Load())
		ks.backoff.Store(int64(min(2*b, max(ks.cooldown, minBackoff))))
	} else {
		ks.backoff.Store(int64(minBackoff))
	}
	ks.lastFailed.Store(err != nil)
	ks.mu.Lock()
	ks.inflight = nil
	ks.mu.Unlock()
	c.err = err
	close(c.done)
}

// fetch performs one bounded GET of the JWK Set and installs the usable
// keys. A document without any usable key counts as a failure, so the
// previous keys stay in use.
func (ks *keyStore) fetch() error {
	ctx, cancel := context.WithTimeout(ks.ctx, ks.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return err
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
	set, dropped, err := parseJWKS(body, ks.allowed)
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
// last fetch failed.
func (ks *keyStore) loop() {
	defer ks.wg.Done()
	for {
		d := ks.refresh
		if ks.lastFailed.Load() || ks.keys.Load() == nil {
			d = time.Duration(ks.backoff.Load())
		}
		select {
		case <-ks.ctx.Done():
			return
		case <-ks.after(d):
		}
		c := ks.begin(true)
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

// lookup returns the keys with id kid. An unknown kid may trigger a fetch
// (at most one per cooldown; concurrent callers share it) and waits for it
// until ctx is done. Errors: errKeyID when the kid is unknown to a
// successfully fetched set; an *UnavailableError when there are no keys,
// the last fetch failed, or ctx ended first.
func (ks *keyStore) lookup(ctx context.Context, kid string) ([]publicKey, error) {
	if set := ks.keys.Load(); set != nil {
		if k, ok := (*set)[kid]; ok {
			return k, nil
		}
	}
	if c := ks.begin(false); c != nil {
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
	return nil, errKeyID
}

func (ks *keyStore) unavailable() error {
	return &UnavailableError{RetryAfter: max(time.Duration(ks.backoff.Load()), minBackoff)}
}

// close stops the refresher and any fetch in flight and waits for them.
func (ks *keyStore) close() {
	ks.once.Do(func() {
		ks.mu.Lock()
		ks.closed = true
		ks.mu.Unlock()
		ks.cancel()
		ks.wg.Wait()
	})
}
