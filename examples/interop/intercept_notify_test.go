package interop_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	mcpgoserver "github.com/mark3labs/mcp-go/server"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/intercept"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
)

// Notifications through Intercept: the kit's per-caller change
// notifications reach the clients of a real go-sdk or mcp-go server that
// mcpkit wraps — merged into the legacy server's own GET stream in the
// legacy era, on the kit's subscriptions/listen in the 2026-07-28 era —
// while the legacy server's tools and its own notifications go on.

// statefulLegacy is a real SDK server with sessions and the echo tool, and
// a way to add a tool to it later (which makes it send its own
// notifications/tools/list_changed).
type statefulLegacy struct {
	handler http.Handler
	addTool func()
}

func statefulLegacies() map[string]func() statefulLegacy {
	return map[string]func() statefulLegacy{
		"go-sdk": func() statefulLegacy {
			s := goSDKServer()
			return statefulLegacy{
				handler: sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s }, nil),
				addTool: func() {
					sdk.AddTool(s, &sdk.Tool{Name: "shout", Description: "Added later"},
						func(context.Context, *sdk.CallToolRequest, echoInput) (*sdk.CallToolResult, any, error) {
							return &sdk.CallToolResult{}, nil, nil
						})
				},
			}
		},
		"mcp-go": func() statefulLegacy {
			s := mcpgoserver.NewMCPServer("legacy-mcp-go", "1.0.0", mcpgoserver.WithToolCapabilities(true))
			s.AddTool(mcpgo.NewTool("echo", mcpgo.WithDescription("Echoes its input"), mcpgo.WithString("text")),
				func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
					return mcpgo.NewToolResultText("echo: " + req.GetString("text", "")), nil
				})
			return statefulLegacy{
				handler: mcpgoserver.NewStreamableHTTPServer(s),
				addTool: func() {
					s.AddTool(mcpgo.NewTool("shout", mcpgo.WithDescription("Added later")),
						func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
							return mcpgo.NewToolResultText(""), nil
						})
				},
			}
		},
	}
}

// speaksModern says which legacy servers speak 2026-07-28. The go-sdk
// v1.8.0 server does not: its server/discover lists 2025-11-25 and older,
// so a client negotiates the legacy era with it through Intercept (and one
// pinned to 2026-07-28 is refused: the methods Intercept forwards are the
// legacy server's, in its protocol).
var speaksModern = map[string]bool{"go-sdk": false, "mcp-go": true}

// notifying wraps legacy in Intercept in front of an endpoint with the
// sessions part, which is also Intercept's Sessions; it returns the server
// and the hub the test publishes on.
func (f *interceptFixture) notifying(t *testing.T, legacy http.Handler) (*httptest.Server, *notify.Hub) {
	t.Helper()
	hub := notify.New(notify.Options{})
	part, err := sessions.New(hub, sessions.Options{})
	require.NoError(t, err)
	ep, err := mcphttp.New(f.inv, mcphttp.Options{Authenticator: f.auth}, part)
	require.NoError(t, err)
	h, err := intercept.New(ep, legacy, intercept.Options{Sessions: part})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		hub.Close()
		srv.Close()
	})
	return srv, hub
}

// key is the identity key the kit addresses token's caller by.
func (f *interceptFixture) key(t *testing.T, token string) string {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, interceptResource, nil)
	r.Header.Set("Authorization", "Bearer "+token)
	p, err := f.auth.Authenticate(r)
	require.NoError(t, err)
	return p.Key()
}

// waitSubscribed waits until the hub delivers to n streams of key (the
// client's GET stream or listen is open).
func waitSubscribed(t *testing.T, hub *notify.Hub, key string, n int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second) // a hang guard, not a timing assertion
	for hub.Subscribers(key) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams of %s, want %d: the client never opened its event stream", hub.Subscribers(key), key, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// notes collects what a go-sdk client was notified of.
type notes struct {
	updated, listChanged, toolsChanged chan string
}

func newNotes() *notes {
	return &notes{updated: make(chan string, 16), listChanged: make(chan string, 16), toolsChanged: make(chan string, 16)}
}

func (n *notes) options() *sdk.ClientOptions {
	return &sdk.ClientOptions{
		ResourceUpdatedHandler:     func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) { n.updated <- r.Params.URI },
		ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { n.listChanged <- "resources" },
		ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) { n.toolsChanged <- "tools" },
	}
}

func next(t *testing.T, ch <-chan string, what string) string {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second): // a hang guard
		t.Fatalf("no %s within 10 s", what)
		return ""
	}
}

func none(t *testing.T, ch <-chan string, what string) {
	t.Helper()
	select {
	case v := <-ch:
		t.Fatalf("unexpected %s: %s", what, v)
	case <-time.After(100 * time.Millisecond):
	}
}

