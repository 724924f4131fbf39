package ir

import (
	"math/rand"
	"regexp"
	"testing"
)

// The regular expressions the matchers of match.go replace, as they were.
var (
	pipelineReBefore = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	identReBefore    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	typeReBefore     = regexp.MustCompile(`^([a-z]+)(?:\(\s*(\d+)\s*(?:,\s*(\d+)\s*)?\))?$`)
	durationReBefore = regexp.MustCompile(`^(\d+)(s|m|h|d|w)$`)
	numberReBefore   = regexp.MustCompile(`^([0-9]*)(?:\.([0-9]*))?(?:[eE]([+-]?)([0-9]+))?$`)
)

// matcherInputs are hand-picked tricky inputs, then random strings over an
// alphabet of what the patterns look at and what they must refuse.
func matcherInputs() []string {
	in := []string{
		"", "a", "A", "_", "0", "a0", "0a", "_0", "a_b", "dw_orders", "Orders", "x\n", "\nx", "a b", "a-b", "a.b",
		"é", "a\u00e9", "\xff", "a\x00", "ſ", "K", "k", "ordersK",
		"decimal(12,2)", "decimal( 12 , 2 )", "decimal(12,)", "decimal(,2)", "decimal()", "decimal(12", "decimal12)",
		"varchar(64)", "varchar(\t64\n)", "varchar(\v64)", "varchar(\f64\r)", "varchar(64))", "varchar((64)", "(64)",
		"decimal(1 2,2)", "decimal(12,2,3)", "int(1)x", "bigint", "BIGINT", "text ", " text", "a(0)", "a(00,000)",
		"90s", "15m", "36h", "2d", "1w", "1y", "d", "1", "1dd", "01d", " 1d", "1d ", "1D", "1\nd", "99999999999999999999s",
		"1٣d", "١d", "1ｄ",
		".", "..", "1.", ".5", "1.5", "1.5.", "1e", "1e5", "1E+5", "1e-05", "1.e3", ".e3", "e3", "1e+", "1e5x", "+1", "-1", "1_000",
		"0x1F", "1.5e3.2", "00", "1ee3", "1e٣",
	}
	alphabet := []string{"e", "E", "+", "a", "z", "A", "Z", "_", "0", "9", "(", ")", ",", " ", "\t", "\n", "\v", "\f", "\r", "s", "m", "h", "d", "w", "-", ".", "é", "\xff", "K"}
	r := rand.New(rand.NewSource(1))
	for range 200000 {
		n := r.Intn(10)
		var s string
		for range n {
			s += alphabet[r.Intn(len(alphabet))]
		}
		in = append(in, s)
	}
	// Shapes of types and durations with random fill, which random
	// strings rarely reach.
	for range 50000 {
		fill := func() string {
			var s string
			for range r.Intn(3) {
				s += alphabet[r.Intn(len(alphabet))]
			}
			return s
		}
		in = append(in, "decimal("+fill()+"1"+fill()+","+fill()+"2"+fill()+")"+fill(), fill()+"12"+fill(),
			fill()+"1"+fill()+"."+fill()+"5"+fill()+"e"+fill()+"3"+fill())
	}
	return in
}

// TestMatchersAsRegexps: every matcher agrees with its regexp, groups
// included.
func TestMatchersAsRegexps(t *testing.T) {
	if durationReBefore.String() != DurationPattern {
		t.Fatalf("the schema's duration pattern %s is not the one durationParts matches", DurationPattern)
	}
	matched := map[string]int{} // inputs each regexp accepts: both sides are reached
	for _, s := range matcherInputs() {
		if identReBefore.MatchString(s) {
			matched["ident"]++
		}
		if pipelineReBefore.MatchString(s) {
			matched["pipeline"]++
		}
		if m := typeReBefore.FindStringSubmatch(s); m != nil && m[2] != "" {
			matched["type with arguments"]++
		}
		if durationReBefore.MatchString(s) {
			matched["duration"]++
		}
		if m := numberReBefore.FindStringSubmatch(s); m != nil && m[2] != "" && m[4] != "" {
			matched["number with fraction and exponent"]++
		}
		if got, want := IsIdent(s), identReBefore.MatchString(s); got != want {
			t.Errorf("isIdent(%q) = %v, the regexp: %v", s, got, want)
		}
		if got, want := IsPipelineName(s), pipelineReBefore.MatchString(s); got != want {
			t.Errorf("isPipelineName(%q) = %v, the regexp: %v", s, got, want)
		}
		name, a, b, ok := typeParts(s)
		if m := typeReBefore.FindStringSubmatch(s); (m != nil) != ok || ok && (m[1] != name || m[2] != a || m[3] != b) {
			t.Errorf("typeParts(%q) = %q, %q, %q, %v; the regexp: %q", s, name, a, b, ok, m)
		}
		ip, frac, sign, exp, ok := numberParts(s)
		if m := numberReBefore.FindStringSubmatch(s); (m != nil) != ok || ok && (m[1] != ip || m[2] != frac || m[3] != sign || m[4] != exp) {
			t.Errorf("numberParts(%q) = %q, %q, %q, %q, %v; the regexp: %q", s, ip, frac, sign, exp, ok, m)
		}
		n, unit, ok := durationParts(s)
		if m := durationReBefore.FindStringSubmatch(s); (m != nil) != ok || ok && (m[1] != n || m[2] != unit) {
			t.Errorf("durationParts(%q) = %q, %q, %v; the regexp: %q", s, n, unit, ok, m)
		}
	}
	for _, what := range []string{"ident", "pipeline", "type with arguments", "duration", "number with fraction and exponent"} {
		if matched[what] < 100 {
			t.Errorf("only %d inputs are a %s: the inputs do not test the matchers", matched[what], what)
		}
	}
}
