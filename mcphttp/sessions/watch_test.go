package sessions_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcptest"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
)

// toolsWatcher is what a tools part registers: the caller's tools change
// when the gated template becomes readable (its typed tool appears).
func toolsWatcher(inv *inventory.Inventory) mcphttp.Part {
	return mcphttp.PartFunc(func(s *mcphttp.Setup) error {
		s.Watch(mcphttp.Watcher{
			Notification: "notifications/tools/list_changed",
			Sig: func(ctx context.Context, caller *principal.Principal) (string, bool) {
				ok, err := inv.CanRead(ctx, caller, "docs://documents/x")
				if err != nil {
					return "", false
				}
				if ok {
					return "read_document", true
				}
				return "", true
			},
		})
		return nil
	})
}

// TestWatchedListChanges: a grant change that changes the caller's view
// as a watcher sees it (the tools part's: its tools) reaches its listen
// stream as the watcher's notification (when it asked for it); a list
// change that leaves that view as it was (a share) does not. The watcher's
// part may come before or after the sessions part.
func TestWatchedListChanges(t *testing.T) {
	for _, before := range []bool{true, false} {
		t.Run(map[bool]string{true: "watcher first", false: "sessions first"}[before], func(t *testing.T) {
			base := mcptest.New(t, mcptest.Options{})
			hub := notify.New(notify.Options{})
			store := mcptest.NewStore()
			store.Add("alice", 2)
			inv, err := inventory.New(nil, []inventory.Template{{
				Name: "documents", URITemplate: "docs://documents/{id}", RequiredScopes: []string{"docs:read"},
				Gates: []string{"beta"}, List: store.List, Read: store.Read,
			}}, inventory.Options{Gates: []inventory.Gate{{Name: "beta"}}, Notifier: hub})
			require.NoError(t, err)
			parts := []mcphttp.Part{newPart(t, hub), toolsWatcher(inv)}
			if before {
				parts[0], parts[1] = parts[1], parts[0]
			}
			ep, err := mcphttp.New(inv, mcphttp.Options{Authenticator: base.Auth}, parts...)
			require.NoError(t, err)
			srv := httptest.NewServer(ep)
			t.Cleanup(func() { hub.Close(); srv.Close() })
			f := &fixture{Server: &mcptest.Server{Fixture: base, Hub: hub, Srv: srv}}

			alice := f.Token(t, "alice")
			body, hdr := mcptest.Modern(7, "subscriptions/listen", map[string]any{"notifications": map[string]any{"toolsListChanged": true, "resourcesListChanged": true}})
			s := openStream(t, f.Post(t, alice, "", body, hdr))
			defer s.Close()
			assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{
				"notifications":{"toolsListChanged":true,"resourcesListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`, s.Next(t))
			mcptest.WaitSubscribers(t, hub, "alice", 1)
			const resources = `{"jsonrpc":"2.0","method":"notifications/resources/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`
			const tools = `{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":7}}}`

			hub.ListChanged(context.Background(), "alice") // a share, say: the tools stay
			assert.JSONEq(t, resources, s.Next(t))
			s.None(t)
			_, err = inv.Authorize(context.Background(), "alice", "beta") // read_document appears
			require.NoError(t, err)
			assert.JSONEq(t, resources, s.Next(t))
			assert.JSONEq(t, tools, s.Next(t))
			_, err = inv.Authorize(context.Background(), "bob", "beta")
			require.NoError(t, err)
			s.None(t)

			// A listen that did not ask for tools gets none.
			body, hdr = mcptest.Modern(8, "subscriptions/listen", map[string]any{"notifications": map[string]any{"resourcesListChanged": true}})
			quiet := openStream(t, f.Post(t, alice, "", body, hdr))
			defer quiet.Close()
			assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{
				"notifications":{"resourcesListChanged":true},"_meta":{"io.modelcontextprotocol/subscriptionId":8}}}`, quiet.Next(t))

			// The legacy GET stream of a session: the same rule, without a filter.
			session := f.initialize(t, alice)
			g := openStream(t, f.Get(t, alice, session, nil))
			defer g.Close()
			mcptest.WaitSubscribers(t, hub, "alice", 3)
			_, err = inv.Revoke(context.Background(), "alice", "beta")
			require.NoError(t, err)
			assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`, g.Next(t))
			assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`, g.Next(t))
			hub.ListChanged(context.Background(), "alice")
			assert.JSONEq(t, `{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}`, g.Next(t))
			g.None(t)
			assert.Contains(t, quiet.Next(t), "notifications/resources/list_changed")
			assert.Contains(t, quiet.Next(t), "notifications/resources/list_changed")
			quiet.None(t)
		})
	}
}
