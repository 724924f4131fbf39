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

	"github.com/incrc/incrc/compiler"
)

var update = flag.Bool("update", false, "update golden files")

// TestErrorGoldens runs `incrc validate` on every broken spec of the
// corpus, from the repository root as a user would, and compares what it
// prints with golden/errors/<name>.txt. Reading those files is reading
// the messages users get: each must point at the offending node and say
// what to do.
//
// The warnings corpus (compiler/testdata/warnings) validates: validate
// exits 0 and prints its warnings (golden/errors/warn_<name>.txt),
// --strict exits 1 on them, and compile and plan print the same lines.
// A case's project file is compiler/testdata/configs/<name>.yaml when there
// is one (the dialects whose reading of names is checked).
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
	cases = append(cases, "compiler/testdata/project_duplicates", "compiler/testdata/project_lookups", "compiler/testdata/project_names")
	warnings, err := filepath.Glob("compiler/testdata/warnings/*")
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) < len(compiler.WarningCodes) {
		t.Fatalf("the warnings corpus has %d cases; it should cover every code (%d)", len(warnings), len(compiler.WarningCodes))
	}
	codes := map[string]bool{}
	seen := map[string]bool{}
	for _, path := range append(cases, warnings...) {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		warn := strings.Contains(path, "/warnings/")
		goldenName := name
		if warn {
			goldenName = "warn_" + name
		}
		golden := filepath.Join("golden", "errors", goldenName+".txt")
		seen[golden] = true
		config := "compiler/testdata/incrc.yaml"
		if c := filepath.Join("compiler", "testdata", "configs", name+".yaml"); fileExists(c) {
			config = c
		}
		incrc := func(args ...string) (int, string, string) {
			var stdout, stderr bytes.Buffer
			args = append(args[:1:1], append([]string{"--config", config}, args[1:]...)...)
			code := run(context.Background(), append(args, filepath.ToSlash(path)), strings.NewReader(""), &stdout, &stderr)
			return code, stdout.String(), stderr.String()
		}
		t.Run(goldenName, func(t *testing.T) {
			code, stdout, got := incrc("validate")
			switch {
			case !warn && code != exitError:
				t.Errorf("exit code %d, want %d", code, exitError)
			case !warn && stdout != "":
				t.Errorf("stdout is not empty:\n%s", stdout)
			case warn && code != exitOK:
				t.Errorf("exit code %d, want %d: warnings do not fail validate", code, exitOK)
			}
			checkDiagnosticLines(t, got)
			if warn {
				checkWarnings(t, incrc, got, codes)
			}
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
	for _, c := range compiler.WarningCodes {
		if !codes[c.Code] && !t.Failed() {
			t.Errorf("no case of the warnings corpus raises %s", c.Code)
		}
	}
	stale, _ := filepath.Glob(filepath.Join("golden", "errors", "*.txt"))
	for _, path := range stale {
		if !seen[path] {
			t.Errorf("%s: no broken spec produces it any more (delete it)", path)
		}
	}
}

// checkWarnings holds a warning case's other commands to validate's
// output got: --strict fails with the same lines, compile and plan print
// them too. It notes the codes raised.
func checkWarnings(t *testing.T, incrc func(args ...string) (int, string, string), got string, codes map[string]bool) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		if !strings.Contains(l, ": warning: ") {
			t.Errorf("not a warning: %s", l)
		}
		if i := strings.LastIndex(l, " ["); i >= 0 {
			codes[strings.TrimSuffix(l[i+2:], "]")] = true
		}
	}
	code, _, strict := incrc("validate", "--strict")
	if want := got[:len(got)-1] + " (--strict fails on them)\n"; code != exitError || strict != want {
		t.Errorf("validate --strict: exit %d (want %d), stderr:\n%s\nwant:\n%s", code, exitError, strict, want)
	}
	out := t.TempDir()
	if code, _, stderr := incrc("compile", "--out", out); code != exitOK || stderr != got {
		t.Errorf("compile: exit %d, stderr:\n%s\nwant validate's:\n%s", code, stderr, got)
	}
	if code, _, stderr := incrc("plan", "--out", out); code != exitOK || stderr != got {
		t.Errorf("plan after compile: exit %d, stderr:\n%s\nwant validate's:\n%s", code, stderr, got)
	}
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

var (
	diagnosticRe = regexp.MustCompile(`^[^:]+\.yaml:[1-9][0-9]*:[1-9][0-9]*: (warning: .* \[[a-z-]+\]|\S.*)$`)
	countRe      = regexp.MustCompile(`^([1-9][0-9]* error\(s\)(, [1-9][0-9]* warning\(s\))?|[1-9][0-9]* warning\(s\))( \(--strict fails on them\))?$`)
)

// checkDiagnosticLines asserts the shape every diagnostic has: a
// path:line:col prefix with a line and column, then a message (a warning's
// with its code); and the count line at the end.
func checkDiagnosticLines(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 2 || !countRe.MatchString(lines[len(lines)-1]) {
		t.Fatalf("want diagnostics and a count line, got:\n%s", out)
	}
	for _, l := range lines[:len(lines)-1] {
		if !diagnosticRe.MatchString(l) {
			t.Errorf("not path:line:col: message: %s", l)
		}
	}
}
