package skills

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Frontmatter renders the YAML frontmatter of a SKILL.md — the lines
// between a first line "---" and the next line "---" (or "...") — as the
// JSON object a skill entry carries ([Skill.Frontmatter]), members in
// their order in the file.
//
// It reads the part of YAML that skill frontmatter uses: a mapping of
// keys to plain, single- or double-quoted scalars (a plain scalar may go
// on over more indented lines), literal (|) and folded (>) block scalars
// with their chomping indicators, mappings nested in it, sequences of
// scalars (block "- item" lines, or a flow [a, b] on one line), blank
// lines and # comments. A plain scalar that is a JSON number, true,
// false or null (~, or nothing) is that JSON value; every other scalar is
// a string. Anchors, aliases, tags, flow mappings, multi-document input,
// complex keys, tabs in indentation and a key given twice are refused
// with an error naming the line: such a skill's application renders its
// frontmatter itself and sets Skill.Frontmatter.
//
// The result is at most [MaxFrontmatter] bytes; name and description are
// checked by [Validate], not here.
func Frontmatter(skillMD []byte) ([]byte, error) {
	lines, err := frontmatterLines(skillMD)
	if err != nil {
		return nil, err
	}
	p := &yamlParser{lines: lines}
	p.skipBlank()
	if p.i < len(p.lines) && p.indent(p.i) != 0 {
		return nil, p.errorf(p.i, "the frontmatter's first key is indented")
	}
	v, err := p.mapping(0)
	if err != nil {
		return nil, err
	}
	p.skipBlank()
	if p.i < len(p.lines) {
		return nil, p.errorf(p.i, "indentation does not match an enclosing key")
	}
	var b bytes.Buffer
	v.appendJSON(&b)
	if b.Len() > MaxFrontmatter {
		return nil, fmt.Errorf("skills: frontmatter: more than %d bytes as JSON", MaxFrontmatter)
	}
	return b.Bytes(), nil
}

// frontmatterLines returns the lines between the opening and closing
// "---", without line ends.
func frontmatterLines(md []byte) ([]string, error) {
	if !utf8.Valid(md) {
		return nil, errors.New("skills: frontmatter: SKILL.md is not UTF-8")
	}
	s := strings.TrimPrefix(string(md), "\uFEFF")
	first, rest, _ := strings.Cut(s, "\n")
	if strings.TrimRight(first, " \r") != "---" {
		return nil, errors.New("skills: frontmatter: SKILL.md does not begin with a line ---")
	}
	var lines []string
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		line = strings.TrimSuffix(line, "\r")
		if t := strings.TrimRight(line, " "); t == "---" || t == "..." {
			return lines, nil
		}
		lines = append(lines, line)
	}
	return nil, errors.New("skills: frontmatter: no closing line --- after the frontmatter")
}

// yamlValue is a parsed value: a scalar (its JSON), a mapping or a
// sequence.
type yamlValue struct {
	scalar []byte // JSON of a scalar
	keys   []string
	vals   []yamlValue
	seq    bool
}

func (v *yamlValue) appendJSON(b *bytes.Buffer) {
	switch {
	case v.scalar != nil:
		b.Write(v.scalar)
	case v.seq:
		b.WriteByte('[')
		for i := range v.vals {
			if i > 0 {
				b.WriteByte(',')
			}
			v.vals[i].appendJSON(b)
		}
		b.WriteByte(']')
	default:
		b.WriteByte('{')
		for i, k := range v.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(jsonString(k))
			b.WriteByte(':')
			v.vals[i].appendJSON(b)
		}
		b.WriteByte('}')
	}
}

type yamlParser struct {
	lines []string
	i     int
}

func (p *yamlParser) errorf(line int, format string, args ...any) error {
	return fmt.Errorf("skills: frontmatter line %d: %s", line+2, fmt.Sprintf(format, args...)) // +2: the opening --- is line 1
}

// blank reports whether line i holds nothing but spaces or a comment.
func (p *yamlParser) blank(i int) bool {
	t := strings.TrimLeft(p.lines[i], " ")
	return t == "" || t[0] == '#'
}

