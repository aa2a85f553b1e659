package inventory_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
)

// secretEntry is a valid entry whose URI and name carry markers that must
// never reach a client or the log.
func secretEntry(i int) inventory.Entry {
	e := docEntry(i)
	e.URI = "docs://documents/SECRETURI" + docID(i)
	e.Name = "SECRETNAME " + e.Name
	return e
}

// brokenSources break one rule each.
func brokenSources() map[inventory.Rule]inventory.ListFunc {
	page := func(p inventory.Page) inventory.ListFunc {
		return func(context.Context, inventory.ListRequest) (inventory.Page, error) { return p, nil }
	}
	twoWith := func(f func(*inventory.Entry)) inventory.ListFunc {
		es := []inventory.Entry{secretEntry(1), secretEntry(2)}
		f(&es[1])
		return page(inventory.Page{Entries: es})
	}
	return map[inventory.Rule]inventory.ListFunc{
		inventory.RuleTooManyEntries: func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
			es := make([]inventory.Entry, req.Limit+1)
			for i := range es {
				es[i] = secretEntry(i + 1)
			}
			return inventory.Page{Entries: es}, nil
		},
		inventory.RuleHasMoreEmpty: page(inventory.Page{HasMore: true}),
		inventory.RuleKeyLength:    twoWith(func(e *inventory.Entry) { e.Key = strings.Repeat("k", 257) }),
		inventory.RuleKeyCharset:   twoWith(func(e *inventory.Entry) { e.Key = "k000002 x" }),
		inventory.RuleKeyOrder:     twoWith(func(e *inventory.Entry) { e.Key = "k000000" }),
		inventory.RuleKeyAfter: func(_ context.Context, req inventory.ListRequest) (inventory.Page, error) {
			return inventory.Page{Entries: []inventory.Entry{secretEntry(1)}, HasMore: true}, nil // ignores After
		},
		inventory.RuleURIEmpty:     twoWith(func(e *inventory.Entry) { e.URI = "" }),
		inventory.RuleURILength:    twoWith(func(e *inventory.Entry) { e.URI = "docs://documents/SECRETURI" + strings.Repeat("x", 2048) }),
		inventory.RuleURIMatch:     twoWith(func(e *inventory.Entry) { e.URI = "docs://notes/SECRETURI" }),
		inventory.RuleURIDuplicate: twoWith(func(e *inventory.Entry) { e.URI = secretEntry(1).URI }),
		inventory.RuleNameEmpty:    twoWith(func(e *inventory.Entry) { e.Name = "" }),
		inventory.RuleNameLength:   twoWith(func(e *inventory.Entry) { e.Name = "SECRETNAME" + strings.Repeat("n", 512) }),
		inventory.RuleMIMELength:   twoWith(func(e *inventory.Entry) { e.MIMEType = "text/" + strings.Repeat("x", 200) }),
		inventory.RuleMIMESyntax:   twoWith(func(e *inventory.Entry) { e.MIMEType = "SECRET mime" }),
		inventory.RuleCallbackError: func(context.Context, inventory.ListRequest) (inventory.Page, error) {
			return inventory.Page{}, errors.New("pq: connection refused to db-7.internal")
		},
		inventory.RuleCallbackPanic: func(context.Context, inventory.ListRequest) (inventory.Page, error) {
			panic("index out of range in SECRETNAME handler")
		},
	}
}

// Every contract violation is a generic internal error for the client and a
// structured Error record for the operator, and nothing of the entry leaks.
func TestContractViolationsAreInternalErrors(t *testing.T) {
	for rule, src := range brokenSources() {
		t.Run(string(rule), func(t *testing.T) {
			log := &logBuffer{}
			docs := docsTemplate(src)
			inv, err := inventory.New(statics(), []inventory.Template{docs}, inventory.Options{PageSize: 5, Logger: log.logger()})
			require.NoError(t, err)
			// (The source ignoring After is caught when the kit calls it
			// again to fill the page.)
			out, err := listWire(context.Background(), inv, alice(), "", testEnv)
			assert.Nil(t, out)
			assert.Same(t, inventory.ErrInternal, err, "exactly ErrInternal: nothing for the transport to leak")

			recs := log.records(t)
			require.Len(t, recs, 1)
			rec := recs[0]
			assert.Equal(t, "ERROR", rec["level"])
			assert.Equal(t, "resources/list", rec["method"])
			assert.Equal(t, "documents", rec["source"])
			assert.Equal(t, string(rule), rec["rule"])
			if rule != inventory.RuleCallbackPanic {
				assert.NotContains(t, log.String(), "SECRET", "the log names the rule and index, not the entry")
			}
			if _, ok := rec["entry"]; ok && rule != inventory.RuleTooManyEntries && rule != inventory.RuleHasMoreEmpty && rule != inventory.RuleKeyAfter {
				assert.EqualValues(t, 1, rec["entry"])
			}

			// The server keeps serving.
			_, err = inv.Read(context.Background(), alice(), "docs://readme")
			assert.NoError(t, err)
		})
	}
}

