package main

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/notify"
)

const watched = "test://watched-resource"

// fixture is a client session of the go-sdk (protocol 2025-11-25: the
// resources/subscribe era the conformance scenarios use) to the fixture.
type fixture struct {
	cs      *sdk.ClientSession
	hub     *notify.Hub // nil in intercept mode
	updated chan string // URIs of notifications/resources/updated
}

func connect(t *testing.T, mode string) *fixture {
	t.Helper()
	h, hub, err := newHandler(mode)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		if hub != nil {
			hub.Close()
		}
		srv.Close()
	})
	f := &fixture{hub: hub, updated: make(chan string, 16)}
	client := sdk.NewClient(&sdk.Implementation{Name: "conformance-fixture-test", Version: "1"}, &sdk.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *sdk.ResourceUpdatedNotificationRequest) { f.updated <- req.Params.URI },
	})
	f.cs, err = client.Connect(context.Background(), &sdk.StreamableClientTransport{Endpoint: srv.URL}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = f.cs.Close() })
	return f
}

// next waits for the next update (a hang guard, not a timing assertion).
func next(t *testing.T, updated <-chan string) string {
	t.Helper()
	select {
	case uri := <-updated:
		return uri
	case <-time.After(10 * time.Second):
		t.Fatal("no notifications/resources/updated arrived")
		return ""
	}
}

// In endpoint mode the fixture advertises subscriptions and honours them:
// what the resources-subscribe and resources-unsubscribe scenarios ask
// for, and that an unsubscribed URI's updates stop.
func TestEndpointModeSubscriptions(t *testing.T) {
	ctx := context.Background()
	f := connect(t, "endpoint")
	cs := f.cs
	caps := cs.InitializeResult().Capabilities.Resources
	require.NotNil(t, caps)
	assert.True(t, caps.Subscribe)
	assert.True(t, caps.ListChanged)

	require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: watched}))
	require.NoError(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://static-text"}))
	deadline := time.Now().Add(10 * time.Second)
	for f.hub.Subscribers(fixturePrincipal.Subject) == 0 { // the client's GET stream is open
		require.True(t, time.Now().Before(deadline), "the client never opened its GET stream")
		time.Sleep(5 * time.Millisecond)
	}
	f.hub.ResourceUpdated(ctx, fixturePrincipal.Subject, watched)
	assert.Equal(t, watched, next(t, f.updated))

	require.NoError(t, cs.Unsubscribe(ctx, &sdk.UnsubscribeParams{URI: watched}))
	// One stream delivers in order: when the second update arrives, the
	// first would have arrived before it.
	f.hub.ResourceUpdated(ctx, fixturePrincipal.Subject, watched)
	f.hub.ResourceUpdated(ctx, fixturePrincipal.Subject, "test://static-text")
	assert.Equal(t, "test://static-text", next(t, f.updated), "the unsubscribed URI's update was delivered")

	// An unknown resource cannot be subscribed to.
	assert.Error(t, cs.Subscribe(ctx, &sdk.SubscribeParams{URI: "test://no-such-resource"}))
}

// Intercept mode has no notifications (the legacy handler owns the
// sessions): it advertises none, and resources/subscribe is not served.
func TestInterceptModeHasNoSubscriptions(t *testing.T) {
	cs := connect(t, "intercept").cs
	caps := cs.InitializeResult().Capabilities.Resources
	require.NotNil(t, caps)
	assert.False(t, caps.Subscribe)
	assert.False(t, caps.ListChanged)
	assert.Error(t, cs.Subscribe(context.Background(), &sdk.SubscribeParams{URI: watched}))
}
