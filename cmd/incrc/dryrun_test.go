package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/runner"
)

// TestRunDryRunWritesNothing: incrc run --dry-run prints the window, the
// source rows it would read and the statements, on each executed engine,
// and writes nothing: no target table, no state or run-log row (on a new
// embedded database, not even the state tables), no lease; after a real
// run it previews the next window and leaves the state as it was.
func TestRunDryRunWritesNothing(t *testing.T) {
	engines := []struct{ name, url string }{
		{"duckdb", "duckdb"},
		{"sqlite", "sqlite"},
		{"postgres", serverURL(t, "INCRC_TEST_POSTGRES_URL")},
		{"mysql", serverURL(t, "INCRC_TEST_MYSQL_URL")},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			url := eng.url
			switch url {
			case "duckdb":
				url = "duckdb:" + filepath.Join(dir, "wh.duckdb")
			case "sqlite":
				url = "sqlite:" + filepath.Join(dir, "wh.db")
			case "":
				t.Skip("not configured")
			}
			id := fmt.Sprintf("d%d", time.Now().UnixNano()%1e9)
			pipeline := "dw_orders_" + id
			f := newFixture(t, url, []string{"app_" + id, "dw_" + id}, pipeline)
			f.create("app_"+id+".orders", []ir.Col{
				{Name: "order_id", Type: ir.Type{Kind: ir.Bigint}},
				{Name: "amount", Type: ir.Type{Kind: ir.Decimal, Precision: 12, Scale: 2}},
				{Name: "updated_at", Type: ir.Type{Kind: ir.Timestamp}},
			}, nil, "1, 10.00, '2026-01-20 09:00:00'", "2, 20.00, '2026-01-21 09:00:00'", "3, 30.00, '2026-01-23 09:00:00'")
			os.MkdirAll("specs", 0o755)
			writeFile(t, "specs/orders.yaml", `
pipeline: `+pipeline+`
source: { table: app_`+id+`.orders }
target: { table: dw_`+id+`.orders }
columns: { order_id: bigint, amount: "decimal(12,2)", updated_at: timestamp }
strategy: merge
unique_key: [order_id]
watermark: { column: updated_at, start: 2026-01-01, lookback: 1d }
`)
			embedded := eng.name == "duckdb" || eng.name == "sqlite"
			out := mustCmd(t, exitOK, "run", "--target", url, pipeline, "--until", "2026-01-22", "--dry-run")
			for _, want := range []string{
				pipeline + ": dry run, nothing written: window [2026-01-01T00:00:00Z, 2026-01-22T00:00:00Z), 2 source row(s) in the window; watermark (none) -> 2026-01-22T00:00:00Z",
				"    -- run: write (when rows_read)",
				"    -- setup: create_state",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("the dry run does not say %q:\n%s", want, out)
				}
			}
			if embedded {
				if tables := f.tables(); len(tables) != 1 {
					t.Errorf("a dry run on a new database left tables: %v", tables)
				}
			}
			f.nothingOf(pipeline, "dw_"+id+".orders", 0)

			// After a run, the dry run previews the next window and leaves
			// the state, the run log and the target as they were.
			mustCmd(t, exitOK, "run", "--target", url, pipeline, "--until", "2026-01-22")
			before := f.stateOf(pipeline)
			out = mustCmd(t, exitOK, "run", "--target", url, pipeline, "--until", "2026-01-24", "--dry-run", "--json")
			if !strings.Contains(out, `"window_lo":"2026-01-21T00:00:00Z","window_hi":"2026-01-24T00:00:00Z","rows":2`) || !strings.Contains(out, `"dry_run":true`) {
				t.Errorf("the dry run after a run:\n%s", out)
			}
			if after := f.stateOf(pipeline); after != before {
				t.Errorf("the dry run changed the state:\n%s\nwas\n%s", after, before)
			}
		})
	}
}

// tables lists the tables of an embedded database.
func (f *fixture) tables() []string {
	f.t.Helper()
	q := "SELECT table_name FROM information_schema.tables ORDER BY 1"
	if f.tg.Dialect.Name() == "sqlite" {
		q = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY 1"
	}
	rows, err := f.tg.DB.Query(q)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		rows.Scan(&s)
		out = append(out, s)
	}
	return out
}

// nothingOf checks that nothing of a pipeline is there: no state row, no
// run logged, no target table.
func (f *fixture) nothingOf(pipeline, target string, runs int) {
	f.t.Helper()
	if st := f.stateOf(pipeline); st != "" {
		f.t.Errorf("state of %s: %s", pipeline, st)
	}
	ctx := context.Background()
	if _, err := f.tg.QueryOp(ctx, ir.ProbeColumns{Source: ir.Relation{Table: ir.Table{Parts: strings.Split(target, ".")}}}, nil); err == nil {
		f.t.Errorf("the target %s was created", target)
	}
}

// stateOf is a pipeline's state row and run log as text ("" when there is
// neither, or no state table).
func (f *fixture) stateOf(pipeline string) string {
	f.t.Helper()
	var b strings.Builder
	for _, q := range []string{
		"SELECT watermark, lease_owner, lease_expires_at FROM incrc_state WHERE pipeline = '" + pipeline + "'",
		"SELECT run_id, status, window_lo, window_hi FROM incrc_runs WHERE pipeline = '" + pipeline + "' ORDER BY run_id",
	} {
		rows, err := f.tg.DB.Query(q)
		if err != nil {
			continue // no state tables
		}
		cols, _ := rows.Columns()
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			rows.Scan(ptrs...)
			for _, v := range vals {
				b.WriteString(runner.Canon(v) + " ")
			}
			b.WriteString("\n")
		}
		rows.Close()
	}
	return b.String()
}
