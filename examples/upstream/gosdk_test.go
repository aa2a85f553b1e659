package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// TestGoSDKClientURLElicitation: the go-sdk client, with elicitation.url
// declared, gets -32042 from resources/list, is told on its stream when the
// page is done (notifications/elicitation/complete), and its retry lists
// the caller's photos.
func TestGoSDKClientURLElicitation(t *testing.T) {
	a := startApp(t, "elicit")
	tok, err := a.dev.Sign("bob", []string{scopeMCP}, time.Hour)
	require.NoError(t, err)
	completed := make(chan string, 4)
	client := mcp.NewClient(&mcp.Implementation{Name: "gosdk-upstream", Version: "1.0.0"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
		ElicitationCompleteHandler: func(_ context.Context, req *mcp.ElicitationCompleteNotificationRequest) {
			completed <- req.Params.ElicitationID
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// 2025-11-25: the -32042 error and the completion notification.
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: a.base + "/mcp", HTTPClient: &http.Client{Transport: bearer{tok}}},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer session.Close()

	_, err = session.ListResources(ctx, nil)
	var rpcErr *jsonrpc.Error
	require.True(t, errors.As(err, &rpcErr), "%v", err)
	require.EqualValues(t, -32042, rpcErr.Code, rpcErr.Message)
	var data struct {
		Elicitations []mcp.ElicitParams `json:"elicitations"`
	}
	require.NoError(t, json.Unmarshal(rpcErr.Data, &data))
	require.Len(t, data.Elicitations, 1)
	el := data.Elicitations[0]
	assert.Equal(t, "url", el.Mode)

	// The go-sdk client opens its GET stream after initialize: wait for it.
	for a.hub.Subscribers("bob") == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the go-sdk client opened no event stream")
		case <-time.After(5 * time.Millisecond):
		}
	}
	assert.Contains(t, approve(t, a, el.URL, "bob"), "Connected to photos")
	select {
	case id := <-completed:
		assert.Equal(t, el.ElicitationID, id)
	case <-ctx.Done():
		t.Fatal("no notifications/elicitation/complete")
	}
	res, err := session.ListResources(ctx, nil)
	require.NoError(t, err)
	var uris []string
	for _, r := range res.Resources {
		uris = append(uris, r.URI)
	}
	assert.Equal(t, []string{"photos://b1", "photos://b2"}, uris)

	// 2026-07-28: carol's read answers input_required with the
	// elicitation; the go-sdk client hands it to its elicitation handler
	// (here: the person approving in a browser) and retries by itself.
	tok, err = a.dev.Sign("carol", []string{scopeMCP}, time.Hour)
	require.NoError(t, err)
	asked := 0
	carolClient := mcp.NewClient(&mcp.Implementation{Name: "gosdk-upstream", Version: "1.0.0"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{URL: &mcp.URLElicitationCapabilities{}}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			if req.Params.Mode != "url" || !strings.Contains(approve(t, a, req.Params.URL, "carol"), "Connected to photos") {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}
			return &mcp.ElicitResult{Action: "accept"}, nil
		},
	})
	modern, err := carolClient.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: a.base + "/mcp", HTTPClient: &http.Client{Transport: bearer{tok}}}, nil)
	require.NoError(t, err)
	defer modern.Close()
	read, err := modern.ReadResource(ctx, &mcp.ReadResourceParams{URI: "photos://c1"})
	require.NoError(t, err)
	assert.Equal(t, 1, asked, "asked once")
	require.Len(t, read.Contents, 1)
	assert.Contains(t, read.Contents[0].Text, "Carol's garden")
}

// TestGoSDKClientExchangeMode: with -mode exchange a client sees its own
// photos at once, in both eras; the MCP server exchanged the caller's
// token for a photos token at the development AS.
func TestGoSDKClientExchangeMode(t *testing.T) {
	a := startApp(t, "exchange")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, version := range []string{"2025-11-25", ""} {
		for user, want := range map[string][]string{"alice": {"photos://a1", "photos://a2", "photos://a3"}, "bob": {"photos://b1", "photos://b2"}} {
			tok, err := a.dev.Sign(user, []string{scopeMCP}, time.Hour)
			require.NoError(t, err)
			client := mcp.NewClient(&mcp.Implementation{Name: "gosdk-upstream", Version: "1.0.0"}, nil)
			session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: a.base + "/mcp", HTTPClient: &http.Client{Transport: bearer{tok}}},
				&mcp.ClientSessionOptions{ProtocolVersion: version})
			require.NoError(t, err)
			res, err := session.ListResources(ctx, nil)
			require.NoError(t, err)
			var uris []string
			for _, r := range res.Resources {
				uris = append(uris, r.URI)
			}
			assert.Equal(t, want, uris, "%s %s", user, version)
			read, err := session.ReadResource(ctx, &mcp.ReadResourceParams{URI: want[0]})
			require.NoError(t, err)
			require.Len(t, read.Contents, 1)
			_, err = session.ReadResource(ctx, &mcp.ReadResourceParams{URI: "photos://c1"})
			assert.Error(t, err, "carol's photo is not %s's", user)
			session.Close()
		}
	}
}
