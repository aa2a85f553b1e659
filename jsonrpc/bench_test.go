package jsonrpc_test

import (
	"encoding/json"
	"strconv"
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

// BenchmarkDecodeHostile measures worst cases at the default 4 MiB limit:
// one object with ~470k distinct names (every name hashed and sorted), and
// ~240k small objects of 17 names each (past the one-by-one check).
func BenchmarkDecodeHostile(b *testing.B) {
	build := func(member func(i int) string) []byte {
		buf := []byte(`{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[`)
		for i := 0; len(buf) < jsonrpc.DefaultMaxBytes-200; i++ {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = append(buf, member(i)...)
		}
		return append(buf, "]}}"...)
	}
	var names []byte
	names = append(names, `{"jsonrpc":"2.0","id":1,"method":"m","params":{`...)
	for i := 0; len(names) < jsonrpc.DefaultMaxBytes-100; i++ {
		if i > 0 {
			names = append(names, ',')
		}
		names = append(names, `"`+strconv.Itoa(i)+`":0`...)
	}
	names = append(names, "}}"...)
	objects := build(func(int) string {
		return `{"a":0,"b":0,"c":0,"d":0,"e":0,"f":0,"g":0,"h":0,"i":0,"j":0,"k":0,"l":0,"m":0,"n":0,"o":0,"p":0,"q":0}`
	})
	for _, in := range []struct {
		name string
		body []byte
	}{{"names", names}, {"objects", objects}} {
		b.Run(in.name+"/jsonrpc.Decode", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in.body)))
			for b.Loop() {
				if _, err := jsonrpc.Decode(in.body, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(in.name+"/json.Valid", func(b *testing.B) { // baseline
			b.ReportAllocs()
			b.SetBytes(int64(len(in.body)))
			for b.Loop() {
				if !json.Valid(in.body) {
					b.Fatal("invalid")
				}
			}
		})
	}
}
