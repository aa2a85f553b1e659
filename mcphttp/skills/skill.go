package skills

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/mcpkit/mcpkit/internal/ascii"
	"github.com/mcpkit/mcpkit/internal/httpheader"
	"github.com/mcpkit/mcpkit/internal/jsonstrict"
	"github.com/mcpkit/mcpkit/inventory"
)

// ExtensionID is the identifier of the Skills extension (SEP-2640), the
// key of its settings under the server's capabilities.extensions.
const ExtensionID = "io.modelcontextprotocol/skills"

// Limits of one skill, from the extension: every conforming host accepts a
// skill within them, and the kit serves no skill beyond them.
const (
	MaxFiles       = 512      // entries of Skill.Files, SKILL.md included
	MaxTotalSize   = 16 << 20 // the sum of File.Size, in bytes
	MaxNameLen     = 64       // the skill name (the frontmatter's name)
	MaxFrontmatter = 64 << 10 // bytes of Skill.Frontmatter
)

// ManifestName is the file every skill has at its root.
const ManifestName = "SKILL.md"

// File is one file of a skill, as its entry describes it. The
// application owns Digest and Size: it computes them from the bytes its
// read handler serves for URI (with [Digest]), typically when the file is
// stored. The kit checks their form on every entry it serves; package
// skillstest reads every file back and checks that they match.
type File struct {
	// URI is the file's resource URI: the skill's SKILL.md URI, or one
	// under the skill's directory (the SKILL.md URI without "/SKILL.md").
	URI string
	// Digest is "sha256:" and the 64 lowercase hexadecimal digits of the
	// SHA-256 of the file's raw bytes.
	Digest string
	// Size is the length of the file's raw bytes.
	Size int64
	// MIMEType is the file's media type, shown by resources/directory/read;
	// empty leaves it out. SKILL.md is text/markdown.
	MIMEType string
}

// Skill is the entry of one skill: what skills/list and skills/get answer.
type Skill struct {
	// Key is the skill's ordering key in its source's listing, under the
	// rules of inventory.Entry.Key (1–256 bytes of 0x21–0x7E, strictly
	// increasing in a page). It never reaches the client. skills/get
	// ignores it.
	Key string
	// URI is the resource URI of the skill's SKILL.md:
	// scheme://<skill-path>/SKILL.md, whose last <skill-path> segment is
	// the frontmatter's name.
	URI string
	// Frontmatter is the SKILL.md YAML frontmatter rendered verbatim as a
	// JSON object (valid JSON, no member twice), with non-empty string
	// members name and description. It is sent as it is.
	Frontmatter []byte
	// Files is the complete manifest: SKILL.md (URI) and every other file,
	// each once. Nil with Dynamic.
	Files []File
	// Dynamic says the skill's content is generated, so no stable digests
	// exist: the entry's resources is "dynamic", and Files must be nil.
	Dynamic bool
}

// Name returns the skill name: the last segment of the skill path.
func (s *Skill) Name() string {
	dir := skillDir(s.URI)
	return dir[strings.LastIndexByte(dir, '/')+1:]
}

// skillDir returns the directory URI of a skill whose SKILL.md is at uri: uri
// without "/SKILL.md"; "" when uri does not end so.
func skillDir(uri string) string {
	d, ok := strings.CutSuffix(uri, "/"+ManifestName)
	if !ok || !strings.Contains(d, "://") || strings.HasSuffix(d, "://") {
		return ""
	}
	return d
}

// The rules of a skill entry, beyond those of inventory.ValidatePage (key
// order and form, URI length and characters): the values of
// inventory.ContractError.Rule for a skill.
const (
	RuleSkillURI        inventory.Rule = "skill-uri"         // URI not scheme://path/SKILL.md, or its last segment is no skill name
	RuleFrontmatter     inventory.Rule = "skill-frontmatter" // not a JSON object with string name and description, or too large
	RuleNameMismatch    inventory.Rule = "skill-name"        // frontmatter name differs from the URI's last segment
	RuleFilesDynamic    inventory.Rule = "skill-dynamic"     // Files given with Dynamic
	RuleFilesCount      inventory.Rule = "skill-files"       // no file, or more than MaxFiles
	RuleFilesSize       inventory.Rule = "skill-size"        // a negative size, or more than MaxTotalSize in all
	RuleFileURI         inventory.Rule = "skill-file-uri"    // a file outside the skill directory, a malformed path, or one listed twice
	RuleFileManifest    inventory.Rule = "skill-manifest"    // SKILL.md itself is not among the files
	RuleFileDigest      inventory.Rule = "skill-digest"      // a digest not "sha256:" + 64 lowercase hex
	RuleFileMIME        inventory.Rule = "skill-mime"        // a MIME type inventory would refuse (not type/subtype, a malformed parameter, over 128 bytes)
	RuleSkillNotAsked   inventory.Rule = "skill-uri-differs" // skills/get answered another skill than asked
	RuleSkillOutOfRange inventory.Rule = "skill-template"    // a URI the source's template does not serve
)

