package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/examples/documents/app"
)

// Start the server in development mode on a free port, mint a token for
// alice the way "documents token alice" does, and ask for her first page
// through the handler.
func Example() {
	dir, err := os.MkdirTemp("", "documents-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	ctx := context.Background()
	a, err := app.New(ctx, app.Config{
		Addr: "127.0.0.1:0", DataDir: dir,
		PageSize: 5, // small pages, to show a nextCursor with the demo documents
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	tok, err := app.DevToken(app.Config{Addr: a.Addr(), DataDir: dir}, "alice", time.Hour)
	if err != nil {
		log.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodPost, "http://"+a.Addr()+"/mcp",
		strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer "+tok)
	w := httptest.NewRecorder()
	a.Handler().ServeHTTP(w, r)

	var res struct {
		Result struct {
			Resources []struct {
				URI, Name string
			}
			NextCursor string
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &res); err != nil {
		log.Fatal(err)
	}
	fmt.Println(w.Code, len(res.Result.Resources), res.Result.NextCursor != "")
	for _, r := range res.Result.Resources {
		fmt.Println(r.Name)
	}
	// Output:
	// 200 5 true
	// about
	// Quarterly report Q1
	// Quarterly report Q2
	// Quarterly report Q3
	// Quarterly report Q4
}

// Flags win over MCPKIT_* environment variables, which win over defaults;
// problems name the flag.
func ExampleParseFlags() {
	env := map[string]string{"MCPKIT_PAGE_SIZE": "20", "MCPKIT_ADDR": "127.0.0.1:9000"}
	cfg, args, err := app.ParseFlags([]string{"-page-size", "10", "token", "alice"},
		func(k string) string { return env[k] }, io.Discard)
	fmt.Println(cfg.PageSize, cfg.Addr, args, err)

	cfg.Issuer = "https://auth.example.com"
	fmt.Println(cfg.Validate())
	// Output:
	// 10 127.0.0.1:9000 [token alice] <nil>
	// -resource: required with a real issuer: the canonical URI of this server's MCP endpoint, e.g. https://mcp.example.com/mcp
	// -jwks-url: required with -issuer (or use -introspection-url)
}
