package skills

import (
	"fmt"
	"slices"
	"strings"
)

// SourceFile is one file of a skill as the application holds it.
type SourceFile struct {
	// Path is the file's path in the skill's directory, "/"-separated:
	// "SKILL.md", "references/FORMS.md".
	Path string
	// Content is the file's raw bytes: exactly what the source template's
	// Read handler serves for it.
	Content []byte
	// MIMEType is the file's media type, shown by
	// resources/directory/read; empty leaves it out, but for SKILL.md,
	// which is text/markdown.
	MIMEType string
}

// Build returns the entry of the skill in directory dir (a skill URI
// without "/SKILL.md", such as "skill://alice/pdf-processing") whose files
// are files, with key as its ordering key: the kit derives what the
// extension asks for from the files themselves — the SKILL.md URI, the
// frontmatter (with [Frontmatter], from SKILL.md's YAML), and each file's
// URI, [Digest] and size. SKILL.md must be among the files.
//
// The entry is checked with [Validate]; an error names the rule broken.
// Build reads every byte it is given, so it suits an application that
// builds its entries when the files are stored, or one with small skills
// on disk; an application that stores digests and sizes fills a [Skill]
// itself.
func Build(key, dir string, files []SourceFile) (Skill, error) {
	s := Skill{Key: key, URI: dir + "/" + ManifestName, Files: make([]File, 0, len(files))}
	var manifest []byte
	found := false
	for _, f := range files {
		if f.Path == ManifestName {
			manifest, found = f.Content, true
		}
		mime := f.MIMEType
		if mime == "" && f.Path == ManifestName {
			mime = "text/markdown"
		}
		s.Files = append(s.Files, File{URI: dir + "/" + f.Path, Digest: Digest(f.Content), Size: int64(len(f.Content)), MIMEType: mime})
	}
	if !found {
		return Skill{}, fmt.Errorf("skills: %s has no %s", dir, ManifestName)
	}
	fm, err := Frontmatter(manifest)
	if err != nil {
		return Skill{}, fmt.Errorf("%w (in %s)", err, s.URI)
	}
	s.Frontmatter = fm
	slices.SortFunc(s.Files, func(a, b File) int { return strings.Compare(a.URI, b.URI) })
	if err := Validate("", &s); err != nil {
		return Skill{}, err
	}
	return s, nil
}

// SplitURI returns the directory (the URI without "/SKILL.md") and the
// skill name (the directory's last segment) of the skill whose SKILL.md
// is at uri, and whether uri is such a URI with a valid name ([ValidName]).
// GetRequest carries them already for a GetFunc.
func SplitURI(uri string) (dir, name string, ok bool) {
	dir = skillDir(uri)
	if dir == "" {
		return "", "", false
	}
	name = dir[strings.LastIndexByte(dir, '/')+1:]
	if !ValidName(name) {
		return "", "", false
	}
	return dir, name, true
}
