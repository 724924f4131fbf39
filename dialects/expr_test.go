package dialects

import (
	"regexp"
	"testing"
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