func (p *yamlParser) skipBlank() {
	for p.i < len(p.lines) && p.blank(p.i) {
		p.i++
	}
}

func (p *yamlParser) indent(i int) int {
	return len(p.lines[i]) - len(strings.TrimLeft(p.lines[i], " "))
}

// mapping parses the keys at exactly indent n, from the current line.
func (p *yamlParser) mapping(n int) (yamlValue, error) {
	v := yamlValue{keys: []string{}}
	for {
		p.skipBlank()
		if p.i >= len(p.lines) || p.indent(p.i) < n {
			return v, nil
		}
		line := p.lines[p.i]
		if p.indent(p.i) > n {
			return v, p.errorf(p.i, "unexpected indentation")
		}
		body := line[n:]
		if strings.HasPrefix(body, "\t") || strings.Contains(line[:n], "\t") {
			return v, p.errorf(p.i, "a tab in indentation")
		}
		if strings.HasPrefix(body, "- ") || body == "-" {
			return v, p.errorf(p.i, "a sequence where a key was expected")
		}
		key, rest, err := p.key(body)
		if err != nil {
			return v, err
		}
		for _, k := range v.keys {
			if k == key {
				return v, p.errorf(p.i, "the key %q is given twice", key)
			}
		}
		at := p.i
		p.i++
		val, err := p.value(n, at, rest)
		if err != nil {
			return v, err
		}
		v.keys = append(v.keys, key)
		v.vals = append(v.vals, val)
	}
}

// key splits "key: rest" (or "key:" at the line's end).
func (p *yamlParser) key(body string) (key, rest string, err error) {
	switch body[0] {
	case '"', '\'':
		k, n, err := p.quoted(body)
		if err != nil {
			return "", "", err
		}
		after := body[n:]
		if !strings.HasPrefix(after, ":") || len(after) > 1 && after[1] != ' ' {
			return "", "", p.errorf(p.i, "a quoted key without a colon after it")
		}
		return k, strings.TrimLeft(after[1:], " "), nil
	case '?', '&', '*', '!', '{', '[', '|', '>', '%', '@', '`':
		return "", "", p.errorf(p.i, "%q starts a YAML construct skill frontmatter does not use", body[0])
	}
	i := strings.Index(body, ": ")
	if i < 0 {
		if !strings.HasSuffix(body, ":") {
			return "", "", p.errorf(p.i, "not a \"key: value\" line")
		}
		i = len(body) - 1
	}
	key = strings.TrimRight(body[:i], " ")
	if strings.Contains(key, " #") {
		return "", "", p.errorf(p.i, "not a \"key: value\" line")
	}
	if i+1 >= len(body) {
		return key, "", nil
	}
	return key, strings.TrimLeft(body[i+2:], " "), nil
}

// value parses what follows the key of line at (indent n): rest on the
// key's line, and the lines after it.
func (p *yamlParser) value(n, at int, rest string) (yamlValue, error) {
	if c := strings.TrimSpace(stripComment(rest)); c == "" {
		// A nested block, or null.
		p.skipBlank()
		if p.i >= len(p.lines) {
			return yamlValue{scalar: []byte("null")}, nil
		}
		m := p.indent(p.i)
		body := strings.TrimLeft(p.lines[p.i], " ")
		isSeq := strings.HasPrefix(body, "- ") || body == "-"
		switch {
		case isSeq && m >= n:
			return p.sequence(m)
		case m > n:
			return p.mapping(m)
		}
		return yamlValue{scalar: []byte("null")}, nil
	}
	switch rest[0] {
	case '|', '>':
		return p.block(n, at, rest)
	case '[':
		return p.flow(at, rest)
	case '{', '&', '*', '!', '%', '@', '`':
		return yamlValue{}, p.errorf(at, "%q starts a YAML construct skill frontmatter does not use", rest[0])
	case '"', '\'':
		s, used, err := p.quotedAt(at, rest)
		if err != nil {
			return yamlValue{}, err
		}
		if t := strings.TrimSpace(stripComment(rest[used:])); t != "" {
			return yamlValue{}, p.errorf(at, "text after a quoted scalar")
		}
		if p.continues(n) {
			return yamlValue{}, p.errorf(p.i, "a quoted scalar over several lines")
		}
		return yamlValue{scalar: jsonString(s)}, nil
	}
	// A plain scalar, perhaps over more indented lines.
	text := strings.TrimSpace(stripComment(rest))
	for p.continues(n) {
		text += " " + strings.TrimSpace(stripComment(p.lines[p.i]))
		p.i++
	}
	return yamlValue{scalar: plainJSON(text)}, nil
}

