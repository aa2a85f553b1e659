package main

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name, imports string
		want          string // a part of the one problem; "" for none
	}{
		{"goimports", "import (\n\t\"fmt\"\n\t\"net/http\"\n\n\t\"github.com/x/y\"\n\n\t\"github.com/mcpkit/mcpkit/principal\"\n)\n", ""},
		{"standard only", "import (\n\t\"fmt\"\n\t\"os\"\n)\n", ""},
		{"single", "import \"fmt\"\n", ""},
		{"none", "", ""},
		{"comment lines inside a group", "import (\n\t\"fmt\"\n\t// os is for Exit\n\t\"os\"\n\n\t\"github.com/x/y\"\n)\n", ""},
		{"named and blank", "import (\n\tstdhttp \"net/http\"\n\n\t_ \"github.com/x/y\"\n)\n", ""},
		{"mixed", "import (\n\t\"fmt\"\n\t\"github.com/x/y\"\n\t\"os\"\n)\n", "mixes"},
		{"mixed module first", "import (\n\t\"github.com/x/y\"\n\t\"os\"\n)\n", "mixes"},
		{"standard after module", "import (\n\t\"github.com/x/y\"\n\n\t\"os\"\n)\n", "after module"},
		{"two standard groups", "import (\n\t\"fmt\"\n\n\t\"os\"\n\n\t\"github.com/x/y\"\n)\n", "second group"},
		{"two declarations", "import \"github.com/x/y\"\n\nimport \"os\"\n", "after module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "package p\n\n" + tc.imports
			ps, err := check("p.go", []byte(src))
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.want == "" && len(ps) != 0:
				t.Fatalf("problems %q, want none", ps)
			case tc.want != "" && (len(ps) != 1 || !strings.Contains(ps[0], tc.want)):
				t.Fatalf("problems %q, want one saying %q", ps, tc.want)
			}
		})
	}
}

func TestStandard(t *testing.T) {
	for p, want := range map[string]bool{
		"fmt": true, "net/http": true, "crypto/sha256": true,
		"github.com/x/y": false, "golang.org/x/tools": false, "example.com": false,
	} {
		if got := standard(p); got != want {
			t.Errorf("standard(%q) = %v, want %v", p, got, want)
		}
	}
}
