package sessions_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/sessions"
	"github.com/mcpkit/mcpkit/notify"
	"github.com/mcpkit/mcpkit/principal"
)

// A legacy client signs in, gets a session, opens its event stream, and
// hears of a change to its list. The service authenticates on its own
// here: its middleware puts the caller in the context.
func Example() {
	hub := notify.New(notify.Options{})
	inv, err := inventory.New([]inventory.Resource{{URI: "docs://readme", Name: "readme", Access: inventory.Public,
		Read: inventory.TextReader("text/plain", "hello")}}, nil, inventory.Options{})
	if err != nil {
		panic(err)
	}
	part, err := sessions.New(hub, sessions.Options{})
	if err != nil {
		panic(err)
	}
	ep, err := mcphttp.New(inv, mcphttp.Options{}, part)
	if err != nil {
		panic(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, _ := principal.NewContext(r.Context(), principal.Principal{Subject: "alice"})
		ep.ServeHTTP(w, r.WithContext(ctx))
	}))
	defer srv.Close()

	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	resp.Body.Close()
	session := resp.Header.Get("Mcp-Session-Id")
	fmt.Println("session id:", len(session), "characters")

	req, _ = http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", session)
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	for hub.Subscribers("alice") == 0 {
		time.Sleep(time.Millisecond) // the stream subscribes as it opens
	}
	hub.ListChanged(context.Background(), "alice") // the application, after alice's records changed
	sc := bufio.NewScanner(stream.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok && data != "" { // empty: the priming event
			fmt.Println(data)
			break
		}
	}
	stream.Body.Close()

	hub.Close() // at shutdown: ends the streams
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Println("streams ended:", part.Wait(ctx) == nil)
	// Output:
	// session id: 43 characters
	// {"jsonrpc":"2.0","method":"notifications/resources/list_changed"}
	// streams ended: true
}
