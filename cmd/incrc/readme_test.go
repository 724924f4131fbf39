package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
)

// TestReadmeTour runs the README's five-minute tour as written: every
// "$ incrc ..." line of its console blocks, in order, in a copy of what a
// fresh clone holds (specs/, examples/), and compares what each prints
// with the lines the README shows under it. A duration "(12 ms)" and a run
// id are the only things that may differ. The tour and the README cannot
// drift apart.
func TestReadmeTour(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	tour := section(t, string(readme), "## A five-minute tour")
	steps := consoleSteps(tour)
	if len(steps) < 8 {
		t.Fatalf("the tour has %d commands: the test reads it wrong", len(steps))
	}
	// The spec it shows is a spec.
	if y := fenced(tour, "yaml"); len(y) == 0 {
		t.Error("the tour shows no spec")
	} else if s, err := compiler.Parse("README.md", []byte(y[0])); err != nil {
		t.Errorf("the tour's spec does not parse: %v", err)
	} else if d := compiler.Validate(s); len(d) > 0 {
		t.Errorf("the tour's spec does not validate: %v", d)
	}

	root, _ := filepath.Abs("../..")
	dir := t.TempDir()
	for _, sub := range []string{"specs", "examples"} {
		copyTree(t, filepath.Join(root, sub), filepath.Join(dir, sub))
	}
	t.Chdir(dir)
	mask := regexp.MustCompile(`\(\d+ ms\)|\d{8}T\d{6}Z-[0-9a-f]{8}`)
	for _, st := range steps {
		args := strings.Fields(st.cmd)
		var out bytes.Buffer
		code := run(context.Background(), args[1:], strings.NewReader(""), &out, &out)
		if code != exitOK && !(args[1] == "plan" && code == exitChanges) {
			t.Fatalf("$ %s: exit %d\n%s", st.cmd, code, &out)
		}
		got := mask.ReplaceAllString(trimLines(out.String()), "_")
		want := mask.ReplaceAllString(trimLines(st.out), "_")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("$ %s: the README shows (-) but it prints (+):\n%s", st.cmd, diff)
		}
	}

	// The test docs/testing.md shows passes.
	guide, err := os.ReadFile(filepath.Join(root, "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	tests := fenced(section(t, string(guide), "## A test"), "yaml")
	if len(tests) == 0 {
		t.Fatal("docs/testing.md shows no pipeline test")
	}
	if err := os.WriteFile(filepath.Join("specs", "readme.test.yaml"), []byte(tests[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if code := run(context.Background(), []string{"test", "specs/readme.test.yaml"}, strings.NewReader(""), &out, &out); code != exitOK {
		t.Errorf("docs/testing.md's pipeline test: exit %d\n%s", code, &out)
	}
}

// TestReadmeError: the broken spec the README shows fails validation with
// exactly the errors it shows under it, and exit 1.
func TestReadmeError(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := section(t, string(readme), "## When a spec is wrong")
	specs, steps := fenced(text, "yaml"), consoleSteps(text)
	if len(specs) != 1 || len(steps) != 1 {
		t.Fatalf("the section shows %d spec(s) and %d command(s), not one of each", len(specs), len(steps))
	}
	t.Chdir(t.TempDir())
	if err := os.Mkdir("specs", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("specs", "orders.yaml"), []byte(specs[0]), 0o644); err != nil {
		t.Fatal(err)
	}
	args := strings.Fields(steps[0].cmd)
	var out bytes.Buffer
	if code := run(context.Background(), args[1:], strings.NewReader(""), &out, &out); code != exitError {
		t.Errorf("$ %s: exit %d, want %d", steps[0].cmd, code, exitError)
	}
	if diff := cmp.Diff(trimLines(steps[0].out), trimLines(out.String())); diff != "" {
		t.Errorf("$ %s: the README shows (-) but it prints (+):\n%s", steps[0].cmd, diff)
	}
}

type step struct{ cmd, out string }

// section is the text of a Markdown section, up to the next "## ".
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	i := strings.Index(doc, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("no section %q", heading)
	}
	rest := doc[i+len(heading)+2:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// fenced returns the bodies of the ```lang blocks of a text.
func fenced(text, lang string) []string {
	var out []string
	for _, part := range strings.Split(text, "```"+lang+"\n")[1:] {
		if j := strings.Index(part, "```"); j >= 0 {
			out = append(out, part[:j])
		}
	}
	return out
}

// consoleSteps reads "$ incrc ..." lines and the output under each from
// the ```console blocks; a "  # comment" after a command is the README's.
func consoleSteps(text string) []step {
	var steps []step
	for _, block := range fenced(text, "console") {
		for _, line := range strings.Split(block, "\n") {
			if cmd, ok := strings.CutPrefix(line, "$ "); ok {
				if i := strings.Index(cmd, "  #"); i >= 0 {
					cmd = cmd[:i]
				}
				steps = append(steps, step{cmd: strings.TrimSpace(cmd)})
				continue
			}
			if len(steps) > 0 {
				steps[len(steps)-1].out += line + "\n"
			}
		}
	}
	return steps
}

func trimLines(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = strings.TrimRight(lines[i], " ")
	}
	return strings.Join(lines, "\n")
}

func copyTree(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestDocsShowExamples: the CI workflow and the Airflow DAG docs/ci.md
// shows are the files incrc init writes and examples/ holds, verbatim.
func TestDocsShowExamples(t *testing.T) {
	data, err := os.ReadFile("../../docs/ci.md")
	if err != nil {
		t.Fatal(err)
	}
	ci := string(data)
	files, err := scaffoldFiles()
	if err != nil {
		t.Fatal(err)
	}
	var workflow string
	for _, f := range files {
		if f.path == ".github/workflows/incrc.yml" {
			workflow = strings.ReplaceAll(string(f.data), readBuildInfo().Version, "latest")
		}
	}
	dag, err := os.ReadFile("../../examples/airflow/incrc_dag.py")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"the workflow incrc init writes": workflow, "examples/airflow/incrc_dag.py": string(dag)} {
		if want == "" || !slices.Contains(append(fenced(ci, "yaml"), fenced(ci, "python")...), want) {
			t.Errorf("docs/ci.md does not show %s as it is", name)
		}
	}
}
