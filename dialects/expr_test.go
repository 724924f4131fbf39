package dialects

import (
	"regexp"
	"slices"
	"testing"

	"github.com/incrc/incrc/compiler/ir"
)

// TestIsFuncName holds isFuncName to the pattern it stands for.
func TestIsFuncName(t *testing.T) {
	re := regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	for _, fn := range []string{"", "a", "z", "lower", "coalesce", "date_trunc", "f1", "f_1_", "_f", "1f", "Lower", "loWer",
		"a-b", "a b", "a.b", "a(", "a\x00", "é", "aé", "a\n", "a;", "a/*", "z9", "a{", "a`", "a@", "a[", "a'"} {
		if got, want := isFuncName(fn), re.MatchString(fn); got != want {
			t.Errorf("isFuncName(%q) = %v, the pattern says %v", fn, got, want)
		}
	}
	for c := 0; c < 256; c++ {
		for _, fn := range []string{string(rune(c)), "a" + string(rune(c)), string([]byte{'a', byte(c)})} {
			if got, want := isFuncName(fn), re.MatchString(fn); got != want {
				t.Errorf("isFuncName(%q) = %v, the pattern says %v", fn, got, want)
			}
		}
	}
}

// positional is a dialect whose markers are positional (?), as MySQL's:
// only what a parameter's spelling asks of it.
type positional struct{ Dialect }

func (positional) Caps() Caps               { return Caps{} }
func (positional) Placeholder(int) string   { return "?" }
func (positional) Name() Name               { return "positional" }
func (positional) QuoteIdent(string) string { return `"x"` }

// TestInBindsInTextOrder: a parameter in an IN's operand is bound before
// those of its items, as the text spells them, on an engine whose markers
// are positional.
func TestInBindsInTextOrder(t *testing.T) {
	w := &Writer{d: positional{}, declared: []ir.Param{{Name: "a"}, {Name: "b"}, {Name: "c"}}}
	Expr(w, "", ir.In{X: ir.ParamRef{Name: "a"}, List: []ir.Expr{ir.ParamRef{Name: "b"}, ir.ParamRef{Name: "c"}}})
	if got := string(w.cur); got != "? IN (?, ?)" {
		t.Fatalf("spelled %q", got)
	}
	if !slices.Equal(w.params, []string{"a", "b", "c"}) {
		t.Fatalf("binds %v, want [a b c]", w.params)
	}
}
