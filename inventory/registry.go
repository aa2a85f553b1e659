package inventory

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync/atomic"

	"github.com/mcpkit/mcpkit/internal/ascii"
	"github.com/mcpkit/mcpkit/internal/callback"
	"github.com/mcpkit/mcpkit/internal/display"
	"github.com/mcpkit/mcpkit/internal/nilness"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/inventory/internal/contract"
	"github.com/mcpkit/mcpkit/inventory/internal/gateview"
	"github.com/mcpkit/mcpkit/inventory/internal/listcursor"
	"github.com/mcpkit/mcpkit/inventory/internal/staticindex"
	"github.com/mcpkit/mcpkit/inventory/internal/uritemplate"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

// Inventory is the immutable registry of static resources and resource
// templates, and serves resources/list, resources/read,
// resources/templates/list and completion/complete for it. It is safe for
// concurrent use.
//
// Make one with [New]. The zero Inventory is an empty one: every method
// answers as an Inventory New made with nothing registered would (no
// items, ErrNotFound, no grant store), and never panics.
type Inventory struct {
	statics     []static
	shown       staticindex.Index // the statics by access and scopes
	staticIndex map[string]int    // URI → index in statics
	templates   []*registered
	byTemplate  map[string]*registered // URITemplate → template
	sources     []*registered          // templates with List, in registration order
	searchers   []*registered          // templates with Search, in registration order

	pageSize  int
	runner    *callback.Runner // runs the callbacks
	sealer    *sealedcursor.Sealer
	discovery Discovery
	log       *slog.Logger

	fp        [sha256.Size]byte // registry and page settings
	maxCursor int               // the longest cursor List or Templates issues
	completes bool

	gates     []Gate                          // definitions, in order
	gateIndex map[string]int                  // name → index in gates
	global    []int                           // Options.GlobalGates, sorted indices
	store     grants.Store                    // nil: no gates, no grants
	notifier  atomic.Pointer[grants.Notifier] // Options.Notifier, or one attached later
	gated     bool                            // store != nil: visibility depends on gates and grants
	view      gateview.Gates                  // what a request's view of the gates needs
}

// static is a static resource as registered: res.RequiredScopes sorted
// and de-duplicated. What resources/list shows of it (its Item) is made
// when a page needs it, not kept: one static of a million costs what its
// Resource does, and its gates.
type static struct {
	res   Resource
	gates []int // own and global gates, sorted indices
	plain bool  // Item.Plain
}

// scopes returns the scopes of st, sorted and de-duplicated.
func (st *static) scopes() []string { return st.res.RequiredScopes }

// itemTo sets it to what resources/list shows of static i, st.
func (st *static) itemTo(it *Item, i int) {
	*it = Item{URI: st.res.URI, Name: st.res.Name, Title: st.res.Title, Description: st.res.Description,
		MIMEType: st.res.MIMEType, Size: st.res.Size, Annotations: st.res.Annotations, Plain: st.plain, Static: i + 1}
}

type registered struct {
	tmpl   Template
	ut     *uritemplate.Template
	scopes []string     // sorted, de-duplicated
	gates  []int        // own and global gates, sorted indices
	item   TemplateItem // what resources/templates/list shows of it
	// mimePlain says the template's MIME type is plain (see Item.Plain).
	mimePlain bool
}

// zero reports whether inv is the zero Inventory (not made by New): an
// empty inventory, without the settings New gives.
func (inv *Inventory) zero() bool { return inv.sealer == nil }

// zeroPage is the page of the zero Inventory: empty, and no cursor of its
// own is valid.
func zeroPage(cursor string) (string, error) {
	if cursor != "" {
		return "", &CursorError{Reason: ReasonInvalid}
	}
	return "", nil
}

