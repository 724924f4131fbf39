package ir

import "strings"

// SpecParam is one semantic parameter of a spec, in the spec's own words:
// a key path and a value as written (canonical where the spec's spelling
// may vary, as a type). A key that holds a list (columns, quality.checks)
// has one SpecParam per element, in the order of the spec.
type SpecParam struct {
	Key   string
	Value string
	// Logic: a change of this parameter changes the rows a run computes,
	// so rows already written were computed with the old logic (a column's
	// type, a check, the query, a lookup, the key, the dedupe, the
	// strategy). A change of the window's timing (lookback, lag, start) or
	// of a comment does not.
	Logic bool
}

// oneLine keeps a value on its comment line.
var oneLine = strings.NewReplacer("\r", `\r`, "\n", `\n`, "\u2028", `\u2028`, "\u2029", `\u2029`)

// OneLine is oneLine.Replace, which builds a new string even when it
// replaces nothing: a value without a byte that starts one of its
// strings ("\r", "\n", and "\xe2" of U+2028 and U+2029) is returned
// as it is.
func OneLine(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c == '\r' || c == '\n' || c == 0xe2 {
			return oneLine.Replace(s)
		}
	}
	return s
}
