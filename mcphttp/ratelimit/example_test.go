package ratelimit_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/mcphttp"
	"github.com/mcpkit/mcpkit/mcphttp/ratelimit"
)

// opsInventory is a public static resource for the examples.
func opsInventory() *inventory.Inventory {
	inv, err := inventory.New([]inventory.Resource{{
		URI: "notes://welcome", Name: "welcome", Access: inventory.Public,
		Read: inventory.TextReader("text/plain", "Hello!"),
	}}, nil, inventory.Options{})
	if err != nil {
		panic(err)
	}
	return inv
}

// postAs serves one resources/read as subject (a principal put in the
// context by the service's own middleware) and returns the status.
func postAs(h http.Handler, subject, uri string) *httptest.ResponseRecorder {
	body := `{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"` + uri + `"}}`
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	ctx, err := principal.NewContext(r.Context(), principal.Principal{Subject: subject, ClientID: "notes-app"})
	if err != nil {
		w.WriteHeader(http.StatusUnauthorized)
		return w
	}
	r = r.WithContext(ctx)
	h.ServeHTTP(w, r)
	return w
}

// Two reads at once per caller, then one a second: alice's third read is
// refused with 429 and Retry-After, bob is served.
func ExampleNew() {
	limiter, err := ratelimit.New(ratelimit.Limits{Read: ratelimit.Rate{PerSecond: 1, Burst: 2}})
	if err != nil {
		panic(err)
	}
	ep, err := mcphttp.New(opsInventory(), mcphttp.Options{}, limiter.Part())
	if err != nil {
		panic(err)
	}
	for _, who := range []string{"alice", "alice", "alice", "bob"} {
		w := postAs(ep, who, "notes://welcome")
		fmt.Println(strings.TrimSpace(fmt.Sprint(who, " ", w.Code, " ", w.Header().Get("Retry-After"))))
	}
	// Output:
	// alice 200
	// alice 200
	// alice 429 1
	// bob 200
}

// Behind a reverse proxy at 10.0.0.1 that appends X-Forwarded-For, limits
// key on the client it vouches for; from anyone else the header is
// ignored.
func ExampleTrustedProxies_ClientAddr() {
	proxies, err := ratelimit.NewTrustedProxies("10.0.0.0/8", ratelimit.HeaderXForwardedFor)
	if err != nil {
		panic(err)
	}
	limiter, err := ratelimit.New(ratelimit.Limits{
		Refused:    ratelimit.Rate{PerSecond: 1, Burst: 20},
		ClientAddr: proxies.ClientAddr, // also the Authenticator's Throttle keying
	})
	if err != nil {
		panic(err)
	}
	_ = limiter

	r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	r.Header.Set("X-Forwarded-For", "198.51.100.1, 203.0.113.7") // the client wrote the first
	r.RemoteAddr = "10.0.0.1:40000"
	fmt.Println(proxies.ClientAddr(r))
	r.RemoteAddr = "192.0.2.5:40000"
	fmt.Println(proxies.ClientAddr(r))
	// Output:
	// 203.0.113.7
	// 192.0.2.5
}
