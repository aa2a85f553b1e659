package budget

import (
	"encoding/json"
	"fmt"
	"testing"
)

type benchResource struct {
	URI      string `json:"uri"`
	Name     string `json:"name"`
	MIMEType string `json:"mimeType,omitempty"`
}

type benchResult struct {
	JSONRPC string `json:"jsonrpc"`
	ID      int    `json:"id"`
	Result  struct {
		Resources  []benchResource `json:"resources"`
		NextCursor string          `json:"nextCursor,omitempty"`
	} `json:"result"`
}

func benchData() ([]benchResource, string) {
	res := make([]benchResource, 100)
	for i := range res {
		res[i] = benchResource{
			URI:      fmt.Sprintf("docs://alice/documents/%08d", i),
			Name:     fmt.Sprintf("Quarterly report %d — draft", i),
			MIMEType: "text/markdown",
		}
	}
	return res, "AQBxN2Zr0w6pQ3l9Yk8m4Tq1rZs7Vb2Xc5Nd8Fg0Hj3Kl6Mn9Pq2Rs5Tu8Vw1Xy4Za7Bc0De3Fg6Hi9Jk2Lm5No8"
}

// BenchmarkMarshal100 is the baseline: encoding/json marshals a 100-entry
// resources/list response.
func BenchmarkMarshal100(b *testing.B) {
	res, cursor := benchData()
	b.ReportAllocs()
	for b.Loop() {
		var r benchResult
		r.JSONRPC, r.ID = "2.0", 1
		r.Result.Resources, r.Result.NextCursor = res, cursor
		if _, err := json.Marshal(&r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPage100 assembles the same response from 100 pre-encoded items
// under both limits.
func BenchmarkPage100(b *testing.B) {
	res, cursor := benchData()
	items := make([][]byte, len(res))
	for i, r := range res {
		items[i], _ = json.Marshal(r)
	}
	head := []byte(`{"jsonrpc":"2.0","id":1,"result":{"resources":`)
	tail := []byte(`}}`)
	trailer := []byte(`,"nextCursor":"` + cursor + `"`)
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		p, err := NewInto(buf, head, tail, Limits{MaxItems: 100, MaxBytes: 1 << 20, Reserve: len(trailer)})
		if err != nil {
			b.Fatal(err)
		}
		for _, it := range items {
			if err := p.Add(it); err != nil {
				b.Fatal(err)
			}
		}
		if buf, err = p.Finish(trailer); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncodeAndPage100 encodes each entry with AppendString and
// assembles the page: the whole job json.Marshal does in the baseline.
func BenchmarkEncodeAndPage100(b *testing.B) {
	res, cursor := benchData()
	head := []byte(`{"jsonrpc":"2.0","id":1,"result":{"resources":`)
	tail := []byte(`}}`)
	trailer := []byte(`,"nextCursor":"` + cursor + `"`)
	var item, buf []byte
	b.ReportAllocs()
	for b.Loop() {
		p, err := NewInto(buf, head, tail, Limits{MaxItems: 100, MaxBytes: 1 << 20, Reserve: len(trailer)})
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			item = append(item[:0], `{"uri":`...)
			item = AppendString(item, r.URI)
			item = append(item, `,"name":`...)
			item = AppendString(item, r.Name)
			item = append(item, `,"mimeType":`...)
			item = AppendString(item, r.MIMEType)
			item = append(item, '}')
			if err := p.Add(item); err != nil {
				b.Fatal(err)
			}
		}
		if buf, err = p.Finish(trailer); err != nil {
			b.Fatal(err)
		}
	}
}
