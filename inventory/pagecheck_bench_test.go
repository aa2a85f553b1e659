package inventory

import (
	"fmt"
	"testing"
	"time"

	"github.com/mcpkit/mcpkit/inventory/internal/uritemplate"
)

// benchPage is a page of 50 listed entries as a List callback over a
// database returns them: increasing keys, URIs of the template, plain
// names, the template's MIME type.
func benchPage(tmpl string, uri func(i int) string) (*uritemplate.Template, ListRequest, Page) {
	ut, err := uritemplate.Parse(tmpl)
	if err != nil {
		panic(err)
	}
	p := Page{HasMore: true}
	for i := range 50 {
		p.Entries = append(p.Entries, Entry{Key: fmt.Sprintf("k%06d", 5000+i), URI: uri(5000 + i), Name: fmt.Sprintf("Document %d", 5000+i)})
	}
	return ut, ListRequest{After: "k004999", Limit: 50}, p
}

// BenchmarkPageCheck checks a page of 50 entries, entry by entry as List
// does, with the general paths (the RFC 6570 matcher for every URI, the
// hashed set of URIs: what the check cost before issue 31) and with the
// fast ones, alternately in each iteration, so that a busy machine slows
// both alike; fast/general is their ratio.
func BenchmarkPageCheck(b *testing.B) {
	for _, tc := range []struct {
		name, tmpl string
		uri        func(int) string
	}{
		{"prefix", "docs://documents/{id}", func(i int) string { return fmt.Sprintf("docs://documents/d%04d", i) }},
		{"suffix", "docs://documents/{id}.md", func(i int) string { return fmt.Sprintf("docs://documents/d%04d.md", i) }},
		{"two-vars", "docs://{owner}/documents/{id}", func(i int) string { return fmt.Sprintf("docs://alice/documents/d%04d", i) }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ut, req, p := benchPage(tc.tmpl, tc.uri)
			run := func(general bool) {
				var c pageCheck
				c.General = general
				if ce := c.start("documents", ut, req, p); ce != nil {
					b.Fatal(ce)
				}
				for i := range p.Entries {
					if ce := c.entry(i); ce != nil {
						b.Fatal(ce)
					}
				}
			}
			var tGeneral, tFast time.Duration
			b.ReportAllocs()
			for b.Loop() {
				t0 := time.Now()
				run(true)
				t1 := time.Now()
				run(false)
				tFast += time.Since(t1)
				tGeneral += t1.Sub(t0)
			}
			n := float64(b.N)
			b.ReportMetric(float64(tGeneral.Nanoseconds())/n, "general-ns/page")
			b.ReportMetric(float64(tFast.Nanoseconds())/n, "fast-ns/page")
			b.ReportMetric(float64(tFast)/float64(tGeneral), "fast/general")
		})
	}
}
