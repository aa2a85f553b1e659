package skills

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/internal/ascii"
	"github.com/mcpkit/mcpkit/inventory"
	"github.com/mcpkit/mcpkit/principal"
)

// DirectoryMIMEType is the media type of a directory resource.
const DirectoryMIMEType = "inode/directory"

// maxDepth bounds the directories ReadDir climbs to find the skill a
// directory belongs to: each step may call Get once.
const maxDepth = 16

// ReadDir serves resources/directory/read: the direct children of the
// directory at uri — a skill's root (its SKILL.md URI without
// "/SKILL.md") or a directory within it — taken from the skill's
// manifest, in URI order, one page at a time, each offered to fit as List
// offers skills. Files carry their URI, name (last segment), MIME type and
// size; subdirectories mimeType inode/directory, without a trailing slash.
//
// The skill is found by asking Get (with its access checks) for the
// SKILL.md of uri and of each enclosing directory, innermost first. A URI
// that is no directory of a skill the caller may see — a file, a URI that
// does not exist, another caller's skill, a dynamic skill's directory
// (its files are not known) — is inventory.ErrNotFound.
//
// Errors: principal.ErrUnauthenticated, inventory.ErrNotFound,
// *inventory.CursorError, inventory.ErrInternal (logged).
func (c *Catalog) ReadDir(ctx context.Context, caller *principal.Principal, uri, cursor string, fit func(*inventory.Item) bool) (next string, err error) {
	if caller == nil {
		return "", principal.ErrUnauthenticated
	}
	after, first := "", c.sealer.Now()
	if cursor != "" {
		if after, first, err = c.openCursor(purposeDir, caller, uri, cursor); err != nil {
			return "", err
		}
	}
	if strings.HasSuffix(uri, "/") || !ascii.KeyChars(uri) || len(uri) > 2048 {
		return "", inventory.ErrNotFound
	}
	skill, err := c.skillOf(ctx, caller, uri)
	if err != nil {
		return "", err
	}
	children := childrenOf(&skill, uri)
	if children == nil {
		return "", inventory.ErrNotFound
	}
	start, _ := slices.BinarySearchFunc(children, after, func(it inventory.Item, key string) int {
		return strings.Compare(it.Name, key)
	})
	if after != "" && start < len(children) && children[start].Name == after {
		start++
	}
	n, last := 0, ""
	for i := start; i < len(children); i++ {
		if n == c.pageSize {
			return c.seal(purposeDir, caller, uri, last, first)
		}
		if fit != nil && !fit(&children[i]) {
			if n == 0 {
				return "", c.violation(ctx, "resources/directory/read", inventory.RuleEntryTooLarge, i)
			}
			return c.seal(purposeDir, caller, uri, last, first)
		}
		n++
		last = children[i].Name
	}
	return "", nil
}

// skillOf returns the innermost skill the caller may see whose directory
// is uri or encloses it.
func (c *Catalog) skillOf(ctx context.Context, caller *principal.Principal, uri string) (Skill, error) {
	for d, depth := uri, 0; d != "" && depth < maxDepth; d, depth = parent(d), depth+1 {
		s, err := c.Get(ctx, caller, d+"/"+ManifestName)
		switch {
		case err == nil:
			return s, nil
		case !errors.Is(err, inventory.ErrNotFound):
			return Skill{}, err
		}
	}
	return Skill{}, inventory.ErrNotFound
}

// childrenOf returns the direct children of dir in s's manifest, sorted
// by name (which orders their URIs too); nil when dir is not a directory
// of s (a file, or nothing), empty never (a directory of a manifest holds
// a file).
func childrenOf(s *Skill, dir string) []inventory.Item {
	if s.Dynamic {
		return nil
	}
	var out []inventory.Item
	seen := map[string]bool{}
	for i := range s.Files {
		f := &s.Files[i]
		rest, ok := strings.CutPrefix(f.URI, dir+"/")
		if !ok || rest == "" {
			continue
		}
		name, sub, isDir := strings.Cut(rest, "/")
		if seen[name] {
			continue
		}
		seen[name] = true
		if isDir && sub != "" {
			out = append(out, inventory.Item{URI: dir + "/" + name, Name: name, MIMEType: DirectoryMIMEType})
		} else {
			out = append(out, inventory.Item{URI: f.URI, Name: name, MIMEType: f.MIMEType, Size: f.Size})
		}
	}
	slices.SortFunc(out, func(a, b inventory.Item) int { return strings.Compare(a.Name, b.Name) })
	return out
}
