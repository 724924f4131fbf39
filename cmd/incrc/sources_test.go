package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/runner"
)

// TestSourceConnection: a spec whose source is in another database, from
// the command line: the connection comes from incrc.yaml (its ${ENV}
// expanded; unset, an error naming its line) or from --source NAME=URL,
// which wins; run streams the window into the target; plan --target and
// state name the source.
func TestSourceConnection(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll("specs", 0o755)
	os.WriteFile(filepath.Join("specs", "orders.yaml"), []byte(`pipeline: dw_orders
source: { connection: app, table: app.orders }
target: { table: dw.orders }
columns: { order_id: bigint, amount: "decimal(12,2)", updated_at: timestamp }
strategy: merge
unique_key: [order_id]
watermark: { column: updated_at, start: 2026-01-01 }
`), 0o644)
	os.WriteFile("incrc.yaml", []byte("connections:\n  app: sqlite:${APP_DB}\n"), 0o644)
	src := filepath.Join(dir, "app.db")
	tg, err := runner.Open(context.Background(), all.Lookup, "sqlite:"+src, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"CREATE TABLE app_orders (order_id INTEGER, amount NUMERIC, updated_at TEXT)",
		"INSERT INTO app_orders VALUES (1, 10.5, '2026-01-10 09:00:00'), (2, 20, '2026-01-11 09:00:00')",
	} {
		if _, err := tg.DB.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	tg.Close()
	target := "duckdb:" + filepath.Join(dir, "wh.duckdb")
	cli := func(vars map[string]string, args ...string) (int, string) {
		var out bytes.Buffer
		e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &out, now: time.Now,
			getenv: func(k string) (string, bool) { v, ok := vars[k]; return v, ok }}
		for _, c := range commands() {
			if c.name == args[0] {
				return c.run(context.Background(), e, args[1:]), out.String()
			}
		}
		t.Fatalf("no command %s", args[0])
		return 0, ""
	}

	// Compiling needs no URL: the scheme says the dialect.
	if code, out := cli(nil, "compile"); code != exitOK || !strings.Contains(out, "compiled 1 pipeline") {
		t.Fatalf("compile: %d\n%s", code, out)
	}
	code, out := cli(nil, "run", "--target", target, "--until", "2026-01-20")
	if code != exitError || !strings.Contains(out, `incrc.yaml:2:15: connection "app": environment variable APP_DB is not set`) {
		t.Errorf("run with APP_DB unset: %d\n%s", code, out)
	}
	code, out = cli(map[string]string{"APP_DB": src}, "run", "--target", target, "--until", "2026-01-20")
	if code != exitOK || !strings.Contains(out, "read 2, inserted 2") {
		t.Errorf("run: %d\n%s", code, out)
	}
	// --source wins over incrc.yaml (whose variable is unset here).
	code, out = cli(nil, "plan", "--target", target, "--source", "app=sqlite:"+src)
	if code != exitOK || !strings.Contains(out, "dw_orders: watermark 2026-01-20T00:00:00Z") || !strings.Contains(out, "from connection app (sqlite)") {
		t.Errorf("plan --target: %d\n%s", code, out)
	}
	code, out = cli(nil, "state", "--target", target, "--source", "app=sqlite:"+src)
	if code != exitOK || !strings.Contains(out, "  source:    connection app (sqlite)\n") {
		t.Errorf("state: %d\n%s", code, out)
	}
	if code, out = cli(nil, "run", "--target", target, "--source", "app"); code != exitError || !strings.Contains(out, `--source "app": expected NAME=URL`) {
		t.Errorf("run --source app: %d\n%s", code, out)
	}
}

// TestSourceFiles: a landing folder loaded by file, from the command line:
// state and plan --target count the new files, run loads them and says so,
// a file rewritten in place is reported and loaded again only with
// --reload-rewritten.
func TestSourceFiles(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.MkdirAll("specs", 0o755)
	os.WriteFile(filepath.Join("specs", "landed.yaml"), []byte(`pipeline: dw_landed
source: { files: "landing/**/*.parquet" }
target: { table: dw.landed }
columns: { order_id: bigint, amount: "decimal(12,2)", day: date }
strategy: merge
unique_key: [order_id]
watermark: { files: new }
`), 0o644)
	write := func(path, rows string) {
		t.Helper()
		os.MkdirAll(filepath.Dir(path), 0o755)
		db, err := sql.Open("duckdb", "")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("COPY (SELECT * FROM (VALUES " + rows + ") AS v(order_id, amount)) TO '" + path + "' (FORMAT parquet)"); err != nil {
			t.Fatal(err)
		}
	}
	write("landing/day=2026-01-10/a.parquet", "(1, 10.5), (2, 20.0)")
	target := "duckdb:" + filepath.Join(dir, "wh.duckdb")
	cli := func(args ...string) (int, string) {
		var out bytes.Buffer
		code := run(context.Background(), args, strings.NewReader(""), &out, &out)
		return code, out.String()
	}
	if code, out := cli("state", "--target", target); code != exitOK || !strings.Contains(out, "  source:    parquet files landing/**/*.parquet (by file): 1 new file(s) for the next run\n") {
		t.Errorf("state: %d\n%s", code, out)
	}
	if code, out := cli("run", "--target", target); code != exitOK || !strings.Contains(out, "read 2, inserted 2") || !strings.Contains(out, "1 new file(s) loaded") {
		t.Errorf("run: %d\n%s", code, out)
	}
	cli("compile")
	if code, out := cli("plan", "--target", target); code != exitOK || !strings.Contains(out, "from parquet files landing/**/*.parquet (by file), 0 new file(s)") {
		t.Errorf("plan --target: %d\n%s", code, out)
	}
	write("landing/day=2026-01-10/a.parquet", "(1, 11.5), (2, 20.0)")
	// Apart from the first write's mtime, whatever the file system's
	// timestamp resolution.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(dir, "landing/day=2026-01-10/a.parquet"), later, later); err != nil {
		t.Fatal(err)
	}
	if code, out := cli("run", "--target", target); code != exitOK || !strings.Contains(out, "read 0") || !strings.Contains(out, "--reload-rewritten") {
		t.Errorf("run after a rewrite: %d\n%s", code, out)
	}
	if code, out := cli("run", "--target", target, "--reload-rewritten"); code != exitOK || !strings.Contains(out, "read 2, inserted 0, updated 2") {
		t.Errorf("run --reload-rewritten: %d\n%s", code, out)
	}
}
