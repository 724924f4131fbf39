package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/runner"
)

// TestPipelineTestIsolation: incrc test --target touches only what it
// made. A spec whose tables have no schema (source: {table: victim})
// reads and writes the test's own tables, never the target's table of
// that name; a fixture named like incrc's own tables (given.tables:
// {incrc_state: ...}) is refused, and the target's state table keeps its
// rows. On every executed engine: the servers in schemas the test creates
// and drops, the embedded engines in a new file (the one --target names
// is not touched).
func TestPipelineTestIsolation(t *testing.T) {
	base := t.TempDir()
	engines := []struct{ name, url string }{
		{"duckdb", "duckdb:" + filepath.Join(base, "wh.duckdb")},
		{"sqlite", "sqlite:" + filepath.Join(base, "wh.db")},
		{"postgres", serverURL(t, "INCRC_TEST_POSTGRES_URL")},
		{"mysql", serverURL(t, "INCRC_TEST_MYSQL_URL")},
	}
	suffix := fmt.Sprintf("%d_%d", os.Getpid(), time.Now().UnixNano()%1e6)
	victim, out, sentinel := "victim_"+suffix, "victim_out_"+suffix, "dw_sentinel_"+suffix
	ctx := context.Background()
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			if eng.url == "" {
				t.Skip("not configured")
			}
			t.Chdir(t.TempDir())
			os.MkdirAll("specs", 0o755)
			tg, err := runner.Open(ctx, all.Lookup, eng.url, "")
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			exec := func(q string) {
				t.Helper()
				if _, err := tg.DB.ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			ts := "TIMESTAMP"
			if eng.name == "mysql" {
				ts = "DATETIME" // MariaDB's TIMESTAMP has a time zone
			}
			exec("CREATE TABLE " + victim + " (id BIGINT, updated_at " + ts + ")")
			exec("INSERT INTO " + victim + " VALUES (1, '2026-01-01 10:00:00')")
			defer tg.DB.ExecContext(ctx, "DROP TABLE IF EXISTS "+victim)
			defer tg.DB.ExecContext(ctx, "DROP TABLE IF EXISTS "+out)
			// A pipeline of the target's own, with its state row.
			writeFile(t, "sentinel.yaml", "pipeline: "+sentinel+"\nsource: {table: "+victim+"}\ntarget: {table: dw.s"+suffix+"}\ncolumns: {id: bigint, updated_at: timestamp}\nstrategy: full_refresh\n")
			sp, err := compiler.LoadSpec("sentinel.yaml")
			if err != nil {
				t.Fatal(err)
			}
			plan, err := compiler.Lower(sp)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tg.Run(ctx, plan, runner.Options{}); err != nil {
				t.Fatal(err)
			}
			defer tg.Forget(ctx, sentinel)
			defer tg.ExecOp(ctx, ir.DropTable{Table: plan.Target}, nil)
			stateRows := func() int {
				t.Helper()
				var n int
				if err := tg.DB.QueryRowContext(ctx, "SELECT COUNT(*) FROM incrc_state WHERE pipeline = '"+sentinel+"'").Scan(&n); err != nil {
					t.Fatalf("the target's state table: %v", err)
				}
				return n
			}

			writeFile(t, "specs/v.yaml", "pipeline: dw_v\nsource: {table: "+victim+"}\ntarget: {table: "+out+"}\ncolumns: {id: bigint, updated_at: timestamp}\nstrategy: merge\nunique_key: [id]\nwatermark: {column: updated_at, start: 2026-01-01}\n")
			writeFile(t, "specs/v.test.yaml", `pipeline: dw_v
tests:
  - name: reads its own source
    given:
      source:
        - {id: 2, updated_at: "2026-01-02 10:00:00"}
        - {id: 3, updated_at: "2026-01-02 11:00:00"}
    runs:
      - until: 2026-01-03
        expect: {read: 2, inserted: 2}
    expect:
      target: [{id: 2}, {id: 3}]
`)
			code, stdout, stderr := cmdOut(t, "test", "--target", eng.url)
			if code != exitOK || !strings.Contains(stdout, "1 passed, 0 failed") {
				t.Errorf("exit %d\n%s%s", code, stdout, stderr)
			}
			var ids []int64
			rows, err := tg.DB.QueryContext(ctx, "SELECT id FROM "+victim+" ORDER BY id")
			if err != nil {
				t.Fatalf("the target's %s is gone: %v", victim, err)
			}
			for rows.Next() {
				var id int64
				rows.Scan(&id)
				ids = append(ids, id)
			}
			rows.Close()
			if fmt.Sprint(ids) != "[1]" {
				t.Errorf("the target's %s holds ids %v, want [1]: the test wrote into it", victim, ids)
			}
			if _, err := tg.DB.QueryContext(ctx, "SELECT id FROM "+out); err == nil {
				t.Errorf("the test's target %s is in the target database", out)
			}
			if n := stateRows(); n != 1 {
				t.Errorf("the target's state row of %s: %d rows, want 1", sentinel, n)
			}

			// A fixture named incrc_state is refused; the state table stays.
			writeFile(t, "specs/v.test.yaml", `pipeline: dw_v
tests:
  - name: a fixture named like incrc's state
    given:
      source: [{id: 2, updated_at: "2026-01-02 10:00:00"}]
      tables:
        incrc_state: {columns: {pipeline: text}, rows: []}
    runs:
      - until: 2026-01-03
`)
			code, stdout, stderr = cmdOut(t, "test", "--target", eng.url)
			if code != exitError || !strings.Contains(stdout, "given.tables.incrc_state: a fixture may not be named like incrc's own tables") {
				t.Errorf("exit %d, want 1 naming the fixture\n%s%s", code, stdout, stderr)
			}
			if n := stateRows(); n != 1 {
				t.Errorf("after a fixture named incrc_state: the target's state row of %s: %d rows, want 1", sentinel, n)
			}
		})
	}
}