// New validates the registry and returns an Inventory. It copies what it
// keeps: later changes to the arguments have no effect. It returns an
// error (never panics) for anything invalid: see the package documentation
// for the rules.
func New(resources []Resource, templates []Template, opts Options) (*Inventory, error) {
	s, err := opts.resolve()
	if err != nil {
		return nil, err
	}
	inv := &Inventory{
		staticIndex: make(map[string]int, len(resources)),
		byTemplate:  make(map[string]*registered, len(templates)),
		pageSize:    s.pageSize,
		runner:      callback.New(s.timeout, s.log),
		sealer:      s.sealer,
		discovery:   s.disc,
		log:         s.log,
	}
	if err := inv.setupGates(opts); err != nil {
		return nil, err
	}
	if len(resources) > staticindex.Max {
		return nil, fmt.Errorf("inventory: %d static resources: at most %d", len(resources), staticindex.Max)
	}
	inv.statics = make([]static, 0, len(resources))
	for i := range resources {
		st, err := newStatic(resources[i])
		if err == nil {
			st.gates, err = inv.attach(inv.global, resources[i].Gates)
		}
		if err != nil {
			return nil, fmt.Errorf("inventory: resource %d: %w", i, err)
		}
		if _, dup := inv.staticIndex[st.res.URI]; dup {
			return nil, fmt.Errorf("inventory: resource %d: duplicate URI %q", i, st.res.URI)
		}
		inv.staticIndex[st.res.URI] = len(inv.statics)
		inv.statics = append(inv.statics, st)
	}
	inv.shown = staticindex.New(len(inv.statics), func(i int) (bool, []string) {
		return inv.statics[i].res.Access == Public, inv.statics[i].scopes()
	})
	names := make(map[string]bool, len(templates))
	overlaps := uritemplate.NewIndex()
	for i := range templates {
		rt, err := newRegistered(templates[i])
		if err == nil {
			rt.gates, err = inv.attach(inv.global, templates[i].Gates)
		}
		if err != nil {
			return nil, fmt.Errorf("inventory: template %d (%q): %w", i, templates[i].Name, err)
		}
		if names[rt.tmpl.Name] {
			return nil, fmt.Errorf("inventory: template %d: duplicate name %q", i, rt.tmpl.Name)
		}
		names[rt.tmpl.Name] = true
		if j, w, ok := overlaps.FirstOverlap(rt.ut, overlapBudget); ok && w == "" {
			return nil, fmt.Errorf("inventory: templates %q and %q are too complex to prove that no URI matches both",
				inv.templates[j].tmpl.Name, rt.tmpl.Name)
		} else if ok {
			return nil, fmt.Errorf("inventory: templates %q and %q can match the same URI (for example %q)",
				inv.templates[j].tmpl.Name, rt.tmpl.Name, w)
		}
		overlaps.Add(rt.ut)
		inv.templates = append(inv.templates, rt)
		inv.byTemplate[rt.tmpl.URITemplate] = rt
		if rt.tmpl.List != nil {
			inv.sources = append(inv.sources, rt)
		}
		if rt.tmpl.Search != nil {
			inv.searchers = append(inv.searchers, rt)
		}
		if len(rt.tmpl.Complete) > 0 {
			inv.completes = true
		}
	}
	if err := inv.checkOverrideNames(); err != nil {
		return nil, err
	}
	inv.maxCursor = sealedcursor.SealedLen(max(listcursor.MaxLen(len(inv.statics), len(inv.sources)), listcursor.MaxTemplatesLen(len(inv.templates))))
	inv.fp = inv.fingerprint()
	return inv, nil
}

