package uritemplate

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// This file parses RFC 6570 URI templates (levels 1–4) and compiles them
// into the graph that matching (match.go) and overlap
// detection (overlap.go) share. Expansion is in expand.go.

// maxTemplateVars bounds the variables of one template.
const maxTemplateVars = 32

// Character classes of bytes, as bits of charClass.
const (
	clU       = 1 << iota // RFC 3986 unreserved: ALPHA DIGIT - . _ ~
	clR                   // RFC 3986 reserved: gen-delims : / ? # [ ] @ and sub-delims ! $ & ' ( ) * + , ; =
	clHex                 // hexadecimal digit
	clLiteral             // may appear raw in a template literal (RFC 6570 §2.1, ASCII part)
	clVarchar             // ALPHA DIGIT _ (RFC 6570 varchar, besides pct-encoded)
)

var charClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		b := byte(c)
		alnum := 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
		if alnum || strings.IndexByte("-._~", b) >= 0 {
			t[c] |= clU
		}
		if strings.IndexByte(":/?#[]@!$&'()*+,;=", b) >= 0 {
			t[c] |= clR
		}
		if '0' <= b && b <= '9' || 'a' <= b && b <= 'f' || 'A' <= b && b <= 'F' {
			t[c] |= clHex
		}
		if b > 0x20 && b < 0x7f && strings.IndexByte("\"'%<>\\^`{|}", b) < 0 {
			t[c] |= clLiteral
		}
		if alnum || b == '_' {
			t[c] |= clVarchar
		}
	}
	return t
}()

// valueClass is the class of the bytes a value of an expression may hold
// raw: unreserved, and for {+x} and {#x} reserved too.
func valueClass(reserved bool) uint8 {
	if reserved {
		return clU | clR
	}
	return clU
}

// operator is one row of RFC 6570 Appendix A.
type operator struct {
	char     byte   // '+', '#', '.', '/', ';', '?', '&'; 0 for simple string expansion
	first    string // written before the first defined variable
	sep      byte   // written between defined variables
	named    bool   // variables are written as name=value
	ifemp    string // written after the name of an empty value
	reserved bool   // reserved characters and pct-encoded triplets pass unencoded (allow U+R)
}

var operators = [...]operator{
	{0, "", ',', false, "", false},
	{'+', "", ',', false, "", true},
	{'#', "#", ',', false, "", true},
	{'.', ".", '.', false, "", false},
	{'/', "/", '/', false, "", false},
	{';', ";", ';', true, "", false},
	{'?', "?", '&', true, "=", false},
	{'&', "&", '&', true, "=", false},
}

// varspec is one variable of an expression.
type varspec struct {
	name    string
	prefix  int  // the :N modifier; 0 without one
	explode bool // the * modifier
	index   int  // position in Template.vars
	// stops holds the unreserved bytes that Expand percent-encodes in this
	// variable's value because they can start what follows it, so that the
	// value cannot end early when the URI is matched.
	stops string
}

// expression is one {…} of a template.
type expression struct {
	op   *operator
	vars []varspec
}

// part is a literal or an expression of a parsed template.
type part struct {
	lit  string      // the literal text when expr is nil
	expr *expression // nil for a literal
}

// Kinds of the nodes of a compiled template.
const (
	nAccept = iota // the end of the URI
	nLit           // the bytes of lit, then next
	nVal           // the value of variable v, then next
	nMark          // variable v is present and empty, then next
	nSplit         // one of alts, in order of preference
)

// node is a state of the graph a template compiles to: a directed acyclic
// graph whose paths spell the URIs the template matches. Every node's
// successors have smaller indexes; node 0 accepts.
type node struct {
	kind     uint8
	reserved bool  // nVal: the value may hold reserved characters raw
	nonEmpty bool  // nVal: the value has at least one character
	v        int32 // nVal, nMark: variable index
	prefix   int32 // nVal: the most characters the value may have; 0 for no limit
	next     int32 // nLit, nVal, nMark
	lit      string
	alts     []int32 // nSplit
	// before and after bound the bytes of a matching URI before the node
	// (at least before) and from it to the end (at least after): matching
	// looks at the node only between them. before is -1 for a node no
	// match reaches.
	before, after int32
	// latest is the most bytes before the node (1<<30 when a value comes
	// before it: no bound).
	latest int32
}