// Validate checks one skill entry against the extension's rules and
// returns the first broken one (as an *inventory.ContractError with
// Entry 0 and Source source), or nil. Key rules are checked by the page
// validation, not here.
func Validate(source string, s *Skill) error {
	if r := validate(s); r != "" {
		return &inventory.ContractError{Source: source, Rule: r, Entry: 0}
	}
	return nil
}

func validate(s *Skill) inventory.Rule {
	dir := skillDir(s.URI)
	if dir == "" || len(s.URI) > 2048 || !ascii.KeyChars(s.URI) {
		return RuleSkillURI
	}
	name := s.Name()
	if !ValidName(name) {
		return RuleSkillURI
	}
	fmName, ok := frontmatterName(s.Frontmatter)
	if !ok {
		return RuleFrontmatter
	}
	if fmName != name {
		return RuleNameMismatch
	}
	if s.Dynamic {
		if s.Files != nil {
			return RuleFilesDynamic
		}
		return ""
	}
	return validateFiles(s, dir)
}

// validateFiles checks the files of a skill that is not dynamic (count,
// sizes, URIs under dir with the manifest among them, digests, MIME types)
// and returns the first rule broken, or "".
func validateFiles(s *Skill, dir string) inventory.Rule {
	if len(s.Files) == 0 || len(s.Files) > MaxFiles {
		return RuleFilesCount
	}
	var total int64
	seen := make(map[string]struct{}, len(s.Files))
	manifest := false
	for i := range s.Files {
		f := &s.Files[i]
		if f.Size < 0 || f.Size > MaxTotalSize {
			return RuleFilesSize
		}
		if total += f.Size; total > MaxTotalSize {
			return RuleFilesSize
		}
		if f.URI == s.URI {
			manifest = true
		} else if !validFilePath(dir, f.URI) {
			return RuleFileURI
		}
		if _, dup := seen[f.URI]; dup {
			return RuleFileURI
		}
		seen[f.URI] = struct{}{}
		if !validDigest(f.Digest) {
			return RuleFileDigest
		}
		if f.MIMEType != "" && !validMIME(f.MIMEType) {
			return RuleFileMIME
		}
	}
	if !manifest {
		return RuleFileManifest
	}
	return ""
}

// validFilePath reports whether uri is dir + "/" + a relative path of
// non-empty segments other than "." and "..", without a trailing slash.
// Skill URIs are printable ASCII without space (ascii.KeyChars): clients
// percent-encode anything else.
func validFilePath(dir, uri string) bool {
	rest, ok := strings.CutPrefix(uri, dir+"/")
	if !ok || rest == "" || len(uri) > 2048 || !ascii.KeyChars(uri) {
		return false
	}
	for seg := range strings.SplitSeq(rest, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// ValidName reports whether name follows the Agent Skills naming rules:
// 1–64 characters of lowercase letters, digits and hyphens, without a
// leading, trailing or doubled hyphen.
func ValidName(name string) bool {
	if name == "" || len(name) > MaxNameLen || name[0] == '-' || name[len(name)-1] == '-' || strings.Contains(name, "--") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// Digest returns the digest of a file's raw bytes in the form entries
// carry: "sha256:" and 64 lowercase hexadecimal digits.
func Digest(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// validDigest reports whether d is "sha256:" and 64 lowercase hexadecimal
// digits.
func validDigest(d string) bool {
	hexPart, ok := strings.CutPrefix(d, "sha256:")
	if !ok || len(hexPart) != 64 {
		return false
	}
	for i := 0; i < len(hexPart); i++ {
		c := hexPart[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// frontmatterName checks that fm is a JSON object (strictly: no member
// twice, valid UTF-8) with non-empty string members name and description,
// and returns the name.
func frontmatterName(fm []byte) (string, bool) {
	if len(fm) == 0 || len(fm) > MaxFrontmatter {
		return "", false
	}
	v, err := jsonstrict.Parse(fm)
	if err != nil || v.Kind() != jsonstrict.Object {
		return "", false
	}
	var name, desc string
	ok := true
	err = v.Members(func(n []byte, m jsonstrict.Value) bool {
		switch string(n) {
		case "name":
			name, ok = m.Str()
		case "description":
			desc, ok = m.Str()
		}
		return ok
	})
	if err != nil || !ok || name == "" || desc == "" || !utf8.ValidString(desc) {
		return "", false
	}
	return name, true
}

// validMIME reports a media type as inventory accepts it (see
// httpheader.ValidMediaType: type/subtype of RFC 6838 restricted names,
// parameters of RFC 9110 syntax, no control characters), at most 128
// bytes.
func validMIME(m string) bool {
	return len(m) <= 128 && httpheader.ValidMediaType(m)
}
