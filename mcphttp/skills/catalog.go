package skills

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/internal/callback"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// ListFunc returns the next at most req.Limit skills of the caller
// (req.Principal), in strictly increasing Key order, strictly after
// req.After: the contract of inventory.ListFunc, with skills for entries.
type ListFunc func(ctx context.Context, req inventory.ListRequest) (Page, error)

// GetFunc returns the entry of the skill whose SKILL.md is at req.URI,
// if the caller may see it; inventory.ErrNotFound (or an error wrapping
// it) when there is no such skill or the caller may not see it: the two
// must look the same.
type GetFunc func(ctx context.Context, req GetRequest) (Skill, error)

// GetRequest is what a GetFunc receives.
type GetRequest struct {
	// URI is the SKILL.md URI the client asked for, exactly as sent.
	URI string
	// Dir is URI without "/SKILL.md": the skill's directory.
	Dir string
	// Name is the skill name, Dir's last segment (a valid name: a URI
	// with another never reaches the GetFunc).
	Name string
	// Principal is the authenticated caller, with the identity the
	// template's Owner names: never nil, never without that identity. It
	// is the kit's own: read it, never modify it (the spelling of every
	// callback's caller: inventory's requests, tools.Request).
	Principal *principal.Principal
}

// Page is one answer of a ListFunc.
type Page struct {
	Skills []Skill
	// HasMore says skills after the last one may exist; it requires at
	// least one skill.
	HasMore bool
}

// Source is where a Catalog's skills come from: the application's
// callbacks, and the template of the inventory whose Read serves their
// files through resources/read.
type Source struct {
	// Template names the inventory template (a protected one, normally
	// owned by the subject) whose URIs are the skills' files. Its access,
	// required scopes, owner and gates decide who may use the source:
	// skills/list lists nothing for a caller who may not read it (as
	// resources/templates/list hides such a template; a caller short only
	// of its scopes gets a step-up challenge), and skills/get and
	// resources/directory/read answer for a URI the caller may not read
	// as for one that does not exist.
	Template string
	// List lists the caller's skills. Required.
	List ListFunc
	// Get returns one skill of the caller's. Required.
	Get GetFunc
}

// Options configures a Catalog. The zero value is valid.
type Options struct {
	// PageSize bounds the skills of one skills/list page and the
	// children of one resources/directory/read page: 1..100. Zero means
	// 20. A page also ends where the transport's byte budget does.
	PageSize int
	// DirectoryRead serves resources/directory/read for the skills'
	// directories and declares directoryRead: true.
	DirectoryRead bool
	// Sealer seals the cursors. Nil means a random process-local key and
	// a 15-minute traversal lifetime, as in inventory.Options.Sealer.
	Sealer *sealedcursor.Sealer
	// CallbackTimeout bounds each call of List or Get (the request's own
	// deadline applies when earlier). The callbacks run as inventory's
	// do: each on a goroutine of its own, abandoned at its deadline if it
	// ignores its context (the request is answered with an internal
	// error meanwhile), and counted per caller: while one caller holds its
	// share of abandoned skills callbacks (inventory.MaxAbandonedPerCaller,
	// less while many callers hold some), its further calls fail at once;
	// a caller holding none is served while fewer than
	// inventory.MaxAbandonedCallbacks callers hold some (see there).
	// Zero means 10 seconds.
	CallbackTimeout time.Duration
	// Logger receives the operator records of callback failures and
	// contract violations. Nil means the logger of the mcphttp endpoint
	// the Catalog is a part of (slog.Default() before that).
	Logger *slog.Logger
}

// Catalog serves the Skills extension for an inventory: skills/list and
// skills/get per caller, and resources/directory/read of skill
// directories, in Go values (a transport encodes them; the Catalog is
// also the mcphttp Part that does so). It is safe for concurrent use.
type Catalog struct {
	inv      *inventory.Inventory
	src      Source
	pageSize int
	dirRead  bool
	sealer   *sealedcursor.Sealer
	timeout  time.Duration
	runner   *callback.Runner // runs List and Get
	log      *slog.Logger
	fp       string // what cursors are bound to besides the caller
	statics  map[string]bool
	ownLog   bool                   // Options.Logger was set
	tmpl     inventory.TemplateInfo // the source's template
}

