package inventorytest

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/inventory"
)

// Rules the checker adds to the per-page rules of inventory.ValidatePage.
const (
	RuleURIRepeated inventory.Rule = "uri-repeated"              // a URI listed twice in one traversal
	RuleNoEnd       inventory.Rule = "no-end"                    // the traversal did not end within MaxPages
	RuleWalksDiffer inventory.Rule = "walks-differ"              // two page sizes gave different sequences
	RulePanic                      = inventory.RuleCallbackPanic // the callback panicked
)

// defaultPageSizes are the page sizes Check walks with when
// Options.PageSizes is empty.
var defaultPageSizes = []int{1, 7, 50, 100}

// Options configures Check. The zero value is valid.
type Options struct {
	// PageSizes are the Limit values of the walks. Empty means 1, 7, 50
	// and 100, the sizes the kit can ask for (1..100).
	PageSizes []int
	// MaxPages ends a walk that has not finished after this many pages
	// (RuleNoEnd). Zero means 100000; raise it for a principal with more
	// records than that, as the walk with page size 1 takes a page per
	// record.
	MaxPages int
}

// Violation is one broken rule.
type Violation struct {
	PageSize int            // the walk's Limit
	Page     int            // 0-based page number in the walk; -1 when about whole walks
	Entry    int            // index in the page (or, for walks-differ, in the sequence); -1 for the page
	Rule     inventory.Rule // an inventory.Rule… constant or a Rule… constant of this package
	Detail   string         // a description for the test log
}

func (v Violation) String() string {
	return fmt.Sprintf("page size %d, page %d, entry %d: %s: %s", v.PageSize, v.Page, v.Entry, v.Rule, v.Detail)
}

// CheckList runs Check and reports every violation, and any error, as a
// test failure. Call it from your application's tests with your template
// (its List callback) and a principal that owns records.
func CheckList(t testing.TB, tmpl inventory.Template, p principal.Principal, opts Options) {
	t.Helper()
	vs, err := Check(context.Background(), tmpl, p, opts)
	if err != nil {
		t.Errorf("inventorytest: %v", err)
	}
	for _, v := range vs {
		t.Errorf("inventorytest: template %q: %s", tmpl.Name, v)
	}
}

// Check walks tmpl's whole collection for principal p once per page size,
// calling tmpl.List as the kit does (Limit, then After = the last key),
// and returns the violations: every page checked with
// inventory.ValidatePage, no URI twice in a walk, every walk ends within
// MaxPages, and every walk yields the same key and URI sequence. A walk
// stops at its first violation. The error reports what prevents checking:
// no List, an invalid template, a callback error or a done ctx.
func Check(ctx context.Context, tmpl inventory.Template, p principal.Principal, opts Options) ([]Violation, error) {
	if tmpl.List == nil {
		return nil, errors.New("template has no List callback")
	}
	if err := inventory.ValidatePage(&tmpl, inventory.ListRequest{Limit: 1}, inventory.Page{}); err != nil {
		return nil, err
	}
	sizes := opts.PageSizes
	if len(sizes) == 0 {
		sizes = defaultPageSizes
	}
	maxPages := opts.MaxPages
	if maxPages <= 0 {
		maxPages = 100000
	}
	var vs []Violation
	var ref []inventory.Entry
	refSize := 0
	for _, size := range sizes {
		if size < 1 || size > inventory.MaxLimit {
			return vs, fmt.Errorf("page size %d is outside 1..%d", size, inventory.MaxLimit)
		}
		seq, v, err := walk(ctx, &tmpl, p, size, maxPages)
		if err != nil {
			return vs, fmt.Errorf("walk with page size %d: %w", size, err)
		}
		if v != nil {
			vs = append(vs, *v)
			continue
		}
		if ref == nil {
			ref, refSize = seq, size
			continue
		}
		if i, ok := sameSequence(ref, seq); !ok {
			vs = append(vs, Violation{PageSize: size, Page: -1, Entry: i, Rule: RuleWalksDiffer,
				Detail: fmt.Sprintf("the sequence differs from the walk with page size %d at entry %d (lengths %d and %d)",
					refSize, i, len(ref), len(seq))})
		}
	}
	return vs, nil
}

// walk traverses the collection with one page size.
func walk(ctx context.Context, tmpl *inventory.Template, p principal.Principal, size, maxPages int) ([]inventory.Entry, *Violation, error) {
	var seq []inventory.Entry
	seen := make(map[string]int)
	after := ""
	for page := 0; ; page++ {
		if page == maxPages {
			return nil, &Violation{PageSize: size, Page: page, Entry: -1, Rule: RuleNoEnd,
				Detail: fmt.Sprintf("no end after %d pages", maxPages)}, nil
		}
		req := inventory.ListRequest{After: after, Limit: size, Principal: &p}
		res, perr, err := callList(ctx, tmpl.List, req)
		if perr != "" {
			return nil, &Violation{PageSize: size, Page: page, Entry: -1, Rule: RulePanic, Detail: perr}, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("page %d: %w", page, err)
		}
		if err := inventory.ValidatePage(tmpl, req, res); err != nil {
			var ce *inventory.ContractError
			if !errors.As(err, &ce) {
				return nil, nil, err
			}
			return nil, &Violation{PageSize: size, Page: page, Entry: ce.Entry, Rule: ce.Rule,
				Detail: describe(ce.Rule, req, res, ce.Entry)}, nil
		}
		for i, e := range res.Entries {
			if prev, dup := seen[e.URI]; dup {
				return nil, &Violation{PageSize: size, Page: page, Entry: i, Rule: RuleURIRepeated,
					Detail: fmt.Sprintf("URI %q was listed before as entry %d of the walk", e.URI, prev)}, nil
			}
			seen[e.URI] = len(seq)
			seq = append(seq, e)
		}
		if !res.HasMore {
			return seq, nil, nil
		}
		after = res.Entries[len(res.Entries)-1].Key
	}
}

// callList calls the callback, turning a panic into a description.
func callList(ctx context.Context, f inventory.ListFunc, req inventory.ListRequest) (res inventory.Page, panicked string, err error) {
	defer func() {
		if r := recover(); r != nil {
			panicked = fmt.Sprintf("%v\n%s", r, debug.Stack())
		}
	}()
	res, err = f(ctx, req)
	return res, "", err
}

// describe explains a page violation for the test log. Unlike the kit's
// logs it shows the data: this is the application's own test.
func describe(rule inventory.Rule, req inventory.ListRequest, res inventory.Page, i int) string {
	if i < 0 || i >= len(res.Entries) {
		return fmt.Sprintf("Limit %d, After %q: %d entries, HasMore %v", req.Limit, req.After, len(res.Entries), res.HasMore)
	}
	e := res.Entries[i]
	prev := req.After
	if i > 0 {
		prev = res.Entries[i-1].Key
	}
	return fmt.Sprintf("After %q, previous key %q: key %q, URI %q, name %q, MIME type %q", req.After, prev, e.Key, e.URI, e.Name, e.MIMEType)
}

// sameSequence compares two walks by key and URI.
func sameSequence(a, b []inventory.Entry) (int, bool) {
	i := 0
	for ; i < min(len(a), len(b)); i++ {
		if a[i].Key != b[i].Key || a[i].URI != b[i].URI {
			return i, false
		}
	}
	if len(a) != len(b) {
		return i, false
	}
	return 0, true
}
