package nilnesstest_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/authn/authntest"
	"github.com/mcpkit/mcpkit/authn/dpop"
	"github.com/mcpkit/mcpkit/authn/upstream"
	"github.com/mcpkit/mcpkit/internal/nilness/nilnesstest"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/inventory/grants"
	"github.com/mcpkit/mcpkit/inventory/inventorytest"
	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/audit"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/mcphttp/skills"
	"github.com/mcpkit/mcpkit/mcphttp/tools"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
	"github.com/mcpkit/mcpkit/sealedcursor"
)

const module = "github.com/mcpkit/mcpkit"

// Interfaces that no type of the module implements get a type of the
// test's own: a nil *T of it is a typed nil as a user's would be.
type (
	someBroker      struct{ notify.Broker }
	someReplayStore struct{ dpop.ReplayStore }
	someRateStore   struct{ ratelimit.Store }
	someSessions    struct{ intercept.Sessions }
	someThrottle    struct{ authn.Throttle }
	someGrants      struct{ grants.Store }
	someNotifier    struct{ grants.Notifier }
	someEventLog    struct{ notify.EventLog }
	someAuth        struct{ mcphttp.Authenticator }
	someUpstream    struct{ upstream.Store }
	someTransport   struct{ http.RoundTripper }
)

// pool is every type whose typed nil (and, for the module's own, whose
// zero value) the walk gives each interface field it implements.
var pool = []any{
	(*someBroker)(nil), (*someReplayStore)(nil), (*someRateStore)(nil), (*someSessions)(nil),
	(*someThrottle)(nil), (*someGrants)(nil), (*someNotifier)(nil), (*someEventLog)(nil), (*someAuth)(nil),
	(*authn.Authenticator)(nil), (*ratelimit.Limiter)(nil), (*notify.Hub)(nil), (*notify.MemoryLog)(nil),
	(*grants.Memory)(nil), grants.NotifierFunc(nil), (*sessions.MemoryStore)(nil), (*sessions.Part)(nil),
	(*audit.Audit)(nil), (*someUpstream)(nil), (*upstream.MemoryStore)(nil),
	(*someTransport)(nil), (*http.Transport)(nil),
}

const resource = "https://mcp.example.com/mcp"

func alice() *principal.Principal {
	return &principal.Principal{Subject: "alice", ClientID: "app", Scopes: []string{"docs:read"}}
}

// docs is an inventory template of alice's one document.
func docs() inventory.Template {
	src := inventorytest.NewMemorySource()
	src.Insert("alice", inventory.Entry{Key: "a", URI: "docs://d/a", Name: "a"})
	return inventory.Template{Name: "docs", URITemplate: "docs://d/{id}", RequiredScopes: []string{"docs:read"},
		List: src.List, Read: inventory.TextReader("text/plain", "x")}
}

func newInventory(t *testing.T, o inventory.Options) (*inventory.Inventory, error) {
	return inventory.New(nil, []inventory.Template{docs()}, o)
}

