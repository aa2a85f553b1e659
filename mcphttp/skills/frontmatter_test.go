package skills_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mcpkit/mcpkit/mcphttp/skills"
)

// The YAML that SKILL.md frontmatter uses becomes the JSON object entries
// carry, members in file order (issue 39: applications wrote it twice).
func TestFrontmatter(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"name and description", "name: pdf-processing\ndescription: Extract text from PDFs.\n",
			`{"name":"pdf-processing","description":"Extract text from PDFs."}`},
		{"quoted", "name: 'it''s'\ndescription: \"a \\\"b\\\" \\u00e9\\n\"\n",
			`{"name":"it's","description":"a \"b\" é\n"}`},
		{"comments and blank lines", "# a comment\nname: x # trailing\n\ndescription: y\n",
			`{"name":"x","description":"y"}`},
		{"a # inside a word stays", "name: x\ndescription: C# and F#\n", `{"name":"x","description":"C# and F#"}`},
		{"plain over lines", "name: x\ndescription: one\n  two\n   three\n", `{"name":"x","description":"one two three"}`},
		{"literal block", "name: x\ndescription: |\n  line one\n  line two\n\nlicense: MIT\n",
			`{"name":"x","description":"line one\nline two\n","license":"MIT"}`},
		{"literal strip", "description: |-\n  a\n  b\n", `{"description":"a\nb"}`},
		{"literal keep", "description: |+\n  a\n\n\nname: x\n", `{"description":"a\n\n\n","name":"x"}`},
		{"folded", "description: >\n  one\n  two\n\n  three\n", `{"description":"one two\nthree\n"}`},
		{"folded strip", "description: >-\n  one\n  two\n", `{"description":"one two"}`},
		{"nested mapping", "name: x\nmetadata:\n  author: me\n  version: \"1.0\"\n  n: 2\ndescription: d\n",
			`{"name":"x","metadata":{"author":"me","version":"1.0","n":2},"description":"d"}`},
		{"block sequence", "allowed-tools:\n  - Read\n  - 'Bash(git:*)'\n", `{"allowed-tools":["Read","Bash(git:*)"]}`},
		{"block sequence at the key's indent", "tags:\n- a\n- b\nname: x\n", `{"tags":["a","b"],"name":"x"}`},
		{"flow sequence", "tags: [a, \"b c\", 3]\n", `{"tags":["a","b c",3]}`},
		{"typed scalars", "a: true\nb: False\nc: ~\nd:\ne: -1.5e3\nf: 007\ng: 1.0.0\nh: .5\n",
			`{"a":true,"b":false,"c":null,"d":null,"e":-1.5e3,"f":"007","g":"1.0.0","h":".5"}`},
		{"html characters as they are", "description: <b> & </b>\n", `{"description":"<b> & </b>"}`},
		{"CRLF", "name: x\r\ndescription: y\r\n", `{"name":"x","description":"y"}`},
		{"empty", "", `{}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := skills.Frontmatter([]byte("---\n" + tc.yaml + "---\n# Body\n\ntext: not frontmatter\n"))
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(got))
			assert.Equal(t, compact(t, tc.want), string(got), "members in file order")
		})
	}
}

func compact(t *testing.T, s string) string {
	t.Helper()
	var v json.RawMessage
	require.NoError(t, json.Unmarshal([]byte(s), &v))
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(b))
}

// What the subset does not read is refused with the line, never guessed.
func TestFrontmatterRefusals(t *testing.T) {
	for _, tc := range []struct{ name, md, want string }{
		{"no frontmatter", "# Title\n", "does not begin with a line ---"},
		{"not closed", "---\nname: x\n", "no closing line ---"},
		{"not UTF-8", "---\nname: \xff\n---\n", "not UTF-8"},
		{"a key twice", "---\nname: x\nname: y\n---\n", `line 3: the key "name" is given twice`},
		{"anchor", "---\nname: &a x\n---\n", "line 2"},
		{"alias", "---\nname: *a\n---\n", "line 2"},
		{"tag", "---\nname: !!str x\n---\n", "line 2"},
		{"flow mapping", "---\nmeta: {a: 1}\n---\n", "line 2"},
		{"complex key", "---\n? a\n: b\n---\n", "line 2"},
		{"tab indentation", "---\nmeta:\n\ta: 1\n---\n", "line 3"},
		{"indented first key", "---\n  name: x\n---\n", "indented"},
		{"not a key line", "---\nname x\n---\n", `not a "key: value" line`},
		{"unclosed quote", "---\nname: \"x\n---\n", "closing quote"},
		{"bad escape", "---\nname: \"\\q\"\n---\n", "unknown escape"},
		{"short unicode escape", "---\nname: \"\\u12\"\n---\n", "escape"},
		{"mapping in a sequence", "---\nl:\n  - a: 1\n---\n", "a mapping inside a sequence"},
		{"unclosed flow", "---\nl: [a, b\n---\n", "closing ]"},
		{"nested flow", "---\nl: [[a]]\n---\n", "line 2"},
		{"text after a quoted scalar", "---\nname: \"x\" y\n---\n", "text after a quoted scalar"},
		{"bad block header", "---\nd: |2\n  x\n---\n", "block scalar header"},
		{"dedent to no key", "---\nmeta:\n    a: 1\n  b: 2\n---\n", "line 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := skills.Frontmatter([]byte(tc.md))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// Build derives the entry from the files: frontmatter, digests, sizes,
// URIs; the result passes Validate and matches a hand-built entry.
func TestBuild(t *testing.T) {
	manifest := []byte("---\nname: pdf-processing\ndescription: Extract text.\n---\n# PDF\n")
	forms := []byte("# Forms\n")
	s, err := skills.Build("k1", "skill://alice/pdf-processing", []skills.SourceFile{
		{Path: "references/FORMS.md", Content: forms, MIMEType: "text/markdown"},
		{Path: "SKILL.md", Content: manifest},
	})
	require.NoError(t, err)
	assert.Equal(t, skills.Skill{
		Key: "k1", URI: "skill://alice/pdf-processing/SKILL.md",
		Frontmatter: []byte(`{"name":"pdf-processing","description":"Extract text."}`),
		Files: []skills.File{
			{URI: "skill://alice/pdf-processing/SKILL.md", Digest: skills.Digest(manifest), Size: int64(len(manifest)), MIMEType: "text/markdown"},
			{URI: "skill://alice/pdf-processing/references/FORMS.md", Digest: skills.Digest(forms), Size: int64(len(forms)), MIMEType: "text/markdown"},
		},
	}, s)
	assert.NoError(t, skills.Validate("src", &s))

	for name, files := range map[string][]skills.SourceFile{
		"no SKILL.md":          {{Path: "README.md", Content: forms}},
		"name differs":         {{Path: "SKILL.md", Content: []byte("---\nname: other\ndescription: d\n---\n")}},
		"no description":       {{Path: "SKILL.md", Content: []byte("---\nname: pdf-processing\n---\n")}},
		"path escapes the dir": {{Path: "SKILL.md", Content: manifest}, {Path: "../x.md", Content: forms}},
		"a file twice":         {{Path: "SKILL.md", Content: manifest}, {Path: "SKILL.md", Content: manifest}},
		"no frontmatter":       {{Path: "SKILL.md", Content: []byte("# PDF\n")}},
	} {
		_, err := skills.Build("k1", "skill://alice/pdf-processing", files)
		assert.Error(t, err, name)
	}
}

func TestSplitURI(t *testing.T) {
	dir, name, ok := skills.SplitURI("skill://alice/pdf-processing/SKILL.md")
	assert.True(t, ok)
	assert.Equal(t, "skill://alice/pdf-processing", dir)
	assert.Equal(t, "pdf-processing", name)
	for _, uri := range []string{"skill://alice/pdf-processing", "skill://SKILL.md", "skill://alice/Bad_Name/SKILL.md", "x/SKILL.md", ""} {
		_, _, ok := skills.SplitURI(uri)
		assert.False(t, ok, uri)
	}
}

// Frontmatter never panics, and what it accepts is one JSON object.
func FuzzFrontmatter(f *testing.F) {
	for _, s := range []string{
		"---\nname: x\ndescription: y\n---\n",
		"---\nmetadata:\n  a: [1, 'b', \"c\"]\n  l:\n    - x\n---\n",
		"---\nd: >-\n  a\n\n  b\n---\n",
		"---\nd: \"\\U0001F600\\x41\"\n---\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, md []byte) {
		out, err := skills.Frontmatter(md)
		if err != nil {
			return
		}
		var obj map[string]json.RawMessage
		if e := json.Unmarshal(out, &obj); e != nil {
			t.Fatalf("not a JSON object: %q from %q: %v", out, md, e)
		}
	})
}