// The go-sdk client, as alice and as bob at once, against go-sdk and
// mcp-go servers behind Intercept in every protocol era it speaks: each
// gets the resources/updated of what they subscribed to and the
// list_changed addressed to them, never the other's; the legacy server's
// own tool and its own tools/list_changed still work.
func TestInterceptNotificationsGoSDKClient(t *testing.T) {
	for name, mk := range statefulLegacies() {
		for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
			label := version
			if label == "" {
				label = "newest"
			}
			t.Run(name+" "+label, func(t *testing.T) {
				f := newInterceptFixture(t)
				legacy := mk()
				srv, hub := f.notifying(t, legacy.handler)
				ctx := context.Background()
				connect := func(token string, n *notes) *sdk.ClientSession {
					client := sdk.NewClient(&sdk.Implementation{Name: "interop", Version: "1"}, n.options())
					hc := &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}}
					cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc},
						&sdk.ClientSessionOptions{ProtocolVersion: version})
					require.NoError(t, err)
					t.Cleanup(func() { _ = cs.Close() })
					want := version
					if want == "" {
						want = "2025-11-25"
						if speaksModern[name] {
							want = "2026-07-28"
						}
					}
					require.Equal(t, want, cs.InitializeResult().ProtocolVersion)
					caps := cs.InitializeResult().Capabilities
					require.NotNil(t, caps.Resources)
					require.True(t, caps.Resources.Subscribe, "the wrapper announces subscriptions")
					require.True(t, caps.Resources.ListChanged)
					return cs
				}
				alice, bob := f.token(t, "alice"), f.token(t, "bob")
				aliceNotes, bobNotes := newNotes(), newNotes()
				as, bs := connect(alice, aliceNotes), connect(bob, bobNotes)
				aliceDoc, bobDoc := "docs://documents/alice-0001", "docs://documents/bob-0001"
				require.NoError(t, as.Subscribe(ctx, &sdk.SubscribeParams{URI: aliceDoc}))
				require.NoError(t, bs.Subscribe(ctx, &sdk.SubscribeParams{URI: bobDoc}))
				aliceKey, bobKey := f.key(t, alice), f.key(t, bob)
				waitSubscribed(t, hub, aliceKey, 1)
				waitSubscribed(t, hub, bobKey, 1)

				hub.ResourceUpdated(ctx, bobKey, "docs://documents/bob-0002") // not subscribed
				hub.ResourceUpdated(ctx, aliceKey, "docs://documents/alice-0002")
				hub.ResourceUpdated(ctx, aliceKey, aliceDoc)
				assert.Equal(t, aliceDoc, next(t, aliceNotes.updated, "resources/updated for alice"))
				hub.ListChanged(ctx, aliceKey)
				next(t, aliceNotes.listChanged, "list_changed for alice")
				none(t, bobNotes.listChanged, "list_changed for bob")
				hub.ListChanged(ctx, bobKey)
				hub.ResourceUpdated(ctx, bobKey, bobDoc)
				next(t, bobNotes.listChanged, "list_changed for bob")
				assert.Equal(t, bobDoc, next(t, bobNotes.updated, "resources/updated for bob"))
				none(t, aliceNotes.updated, "another resources/updated for alice")
				none(t, bobNotes.updated, "another resources/updated for bob")

				// The legacy server goes on: its tool, and its own notification.
				res, err := as.CallTool(ctx, &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
				require.NoError(t, err)
				assert.Equal(t, "echo: hi", res.Content[0].(*sdk.TextContent).Text)
				if as.InitializeResult().ProtocolVersion != "2026-07-28" {
					legacy.addTool() // the legacy era: on legacy's own GET stream, beside the kit's
					next(t, aliceNotes.toolsChanged, "the legacy server's own tools/list_changed")
				}
				// And reads stay the inventory's, with its ownership rule.
				read, err := as.ReadResource(ctx, &sdk.ReadResourceParams{URI: aliceDoc})
				require.NoError(t, err)
				assert.Equal(t, "Contents of Document alice-0001", read.Contents[0].Text)
				_, err = bs.ReadResource(ctx, &sdk.ReadResourceParams{URI: aliceDoc})
				assert.Error(t, err)
			})
		}
	}
}

// tsNotify runs tsclient/notify.mjs as token's caller: it returns what the
// script said once ready, a function that waits for its final summary
// (closing its standard input first when stop), and a cleanup.
type tsNotifyReady struct {
	SDKVersion            string `json:"sdkVersion"`
	ProtocolVersion       string `json:"protocolVersion"`
	SessionID             bool   `json:"sessionId"`
	SubscribeCapability   bool   `json:"subscribeCapability"`
	ListChangedCapability bool   `json:"listChangedCapability"`
	Echo                  string `json:"echo"`
	HonoredFilter         *struct {
		ResourcesListChanged  bool     `json:"resourcesListChanged"`
		ResourceSubscriptions []string `json:"resourceSubscriptions"`
	} `json:"honoredFilter"`
}

type tsNotifyDone struct {
	Done             bool           `json:"done"`
	Updated          map[string]int `json:"updated"`
	ListChanged      int            `json:"listChanged"`
	ToolsListChanged int            `json:"toolsListChanged"`
}