// New returns a Catalog of src's skills, whose files inv serves. It
// returns an error for a nil inventory or callback, an unknown or public
// template, or invalid options.
func New(inv *inventory.Inventory, src Source, opts Options) (*Catalog, error) {
	switch {
	case inv == nil:
		return nil, errors.New("skills: nil inventory")
	case src.List == nil || src.Get == nil:
		return nil, errors.New("skills: Source needs List and Get")
	case opts.PageSize < 0 || opts.PageSize > inventory.MaxLimit:
		return nil, fmt.Errorf("skills: PageSize must be in 0..%d", inventory.MaxLimit)
	case opts.CallbackTimeout < 0:
		return nil, errors.New("skills: negative CallbackTimeout")
	case opts.Sealer != nil && opts.Sealer.TTL() <= 0: // a zero Sealer: a made one has a lifetime
		return nil, errors.New("skills: Options.Sealer was not made by sealedcursor.New")
	}
	info, ok := inv.Template(src.Template)
	if !ok {
		return nil, fmt.Errorf("skills: the inventory has no template %q", src.Template)
	}
	if info.Access != inventory.Protected {
		return nil, fmt.Errorf("skills: template %q must be protected: skills are listed per caller", src.Template)
	}
	c := &Catalog{inv: inv, src: src, pageSize: opts.PageSize, dirRead: opts.DirectoryRead,
		sealer: opts.Sealer, timeout: opts.CallbackTimeout, log: opts.Logger, tmpl: info}
	if c.pageSize == 0 {
		c.pageSize = 20
	}
	if c.timeout == 0 {
		c.timeout = 10 * time.Second
	}
	c.ownLog = c.log != nil
	if c.log == nil {
		c.log = slog.Default()
	}
	c.runner = callback.New(c.timeout, c.log)
	if c.sealer == nil {
		s, err := sealedcursor.New(sealedcursor.Options{})
		if err != nil {
			return nil, fmt.Errorf("skills: %w", err)
		}
		c.sealer = s
	}
	c.statics = map[string]bool{}
	for _, it := range inv.StaticItems() {
		c.statics[it.URI] = true
	}
	c.fp = fmt.Sprintf("%s|%d", src.Template, c.pageSize)
	return c, nil
}

// DirectoryRead reports whether the catalog serves resources/directory/read.
func (c *Catalog) DirectoryRead() bool { return c.dirRead }

// usable reports whether caller may use the source at all.
func (c *Catalog) usable(ctx context.Context, caller *principal.Principal) (bool, error) {
	if caller == nil {
		return false, principal.ErrUnauthenticated
	}
	reach, err := c.inv.Reach(ctx, caller)
	if err != nil {
		return false, inventory.ErrInternal
	}
	return slices.Contains(reach.Templates, c.src.Template), nil
}

// scopesWouldHelp returns the scope error of a caller who may not use
// the source only for want of the template's scopes: with them added, its
// identity, the template's owner and gates would admit it, and the
// template is not hidden. Nil otherwise (more scopes would not help: the
// listing is empty).
func (c *Catalog) scopesWouldHelp(ctx context.Context, caller *principal.Principal) (*principal.ScopeError, error) {
	if c.tmpl.Hidden || caller.HasScopes(c.tmpl.RequiredScopes...) {
		return nil, nil
	}
	stepped := *caller
	stepped.Scopes = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(caller.Scopes), c.tmpl.RequiredScopes...))))
	reach, err := c.inv.Reach(ctx, &stepped)
	if err != nil {
		return nil, inventory.ErrInternal
	}
	if !slices.Contains(reach.Templates, c.src.Template) {
		return nil, nil
	}
	return &principal.ScopeError{Required: slices.Clone(c.tmpl.RequiredScopes)}, nil
}