// continues reports whether the next non-blank line is more indented than
// n: the continuation of a scalar.
func (p *yamlParser) continues(n int) bool {
	for j := p.i; j < len(p.lines); j++ {
		if p.blank(j) {
			continue
		}
		if p.indent(j) > n {
			p.i = j
			return true
		}
		return false
	}
	return false
}

// sequence parses "- item" lines at indent n.
func (p *yamlParser) sequence(n int) (yamlValue, error) {
	v := yamlValue{seq: true, vals: []yamlValue{}}
	for {
		p.skipBlank()
		if p.i >= len(p.lines) || p.indent(p.i) != n {
			return v, nil
		}
		body := p.lines[p.i][n:]
		if !strings.HasPrefix(body, "- ") && body != "-" {
			return v, nil
		}
		item := strings.TrimLeft(strings.TrimPrefix(body, "-"), " ")
		at := p.i
		p.i++
		if item != "" && !strings.HasPrefix(item, "#") {
			switch item[0] {
			case '"', '\'', '[', '{', '&', '*', '!', '|', '>', '-', '?':
				if item[0] != '"' && item[0] != '\'' {
					return v, p.errorf(at, "a sequence item skill frontmatter does not use")
				}
			default:
				if strings.Contains(stripComment(item), ": ") || strings.HasSuffix(stripComment(item), ":") {
					return v, p.errorf(at, "a mapping inside a sequence")
				}
			}
		}
		val, err := p.value(n, at, item)
		if err != nil {
			return v, err
		}
		if val.scalar == nil {
			return v, p.errorf(at, "a nested block inside a sequence")
		}
		v.vals = append(v.vals, val)
	}
}

// flow parses a one-line flow sequence of scalars: [a, "b", 'c'].
func (p *yamlParser) flow(at int, rest string) (yamlValue, error) {
	v := yamlValue{seq: true, vals: []yamlValue{}}
	s := strings.TrimSpace(rest[1:])
	for {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			return v, p.errorf(at, "a flow sequence without its closing ]")
		}
		if s[0] == ']' {
			if t := strings.TrimSpace(stripComment(s[1:])); t != "" {
				return v, p.errorf(at, "text after a flow sequence")
			}
			return v, nil
		}
		var item []byte
		switch s[0] {
		case '"', '\'':
			str, used, err := p.quotedAt(at, s)
			if err != nil {
				return v, err
			}
			item, s = jsonString(str), s[used:]
		case '[', '{', '&', '*', '!', ',':
			return v, p.errorf(at, "a flow sequence item skill frontmatter does not use")
		default:
			end := strings.IndexAny(s, ",]")
			if end < 0 {
				return v, p.errorf(at, "a flow sequence without its closing ]")
			}
			item, s = plainJSON(strings.TrimSpace(s[:end])), s[end:]
		}
		v.vals = append(v.vals, yamlValue{scalar: item})
		s = strings.TrimLeft(s, " ")
		if strings.HasPrefix(s, ",") {
			s = s[1:]
		} else if !strings.HasPrefix(s, "]") {
			return v, p.errorf(at, "a flow sequence item followed by neither , nor ]")
		}
	}
}