func TestCallbackPanicIsLoggedWithStack(t *testing.T) {
	log := &logBuffer{}
	inv, err := inventory.New(nil, []inventory.Template{docsTemplate(brokenSources()[inventory.RuleCallbackPanic])}, inventory.Options{Logger: log.logger()})
	require.NoError(t, err)
	_, err = listWire(context.Background(), inv, alice(), "", testEnv)
	assert.Same(t, inventory.ErrInternal, err)
	rec := log.records(t)[0]
	assert.Contains(t, rec["panic"], "index out of range")
	assert.Contains(t, rec["stack"], "contract_test.go")
	assert.NotContains(t, err.Error(), "index out of range")
}

// The callback gets a deadline: the callback timeout, or the request's own
// deadline when that is earlier; and the request's cancellation.
func TestCallbackDeadlineAndCancellation(t *testing.T) {
	type seen struct {
		deadline time.Time
		ok       bool
		err      error
	}
	blocking := func(ch chan<- seen) inventory.ListFunc {
		return func(ctx context.Context, _ inventory.ListRequest) (inventory.Page, error) {
			d, ok := ctx.Deadline()
			<-ctx.Done()
			ch <- seen{d, ok, ctx.Err()}
			return inventory.Page{}, ctx.Err()
		}
	}
	t.Run("callback timeout", func(t *testing.T) {
		ch := make(chan seen, 1)
		log := &logBuffer{}
		inv, err := inventory.New(nil, []inventory.Template{docsTemplate(blocking(ch))}, inventory.Options{CallbackTimeout: 30 * time.Millisecond, Logger: log.logger()})
		require.NoError(t, err)
		start := time.Now()
		_, err = listWire(context.Background(), inv, alice(), "", testEnv)
		assert.Same(t, inventory.ErrInternal, err)
		s := <-ch
		require.True(t, s.ok, "the callback has a deadline")
		assert.WithinDuration(t, start.Add(30*time.Millisecond), s.deadline, 25*time.Millisecond)
		assert.ErrorIs(t, s.err, context.DeadlineExceeded)
		// The callback may be abandoned a hair before it returns, and log
		// its late return before the failure is logged: find the failure.
		var rule any
		for _, r := range log.records(t) {
			if r["msg"] == "inventory: callback failed" {
				rule = r["rule"]
				break
			}
		}
		assert.EqualValues(t, inventory.RuleDeadline, rule)
	})
	t.Run("request deadline is earlier", func(t *testing.T) {
		ch := make(chan seen, 1)
		inv, err := inventory.New(nil, []inventory.Template{docsTemplate(blocking(ch))}, inventory.Options{Logger: (&logBuffer{}).logger()})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		reqDeadline, _ := ctx.Deadline()
		_, err = listWire(ctx, inv, alice(), "", testEnv)
		assert.Same(t, inventory.ErrInternal, err)
		s := <-ch
		assert.Equal(t, reqDeadline, s.deadline, "never beyond the request's deadline")
	})
	t.Run("request cancelled", func(t *testing.T) {
		ch := make(chan seen, 1)
		inv, err := inventory.New(nil, []inventory.Template{docsTemplate(blocking(ch))}, inventory.Options{Logger: (&logBuffer{}).logger()})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { time.Sleep(10 * time.Millisecond); cancel() }()
		_, err = listWire(ctx, inv, alice(), "", testEnv)
		assert.Same(t, inventory.ErrInternal, err)
		assert.ErrorIs(t, (<-ch).err, context.Canceled)
	})
	t.Run("a late success is not trusted", func(t *testing.T) {
		late := func(ctx context.Context, _ inventory.ListRequest) (inventory.Page, error) {
			<-ctx.Done()
			return inventory.Page{Entries: []inventory.Entry{docEntry(1)}}, nil
		}
		inv, err := inventory.New(nil, []inventory.Template{docsTemplate(late)}, inventory.Options{CallbackTimeout: 10 * time.Millisecond, Logger: (&logBuffer{}).logger()})
		require.NoError(t, err)
		_, err = listWire(context.Background(), inv, alice(), "", testEnv)
		assert.Same(t, inventory.ErrInternal, err)
	})
}

func TestReadAndCompletePanicsAreRecovered(t *testing.T) {
	log := &logBuffer{}
	boom := func(context.Context, inventory.ReadRequest) ([]inventory.Contents, error) { panic("read boom") }
	tmpl := inventory.Template{
		Name: "files", URITemplate: "file:///{+path}", Access: inventory.Public, Read: boom,
		Validate: map[string]func(string) error{"path": func(v string) error {
			if v == "panic" {
				panic("rule boom")
			}
			return nil
		}},
		Complete: map[string]inventory.CompleteFunc{"path": func(context.Context, inventory.CompleteRequest) (inventory.Completion, error) {
			panic("complete boom")
		}},
	}
	inv, err := inventory.New(nil, []inventory.Template{tmpl}, inventory.Options{Logger: log.logger()})
	require.NoError(t, err)
	_, err = inv.Read(context.Background(), nil, "file:///a.txt")
	assert.Same(t, inventory.ErrInternal, err)
	_, err = inv.Read(context.Background(), nil, "file:///panic")
	assert.Same(t, inventory.ErrInternal, err)
	_, err = inv.Complete(context.Background(), nil, "file:///{+path}", "path", "a", nil)
	assert.Same(t, inventory.ErrInternal, err)
	recs := log.records(t)
	require.Len(t, recs, 3)
	for _, r := range recs {
		assert.EqualValues(t, inventory.RuleCallbackPanic, r["rule"])
		assert.Equal(t, "files", r["source"])
	}
}
