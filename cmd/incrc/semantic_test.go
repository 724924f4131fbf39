package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPlanSemanticGoldens compiles a project (testdata/semantic/v1), then
// changes its specs (v2: a strategy, a lookback, a column, checks, a
// comment, a new pipeline) and compares incrc plan, text and markdown, with
// golden/plan/semantic.txt and .md: each pipeline led by what changed in
// its spec's own words, then its programs, statements and consequences.
func TestPlanSemanticGoldens(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "cmd", "incrc", "testdata", "semantic")
	dir := t.TempDir()
	t.Chdir(dir)
	copyFile(t, filepath.Join(src, "incrc.yaml"), "incrc.yaml")
	copyDir(t, filepath.Join(src, "v1"), "specs")
	mustCmd(t, exitOK, "compile")
	if err := os.RemoveAll("specs"); err != nil {
		t.Fatal(err)
	}
	copyDir(t, filepath.Join(src, "v2"), "specs")
	for _, format := range []string{"text", "markdown"} {
		got := mustCmd(t, exitChanges, "plan", "--format", format)
		ext := map[string]string{"text": "txt", "markdown": "md"}[format]
		golden := filepath.Join(root, "golden", "plan", "semantic."+ext)
		if *update {
			os.MkdirAll(filepath.Dir(golden), 0o755)
			if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (go test ./cmd/incrc -run TestPlanSemanticGoldens -update writes it)", err)
		}
		if diff := cmp.Diff(string(want), got); diff != "" {
			t.Errorf("%s mismatch (-want +got):\n%s", golden, diff)
		}
	}
	// The parameters the issue names read as the spec says them.
	text := mustCmd(t, exitChanges, "plan")
	for _, want := range []string{
		"  strategy: append -> merge\n",
		"  watermark.lookback: 2d -> 3d\n",
		"  columns: + currency text\n",
		`  quality.checks: + "amount >= 0"` + "\n",
		"dw_sessions (specs/sessions.yaml): new pipeline: merge from app.sessions into dw.sessions, 2 columns, watermark started_at; compiled for duckdb, postgres\n",
		"rows already written stay as the new spec computes them: no backfill needed",
		"needs a full refresh (incrc run --full-refresh): strategy changed",
		"rows already written were computed with the old logic: a backfill of the partitions built by the old logic",
		"--- sql/duckdb/dw_events.sql (statement quarantine)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("plan does not say %q", want)
		}
	}
}

func mustCmd(t *testing.T, code int, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if got := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); got != code {
		t.Fatalf("incrc %s: exit %d, want %d\n%s%s", strings.Join(args, " "), got, code, &stdout, &stderr)
	}
	return stdout.String()
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		copyFile(t, filepath.Join(from, e.Name()), filepath.Join(to, e.Name()))
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cmdOut runs incrc in-process and returns its exit code and output; it
// fails the test when the command has not returned after a minute (a read
// that blocks on a pipe must fail the test, not hang it).
func cmdOut(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := -1
	done := make(chan struct{})
	go func() {
		defer close(done)
		code = run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("incrc %s still running after a minute", strings.Join(args, " "))
	}
	return code, stdout.String(), stderr.String()
}
