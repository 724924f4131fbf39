package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/runner"
)

// TestRunsWhatWasReviewed: on every executed engine, a run executes only
// the SQL its checked-in compiled file holds. A spec changed after the
// compile, a hand-edited pipeline file and a hand-edited bookkeeping file
// are each refused, naming the pipeline, the file and the first statement
// that differs, before anything is written; --allow-unreviewed runs and
// the run log records it; a compile makes the run pass again; without a
// compiled file the run says once that its SQL is unreviewed.
func TestRunsWhatWasReviewed(t *testing.T) {
	server := func(env string) string {
		u := os.Getenv(env)
		if u == "" && os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI must run this on it", env)
		}
		return u
	}
	files := t.TempDir()
	engines := []struct{ dialect, url string }{
		{"duckdb", "duckdb:" + filepath.Join(files, "wh.duckdb")},
		{"sqlite", "sqlite:" + filepath.Join(files, "wh.db")},
		{"postgres", server("INCRC_TEST_POSTGRES_URL")},
		{"mysql", server("INCRC_TEST_MYSQL_URL")},
	}
	for _, eng := range engines {
		t.Run(eng.dialect, func(t *testing.T) {
			if eng.url == "" {
				t.Skipf("INCRC_TEST_%s_URL not set", strings.ToUpper(eng.dialect))
			}
			testReviewed(t, eng.dialect, eng.url)
		})
	}
}

