package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"github.com/mcpkit/mcpkit/principal"

	"github.com/mcpkit/mcpkit/authn"
	"github.com/mcpkit/mcpkit/examples/devissuer"
	"github.com/mcpkit/mcpkit/inventory"
)

// DevTokenTTL is the lifetime of the tokens printed in development mode.
const DevTokenTTL = time.Hour

// DevScopes are the scopes of development tokens: documents:read for the
// MCP endpoint (all it needs) and documents:share for the REST API.
var devScopes = []string{ScopeRead, ScopeShare}

// ErrNotDevelopment is returned by DevToken when a real issuer is
// configured: tokens then come from that issuer.
var ErrNotDevelopment = errors.New("app: a real issuer is configured (-issuer, -jwks-url or -introspection-url): get tokens from it; the development issuer is off")

// ErrNoServer is returned by DevToken without an address when no
// development server has recorded its issuer and audience in the data
// directory: no server has started with it (or only an older version).
var ErrNoServer = errors.New("app: no development server has started with this -data-dir")

// serverFile, in the data directory, is where a development server
// records the issuer and audience of its tokens at start, for DevToken.
const serverFile = "development-server.json"

// serverRecord is the content of serverFile. Nothing in it is secret.
type serverRecord struct {
	Addr     string `json:"addr"`
	Issuer   string `json:"issuer"`
	Resource string `json:"resource"`
}

// writeServerRecord replaces the record in dir atomically (a temporary file
// renamed over it), mode 0600.
func writeServerRecord(dir string, rec serverRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, serverFile+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, serverFile))
}

// readServerRecord reads the record in dir; an absent one wraps
// ErrNoServer.
func readServerRecord(dir string) (serverRecord, error) {
	var rec serverRecord
	b, err := os.ReadFile(filepath.Join(dir, serverFile))
	if errors.Is(err, fs.ErrNotExist) {
		return rec, fmt.Errorf("%w (%s has no %s): start the server once (go run ./examples/documents) with the same -data-dir, or give its -addr",
			ErrNoServer, dir, serverFile)
	}
	if err != nil {
		return rec, err
	}
	// What a development server records: loopback http(s) URLs.
	if err := json.Unmarshal(b, &rec); err != nil || checkURL(rec.Issuer) != "" || checkURL(rec.Resource) != "" {
		return rec, fmt.Errorf("%s in -data-dir is damaged: start the server again, or give its -addr", serverFile)
	}
	return rec, nil
}

// devURLs returns the development issuer URL and the resource for a server
// reachable at hostport.
func devURLs(cfg Config, hostport string) (issuer, resource string) {
	base := "http://" + hostport
	resource = cfg.Resource
	if resource == "" {
		resource = base + "/mcp"
	}
	return base + "/dev", resource
}

// startDevelopment turns the built-in issuer on, keyed in the data
// directory, and warns loudly.
func (a *App) startDevelopment() error {
	issuer, resource := devURLs(a.cfg, a.displayHost())
	dev, err := devissuer.Open(a.cfg.DataDir, issuer, resource, devissuer.Options{})
	if err != nil {
		return fmt.Errorf("development issuer (-data-dir): %w", err)
	}
	a.dev, a.resource = dev, resource
	// For "documents token USER" without -addr: the audience and issuer of
	// this server's tokens, with the port actually listened on. A
	// convenience: without it, the token command needs -addr.
	if err := writeServerRecord(a.cfg.DataDir, serverRecord{Addr: a.displayHost(), Issuer: issuer, Resource: resource}); err != nil {
		a.log.Warn("development issuer: cannot record this server in the data directory; \"documents token USER\" will need -addr",
			"data_dir", a.cfg.DataDir, "error", err)
	}
	a.log.Warn("DEVELOPMENT MODE: a built-in token issuer signs tokens for any user with a key kept in the data directory, and its login page signs anyone in as anyone; never use this mode in production (configure -issuer and -jwks-url, or -introspection-url)",
		"issuer", issuer, "data_dir", a.cfg.DataDir)
	return nil
}