func newStatic(r Resource) (static, error) {
	st := static{res: r}
	switch {
	case r.URI == "" || contract.Longer(r.URI, contract.MaxURILen) || !contract.PlainURI(r.URI):
		return st, errors.New("URI must be 1..2048 characters (UTF-16 code units) of UTF-8 without spaces or control characters")
	case contract.Name(r.Name) != contract.OK:
		return st, errors.New("name must be 1..512 characters (UTF-16 code units) of UTF-8 without control, bidirectional, invisible or tag characters")
	case !display.Name(r.Title) || !display.Text(r.Description):
		return st, errors.New("title and description must be valid UTF-8 without bidirectional, invisible or tag characters")
	case contract.MIME(r.MIMEType) != contract.OK:
		return st, errors.New("invalid MIME type")
	case r.Size < 0:
		return st, errors.New("negative size")
	case r.Read == nil:
		return st, errors.New("Read is required (see TextReader and BlobReader)")
	}
	if err := checkAnnotations(r.Annotations); err != nil {
		return st, err
	}
	scopes, err := checkAccess(r.Access, r.RequiredScopes)
	if err != nil {
		return st, err
	}
	st.res.RequiredScopes = scopes
	st.res.Gates = slices.Clone(r.Gates)
	if a := r.Annotations; a != nil {
		c := *a
		c.Audience = slices.Clone(a.Audience)
		if a.Priority != nil {
			p := *a.Priority
			c.Priority = &p
		}
		st.res.Annotations = &c
	}
	st.plain = ascii.JSONPlain(st.res.URI) && ascii.JSONPlain(st.res.Name) && ascii.JSONPlain(st.res.MIMEType)
	return st, nil
}

func checkAnnotations(a *Annotations) error {
	if a == nil {
		return nil
	}
	return contract.Annotations(a.Audience, a.Priority, a.LastModified)
}

// checkAccess validates an access mode and its scopes and returns the
// scopes sorted and de-duplicated.
func checkAccess(a Access, scopes []string) ([]string, error) {
	if a > Public {
		return nil, fmt.Errorf("unknown access mode %d", a)
	}
	return contract.Scopes(scopes, a == Public)
}

func newRegistered(t Template) (*registered, error) {
	if err := checkTemplateFields(t); err != nil {
		return nil, err
	}
	ut, err := uritemplate.Parse(t.URITemplate)
	if err != nil {
		return nil, err
	}
	scopes, err := checkAccess(t.Access, t.RequiredScopes)
	if err != nil {
		return nil, err
	}
	rt := &registered{tmpl: t, ut: ut, scopes: scopes, mimePlain: ascii.JSONPlain(t.MIMEType)}
	rt.tmpl.RequiredScopes = scopes
	rt.tmpl.Gates = slices.Clone(t.Gates)
	if rt.tmpl.Validate, err = byVariable(ut, "Validate", "rule", t.Validate); err != nil {
		return nil, err
	}
	if rt.tmpl.Complete, err = byVariable(ut, "Complete", "callback", t.Complete); err != nil {
		return nil, err
	}
	rt.item = TemplateItem{Name: t.Name, Title: t.Title, Description: t.Description, URITemplate: t.URITemplate, MIMEType: t.MIMEType}
	return rt, nil
}

// byVariable copies a map of functions by template variable (Validate,
// Complete), refusing a key that is no variable of ut and a nil function.
func byVariable[F any](ut *uritemplate.Template, field, what string, m map[string]F) (map[string]F, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]F, len(m))
	for k, f := range m {
		if !slices.Contains(ut.Vars(), k) {
			return nil, fmt.Errorf("%s names %q, which is not a variable of the template", field, k)
		}
		if nilness.Is(f) {
			return nil, fmt.Errorf("%s %s for %q is nil", field, what, k)
		}
		out[k] = f
	}
	return out, nil
}

