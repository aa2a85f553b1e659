package uritemplate

import "testing"

// matchCases are the URIs of the matching benchmarks: the shapes the kit
// served before RFC 6570 levels 3 and 4 (which the fast path keeps), and
// the new ones.
var matchCases = []struct{ name, tmpl, uri string }{
	{"simple", "docs://documents/{id}", "docs://documents/d0000042"},
	{"simple-encoded", "docs://documents/{id}", "docs://documents/caf%C3%A9%20menu"},
	{"simple-miss", "docs://documents/{id}", "docs://documents/d42/x"},
	{"reserved", "file:///{+path}", "file:///src/inventory/uritemplate.go"},
	{"three-vars", "repo://{owner}/{repo}/blob/{+path}", "repo://mcpkit/mcpkit/blob/inventory/read.go"},
	{"split", "x://{name}.{ext}", "x://archive.tar.gz"},
	{"query", "docs://documents{?tag,sort}", "docs://documents?tag=go&sort=new"},
	{"path-query", "docs://documents{/id}{?tag}", "docs://documents/d42?tag=go"},
	{"prefix", "x://{a:3}/{+b}", "x://abc/def/ghi"},
}

// BenchmarkMatch measures t.matches, which validates every listed entry's
// URI, per template shape. Shapes a build does not parse are skipped.
func BenchmarkMatch(b *testing.B) {
	for _, tc := range matchCases {
		b.Run(tc.name, func(b *testing.B) {
			ut, err := Parse(tc.tmpl)
			if err != nil {
				b.Skip(err)
			}
			want := tc.name != "simple-miss"
			if ut.Matches(tc.uri) != want {
				b.Fatalf("%q on %q: want %v", tc.uri, tc.tmpl, want)
			}
			b.ReportAllocs()
			for b.Loop() {
				if ut.Matches(tc.uri) != want {
					b.Fatal("changed")
				}
			}
		})
	}
}

// BenchmarkParams measures t.params, the match and decoding of a read.
func BenchmarkParams(b *testing.B) {
	for _, tc := range matchCases {
		if tc.name == "simple-miss" {
			continue
		}
		b.Run(tc.name, func(b *testing.B) {
			ut, err := Parse(tc.tmpl)
			if err != nil {
				b.Skip(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, ok := ut.Params(tc.uri); !ok {
					b.Fatal("no match")
				}
			}
		})
	}
}