// DevToken returns a development access token for subject, valid for ttl,
// with the scopes documents:read and documents:share: what "documents
// token USER" prints. It is DevTokenFrom without the source.
func DevToken(cfg Config, subject string, ttl time.Duration) (string, error) {
	tok, _, err := DevTokenFrom(cfg, subject, ttl)
	return tok, err
}

// DevTokenSource says where a development token came from, for the
// token command to tell its user.
type DevTokenSource struct {
	// DataDir is the data directory whose development key signed the
	// token, made absolute.
	DataDir string
	// Resource is the token's audience: the MCP endpoint it is for.
	Resource string
	// RecordedAddr is the address of the development server that started
	// last with DataDir, as it recorded itself there; empty when none did.
	// With -addr it may differ from the server the token is for: a server
	// started with another -data-dir signs with another key and refuses
	// the token.
	RecordedAddr string
}

// DevTokenFrom returns a development access token for subject, valid for
// ttl, with the scopes documents:read and documents:share, and where it
// came from. Without an address (cfg.Addr empty: no -addr), the token is
// for the development server that started last with cfg.DataDir, which
// recorded its issuer and audience there (port 0 included); a
// cfg.Resource that is not that server's is refused. With an address, the
// token is for a server started with the same -addr and -resource, and
// signed with the key in cfg.DataDir. It fails with ErrNotDevelopment
// when a real issuer is configured, with an error wrapping ErrNoServer
// when no address is given and no server recorded itself, with an error
// wrapping devissuer.ErrNoKey when the data directory has no development
// key, and with *ConfigError values for a bad configuration.
func DevTokenFrom(cfg Config, subject string, ttl time.Duration) (string, DevTokenSource, error) {
	var src DevTokenSource
	recorded := cfg.Addr == ""
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return "", src, err
	}
	if !cfg.Development() {
		return "", src, ErrNotDevelopment
	}
	if _, port, _ := net.SplitHostPort(cfg.Addr); port == "0" {
		return "", src, &ConfigError{Flag: "addr", Problem: "give the port the server listens on, not 0"}
	}
	if abs, err := filepath.Abs(cfg.DataDir); err == nil {
		src.DataDir = abs
	} else {
		src.DataDir = cfg.DataDir
	}
	issuer, resource := devURLs(cfg, cfg.Addr)
	rec, err := readServerRecord(cfg.DataDir)
	switch {
	case recorded && err != nil:
		return "", src, err
	case recorded:
		if cfg.Resource != "" && cfg.Resource != rec.Resource {
			return "", src, &ConfigError{Flag: "resource", Problem: fmt.Sprintf(
				"the development server of -data-dir %s serves %s; give that, or its -addr", cfg.DataDir, rec.Resource)}
		}
		issuer, resource = rec.Issuer, rec.Resource
	}
	if err == nil {
		src.RecordedAddr = rec.Addr
	}
	src.Resource = resource
	dev, err := devissuer.Load(cfg.DataDir, issuer, resource, devissuer.Options{})
	if errors.Is(err, devissuer.ErrNoKey) {
		return "", src, fmt.Errorf("%w: start the server once (go run ./examples/documents) with the same -data-dir", err)
	}
	if err != nil {
		return "", src, err
	}
	tok, err := dev.Sign(subject, devScopes, ttl)
	return tok, src, err
}

