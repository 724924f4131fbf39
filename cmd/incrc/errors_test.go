package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "update golden files")

// TestErrorGoldens runs `incrc validate` on every broken spec of the
// corpus, from the repository root as a user would, and compares what it
// prints with golden/errors/<name>.txt. Reading those files is reading
// the messages users get: each must point at the offending node and say
// what to do.
func TestErrorGoldens(t *testing.T) {
	t.Chdir(filepath.Join("..", ".."))
	cases, err := filepath.Glob("compiler/testdata/invalid/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 30 {
		t.Fatalf("the corpus has %d broken specs; it should cover every rule", len(cases))
	}
	// A project-level case: the errors only show when the files are
	// validated together.
	cases = append(cases, "compiler/testdata/project_duplicates", "compiler/testdata/project_lookups")
	seen := map[string]bool{}
	for _, path := range cases {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		golden := filepath.Join("golden", "errors", name+".txt")
		seen[golden] = true
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), []string{"validate", "--config", "compiler/testdata/incrc.yaml", filepath.ToSlash(path)}, strings.NewReader(""), &stdout, &stderr)
			if code != exitError {
				t.Errorf("exit code %d, want %d", code, exitError)
			}
			if stdout.Len() > 0 {
				t.Errorf("stdout is not empty:\n%s", &stdout)
			}
			got := stderr.String()
			checkDiagnosticLines(t, got)
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./cmd/incrc -run TestErrorGoldens -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("%s mismatch (-want +got):\n%s", golden, diff)
			}
		})
	}
	stale, _ := filepath.Glob(filepath.Join("golden", "errors", "*.txt"))
	for _, path := range stale {
		if !seen[path] {
			t.Errorf("%s: no broken spec produces it any more (delete it)", path)
		}
	}
}

var diagnosticRe = regexp.MustCompile(`^[^:]+\.yaml:[1-9][0-9]*:[1-9][0-9]*: \S`)

// checkDiagnosticLines asserts the shape every diagnostic has: a
// path:line:col prefix with a line and column, then a message; and the
// count line at the end.
func checkDiagnosticLines(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 2 || !strings.HasSuffix(lines[len(lines)-1], " error(s)") {
		t.Fatalf("want diagnostics and a count line, got:\n%s", out)
	}
	for _, l := range lines[:len(lines)-1] {
		if !diagnosticRe.MatchString(l) {
			t.Errorf("not path:line:col: message: %s", l)
		}
	}
}
