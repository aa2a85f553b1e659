// Package nilwalk holds the examples module's walk of its option
// structs (issue 35).
package nilwalk

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/examples/documents/app"
	"github.com/mcpkit/mcpkit/examples/documents/pgnotify"
	"github.com/mcpkit/mcpkit/examples/documents/store"
	"github.com/mcpkit/mcpkit/examples/mount/kit"
	"github.com/mcpkit/mcpkit/internal/nilness/nilnesstest"
)

// Misuse is an error, never a panic: every option struct of the
// examples module, walked field by field with typed nils, is refused by
// its constructor or works; the walk fails when one gains a field of
// interface type, or a pointer to a struct of the module, without a
// case that builds it.
func TestEveryOptionStructOfTheModule(t *testing.T) {
	cases := []nilnesstest.Case{
		{Options: devissuer.Options{}},
		{Options: devissuer.ServerOptions{Scopes: []devissuer.Scope{{Name: "docs:read", Description: "Read"}},
			Exchange: &devissuer.ExchangeOptions{ClientID: "mcp", ClientSecret: strings.Repeat("s", 32),
				Audiences: map[string][]string{"https://api.example": {"photos:read"}}}},
			Build: func(t *testing.T, o any) error {
				is, err := devissuer.New("https://as.example", "https://mcp.example/mcp", devissuer.Options{})
				if err != nil {
					t.Fatal(err)
				}
				s, err := is.NewServer(o.(devissuer.ServerOptions))
				if err != nil {
					return err
				}
				r := httptest.NewRequest(http.MethodPost, "https://as.example/token", strings.NewReader(
					"grant_type=urn:ietf:params:oauth:grant-type:token-exchange&subject_token=x&subject_token_type=urn:ietf:params:oauth:token-type:access_token&audience=https://api.example"))
				r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				r.SetBasicAuth("mcp", strings.Repeat("s", 32))
				s.ServeHTTP(httptest.NewRecorder(), r)
				return nil
			}},
		{Options: devissuer.ExchangeOptions{}},
		{Options: app.Config{Addr: "127.0.0.1:0", AuditLog: app.AuditStdout}, Build: func(t *testing.T, o any) error {
			cfg := o.(app.Config)
			cfg.DataDir = t.TempDir()
			cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
			a, err := app.New(context.Background(), cfg)
			if err != nil {
				return err
			}
			defer a.Close()
			tok, err := app.DevToken(app.Config{Addr: a.Addr(), DataDir: cfg.DataDir}, "alice", 0)
			if err != nil {
				t.Fatal(err)
			}
			r := httptest.NewRequest(http.MethodPost, "http://"+a.Addr()+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"resources/list"}`))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Accept", "application/json, text/event-stream")
			r.Header.Set("Authorization", "Bearer "+tok)
			a.Handler().ServeHTTP(httptest.NewRecorder(), r)
			return nil
		}},
		{Options: pgnotify.Options{}}, {Options: store.Options{}}, {Options: kit.Config{}},
	}
	nilnesstest.Covers(t, nilnesstest.OptionStructs(t, "../.."), cases)
	nilnesstest.Walk(t, "github.com/mcpkit/mcpkit/examples", []any{(*bytes.Buffer)(nil), (*strings.Builder)(nil)}, cases)
}