// Template is a parsed URI template.
type Template struct {
	raw   string
	parts []part
	vars  []string // variable names in order of appearance
	nodes []node
	start int32 // the node where matching starts
	// greedy: the template is made of literals and {x} or {+x} expressions
	// (no prefix), each followed by the end or by a literal whose first
	// byte the expression's value cannot hold raw, so matching is one
	// left-to-right scan where each variable takes the longest run.
	greedy bool
	gparts []gpart // the parts, for matchGreedy
	// simple: the template is a literal, one {x} (no operator, no
	// modifier) and a literal, either literal possibly empty: a URI
	// matches when it starts with sprefix, ends with ssuffix, and what is
	// between is a non-empty value (matchSimple).
	simple           bool
	sprefix, ssuffix string
	// reservedVal: some expression is {+x} or {#x}, whose values follow
	// the %25 rule of scanValue.
	reservedVal bool
	// plain: every literal is ASCII, so a URI that matches is made of
	// printable ASCII without '"' or '\\' (literal bytes, value bytes of
	// the classes, names, operator characters and %XX triplets): its JSON
	// string is the URI between quotes, with nothing to escape.
	plain bool
}

// gpart is a part of a greedy template: a literal (cls 0), or a value
// of class cls.
type gpart struct {
	lit string
	cls uint8
}

// Parse parses a URI template that the kit serves: RFC 6570
// (levels 1–4) with the restrictions that keep matching unambiguous (see
// checkTemplate).
func Parse(s string) (*Template, error) {
	fail := func(format string, args ...any) (*Template, error) {
		return nil, fmt.Errorf("uri template %q: %s", s, fmt.Sprintf(format, args...))
	}
	if s == "" {
		return fail("empty")
	}
	if longer(s, MaxLen) {
		return fail("longer than %d characters", MaxLen)
	}
	parts, err := parseRFC6570(s)
	if err != nil {
		return fail("%v", err)
	}
	t := &Template{raw: s, parts: parts, plain: true}
	if err := t.check(); err != nil {
		return fail("%v", err)
	}
	t.setStops()
	t.compile()
	return t, nil
}

// parseRFC6570 parses s by the grammar of RFC 6570 §2 and nothing more.
func parseRFC6570(s string) ([]part, error) {
	var parts []part
	for i := 0; i < len(s); {
		switch s[i] {
		case '}':
			return nil, fmt.Errorf("'}' at byte %d without '{'", i)
		case '{':
			end := strings.IndexAny(s[i+1:], "{}")
			if end < 0 || s[i+1+end] == '{' {
				return nil, fmt.Errorf("'{' at byte %d is not closed", i)
			}
			e, err := parseExpression(s[i+1 : i+1+end])
			if err != nil {
				return nil, fmt.Errorf("expression at byte %d: %v", i, err)
			}
			parts = append(parts, part{expr: e})
			i += end + 2
		default:
			j := i
			for j < len(s) && s[j] != '{' && s[j] != '}' {
				j++
			}
			if err := checkLiteral(s[i:j]); err != nil {
				return nil, fmt.Errorf("literal at byte %d: %v", i, err)
			}
			parts = append(parts, part{lit: s[i:j]})
			i = j
		}
	}
	return parts, nil
}

// parseExpression parses the text between '{' and '}'.
func parseExpression(s string) (*expression, error) {
	e := &expression{op: &operators[0]}
	if s != "" {
		switch c := s[0]; c {
		case '+', '#', '.', '/', ';', '?', '&':
			for i := range operators {
				if operators[i].char == c {
					e.op = &operators[i]
				}
			}
			s = s[1:]
		case '=', ',', '!', '@', '|':
			return nil, fmt.Errorf("operator %q is reserved for future extensions", c)
		}
	}
	if s == "" {
		return nil, errors.New("no variable")
	}
	for _, spec := range strings.Split(s, ",") {
		v, err := parseVarspec(spec)
		if err != nil {
			return nil, err
		}
		e.vars = append(e.vars, v)
	}
	return e, nil
}

// parseVarspec parses varname [ ":" max-length / "*" ].
func parseVarspec(s string) (varspec, error) {
	var v varspec
	name := s
	if i := strings.IndexAny(s, ":*"); i >= 0 {
		name = s[:i]
		switch mod := s[i:]; {
		case mod == "*":
			v.explode = true
		case mod[0] == ':':
			n := mod[1:]
			if n == "" || len(n) > 4 || n[0] == '0' || strings.Trim(n, "0123456789") != "" {
				return v, fmt.Errorf("prefix %q is not a length of 1 to 9999", mod)
			}
			for j := 0; j < len(n); j++ {
				v.prefix = v.prefix*10 + int(n[j]-'0')
			}
		default:
			return v, fmt.Errorf("modifier %q is not :N or *", mod)
		}
	}
	if err := checkVarname(name); err != nil {
		return v, err
	}
	v.name = name
	return v, nil
}

