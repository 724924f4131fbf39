package compiler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInvisibleCharacters: a bidirectional control or a zero-width
// character anywhere in a spec or in incrc.yaml (a value, a key, a
// comment, a YAML escape) is refused at its line and column; a byte order
// mark at the start is not one.
func TestInvisibleCharacters(t *testing.T) {
	spec := func(extra string) string { return okSpec + extra }
	tests := []struct {
		name, data, want string
	}{
		{"comment", spec("# paid\u202e\n"), "6:7: character U+202E, a bidirectional control"},
		{"key", "pipe\u200bline: p\n", "1:5: character U+200B, a zero-width character"},
		{"escape", spec("description: \"a\\u2067b\"\n"), "6:14: character U+2067, a bidirectional control, which a reviewer cannot see: remove it (written as an escape)"},
		{"source query", strings.Replace(okSpec, "{table: app.t}", "{query: \"SELECT * FROM t -- \u2069x\"}", 1), "2:37: character U+2069"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(tt.data))
			if err == nil || !strings.Contains(err.Error(), "s.yaml:"+tt.want) {
				t.Errorf("got %v, want s.yaml:%s", err, tt.want)
			}
		})
	}
	if _, err := Parse("s.yaml", []byte("\ufeff"+okSpec)); err != nil {
		t.Errorf("a byte order mark at the start: %v", err)
	}
	path := filepath.Join(t.TempDir(), "incrc.yaml")
	if err := os.WriteFile(path, []byte("targets:\n  prod: postgres://db\u200d/wh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path, func(string) (string, bool) { return "", false }); err == nil || !strings.Contains(err.Error(), path+":2:22: character U+200D") {
		t.Errorf("incrc.yaml: got %v", err)
	}
}