func runTSNotify(t *testing.T, node, sdkDir, version, era, url, token, uri string) (tsNotifyReady, func(stop bool) tsNotifyDone) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, node, filepath.Join("tsclient", "notify.mjs"), version, era, url, uri)
	cmd.Env = append(os.Environ(), "MCPKIT_TS_SDK_DIR="+sdkDir, "MCPKIT_TOKEN="+token)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	lines := bufio.NewScanner(stdout)
	var ready tsNotifyReady
	if !lines.Scan() {
		_ = cmd.Wait()
		t.Fatalf("notify.mjs %s said nothing: %s", version, stderr.String())
	}
	require.NoError(t, json.Unmarshal(lines.Bytes(), &ready), "%s\nstderr: %s", lines.Text(), stderr.String())
	return ready, func(stop bool) tsNotifyDone {
		t.Helper()
		if stop {
			_ = stdin.Close()
		}
		var done tsNotifyDone
		if lines.Scan() {
			require.NoError(t, json.Unmarshal(lines.Bytes(), &done), "%s", lines.Text())
		}
		_, _ = io.Copy(io.Discard, stdout)
		_ = stdin.Close()
		err := cmd.Wait()
		var exit *exec.ExitError
		if err != nil && (!errors.As(err, &exit) || exit.ExitCode() == 2) {
			t.Fatalf("notify.mjs %s: %v\n%s", version, err, stderr.String())
		}
		require.True(t, done.Done, "no summary; stderr: %s", stderr.String())
		return done
	}
}

// The official TypeScript SDK clients behind Intercept: v1 in the legacy
// era (resources/subscribe and the session's GET stream, which is the
// legacy server's, the kit's notifications merged in) and v2 in the
// 2026-07-28 era (listen(), the kit's own stream), against go-sdk and
// mcp-go servers; alice and bob at once, each notified of their own
// changes only.
func TestInterceptNotificationsTypeScriptClients(t *testing.T) {
	node, sdkDir := tsSDK(t)
	for name, mk := range statefulLegacies() {
		for _, run := range []struct{ sdk, era string }{{"v1", "2025-11-25"}, {"v2", "2025-11-25"}, {"v2", "2026-07-28"}} {
			if run.era == "2026-07-28" && !speaksModern[name] {
				continue // the legacy server does not speak 2026-07-28 (see speaksModern)
			}
			t.Run(name+" "+run.sdk+" "+run.era, func(t *testing.T) {
				f := newInterceptFixture(t)
				srv, hub := f.notifying(t, mk().handler)
				ctx := context.Background()
				alice, bob := f.token(t, "alice"), f.token(t, "bob")
				aliceDoc, bobDoc := "docs://documents/alice-0001", "docs://documents/bob-0001"
				aliceReady, aliceDone := runTSNotify(t, node, sdkDir, run.sdk, run.era, srv.URL, alice, aliceDoc)
				bobReady, bobDone := runTSNotify(t, node, sdkDir, run.sdk, run.era, srv.URL, bob, bobDoc)
				for _, r := range []tsNotifyReady{aliceReady, bobReady} {
					t.Logf("TypeScript SDK %s %s through Intercept(%s): protocol %s", run.sdk, r.SDKVersion, name, r.ProtocolVersion)
					assert.Equal(t, run.era, r.ProtocolVersion)
					assert.True(t, r.SubscribeCapability)
					assert.True(t, r.ListChangedCapability)
					assert.Equal(t, "echo: hi", r.Echo, "the legacy server's tool")
					if run.era != "2026-07-28" {
						assert.True(t, r.SessionID, "the legacy server's session")
					} else {
						require.NotNil(t, r.HonoredFilter)
						assert.True(t, r.HonoredFilter.ResourcesListChanged)
						assert.Len(t, r.HonoredFilter.ResourceSubscriptions, 1)
					}
				}
				aliceKey, bobKey := f.key(t, alice), f.key(t, bob)
				waitSubscribed(t, hub, aliceKey, 1)
				waitSubscribed(t, hub, bobKey, 1)

				hub.ResourceUpdated(ctx, bobKey, "docs://documents/bob-0002") // not subscribed
				hub.ResourceUpdated(ctx, aliceKey, "docs://documents/alice-0002")
				hub.ResourceUpdated(ctx, aliceKey, aliceDoc)
				hub.ListChanged(ctx, aliceKey)
				got := aliceDone(false)
				assert.Equal(t, map[string]int{aliceDoc: 1}, got.Updated, "alice: her subscribed document alone")
				assert.Equal(t, 1, got.ListChanged)

				hub.ResourceUpdated(ctx, bobKey, bobDoc)
				hub.ListChanged(ctx, bobKey)
				got = bobDone(false)
				assert.Equal(t, map[string]int{bobDoc: 1}, got.Updated, "bob: his document alone, never alice's")
				assert.Equal(t, 1, got.ListChanged, "bob: his own list_changed alone")
			})
		}
	}
}