// checkVarname accepts varchar *( ["."] varchar ), varchar being ALPHA,
// DIGIT, '_' or a pct-encoded triplet.
func checkVarname(s string) error {
	bad := func() error {
		return fmt.Errorf("variable name %q is not made of A-Z, a-z, 0-9, _ and %%XX, joined by single dots", s)
	}
	if s == "" {
		return errors.New("empty variable name")
	}
	dot := true // at the start, or right after a dot
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			if dot {
				return bad()
			}
			dot = true
		case c == '%':
			if i+2 >= len(s) || charClass[s[i+1]]&clHex == 0 || charClass[s[i+2]]&clHex == 0 {
				return bad()
			}
			i += 2
			dot = false
		case charClass[c]&clVarchar != 0:
			dot = false
		default:
			return bad()
		}
	}
	if dot {
		return bad()
	}
	return nil
}

// checkLiteral accepts the literals of RFC 6570 §2.1: printable ASCII
// except " ' % < > \ ^ ` { | }, pct-encoded triplets, and the ucschar and
// iprivate characters of RFC 3987 in UTF-8.
func checkLiteral(lit string) error {
	for i := 0; i < len(lit); {
		c := lit[i]
		switch {
		case c == '%':
			if i+2 >= len(lit) || charClass[lit[i+1]]&clHex == 0 || charClass[lit[i+2]]&clHex == 0 {
				return errors.New("'%' not followed by two hexadecimal digits")
			}
			i += 3
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRuneInString(lit[i:])
			if size == 1 || !ucschar(r) {
				return fmt.Errorf("invalid UTF-8 or character %U not allowed", r)
			}
			i += size
		case charClass[c]&clLiteral == 0:
			return fmt.Errorf("character %q is not allowed", c)
		default:
			i++
		}
	}
	return nil
}

// ucschar reports whether r is an RFC 3987 ucschar or iprivate character.
func ucschar(r rune) bool {
	switch {
	case r < 0xA0, r >= 0xD800 && r < 0xE000, r >= 0xFDD0 && r < 0xFDF0, r >= 0xFFF0 && r < 0x10000:
		return false
	case r >= 0xE0000 && r < 0xE1000:
		return false
	}
	return r&0xFFFF < 0xFFFE // not U+xFFFE or U+xFFFF
}

// check applies the kit's restrictions to a template RFC 6570 accepts, so
// that a URI matches it in exactly one way that expands back to it:
//
//   - at most maxTemplateVars variables, each named once;
//   - an expression without a leading character ({x}, {+x}) may not follow
//     another expression directly: where one value ends and the other
//     starts would leave no trace;
//   - a literal right after an expression may not start with a
//     pct-encoded triplet, which the value could hold.
func (t *Template) check() error {
	seen := make(map[string]bool)
	for i, p := range t.parts {
		if p.expr == nil {
			if i > 0 && p.lit[0] == '%' {
				return errors.New("a literal right after an expression starts with a percent-encoded triplet")
			}
			for k := 0; k < len(p.lit); k++ {
				if p.lit[k] >= utf8.RuneSelf {
					t.plain = false
				}
			}
			continue
		}
		if i > 0 && t.parts[i-1].expr != nil && p.expr.op.first == "" {
			return errors.New("an expression without an operator character ({x} or {+x}) directly follows another expression")
		}
		for j := range p.expr.vars {
			v := &p.expr.vars[j]
			if seen[v.name] {
				return fmt.Errorf("variable %q appears twice", v.name)
			}
			if len(t.vars) == maxTemplateVars {
				return fmt.Errorf("more than %d variables", maxTemplateVars)
			}
			seen[v.name] = true
			v.index = len(t.vars)
			t.vars = append(t.vars, v.name)
		}
	}
	return nil
}

// follows returns the first bytes of what can come right after part k:
// the first byte of the next literal, or the leading character of each
// following expression until one that cannot be empty.
func (t *Template) follows(k int) string {
	var b []byte
	for _, p := range t.parts[k+1:] {
		if p.expr == nil {
			return string(append(b, p.lit[0]))
		}
		if p.expr.op.first == "" {
			break // never directly after an expression (check)
		}
		b = append(b, p.expr.op.first[0])
	}
	return string(b)
}