// walkthrough renders the ready-to-paste curl commands printed at start in
// development mode, with fresh tokens for alice and bob.
func (a *App) walkthrough(ctx context.Context, inv *inventory.Inventory) (string, error) {
	d := struct {
		MCP, API, Metadata, Alice, Bob, AliceID, AliceURI, BobURI, Tampered string
		PageSize                                                            int
		Paged                                                               bool // alice's list has more than one page
		Curl                                                                string
	}{MCP: a.URL() + "/mcp", API: a.URL() + "/api", PageSize: a.cfg.PageSize}
	d.Curl = `curl -s -w '\n' "$MCP" -H 'Content-Type: application/json'`
	var err error
	if d.Metadata, err = authn.MetadataURL(a.resource); err != nil {
		return "", err
	}
	if d.Alice, err = a.dev.Sign("alice", devScopes, DevTokenTTL); err != nil {
		return "", err
	}
	if d.Bob, err = a.dev.Sign("bob", devScopes, DevTokenTTL); err != nil {
		return "", err
	}
	d.AliceID, d.BobURI = "ID", documentPrefix+"ID"
	if rows, err := a.db.List(ctx, "alice", "", 1); err == nil && len(rows) > 0 {
		d.AliceID = rows[0].ID
	}
	d.AliceURI = documentPrefix + d.AliceID
	if rows, err := a.db.List(ctx, "bob", "", 1); err == nil && len(rows) > 0 {
		d.BobURI = documentPrefix + rows[0].ID
	}
	d.Tampered, d.Paged = a.tamperedCursor(ctx, inv)
	tmpl, err := template.New("walkthrough").Parse(walkthroughText)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if err := tmpl.Execute(&b, d); err != nil {
		return "", err
	}
	return b.String(), nil
}

// tamperedCursor returns a real cursor of alice's first page with one
// character changed and true, or a made-up one and false when alice has a
// single page.
func (a *App) tamperedCursor(ctx context.Context, inv *inventory.Inventory) (string, bool) {
	alice := principal.Principal{Subject: "alice", ClientID: devissuer.DefaultClientID, Scopes: []string{ScopeRead}, Audience: a.resource}
	next, err := inv.List(ctx, &alice, "", nil) // the items do not matter, only the cursor
	if err != nil || len(next) < 2 {
		return "AQAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", false
	}
	c := []byte(next)
	i := len(c) / 2
	if c[i] == 'A' {
		c[i] = 'B'
	} else {
		c[i] = 'A'
	}
	return string(c), true
}

