package mcphttp

import (
	"bytes"
	"testing"

	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/mcphttp/internal/mcpwire"
)

// envelopeSeeds are params of every shape the era's rules and the
// handlers meet.
var envelopeSeeds = []string{
	``, `null`, ` null `, `{}`, `[]`, `"x"`, `1`, `[{"uri":"a"}]`,
	`{"cursor":"abc"}`, `{"cursor":""}`, `{"cursor":null}`, `{"cursor":1}`, `{"uri":"docs://a"}`, `{"uri":""}`,
	`{"name":"read_resource","arguments":{"uri":"x"}}`, `{"name":7}`, `{"Name":"x","URI":"y","Cursor":"z"}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}`,
	`{"_meta":{"io.modelcontextprotocol/protocolVersion":1}}`, `{"_meta":[]}`, `{"_meta":null}`,
	`{"_meta":{"io.modelcontextprotocol/clientCapabilities":[]},"uri":"u"}`,
	`{"a":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}},"uri":{"uri":"x"}}`,
}

// FuzzEnvelope (issue 38, params read once): on any params the strict
// reader accepts, the one read agrees with the helpers each step used to
// call on its own — metaOf for the era's _meta members, StringParam for
// the Mcp-Name member, CursorParam and URIParam for the handlers.
func FuzzEnvelope(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, params []byte) {
		if len(params) > 0 {
			if _, err := jsonstrict.Parse(params); err != nil {
				return // not what the strict decoder lets through
			}
		}
		env := mcpwire.ReadEnvelope(params)
		_, version := mcpwire.MetaOf(params, metaProtocolVersion)
		_, caps := mcpwire.MetaOf(params, metaClientCapabilities)
		if !bytes.Equal(env.Version.Raw(), version.Raw()) || env.Version.Kind() != version.Kind() {
			t.Fatalf("%q: version %q, metaOf %q", params, env.Version.Raw(), version.Raw())
		}
		if !bytes.Equal(env.Caps.Raw(), caps.Raw()) || env.Caps.Kind() != caps.Kind() {
			t.Fatalf("%q: capabilities %q, metaOf %q", params, env.Caps.Raw(), caps.Raw())
		}
		for _, name := range []string{"name", "uri", "cursor"} {
			v, ok := env.Member(name)
			if !ok {
				t.Fatalf("member %s not held", name)
			}
			gv, gp, gerr := mcpwire.StringValue(v, env.Err)
			wv, wp, werr := mcpwire.StringParam(params, name)
			if gv != wv || gp != wp || errText(gerr) != errText(werr) {
				t.Fatalf("%q: %s = (%q, %v, %v), StringParam (%q, %v, %v)", params, name, gv, gp, gerr, wv, wp, werr)
			}
		}
		if _, ok := env.Member("arguments"); ok {
			t.Fatal("a member the envelope does not hold")
		}
		r := &Request{params: params, notes: &notes{view: env.View, viewed: true}}
		gc, gerr := r.cursor()
		wc, werr := mcpwire.CursorParam(params)
		if gc != wc || errText(gerr) != errText(werr) {
			t.Fatalf("%q: cursor (%q, %v), CursorParam (%q, %v)", params, gc, gerr, wc, werr)
		}
		gu, gerr := r.uri()
		wu, werr := mcpwire.URIParam(params)
		if gu != wu || errText(gerr) != errText(werr) {
			t.Fatalf("%q: uri (%q, %v), URIParam (%q, %v)", params, gu, gerr, wu, werr)
		}
	})
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// BenchmarkEnvelope: the params of a modern resources/read read once (the
// envelope: era members, Mcp-Name's member, the handler's uri) against
// the reads each step made on its own before (metaOf twice for the era's
// members, StringParam for Mcp-Name, URIParam in the handler).
func BenchmarkEnvelope(b *testing.B) {
	params := []byte(`{"uri":"docs://documents/d000123","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}`)
	b.Run("once", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			env := mcpwire.ReadEnvelope(params)
			v, _ := env.Member("uri")
			name, _, err := mcpwire.StringValue(v, env.Err)
			uri, err2 := mcpwire.URI(mcpwire.StringValue(env.View.URI, env.Err))
			if env.Version.Kind() != jsonstrict.String || env.Caps.Kind() != jsonstrict.Object || err != nil || err2 != nil || name != uri {
				b.Fatal("read")
			}
		}
	})
	b.Run("each-step", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, version := mcpwire.MetaOf(params, metaProtocolVersion)
			_, caps := mcpwire.MetaOf(params, metaClientCapabilities)
			name, _, err := mcpwire.StringParam(params, "uri")
			uri, err2 := mcpwire.URIParam(params)
			if version.Kind() != jsonstrict.String || caps.Kind() != jsonstrict.Object || err != nil || err2 != nil || name != uri {
				b.Fatal("read")
			}
		}
	})
}