// List serves skills/list: the caller's skills in key order, one page at
// a time. cursor is "" for the first page. Each skill, validated, is
// offered to fit, which says whether it still fits the transport's byte
// budget; the page ends before the first refused one, or at the page
// size. next continues after the last accepted one ("" on the last page).
//
// A caller who may not use the source lists no skills, except one that
// lacks only the template's scopes (with them, its identity and the
// template's owner and gates would admit it, and the template is not
// hidden): it gets a
// *principal.ScopeError naming them, which the endpoint answers with the
// same 403 insufficient_scope challenge as resources/list, so that the
// client can step up.
//
// Errors: principal.ErrUnauthenticated (no caller), *principal.ScopeError,
// *inventory.CursorError, inventory.ErrInternal (the callback failed or
// broke the contract, or fit refused a skill on an empty page; logged).
func (c *Catalog) List(ctx context.Context, caller *principal.Principal, cursor string, fit func(*Skill) bool) (next string, err error) {
	ok, err := c.usable(ctx, caller)
	if err != nil {
		return "", err
	}
	after, first := "", c.sealer.Now()
	if cursor != "" {
		if after, first, err = c.openCursor(purposeList, caller, "", cursor); err != nil {
			return "", err
		}
	}
	if !ok {
		se, err := c.scopesWouldHelp(ctx, caller)
		if err != nil {
			return "", err
		}
		if se != nil {
			return "", se // a step-up challenge, as resources/list gives
		}
		return "", nil // hidden from this caller: an empty listing
	}
	req := inventory.ListRequest{After: after, Limit: c.pageSize, Principal: caller}
	page, err := c.callList(ctx, req)
	if err != nil {
		return "", err
	}
	last := ""
	for i := range page.Skills {
		s := &page.Skills[i]
		if r := validate(s); r != "" {
			return "", c.violation(ctx, "skills/list", r, i)
		}
		if !c.serves(s.URI) {
			return "", c.violation(ctx, "skills/list", RuleSkillOutOfRange, i)
		}
		if fit != nil && !fit(s) {
			if i == 0 {
				return "", c.violation(ctx, "skills/list", inventory.RuleEntryTooLarge, i)
			}
			return c.seal(purposeList, caller, "", last, first)
		}
		last = s.Key
	}
	if !page.HasMore {
		return "", nil
	}
	return c.seal(purposeList, caller, "", last, first)
}

// serves reports whether uri is served by the source's template (or a
// static resource of the inventory: a SKILL.md also listed on its own).
func (c *Catalog) serves(uri string) bool {
	if c.statics[uri] {
		return true
	}
	name, ok := c.inv.Target(uri)
	return ok && name == c.src.Template
}

// Get serves skills/get: the entry of the skill whose SKILL.md is at uri.
// A URI the caller may not read (access, scopes, owner, gates), one the
// callback does not know, and one of another caller's skill all are
// inventory.ErrNotFound.
//
// Errors: principal.ErrUnauthenticated, inventory.ErrNotFound,
// inventory.ErrInternal (logged).
func (c *Catalog) Get(ctx context.Context, caller *principal.Principal, uri string) (Skill, error) {
	if caller == nil {
		return Skill{}, principal.ErrUnauthenticated
	}
	dir, name, valid := SplitURI(uri)
	if !valid || !c.serves(uri) {
		return Skill{}, inventory.ErrNotFound
	}
	ok, err := c.inv.CanRead(ctx, caller, uri)
	if err != nil {
		return Skill{}, inventory.ErrInternal
	}
	if !ok {
		return Skill{}, inventory.ErrNotFound
	}
	s, err := c.callGet(ctx, GetRequest{URI: uri, Dir: dir, Name: name, Principal: caller})
	if err != nil {
		return Skill{}, err
	}
	if s.URI != uri {
		return Skill{}, c.violation(ctx, "skills/get", RuleSkillNotAsked, -1)
	}
	if r := validate(&s); r != "" {
		return Skill{}, c.violation(ctx, "skills/get", r, -1)
	}
	return s, nil
}

