package httpheader

// ValidMediaType accepts type "/" subtype, both RFC 6838
// restricted-names, optionally followed by parameters: *( *SP ";" *SP
// token "=" ( token / quoted-string ) ), with no control characters
// anywhere.
func ValidMediaType(s string) bool {
	i := restrictedName(s, 0)
	if i == 0 || i >= len(s) || s[i] != '/' {
		return false
	}
	j := restrictedName(s, i+1)
	if j == i+1 {
		return false
	}
	for ok := true; j < len(s); {
		if j, ok = parameter(s, j); !ok {
			return false
		}
	}
	return true
}

// parameter reads *SP ";" *SP token "=" ( token / quoted-string ) from
// s[j:] and returns its end, or false.
func parameter(s string, j int) (int, bool) {
	j = skipSpaces(s, j)
	if j >= len(s) || s[j] != ';' {
		return j, false
	}
	j = skipSpaces(s, j+1)
	k := token(s, j)
	if k == j || k >= len(s) || s[k] != '=' {
		return j, false
	}
	j = k + 1
	if j < len(s) && s[j] == '"' {
		return quoted(s, j)
	}
	if k = token(s, j); k == j {
		return j, false
	}
	return k, true
}

// quoted reads the quoted-string at s[j] (a '"') and returns its end, or
// false.
func quoted(s string, j int) (int, bool) {
	for j++; j < len(s) && s[j] != '"'; j++ {
		if s[j] == '\\' {
			j++
		}
		if j >= len(s) || s[j] < 0x20 || s[j] == 0x7f {
			return j, false
		}
	}
	if j >= len(s) {
		return j, false
	}
	return j + 1, true
}

// token returns the end of the run of token characters from s[j].
func token(s string, j int) int {
	for j < len(s) && IsTchar(s[j]) {
		j++
	}
	return j
}

func skipSpaces(s string, i int) int {
	for i < len(s) && s[i] == ' ' {
		i++
	}
	return i
}

// restrictedName returns the end of an RFC 6838 restricted-name starting
// at i, or i when there is none.
func restrictedName(s string, i int) int {
	start := i
	for i < len(s) && i-start < 127 {
		c := s[i]
		alnum := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
		if !alnum && (i == start || !isRestrictedChar(c)) {
			break
		}
		i++
	}
	return i
}

func isRestrictedChar(c byte) bool {
	switch c {
	case '!', '#', '$', '&', '-', '^', '_', '.', '+':
		return true
	}
	return false
}

// IsTchar reports an RFC 9110 token character (tchar, §5.6.2).
func IsTchar(c byte) bool {
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
