package jsonrpc_test

import (
	"encoding/json"
	"testing"

	"github.com/mcpkit/mcpkit/jsonrpc"
)

// Typical MCP requests: a resources/list with a sealed cursor (~150 bytes)
// and a resources/read.
var (
	benchList = []byte(`{"jsonrpc":"2.0","id":42,"method":"resources/list","params":{"cursor":"AQx4c2VhbGVkY3Vyc29yLXBheWxvYWQtZXhhbXBsZS1ieXRlcy0wMDAxMjM0NTY3ODk"}}`)
	benchRead = []byte(`{"jsonrpc":"2.0","id":"req-7","method":"resources/read","params":{"uri":"documents://users/1234/notes/2024-05-01.md","_meta":{"progressToken":7}}}`)
)

// wireRequest is what a server would decode with encoding/json to get the
// same information as jsonrpc.Decode: the envelope, id and params kept raw.
type wireRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
}

func BenchmarkDecode(b *testing.B) {
	for _, in := range []struct {
		name string
		body []byte
	}{{"list", benchList}, {"read", benchRead}} {
		b.Run(in.name+"/jsonrpc.Decode", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in.body)))
			for b.Loop() {
				m, err := jsonrpc.Decode(in.body, 0)
				if err != nil || m.Kind != jsonrpc.KindRequest {
					b.Fatal(err)
				}
			}
		})
		b.Run(in.name+"/json.Unmarshal", func(b *testing.B) { // baseline
			b.ReportAllocs()
			b.SetBytes(int64(len(in.body)))
			for b.Loop() {
				var r wireRequest
				if err := json.Unmarshal(in.body, &r); err != nil || r.Method == "" {
					b.Fatal(err)
				}
			}
		})
		b.Run(in.name+"/json.Valid", func(b *testing.B) { // baseline: validation only
			b.ReportAllocs()
			b.SetBytes(int64(len(in.body)))
			for b.Loop() {
				if !json.Valid(in.body) {
					b.Fatal("invalid")
				}
			}
		})
		b.Run(in.name+"/jsonrpc.Peek", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in.body)))
			for b.Loop() {
				if p := jsonrpc.Peek(in.body); p.Kind != jsonrpc.KindRequest {
					b.Fatal(p.Kind)
				}
			}
		})
	}
}

func BenchmarkAppendResult(b *testing.B) {
	id := jsonrpc.Int64ID(42)
	result := json.RawMessage(`{"resources":[{"uri":"documents://users/1234/notes/a.md","name":"a.md"}],"nextCursor":"AQx4c2VhbGVk"}`)
	b.Run("jsonrpc.AppendResult", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 512)
		for b.Loop() {
			buf = jsonrpc.AppendResult(buf[:0], id, result)
		}
	})
	b.Run("json.Marshal", func(b *testing.B) { // baseline
		b.ReportAllocs()
		type resp struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  json.RawMessage `json:"result"`
		}
		for b.Loop() {
			if _, err := json.Marshal(resp{"2.0", json.RawMessage("42"), result}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