// post sends body to h as alice (a bearer header too) and as an
// anonymous caller.
func post(h http.Handler, bodies ...string) {
	for _, body := range bodies {
		for _, who := range []*principal.Principal{alice(), nil} {
			r := httptest.NewRequest(http.MethodPost, resource, strings.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			r.Header.Set("MCP-Protocol-Version", "2025-06-18")
			if who != nil {
				if ctx, err := principal.NewContext(r.Context(), *who); err == nil {
					r = r.WithContext(ctx)
				}
				r.Header.Set("Authorization", "Bearer a.b.c")
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
		}
	}
}

const (
	initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	list       = `{"jsonrpc":"2.0","id":2,"method":"resources/list"}`
	read       = `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"docs://d/a"}}`
	ping       = `{"jsonrpc":"2.0","id":4,"method":"ping"}`
)

// serve builds an endpoint of parts over a fresh inventory and sends it
// the usual requests.
func serve(t *testing.T, o mcphttp.Options, parts ...mcphttp.Part) error {
	inv, err := newInventory(t, inventory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ep, err := mcphttp.New(inv, o, parts...)
	if err != nil {
		return err
	}
	post(ep, initialize, list, read, ping)
	return nil
}

func cases() []nilnesstest.Case {
	ctx := context.Background()
	return []nilnesstest.Case{
		{Options: authn.Options{Resource: resource, DPoP: dpop.Options{Mode: dpop.Allowed, BaseURL: "https://mcp.example.com"}},
			Build: func(t *testing.T, o any) error {
				a, err := authn.NewAuthenticator(nil, o.(authn.Options))
				if err != nil {
					return err
				}
				for _, auth := range []string{"Bearer a.b.c", "DPoP a.b.c", ""} {
					r := httptest.NewRequest(http.MethodPost, resource, nil)
					if auth != "" {
						r.Header.Set("Authorization", auth)
						r.Header.Set("DPoP", "a.b.c")
					}
					_, _ = a.Authenticate(r)
					if pctx, err := principal.NewContext(r.Context(), *alice()); err == nil {
						_, _ = a.Authenticate(r.WithContext(pctx))
					}
				}
				return nil
			}},
		{Options: dpop.Options{Mode: dpop.Required, BaseURL: "https://mcp.example.com"},
			Build: func(t *testing.T, o any) error {
				a, err := authn.NewAuthenticator(nil, authn.Options{Resource: resource, DPoP: o.(dpop.Options)})
				if err != nil {
					return err
				}
				r := httptest.NewRequest(http.MethodPost, resource, nil)
				r.Header.Set("Authorization", "DPoP a.b.c")
				r.Header.Set("DPoP", "a.b.c")
				_, _ = a.Authenticate(r)
				return nil
			}},
		{Options: authn.CacheOptions{}}, {Options: authn.IntrospectionOptions{}}, {Options: authn.JWTOptions{}},
		{Options: authn.MultiIssuerOptions{}}, {Options: authntest.Options{}},
		{Options: upstream.ExchangeOptions{TokenURL: "https://as.example/token", ClientID: "mcp", Audience: "https://api.example"},
			Build: func(t *testing.T, o any) error {
				x, err := upstream.NewExchanger(o.(upstream.ExchangeOptions))
				if err != nil {
					return err
				}
				_, _ = x.Token(ctx, *alice()) // no subject token in ctx: an error, never a panic
				return nil
			}},
		{Options: upstreamGrantOptions(t0Store()), Build: func(t *testing.T, o any) error {
			g, err := upstream.NewGrants(o.(upstream.GrantOptions))
			if err != nil {
				return err
			}
			_, _ = g.Connected(ctx, *alice())
			_, _ = g.Elicit(*alice())
			_, _ = g.Token(ctx, *alice())
			_ = g.Disconnect(ctx, *alice())
			post(g.ConnectHandler(), ping)
			post(g.CallbackHandler(), ping)
			return nil
		}},
		{Options: authntest.TokenOptions{}, Build: func(t *testing.T, o any) error {
			is, err := authntest.New(authntest.Options{Resource: resource})
			if err != nil {
				t.Fatal(err)
			}
			defer is.Close()
			_, err = is.TokenWith("alice", o.(authntest.TokenOptions))
			return err
		}},
		{Options: inventory.Options{}, Build: func(t *testing.T, o any) error {
			inv, err := newInventory(t, o.(inventory.Options))
			if err != nil {
				return err
			}
			next, _ := inv.List(ctx, alice(), "", func(*inventory.Item) bool { return true })
			_, _ = inv.List(ctx, alice(), next, nil)
			_, _ = inv.Read(ctx, alice(), "docs://d/a")
			_, _ = inv.Authorize(ctx, "alice", "g")
			_, _ = inv.Enable(ctx, "alice", "docs://d/a")
			_, _ = inv.CanRead(ctx, alice(), "docs://d/a")
			return nil
		}},
		{Options: inventorytest.Options{}},
		{Options: jsonrpc.BudgetOptions{}},
		{Options: jsonrpc.Limits{}, Build: func(t *testing.T, o any) error {
			post(jsonrpc.Decoder(o.(jsonrpc.Limits))(http.NotFoundHandler()), ping)
			return nil
		}},
		{Options: audit.Options{}},
		{Options: mcphttp.Options{}, Build: func(t *testing.T, o any) error { return serve(t, o.(mcphttp.Options)) }},
		{Options: mcphttp.MethodOptions{}},
		{Options: intercept.Options{}, Build: func(t *testing.T, o any) error {
			inv, err := newInventory(t, inventory.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ep, err := mcphttp.New(inv, mcphttp.Options{})
			if err != nil {
				t.Fatal(err)
			}
			legacy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Mcp-Session-Id", "s1")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
			})
			h, err := intercept.New(ep, legacy, o.(intercept.Options))
			if err != nil {
				return err
			}
			post(h, initialize, list, `{"jsonrpc":"2.0","id":9,"method":"tools/list"}`)
			return nil
		}},
		{Options: ratelimit.Limits{}, Build: func(t *testing.T, o any) error {
			l, err := ratelimit.New(o.(ratelimit.Limits))
			if err != nil {
				return err
			}
			r := httptest.NewRequest(http.MethodPost, resource, nil)
			_, _ = l.Allow(r, alice(), "list")
			_, _ = l.Admit(r)
			l.Refused(r)
			return serve(t, mcphttp.Options{}, l.Part())
		}},
		{Options: sessions.Limits{}},
		{Options: sessions.Options{}, Build: func(t *testing.T, o any) error {
			hub := notify.New(notify.Options{})
			defer hub.Close()
			p, err := sessions.New(hub, o.(sessions.Options))
			if err != nil {
				return err
			}
			return serve(t, mcphttp.Options{}, p)
		}},
		{Options: skills.Options{}, Build: func(t *testing.T, o any) error {
			inv, err := newInventory(t, inventory.Options{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := skills.New(inv, skills.Source{Template: "docs",
				List: func(context.Context, inventory.ListRequest) (skills.Page, error) {
					return skills.Page{Skills: []skills.Skill{{Key: "a", URI: "docs://d/a/SKILL.md", Frontmatter: []byte("name: a\ndescription: a\n")}}}, nil
				},
				Get: func(context.Context, skills.GetRequest) (skills.Skill, error) {
					return skills.Skill{}, inventory.ErrNotFound
				},
			}, o.(skills.Options))
			if err != nil {
				return err
			}
			next, _ := c.List(ctx, alice(), "", func(*skills.Skill) bool { return true })
			_, _ = c.List(ctx, alice(), next, nil)
			_, _ = c.Get(ctx, alice(), "docs://d/a")
			return nil
		}},
		{Options: tools.BuiltinOptions{}},
		{Options: notify.Options{}, Build: func(t *testing.T, o any) error {
			h := notify.New(o.(notify.Options))
			defer h.Close()
			s := h.Subscribe("alice")
			defer s.Close()
			h.ListChanged(ctx, "alice")
			h.ResourceUpdated(ctx, "alice", "docs://d/a")
			if id, err := h.Mark(ctx, "alice"); err == nil {
				_, _, _ = h.Since(ctx, "alice", id)
			}
			_, _, _ = h.Since(ctx, "alice", "x-1")
			if err := h.Err(); err != nil {
				// The parts that take a hub refuse it at start-up.
				if _, perr := sessions.New(h, sessions.Options{}); perr == nil {
					t.Error("sessions.New took a hub whose options are unusable")
				}
				inv, _ := newInventory(t, inventory.Options{Notifier: h})
				p, _ := sessions.New(nil, sessions.Options{})
				if _, perr := mcphttp.New(inv, mcphttp.Options{}, p); perr == nil {
					t.Error("the endpoint's sessions part took the inventory's unusable hub")
				}
				return err
			}
			// A sound hub is usable by the parts that take one.
			inv, err := newInventory(t, inventory.Options{Notifier: h})
			if err != nil {
				t.Fatalf("inventory refused a sound hub: %v", err)
			}
			_ = inv
			return nil
		}},
		{Options: notify.MemoryLogOptions{}},
		{Options: sealedcursor.Options{}, Build: func(t *testing.T, o any) error {
			s, err := sealedcursor.New(o.(sealedcursor.Options))
			if err != nil {
				return err
			}
			c, err := s.Seal([]byte("b"), []byte("p"), time.Now())
			if err == nil {
				_, _, _ = s.Open([]byte("b"), c)
			}
			return nil
		}},
	}
}

// upstreamGrantOptions are valid grant options over store.
func upstreamGrantOptions(store upstream.Store) upstream.GrantOptions {
	keys, err := sealedcursor.NewKeyRing(sealedcursor.Key{ID: 1, Secret: []byte(strings.Repeat("k", 32))})
	if err != nil {
		panic(err) // a constant key: never
	}
	return upstream.GrantOptions{Name: "photos", AuthorizeURL: "https://as.example/authorize", TokenURL: "https://as.example/token",
		ClientID: "mcp", ConnectURL: "https://mcp.example.com/connect", CallbackURL: "https://mcp.example.com/callback",
		Keys: keys, Store: store}
}

func t0Store() upstream.Store {
	s, err := upstream.NewMemoryStore(16, nil)
	if err != nil {
		panic(err) // valid arguments: never
	}
	return s
}

// Misuse is an error, never a panic: every option struct of the module,
// walked field by field with typed nils and zero values, is refused at
// construction or works.
func TestEveryOptionStructOfTheModule(t *testing.T) {
	cs := cases()
	nilnesstest.Covers(t, nilnesstest.OptionStructs(t, "../../..", "examples", "redisstore", "mcphttp/otelmcp"), cs)
	nilnesstest.Walk(t, module, pool, cs)
}
