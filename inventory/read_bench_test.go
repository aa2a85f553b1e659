package inventory_test

import (
	"context"
	"testing"

	"github.com/mcpkit/mcpkit/inventory"
)

// BenchmarkServePaths measures the ungated serving paths besides
// resources/list (a static read, a template read, one templates/list
// page, a completion), to compare builds before and after a change.
func BenchmarkServePaths(b *testing.B) {
	tmpls := []inventory.Template{
		docsTemplate(benchSource(1000).List),
		{Name: "files", URITemplate: "file:///{+path}", Access: inventory.Public, Read: readEcho,
			Complete: map[string]inventory.CompleteFunc{"path": func(context.Context, inventory.CompleteRequest) (inventory.Completion, error) {
				return inventory.Completion{Values: []string{"a", "b"}}, nil
			}}},
	}
	inv, err := inventory.New(statics(), tmpls, inventory.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx, caller := context.Background(), alice()
	for name, run := range map[string]func() error{
		"read-static":   func() error { _, err := inv.Read(ctx, caller, "docs://policy"); return err },
		"read-template": func() error { _, err := inv.Read(ctx, caller, "docs://documents/d7"); return err },
		"templates":     func() error { _, err := templatesWire(ctx, inv, caller, "", benchEnv); return err },
		"complete":      func() error { _, err := inv.Complete(ctx, caller, "file:///{+path}", "path", "", nil); return err },
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
