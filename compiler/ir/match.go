package ir

// Hand-written matchers for the patterns the load of every spec checks
// most often: each accepts exactly what the regular expression it
// replaces did (TestMatchersAsRegexps compares them), without running
// the regexp machine.

func isLower(c byte) bool { return 'a' <= c && c <= 'z' }

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// isSpace is \s of a regexp: [\t\n\f\r ].
func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r' }

// IsIdent is ^[A-Za-z_][A-Za-z0-9_]*$
func IsIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isLower(c) || 'A' <= c && c <= 'Z' || c == '_' || i > 0 && isDigit(c)) {
			return false
		}
	}
	return true
}

// IsPipelineName is ^[a-z][a-z0-9_]*$
func IsPipelineName(s string) bool {
	if s == "" || !isLower(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !(isLower(c) || isDigit(c) || c == '_') {
			return false
		}
	}
	return true
}

// typeParts matches ^([a-z]+)(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$ and
// returns its groups: the name, and the arguments ("" when absent).
func typeParts(s string) (name, a, b string, ok bool) {
	i := 0
	for i < len(s) && isLower(s[i]) {
		i++
	}
	if i == 0 {
		return "", "", "", false
	}
	name = s[:i]
	if i == len(s) {
		return name, "", "", true
	}
	if s[i] != '(' {
		return "", "", "", false
	}
	i++
	// digits reads \s*(\d+)\s* from i.
	digits := func() (string, bool) {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == start {
			return "", false
		}
		d := s[start:i]
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		return d, true
	}
	if a, ok = digits(); !ok {
		return "", "", "", false
	}
	if i < len(s) && s[i] == ',' {
		i++
		if b, ok = digits(); !ok {
			return "", "", "", false
		}
	}
	if i != len(s)-1 || s[i] != ')' {
		return "", "", "", false
	}
	return name, a, b, true
}

// durationParts matches ^(\d+)(s|m|h|d|w)$ and returns its groups.
func durationParts(s string) (n, unit string, ok bool) {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 0 || i != len(s)-1 {
		return "", "", false
	}
	switch s[i] {
	case 's', 'm', 'h', 'd', 'w':
		return s[:i], s[i:], true
	}
	return "", "", false
}

// numberParts matches ^([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?)([0-9]+))?$
// and returns its groups: the integer part, the fraction, the exponent's
// sign and digits ("" when absent).
func numberParts(s string) (intPart, frac, sign, exp string, ok bool) {
	i := 0
	digits := func() string {
		start := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		return s[start:i]
	}
	intPart = digits()
	if i < len(s) && s[i] == '.' {
		i++
		frac = digits()
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			sign = s[i : i+1]
			i++
		}
		if exp = digits(); exp == "" {
			return "", "", "", "", false
		}
	}
	if i != len(s) {
		return "", "", "", "", false
	}
	return intPart, frac, sign, exp, true
}
