package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/audit"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// The flag defaults of the rate limits: calls a second and burst per
// caller, for each method class (see ratelimit.Limits; tool calls count as
// what they do: list_resources as a list, read_resource, fetch and the
// template tools as reads, search as a search), and the calls one caller
// may have in flight at once.
//
// Real clients must survive them: none of the TypeScript SDK v1 and v2
// and go-sdk clients retries a 429, so a walk that outruns a bucket loses
// resources. The read burst holds two back-to-back walks of a user with
// 1,000 documents (2,000 reads, 40 list pages of 50) however fast one
// client goes, one call after another, with a quarter to spare; 100 a
// second after it keeps a longer walk going at a pace no person reads
// at. The other class (initialize, ping, tools of no class, and every
// anonymous call of one address) holds the conformance suite's 213 calls
// in under two seconds twice over. A flood is refused by the bound on
// calls in flight instead: a caller with DefaultMaxInFlight calls being
// served gets 429 for the next (a client that waits for each answer never
// does), and the buckets bound what it sustains.
const (
	DefaultRateList   = "20:100"
	DefaultRateRead   = "100:2500"
	DefaultRateSearch = "20:100"
	DefaultRateOther  = "50:500"
	// DefaultRateRefused limits refused credentials per client address
	// (forged or expired tokens): 20 at once, then one a second, before
	// any signature is checked (see ratelimit.Limits.Refused).
	DefaultRateRefused = "1:20"
	// DefaultMaxInFlight is the calls one caller may have in flight at
	// once (see ratelimit.Limits.MaxInFlight): 8, more than the six
	// connections a browser opens to one host.
	DefaultMaxInFlight = 8
)

// AuditStdout is the -audit-log value that writes audit records to
// Config.Stdout.
const AuditStdout = "stdout"

// parseRate reads a -rate-* value: "PERSECOND[:BURST]", "0" or "off" for
// no limit; "" is no limit too (Config's zero value).
func parseRate(s string) (ratelimit.Rate, error) {
	if s == "" || s == "off" || s == "0" {
		return ratelimit.Rate{}, nil
	}
	per, burst, hasBurst := strings.Cut(s, ":")
	r, err := strconv.ParseFloat(per, 64)
	if err != nil || r <= 0 || math.IsInf(r, 0) || math.IsNaN(r) {
		return ratelimit.Rate{}, errors.New("must be PERSECOND[:BURST] with a positive rate, or off")
	}
	rate := ratelimit.Rate{PerSecond: r}
	if hasBurst {
		b, err := strconv.Atoi(burst)
		if err != nil || b < 1 {
			return ratelimit.Rate{}, errors.New("the burst (after the colon) must be a whole number of at least 1")
		}
		rate.Burst = b
	}
	return rate, nil
}

// rateFlags are the rate limit settings with their flags, in class order.
func (c Config) rateFlags() []struct{ flag, value string } {
	return []struct{ flag, value string }{
		{"rate-list", c.RateList}, {"rate-read", c.RateRead}, {"rate-search", c.RateSearch}, {"rate-other", c.RateOther},
		{"rate-refused", c.RateRefused},
	}
}

// clientAddr returns the client address of a request behind the proxies
// -trusted-proxies names, or nil without any (the remote address is the
// client's).
func (a *App) clientAddr() (func(*http.Request) netip.Addr, error) {
	if a.cfg.TrustedProxies == "" {
		return nil, nil
	}
	proxies, err := ratelimit.NewTrustedProxies(a.cfg.TrustedProxies, a.cfg.ProxyHeader)
	if err != nil {
		return nil, &ConfigError{Flag: "trusted-proxies", Problem: "must be comma-separated IP addresses and CIDR prefixes"}
	}
	return proxies.ClientAddr, nil
}

// bodyLimits are the endpoint's body limits: the defaults, with an
// anonymous body charged to the share of the client a trusted proxy
// vouches for.
func (a *App) bodyLimits() (jsonrpc.Limits, error) {
	addr, err := a.clientAddr()
	return jsonrpc.Limits{ClientAddr: addr, Budget: a.bodyBudget()}, err
}

// bodyBudget is the memory budget of request bodies: the MCP endpoint's
// and the REST API's count together. It is made with the endpoint (New),
// before anything is served.
func (a *App) bodyBudget() *jsonrpc.BodyBudget {
	if a.bodies == nil {
		a.bodies = jsonrpc.NewBodyBudget(0, jsonrpc.BudgetOptions{Log: a.log})
	}
	return a.bodies
}

// newRateLimiter returns the per-caller rate limiter, or nil when no
// class is limited.
func (a *App) newRateLimiter() (*ratelimit.Limiter, error) {
	var rates [5]ratelimit.Rate
	limited := false
	for i, f := range a.cfg.rateFlags() {
		r, err := parseRate(f.value)
		if err != nil {
			return nil, &ConfigError{Flag: f.flag, Problem: err.Error()}
		}
		rates[i], limited = r, limited || r.PerSecond > 0
	}
	if !limited && a.cfg.MaxInFlight <= 0 {
		return nil, nil
	}
	lim := ratelimit.Limits{List: rates[0], Read: rates[1], Search: rates[2], Other: rates[3], Refused: rates[4], Logger: a.log,
		MaxInFlight: max(0, a.cfg.MaxInFlight)}
	// The anonymous buckets and the refused credentials (the
	// Authenticator's Throttle) key on the client a trusted proxy vouches for.
	var err error
	if lim.ClientAddr, err = a.clientAddr(); err != nil {
		return nil, err
	}
	if a.redis != nil {
		lim.Store, lim.FailClosed = a.redis.rates, a.cfg.RateFailClosed
	}
	return ratelimit.New(lim)
}

// newAudit returns the audit trail's Observer, on its own stream (never
// the operator log): JSON lines to Config.AuditWriter, else to
// Config.Stdout for "stdout", else appended to the file -audit-log names;
// nil when it is off.
func (a *App) newAudit() (mcphttp.Observer, error) {
	w := a.cfg.AuditWriter
	switch v := a.cfg.AuditLog; {
	case w != nil:
	case v == "" || v == "off":
		return nil, nil
	case v == AuditStdout:
		if a.cfg.Stdout == nil {
			return nil, nil
		}
		w = a.cfg.Stdout
	default:
		f, err := os.OpenFile(v, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return nil, fmt.Errorf("audit log (-audit-log): %w", err)
		}
		a.auditFile, w = f, f
	}
	issuer := "" // with one trusted issuer, principals carry none: the trail names it
	switch {
	case a.dev != nil:
		issuer = a.dev.Issuer()
	case len(a.cfg.MoreIssuers) == 0:
		issuer = a.cfg.Issuer
	}
	// Refusals are recorded and aggregated by the client a trusted proxy
	// vouches for, as the limits key on.
	addr, err := a.clientAddr()
	if err != nil {
		return nil, err
	}
	a.audit = audit.New(audit.Options{Logger: slog.New(slog.NewJSONHandler(w, nil)), Issuer: issuer, ClientAddr: addr})
	return a.audit, nil
}

// closeAudit records the refusals the audit counted and not yet
// recorded, and closes the audit file, if there is one.
func (a *App) closeAudit() error {
	if a.audit != nil {
		a.audit.Flush(context.Background())
	}
	if a.auditFile == nil {
		return nil
	}
	return a.auditFile.Close()
}