// block parses a literal (|) or folded (>) block scalar whose header is
// rest, on the lines after the key's line (indent n).
func (p *yamlParser) block(n, at int, rest string) (yamlValue, error) {
	header := strings.TrimSpace(stripComment(rest))
	folded, chomp := header[0] == '>', byte(0)
	switch h := header[1:]; h {
	case "":
	case "-", "+":
		chomp = h[0]
	default:
		return yamlValue{}, p.errorf(at, "a block scalar header other than |, |-, |+, >, >- or >+")
	}
	var lines []string
	m := -1
	for p.i < len(p.lines) {
		line := p.lines[p.i]
		t := strings.TrimLeft(line, " ")
		ind := len(line) - len(t)
		if t == "" {
			lines = append(lines, "")
			p.i++
			continue
		}
		if m < 0 {
			if ind <= n {
				break
			}
			m = ind
		}
		if ind < m {
			break
		}
		lines = append(lines, line[m:])
		p.i++
	}
	// Trailing empty lines belong to the chomping, not the text.
	trail := 0
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines, trail = lines[:len(lines)-1], trail+1
	}
	var text string
	if folded {
		var b strings.Builder
		for i, l := range lines {
			// A break between two lines of text folds into a space; an
			// empty line is one line feed (the break before it goes);
			// more indented lines keep their breaks.
			if i > 0 {
				switch prev := lines[i-1]; {
				case l == "":
					b.WriteByte('\n')
				case prev == "":
				case strings.HasPrefix(l, " ") || strings.HasPrefix(prev, " "):
					b.WriteByte('\n')
				default:
					b.WriteByte(' ')
				}
			}
			b.WriteString(l)
		}
		text = b.String()
	} else {
		text = strings.Join(lines, "\n")
	}
	switch {
	case len(lines) == 0:
	case chomp == '-':
	case chomp == '+':
		text += "\n" + strings.Repeat("\n", trail)
	default:
		text += "\n"
	}
	return yamlValue{scalar: jsonString(text)}, nil
}

// quoted reads a quoted scalar at the start of s (on the current line).
func (p *yamlParser) quoted(s string) (string, int, error) { return p.quotedAt(p.i, s) }

// quotedAt reads a single- or double-quoted scalar at the start of s,
// found on line at; it returns the text and the bytes of s it used.
func (p *yamlParser) quotedAt(at int, s string) (string, int, error) {
	q := s[0]
	var b strings.Builder
	for i := 1; i < len(s); i++ {
		c := s[i]
		switch {
		case c == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			b.WriteByte('\'')
			i++
		case c == q:
			return b.String(), i + 1, nil
		case c == '\\' && q == '"':
			if i+1 >= len(s) {
				return "", 0, p.errorf(at, "an unfinished escape")
			}
			i++
			switch e := s[i]; e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '0':
				b.WriteByte(0)
			case ' ':
				b.WriteByte(' ')
			case 'x', 'u', 'U':
				size := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if i+1+size > len(s) {
					return "", 0, p.errorf(at, "an unfinished \\%c escape", e)
				}
				r, err := strconv.ParseUint(s[i+1:i+1+size], 16, 32)
				if err != nil || !utf8.ValidRune(rune(r)) {
					return "", 0, p.errorf(at, "an invalid \\%c escape", e)
				}
				b.WriteRune(rune(r))
				i += size
			default:
				return "", 0, p.errorf(at, "an unknown escape \\%c", e)
			}
		default:
			b.WriteByte(c)
		}
	}
	return "", 0, p.errorf(at, "a quoted scalar without its closing quote on the same line")
}

// stripComment removes a " #" comment from a plain scalar's line.
func stripComment(s string) string {
	if strings.HasPrefix(s, "#") {
		return ""
	}
	if i := strings.Index(s, " #"); i >= 0 {
		return s[:i]
	}
	return s
}

// isJSONNumber reports whether s is a number in JSON's grammar:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?
func isJSONNumber(s string) bool {
	digits := func(i int) int { // the index after a run of digits from i
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
		}
		return i
	}
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && '1' <= s[i] && s[i] <= '9':
		i = digits(i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		j := digits(i + 1)
		if j == i+1 {
			return false
		}
		i = j
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		j := digits(i)
		if j == i {
			return false
		}
		i = j
	}
	return i == len(s)
}

// plainJSON is the JSON of a plain scalar.
func plainJSON(s string) []byte {
	switch s {
	case "", "~", "null", "Null", "NULL":
		return []byte("null")
	case "true", "True", "TRUE":
		return []byte("true")
	case "false", "False", "FALSE":
		return []byte("false")
	}
	if isJSONNumber(s) {
		return []byte(s)
	}
	return jsonString(s)
}

// jsonString is the JSON string of s, with <, > and & as they are.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