// violation logs a contract violation and returns ErrInternal.
func (c *Catalog) violation(ctx context.Context, method string, r inventory.Rule, entry int) error {
	c.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "skills: callback broke the contract",
		slog.String("method", method), slog.String("source", c.src.Template),
		slog.String("rule", string(r)), slog.Int("entry", entry))
	return inventory.ErrInternal
}

// callList runs the List callback under the timeout, turns a panic or an
// error into ErrInternal (logged), and validates the page's keys and
// count with inventory.ValidatePage.
func (c *Catalog) callList(ctx context.Context, req inventory.ListRequest) (page Page, err error) {
	defer c.recover(ctx, "skills/list", &err)
	page, err = callback.Call(ctx, c.runner, req.Principal, c.src.List, req)
	if err != nil {
		return Page{}, c.failed(ctx, "skills/list", err)
	}
	entries := make([]inventory.Entry, len(page.Skills))
	for i := range page.Skills {
		s := &page.Skills[i]
		name := s.Name()
		if name == "" {
			name = "-"
		}
		entries[i] = inventory.Entry{Key: s.Key, URI: s.URI, Name: name}
	}
	if verr := inventory.ValidatePage(nil, req, inventory.Page{Entries: entries, HasMore: page.HasMore}); verr != nil {
		var ce *inventory.ContractError
		rule, entry := inventory.Rule("page"), -1
		if errors.As(verr, &ce) {
			rule, entry = ce.Rule, ce.Entry
		}
		return Page{}, c.violation(ctx, "skills/list", rule, entry)
	}
	return page, nil
}

func (c *Catalog) callGet(ctx context.Context, req GetRequest) (s Skill, err error) {
	defer c.recover(ctx, "skills/get", &err)
	s, err = callback.Call(ctx, c.runner, req.Principal, c.src.Get, req)
	switch {
	case errors.Is(err, inventory.ErrNotFound):
		return Skill{}, inventory.ErrNotFound
	case err != nil:
		return Skill{}, c.failed(ctx, "skills/get", err)
	}
	return s, nil
}

// failed logs a callback's error (its text stays in the log) and returns
// ErrInternal.
func (c *Catalog) failed(ctx context.Context, method string, err error) error {
	var pe *callback.PanicError
	rule := inventory.RuleCallbackError
	switch {
	case errors.As(err, &pe):
		c.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "skills: callback panicked",
			slog.String("method", method), slog.String("source", c.src.Template),
			slog.String("rule", string(inventory.RuleCallbackPanic)), slog.String("panic", fmt.Sprint(pe.Value)))
		return inventory.ErrInternal
	case ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded):
		rule = inventory.RuleDeadline // a missed deadline, an abandoned callback or a used-up share
	}
	c.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "skills: callback failed",
		slog.String("method", method), slog.String("source", c.src.Template),
		slog.String("rule", string(rule)), slog.String("error", err.Error()))
	return inventory.ErrInternal
}

func (c *Catalog) recover(ctx context.Context, method string, err *error) {
	if v := recover(); v != nil {
		c.log.LogAttrs(context.WithoutCancel(ctx), slog.LevelError, "skills: callback panicked",
			slog.String("method", method), slog.String("source", c.src.Template),
			slog.String("rule", string(inventory.RuleCallbackPanic)))
		*err = inventory.ErrInternal
	}
}

// parent returns the URI of the directory holding uri: uri up to its last
// '/', if that is past the scheme's "://"; "" otherwise.
func parent(uri string) string {
	i := strings.LastIndexByte(uri, '/')
	j := strings.Index(uri, "://")
	if i < 0 || j < 0 || i <= j+2 {
		return ""
	}
	return uri[:i]
}
