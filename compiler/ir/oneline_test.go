package ir

import "testing"

// TestOneLine: the fast path returns what oneLine.Replace does, on
// values with and without what it replaces, valid UTF-8 or not.
func TestOneLine(t *testing.T) {
	for _, s := range []string{
		"", "a", "orders", "s3://bucket/*.parquet", "a\nb", "a\rb", "\r\n", "\n",
		"a\u2028b", "a\u2029b", "\u2027", "\u202a", "\xe2", "\xe2\x80", "\xe2\x80\xa8", "\xe2\xe2\x80\xa9",
		"x\xff\xfe", "é", "日本", "a\u2028\u2029\r\n", "\xe2\x80\xa8\xe2",
	} {
		if got, want := OneLine(s), oneLine.Replace(s); got != want {
			t.Errorf("OneLine(%q) = %q, oneLine.Replace: %q", s, got, want)
		}
	}
}