// setStops records, for each variable, the unreserved bytes Expand must
// encode in its value (see varspec.stops): the separator of its
// expression when another variable can follow in it, and what can follow
// the expression.
func (t *Template) setStops() {
	for k, p := range t.parts {
		if p.expr == nil {
			continue
		}
		after := t.follows(k)
		for i := range p.expr.vars {
			s := after
			if i < len(p.expr.vars)-1 {
				s = string(p.expr.op.sep)
				if p.expr.op.first != "" { // the variables after i may be absent
					s += after
				}
			}
			var u []byte
			for j := 0; j < len(s); j++ {
				if charClass[s[j]]&clU != 0 && strings.IndexByte(string(u), s[j]) < 0 {
					u = append(u, s[j])
				}
			}
			p.expr.vars[i].stops = string(u)
		}
	}
}

// compile builds the template's nodes (see node), from the end of the
// template to its start, and decides whether it is greedy.
func (t *Template) compile() {
	t.nodes = append(t.nodes[:0], node{kind: nAccept})
	next := int32(0)
	for k := len(t.parts) - 1; k >= 0; k-- {
		if p := t.parts[k]; p.expr == nil {
			next = t.addLit(p.lit, next)
		} else {
			next = t.addExpr(p.expr, next)
		}
	}
	t.start = next
	t.bound()

	t.greedy = true
	for k, p := range t.parts {
		if p.expr == nil {
			t.gparts = append(t.gparts, gpart{lit: p.lit})
			continue
		}
		e := p.expr
		if e.op.first != "" || len(e.vars) > 1 || e.vars[0].prefix > 0 {
			t.greedy = false
			break
		}
		if k+1 < len(t.parts) && (t.parts[k+1].expr != nil || charClass[t.parts[k+1].lit[0]]&valueClass(e.op.reserved) != 0) {
			t.greedy = false // the value could hold the literal's first byte
			break
		}
		t.gparts = append(t.gparts, gpart{cls: valueClass(e.op.reserved)})
	}
	if !t.greedy {
		t.gparts = nil
	}
	t.simple, t.sprefix, t.ssuffix = simpleShape(t.parts)
}

// simpleShape reports whether parts are a literal, one {x} (no operator,
// no modifier) and a literal, either literal possibly absent, and returns
// the two literals.
func simpleShape(parts []part) (ok bool, prefix, suffix string) {
	if len(parts) > 0 && parts[0].expr == nil {
		prefix, parts = parts[0].lit, parts[1:]
	}
	if n := len(parts); n > 0 && parts[n-1].expr == nil {
		suffix, parts = parts[n-1].lit, parts[:n-1]
	}
	if len(parts) != 1 {
		return false, "", ""
	}
	e := parts[0].expr
	if e.op.char != 0 || len(e.vars) != 1 || e.vars[0].prefix > 0 || e.vars[0].explode {
		return false, "", ""
	}
	return true, prefix, suffix
}

// bound sets the before and after of every node: the shortest paths from
// the start and to the end, in bytes (a non-empty value has at least one).
func (t *Template) bound() {
	length := func(n *node) int32 {
		switch {
		case n.kind == nLit:
			return int32(len(n.lit))
		case n.kind == nVal && n.nonEmpty:
			return 1
		}
		return 0
	}
	for i := range t.nodes {
		n := &t.nodes[i]
		n.before, n.after, n.latest = -1, 0, 0
		if i > 0 { // successors come first
			n.after = 1 << 30
			for _, x := range n.successors() {
				n.after = min(n.after, t.nodes[x].after)
			}
			n.after += length(n)
		}
	}
	const unbounded = 1 << 30
	t.nodes[t.start].before, t.nodes[t.start].latest = 0, 0
	for i := t.start; i > 0; i-- { // predecessors come first
		n := &t.nodes[i]
		if n.before < 0 {
			continue
		}
		latest := n.latest + length(n)
		if n.kind == nVal || n.latest == unbounded {
			latest = unbounded // a value has no longest length
		}
		for _, x := range n.successors() {
			nx := &t.nodes[x]
			if b := n.before + length(n); nx.before < 0 || b < nx.before {
				nx.before = b
			}
			nx.latest = max(nx.latest, latest)
		}
	}
}

// successors returns the nodes n leads to.
func (n *node) successors() []int32 {
	switch n.kind {
	case nAccept:
		return nil
	case nSplit:
		return n.alts
	}
	return []int32{n.next}
}

