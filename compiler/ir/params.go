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

// ParamLinePrefix starts each parameter's line in the compiled file's
// header: "-- spec: watermark.lookback: 2d" ("logic" marks a logic one).
const (
	ParamLinePrefix = "-- spec: "
	LogicLinePrefix = "-- spec logic: "
)

// WriteParamLine writes a parameter as the compiled file's header does:
// the dialects write the header, and incrc plan reads it back
// (ReadParams) to say what changed in the spec's own words.
func WriteParamLine(b *strings.Builder, p SpecParam) {
	if p.Logic {
		b.WriteString(LogicLinePrefix)
	} else {
		b.WriteString(ParamLinePrefix)
	}
	b.WriteString(p.Key)
	b.WriteString(": ")
	b.WriteString(p.Value)
}

// ReadParams reads the parameters back from a compiled file's header;
// ok is false when the file has none (compiled by an older incrc).
func ReadParams(file []byte) (ps []SpecParam, ok bool) {
	for _, line := range strings.Split(string(file), "\n") {
		if strings.HasPrefix(line, "-- name: ") {
			break // the header is over
		}
		logic := false
		rest, found := strings.CutPrefix(line, ParamLinePrefix)
		if !found {
			if rest, found = strings.CutPrefix(line, LogicLinePrefix); !found {
				continue
			}
			logic = true
		}
		k, v, cut := strings.Cut(rest, ": ")
		if !cut {
			continue
		}
		ps = append(ps, SpecParam{Key: k, Value: v, Logic: logic})
		ok = true
	}
	return ps, ok
}