func testReviewed(t *testing.T, dialect, url string) {
	ctx := context.Background()
	id := fmt.Sprintf("%d", time.Now().UnixNano()%1e9)
	pipeline, src, target := "rv_"+id, "rv_src_"+id, "rv_dst_"+id
	tg, err := runner.Open(ctx, all.Lookup, url, "")
	if err != nil {
		t.Fatal(err)
	}
	exec := func(q string) {
		t.Helper()
		if _, err := tg.DB.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	ts := "TIMESTAMP"
	if dialect == "mysql" {
		ts = "DATETIME" // MariaDB's TIMESTAMP is in the session's time zone
	}
	exec("CREATE TABLE " + src + " (id BIGINT, updated_at " + ts + ")")
	exec("INSERT INTO " + src + " VALUES (1, '2026-01-02 10:00:00')")
	t.Cleanup(func() {
		for _, q := range []string{"DROP TABLE " + src, "DROP TABLE IF EXISTS " + target,
			"DELETE FROM incrc_runs WHERE pipeline = '" + pipeline + "'", "DELETE FROM incrc_state WHERE pipeline = '" + pipeline + "'"} {
			tg.DB.ExecContext(ctx, q)
		}
		tg.Close()
	})
	runs := func() (n int, note string) {
		t.Helper()
		rows, err := tg.DB.QueryContext(ctx, "SELECT note FROM incrc_runs WHERE pipeline = '"+pipeline+"' ORDER BY started_at")
		if err != nil {
			return 0, "" // no run log yet
		}
		defer rows.Close()
		for rows.Next() {
			var s *string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			n, note = n+1, ""
			if s != nil {
				note = *s
			}
		}
		return n, note
	}

	t.Chdir(t.TempDir())
	spec := func(lookback string) {
		t.Helper()
		os.MkdirAll("specs", 0o755)
		text := fmt.Sprintf(`pipeline: %s
source: { table: %s }
target: { table: %s }
columns: { id: bigint, updated_at: timestamp }
strategy: merge
unique_key: [id]
watermark: { column: updated_at, start: 2026-01-01, lookback: %s }
`, pipeline, src, target, lookback)
		if err := os.WriteFile(filepath.Join("specs", "rv.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cli := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(ctx, args, strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	runArgs := []string{"run", "--target", url, pipeline, "--until", "2026-01-03"}
	refused := func(what, where string) {
		t.Helper()
		before, _ := runs()
		code, _, stderr := cli(runArgs...)
		if code != exitError || !strings.Contains(stderr, where) || !strings.Contains(stderr, "is not the SQL this incrc would run") ||
			!strings.Contains(stderr, "incrc compile --dialect "+dialect) {
			t.Fatalf("%s: exit %d, want 1 naming %q and the fix:\n%s", what, code, where, stderr)
		}
		if after, _ := runs(); after != before {
			t.Fatalf("%s: the refused run wrote to the run log (%d -> %d runs)", what, before, after)
		}
	}
	ok := func(what string) string {
		t.Helper()
		code, stdout, stderr := cli(runArgs...)
		if code != exitOK {
			t.Fatalf("%s: exit %d\n%s%s", what, code, stdout, stderr)
		}
		return stderr
	}

	// No compiled file: the run says so, once.
	spec("1d")
	if stderr := ok("no compiled file"); strings.Count(stderr, "running SQL nobody reviewed") != 1 || !strings.Contains(stderr, pipeline) {
		t.Fatalf("without a compiled file, stderr:\n%s", stderr)
	}
	// Compiled: silent.
	if code, _, stderr := cli("compile", "--dialect", dialect); code != exitOK {
		t.Fatalf("compile: %s", stderr)
	}
	if stderr := ok("compiled"); stderr != "" {
		t.Fatalf("a reviewed run said:\n%s", stderr)
	}
	// The spec changed after the compile: refused, then run anyway.
	spec("2d")
	refused("a spec changed after the compile", pipeline+": sql/"+dialect+"/"+pipeline+".sql")
	if code, _, stderr := cli(append(runArgs, "--allow-unreviewed")...); code != exitOK || !strings.Contains(stderr, "--allow-unreviewed") {
		t.Fatalf("--allow-unreviewed: exit %d\n%s", code, stderr)
	}
	if _, note := runs(); !strings.Contains(note, "unreviewed") || !strings.Contains(note, "--allow-unreviewed") {
		t.Fatalf("the run log's note of the unreviewed run: %q", note)
	}
	// A compile after the change makes the run pass again.
	cli("compile", "--dialect", dialect)
	ok("compiled again")
	// A hand-edited pipeline file: refused at the statement edited.
	path := filepath.Join("sql", dialect, pipeline+".sql")
	edit(t, path, "\n-- name: create_target\n", func(s string) string { return strings.Replace(s, "CREATE TABLE", "CREATE TABLE  ", 1) })
	refused("a hand-edited pipeline file", "statement create_target differs")
	cli("compile", "--dialect", dialect)
	ok("compiled after the edit")
	// A hand-edited bookkeeping file: refused for every pipeline.
	edit(t, filepath.Join("sql", dialect, "_incrc.sql"), "\n-- name: advance_watermark\n", func(s string) string { return strings.Replace(s, "UPDATE", "UPDATE ", 1) })
	refused("a hand-edited bookkeeping file", "statement advance_watermark differs")
	cli("compile", "--dialect", dialect)
	ok("compiled after the bookkeeping edit")
}

// edit rewrites the part of a file from the line after to the next
// statement with f.
func edit(t *testing.T, path, after string, f func(string) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	i := strings.Index(s, after)
	if i < 0 {
		t.Fatalf("%s: no %q", path, after)
	}
	i += len(after)
	j := strings.Index(s[i:], "\n-- name: ")
	if j < 0 {
		j = len(s) - i
	}
	edited := s[:i] + f(s[i:i+j]) + s[i+j:]
	if edited == s {
		t.Fatalf("%s: the edit changed nothing", path)
	}
	if err := os.WriteFile(path, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPlanNamesTheCompilingVersion: a compiled file written by another
// incrc shows in incrc plan as changed, saying which version wrote it and
// that this one writes another file; a run does not refuse a file for its
// version line alone.
func TestPlanNamesTheCompilingVersion(t *testing.T) {
	ctx := context.Background()
	t.Chdir(t.TempDir())
	os.MkdirAll("specs", 0o755)
	os.WriteFile(filepath.Join("specs", "o.yaml"), []byte(`pipeline: dw_o
source: { table: app.o }
target: { table: dw.o }
columns: { id: bigint, updated_at: timestamp }
strategy: merge
unique_key: [id]
watermark: { column: updated_at, start: 2026-01-01 }
`), 0o644)
	cli := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := run(ctx, args, strings.NewReader(""), &out, &out)
		return code, out.String()
	}
	if code, out := cli("compile"); code != exitOK {
		t.Fatal(out)
	}
	for _, name := range []string{"dw_o.sql", "_incrc.sql"} {
		path := filepath.Join("sql", "duckdb", name)
		data, _ := os.ReadFile(path)
		old := strings.Replace(string(data), "\n-- incrc version: devel\n", "\n-- incrc version: v0.1.0\n", 1)
		if old == string(data) {
			t.Fatalf("%s records no version:\n%s", path, data)
		}
		os.WriteFile(path, []byte(old), 0o644)
	}
	code, out := cli("plan")
	for _, want := range []string{
		"~ sql/duckdb/dw_o.sql (compiled by incrc v0.1.0; this incrc, devel, writes a different file)\n",
		"~ sql/duckdb/_incrc.sql (compiled by incrc v0.1.0; this incrc, devel, writes a different file)\n",
	} {
		if code != exitChanges || !strings.Contains(out, want) {
			t.Errorf("plan: exit %d, want 2 and %q:\n%s", code, want, out)
		}
	}
	// A version that is not one is not repeated (the file is anyone's text).
	data, _ := os.ReadFile(filepath.Join("sql", "duckdb", "dw_o.sql"))
	os.WriteFile(filepath.Join("sql", "duckdb", "dw_o.sql"), []byte(strings.Replace(string(data), "v0.1.0", "| **x** |", 1)), 0o644)
	_, out = cli("plan", "--format", "markdown")
	row := ""
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "| `sql/duckdb/dw_o.sql` |") {
			row = line
		}
	}
	if !strings.Contains(row, "(compiled by an unrecognised version;") || strings.Contains(row, "**x**") {
		t.Errorf("plan --format markdown with an odd version: the row is %q:\n%s", row, out)
	}
	// The version line alone is no reason to refuse a run.
	want, _ := os.ReadFile(filepath.Join("sql", "duckdb", "_incrc.sql"))
	cli("compile")
	got, _ := os.ReadFile(filepath.Join("sql", "duckdb", "_incrc.sql"))
	if where, same := sameCompiled(want, got); !same {
		t.Errorf("files that differ in their version line only: %s differs", where)
	}
	if where, _ := sameCompiled(bytes.Replace(got, []byte("UPDATE"), []byte("UPDATE "), 1), got); !strings.HasPrefix(where, "statement ") {
		t.Errorf("an edited statement: %q differs", where)
	}
}