func (t *Template) add(n node) int32 {
	t.nodes = append(t.nodes, n)
	return int32(len(t.nodes) - 1)
}

// addLit adds the literal s followed by next, joined with next when it is
// a literal too.
func (t *Template) addLit(s string, next int32) int32 {
	if n := t.nodes[next]; n.kind == nLit {
		return t.add(node{kind: nLit, lit: s + n.lit, next: n.next})
	}
	return t.add(node{kind: nLit, lit: s, next: next})
}

func (t *Template) addSplit(alts ...int32) int32 {
	return t.add(node{kind: nSplit, alts: alts})
}

// addVal adds the value of v followed by next.
func (t *Template) addVal(e *expression, v *varspec, nonEmpty bool, next int32) int32 {
	t.reservedVal = t.reservedVal || e.op.reserved
	p := v.prefix
	if p >= MaxLen {
		p = 0 // a value of a URI that matches never has this many characters
	}
	return t.add(node{kind: nVal, v: int32(v.index), reserved: e.op.reserved, nonEmpty: nonEmpty, prefix: int32(p), next: next})
}

// addExpr adds expression e followed by next. The alternatives of each
// split are in order of preference: a list goes on rather than ends, and
// named variables are tried in template order.
func (t *Template) addExpr(e *expression, next int32) int32 {
	switch {
	case e.op.first == "":
		return t.addRequired(e, next)
	case !e.op.named:
		return t.addPositional(e, next)
	}
	return t.addNamed(e, next)
}

// addRequired adds {x,y} or {+x,y}: every variable present and non-empty,
// in order, separated by ','.
func (t *Template) addRequired(e *expression, next int32) int32 {
	cur := next
	for i := len(e.vars) - 1; i >= 0; i-- {
		cur = t.addVal(e, &e.vars[i], true, cur)
		if i > 0 {
			cur = t.addLit(",", cur)
		}
	}
	return cur
}

// addPositional adds {#x,y}, {.x,y} or {/x,y}: the values present fill
// the variables from the left, and each may be empty.
func (t *Template) addPositional(e *expression, next int32) int32 {
	cont := int32(-1) // the separator and value of the variable after i
	for i := len(e.vars) - 1; ; i-- {
		after := next
		if cont >= 0 {
			after = t.addSplit(cont, next)
		}
		val := t.addVal(e, &e.vars[i], false, after)
		if i == 0 {
			return t.addSplit(t.addLit(e.op.first, val), next)
		}
		cont = t.addLit(string(e.op.sep), val)
	}
}

// addNamed adds {;x,y}, {?x,y} or {&x,y}: any of the variables, in
// template order, each as name=value (";name" alone for an empty value of
// ';', "name=" for one of '?' and '&').
func (t *Template) addNamed(e *expression, next int32) int32 {
	op, m := e.op, len(e.vars)
	entries := make([]int32, m) // variable k after the separator: name and value
	firsts := make([]int32, m)  // variable k as the first one present
	for k := m - 1; k >= 0; k-- {
		after := next
		if k < m-1 {
			after = t.addSplit(append(append([]int32(nil), entries[k+1:]...), next)...)
		}
		v := &e.vars[k]
		if op.ifemp == "" {
			item := t.addSplit(t.add(node{kind: nMark, v: int32(v.index), next: after}),
				t.addLit("=", t.addVal(e, v, true, after)))
			entries[k] = t.addLit(string(op.sep)+v.name, item)
			firsts[k] = t.addLit(op.first+v.name, item)
		} else {
			val := t.addVal(e, v, false, after)
			entries[k] = t.addLit(string(op.sep)+v.name+"=", val)
			firsts[k] = t.addLit(op.first+v.name+"=", val)
		}
	}
	return t.addSplit(append(firsts, next)...)
}

// prefix returns the length of t's leading literal, which every URI that
// matches t starts with; 0 for a nil t or a template that starts with an
// expression.
func (t *Template) Prefix() int {
	if t == nil || len(t.parts) == 0 || t.parts[0].expr != nil {
		return 0
	}
	return len(t.parts[0].lit)
}

// Vars returns the template's variable names in order of first
// appearance. The slice is the template's own: do not modify it.
func (t *Template) Vars() []string { return t.vars }

// Plain reports whether every literal of the template is ASCII, so that a
// URI matching it is printable ASCII without '"' or '\\': its JSON string
// is the URI between quotes, with nothing to escape.
func (t *Template) Plain() bool { return t.plain }