// walkthroughText is the text/template of the walk-through.
const walkthroughText = `
================================================================================
 mcpkit documents server: DEVELOPMENT MODE
 A built-in issuer signs tokens for any user, and its login page signs
 anyone in as anyone, without a password. Never use this in production:
 configure -issuer and -jwks-url (or -introspection-url) and -resource.
================================================================================

MCP endpoint:       {{.MCP}}
Resource metadata:  {{.Metadata}}

Sign in from an MCP client: connect it to {{.MCP}} (the MCP Inspector:
"npx @modelcontextprotocol/inspector", transport Streamable HTTP, that URL,
then Connect). It opens this server's login page in your browser: choose
alice (or bob, carol, anyone), Approve, and the client lists her documents.

Paste these into a shell (tokens valid for 1 hour; get more with
"go run ./examples/documents token alice"):

MCP={{.MCP}}
API={{.API}}
ALICE={{.Alice}}
BOB={{.Bob}}

{{if .Paged -}}
# 1. alice's documents, {{.PageSize}} per page (look for "nextCursor" at the end)
{{- else -}}
# 1. alice's documents, {{.PageSize}} per page: all on one page, so no "nextCursor"
#    at the end (start the server with -page-size 5 to see paging)
{{- end}}
{{.Curl}} -H "Authorization: Bearer $ALICE" \
  -d '{"jsonrpc":"2.0","id":1,"method":"resources/list"}'

# 2. the next page: paste the nextCursor value from the previous answer
{{.Curl}} -H "Authorization: Bearer $ALICE" \
  -d '{"jsonrpc":"2.0","id":2,"method":"resources/list","params":{"cursor":"PASTE-THE-nextCursor-HERE"}}'

# 3. read one of alice's documents
{{.Curl}} -H "Authorization: Bearer $ALICE" \
  -d '{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"{{.AliceURI}}"}}'

# 4. bob's view: his own documents, none of alice's
{{.Curl}} -H "Authorization: Bearer $BOB" \
  -d '{"jsonrpc":"2.0","id":4,"method":"resources/list"}'

# 5. alice asks for one of bob's documents: -32002 "not found", exactly as
#    for a document that does not exist
{{.Curl}} -H "Authorization: Bearer $ALICE" \
  -d '{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"{{.BobURI}}"}}'

{{if .Paged -}}
# 6. a tampered cursor (one character of a real one changed): -32602 with
#    data.reason "invalid"; the listing never restarts silently
{{- else -}}
# 6. a forged cursor (with -page-size 5: a real one with one character
#    changed): -32602 with data.reason "invalid"; the listing never restarts
#    silently
{{- end}}
{{.Curl}} -H "Authorization: Bearer $ALICE" \
  -d '{"jsonrpc":"2.0","id":6,"method":"resources/list","params":{"cursor":"{{.Tampered}}"}}'

# 7. no token: 401 with a WWW-Authenticate header naming the metadata
curl -si "$MCP" -H 'Content-Type: application/json' \
  -d '{"jsonrpc":"2.0","id":7,"method":"resources/list"}'

# Sharing and live notifications
#
# 8. bob opens a session: copy the Mcp-Session-Id header of the answer
curl -si "$MCP" -H 'Content-Type: application/json' -H "Authorization: Bearer $BOB" \
  -d '{"jsonrpc":"2.0","id":8,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"curl","version":"1"}}}'
SESSION=PASTE-THE-Mcp-Session-Id-HERE

# 9. bob's notification stream, in the background (or in a second terminal,
#    after setting MCP, BOB and SESSION there): events print as they come
curl -sN "$MCP" -H 'Accept: text/event-stream' -H "Authorization: Bearer $BOB" -H "Mcp-Session-Id: $SESSION" &
sleep 1 # until the stream is open (": stream open")

# 10. alice shares her document with bob; bob's stream prints
#     data: {"jsonrpc":"2.0","method":"notifications/resources/list_changed"}
curl -s -w '\n' "$API/documents/{{.AliceID}}/shares" -H 'Content-Type: application/json' \
  -H "Authorization: Bearer $ALICE" -d '{"with":"bob"}'

# 11. bob lists again: alice's document is there, and he can read it
{{.Curl}} -H "Authorization: Bearer $BOB" \
  -d '{"jsonrpc":"2.0","id":11,"method":"resources/list"}'
{{.Curl}} -H "Authorization: Bearer $BOB" \
  -d '{"jsonrpc":"2.0","id":12,"method":"resources/read","params":{"uri":"{{.AliceURI}}"}}'

# 12. bob subscribes to it on his session, alice edits it (204); bob's
#     stream prints notifications/resources/updated
{{.Curl}} -H "Authorization: Bearer $BOB" -H "Mcp-Session-Id: $SESSION" \
  -d '{"jsonrpc":"2.0","id":13,"method":"resources/subscribe","params":{"uri":"{{.AliceURI}}"}}'
curl -s -w '%{http_code}\n' -X PUT "$API/documents/{{.AliceID}}" -H 'Content-Type: application/json' \
  -H "Authorization: Bearer $ALICE" -d '{"body":"Edited by alice while bob watched."}'

# 13. alice unshares it (204); bob's stream prints list_changed again, and
#     the document has left his list
curl -s -w '%{http_code}\n' -X DELETE "$API/documents/{{.AliceID}}/shares/bob" -H "Authorization: Bearer $ALICE"
{{.Curl}} -H "Authorization: Bearer $BOB" \
  -d '{"jsonrpc":"2.0","id":14,"method":"resources/list"}'

# 14. bob may not share alice's documents: 404, as for a missing one
curl -s -w '\n' "$API/documents/{{.AliceID}}/shares" -H 'Content-Type: application/json' \
  -H "Authorization: Bearer $BOB" -d '{"with":"carol"}'

# stop bob's stream
kill %1

`