// checkTemplateFields checks what a template says of itself.
func checkTemplateFields(t Template) error {
	switch {
	case contract.Name(t.Name) != contract.OK:
		return errors.New("name must be 1..512 characters (UTF-16 code units) of UTF-8 without control, bidirectional, invisible or tag characters")
	case !display.Name(t.Title) || !display.Text(t.Description):
		return errors.New("title and description must be valid UTF-8 without bidirectional, invisible or tag characters")
	case contract.MIME(t.MIMEType) != contract.OK:
		return errors.New("invalid MIME type")
	case t.Read == nil:
		return errors.New("Read is required")
	case t.List != nil && t.Access != Protected:
		return errors.New("List is allowed only on a protected template")
	case t.List != nil && t.Hidden:
		return errors.New("List is not allowed on a hidden template")
	case t.Search != nil && t.Access != Protected:
		return errors.New("Search is allowed only on a protected template")
	case t.Search != nil && t.Hidden:
		return errors.New("Search is not allowed on a hidden template")
	case t.Owner > OwnedByClient:
		return fmt.Errorf("unknown owner %d", t.Owner)
	}
	return nil
}

// fingerprint digests everything that decides what a cursor position
// means and who may use it: the definitions, their order and the page
// settings. Cursors are bound to it.
func (inv *Inventory) fingerprint() [sha256.Size]byte {
	h := sha256.New()
	b := make([]byte, 0, 8<<10) // written to h as it fills: a million statics need no copy of their text
	flush := func() {
		if len(b) >= 4<<10 {
			h.Write(b)
			b = b[:0]
		}
	}
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	num := func(n int) { b = binary.AppendUvarint(b, uint64(n)) }
	strs := func(ss []string) {
		num(len(ss))
		for _, s := range ss {
			str(s)
		}
	}
	gates := func(gs []int) {
		num(len(gs))
		for _, g := range gs {
			str(inv.gates[g].Name)
		}
	}
	str("mcpkit/inventory/registry/v1")
	num(inv.pageSize)
	num(int(inv.discovery))
	gated := 0
	if inv.gated {
		gated = 1
	}
	num(gated)
	num(len(inv.gates))
	for _, g := range inv.gates {
		str(g.Name)
	}
	gates(inv.global)
	num(len(inv.statics))
	for i := range inv.statics {
		flush()
		st := &inv.statics[i]
		str(st.res.URI)
		str(st.res.Name)
		num(int(st.res.Access))
		strs(st.scopes())
		gates(st.gates)
	}
	num(len(inv.templates))
	for _, rt := range inv.templates {
		str(rt.tmpl.Name)
		str(rt.tmpl.URITemplate)
		num(int(rt.tmpl.Access))
		num(int(rt.tmpl.Owner))
		hidden, list := 0, 0
		if rt.tmpl.Hidden {
			hidden = 1
		}
		if rt.tmpl.List != nil {
			list = 1
		}
		num(hidden)
		num(list)
		strs(rt.scopes)
		gates(rt.gates)
	}
	h.Write(b)
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}

// StaticItems returns the list items of the static resources, in
// registration order: what resources/list may show of them (a transport
// checks at construction that its byte limit holds each).
func (inv *Inventory) StaticItems() []Item {
	out := make([]Item, len(inv.statics))
	for i := range inv.statics {
		inv.statics[i].itemTo(&out[i], i)
	}
	return out
}

// TemplateItems returns the items of the templates resources/templates/list
// may show, in registration order.
func (inv *Inventory) TemplateItems() []TemplateItem {
	var out []TemplateItem
	for _, rt := range inv.templates {
		if !rt.tmpl.Hidden {
			out = append(out, rt.item)
		}
	}
	return out
}

// MaxCursorLen returns the length of the longest cursor List and
// Templates issue: base64url text, which a transport's byte budget keeps
// room for.
func (inv *Inventory) MaxCursorLen() int { return inv.maxCursor }

// HasListSources reports whether some template has a List callback: then
// every resources/list needs an authenticated caller.
func (inv *Inventory) HasListSources() bool { return len(inv.sources) > 0 }

// Completes reports whether some template has a completion callback: the
// server should declare the completions capability exactly then.
func (inv *Inventory) Completes() bool { return inv.completes }

// overlapBudget is the budget of the overlap search between two
// templates (uritemplate.OverlapBudget; a variable for the test of the
// refusal).
var overlapBudget = uritemplate.OverlapBudget
