package inventory

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcpkit/mcpkit/internal/budget"
	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// Defaults of Options.
const (
	defaultCallbackTimeout = 10 * time.Second
)

// Options configures an [Inventory]. The zero value is valid; each field
// documents what its zero value means. New refuses, with an error naming
// the field, a Grants or Notifier holding a nil pointer or function (a
// typed nil: not the same as leaving the field nil), and a Logger without
// a handler.
type Options struct {
	// PageSize bounds the items of one resources/list or
	// resources/templates/list page, static and listed entries together:
	// 1..100. Zero means 50.
	PageSize int

	// CallbackTimeout bounds each call of a List, Read, Complete or Search
	// callback and of a grants.Store's Grants; the request's own deadline
	// applies when it is earlier. The request is answered (ErrInternal) at
	// the deadline, or up to a hundredth of the timeout (at most 10 ms)
	// after it, even if the callback ignores its context: callbacks run on
	// goroutines of their own, and one that has not returned by then is
	// abandoned and counted (see MaxAbandonedCallbacks). Zero means 10
	// seconds.
	CallbackTimeout time.Duration

	// Sealer seals and opens cursors. Nil means a Sealer with a random
	// process-local key and a 15-minute traversal lifetime: cursors die
	// with the process and are rejected by other replicas. Give the
	// replicas of a fleet Sealers sharing a sealedcursor.KeyRing.
	Sealer *sealedcursor.Sealer

	// Discovery decides whether resources/templates/list shows protected
	// templates to callers who cannot use them. Zero (DiscoveryOpen) shows
	// them to everyone.
	Discovery Discovery

	// Logger receives the operator records of callback failures and
	// contract violations, at Error level. Nil means slog.Default().
	Logger *slog.Logger

	// Gates defines the gates that Resource.Gates, Template.Gates and
	// GlobalGates name. Nil means none.
	Gates []Gate

	// GlobalGates names gates that guard everything the inventory serves,
	// on top of each resource's and template's own. Nil means none.
	GlobalGates []string

	// Grants stores the run-time grants of each subject (see
	// [Inventory.Authorize] and [Inventory.Enable]). Nil means a new
	// [grants.Memory] when some gate is defined, and no grants at all
	// otherwise. Set it (to a grants.Memory, or a store backed by the
	// application's database) to use per-subject overrides without gates.
	Grants grants.Store

	// Notifier is told, after a grant change that changed something, which
	// subject may now see something else. Nil means nobody is told.
	Notifier grants.Notifier
}

// settings are Options with defaults applied.
type settings struct {
	pageSize int
	timeout  time.Duration
	sealer   *sealedcursor.Sealer
	disc     Discovery
	log      *slog.Logger
}

func (o Options) resolve() (settings, error) {
	s := settings{pageSize: o.PageSize, timeout: o.CallbackTimeout, sealer: o.Sealer, disc: o.Discovery, log: o.Logger}
	switch {
	case o.Grants != nil && nilness.Is(o.Grants):
		return s, fmt.Errorf("inventory: Options.Grants is a nil %T: give a store, or nil for the default", o.Grants)
	case o.Notifier != nil && nilness.Is(o.Notifier):
		return s, fmt.Errorf("inventory: Options.Notifier is a nil %T: give a notifier, or nil for none", o.Notifier)
	case o.Sealer != nil && o.Sealer.TTL() <= 0: // a zero Sealer: a made one has a lifetime
		return s, errors.New("inventory: Options.Sealer was not made by sealedcursor.New")
	case o.Logger != nil && o.Logger.Handler() == nil:
		return s, errors.New("inventory: Options.Logger has no handler (a zero slog.Logger): use slog.New, or nil for slog.Default()")
	}
	var err error
	if s.pageSize, err = budget.Items(o.PageSize); err != nil {
		return s, fmt.Errorf("inventory: page size must be 1..%d, got %d", MaxLimit, o.PageSize)
	}
	if s.timeout < 0 {
		return s, errors.New("inventory: callback timeout must not be negative")
	}
	if s.timeout == 0 {
		s.timeout = defaultCallbackTimeout
	}
	if s.disc > DiscoveryProtected {
		return s, fmt.Errorf("inventory: unknown discovery mode %d", s.disc)
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.sealer == nil {
		if s.sealer, err = sealedcursor.New(sealedcursor.Options{}); err != nil {
			return s, fmt.Errorf("inventory: %w", err)
		}
	}
	return s, nil
}
