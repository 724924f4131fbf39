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
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/runner"
)

// TestNewFromTableQuotesNames: incrc new --from-table writes the catalog's
// column names through the YAML encoder. A name YAML would read as
// something else (null, a number) is quoted and stays the column's name; a
// name holding ": " and a line break stays one name, which validation
// refuses, so no spec is written.
func TestNewFromTableQuotesNames(t *testing.T) {
	t.Chdir(t.TempDir())
	os.MkdirAll("specs", 0o755)
	ctx := context.Background()
	tg, err := runner.Open(ctx, all.Lookup, "duckdb:wh.duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{
		`CREATE SCHEMA app`,
		`CREATE TABLE app.plain (id BIGINT PRIMARY KEY, "null" VARCHAR, "true" VARCHAR, updated_at TIMESTAMP)`,
		`CREATE TABLE app.hostile (id BIGINT PRIMARY KEY, "note: text` + "\n" + `  amount" VARCHAR, updated_at TIMESTAMP)`,
	} {
		if _, err := tg.DB.ExecContext(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	tg.Close()

	mustCmd(t, exitOK, "new", "dw_plain", "--strategy", "merge", "--source", "app.plain", "--from-table", "--target", "duckdb:wh.duckdb")
	s, err := compiler.LoadSpec("specs/plain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range s.Columns {
		names = append(names, c.Name.Value)
	}
	if got := strings.Join(names, ","); got != "id,null,true,updated_at" {
		t.Errorf("columns %s, want id,null,true,updated_at", got)
	}

	code, stdout, stderr := cmdOut(t, "new", "dw_hostile", "--strategy", "merge", "--source", "app.hostile", "--from-table", "--target", "duckdb:wh.duckdb")
	if code != exitError {
		t.Errorf("exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat("specs/hostile.yaml"); err == nil {
		data, _ := os.ReadFile("specs/hostile.yaml")
		t.Errorf("written:\n%s", data)
	}
	if !strings.Contains(stderr, `"note: text\n  amount"`) || strings.Contains(stderr, `column "amount"`) {
		t.Errorf("the error does not name the one column:\n%s", stderr)
	}
}

// TestNewFromTableRecommends: on each executed engine, incrc new
// --from-table reads the catalog and the rows, ranks the watermark
// candidates (a change time first for rows that change, else a creation
// time or an integer key for rows that never change, else full_refresh),
// prints them with the reason for the pick, starts the watermark at the
// column's oldest value (not the first of this month: that would skip the
// history), marks the columns holding NULLs nullable, and writes a spec
// that validates and whose first run reads every row.
func TestNewFromTableRecommends(t *testing.T) {
	engines := []struct{ name, url string }{
		{"duckdb", ""},
		{"sqlite", ""},
		{"postgres", serverURL(t, "INCRC_TEST_POSTGRES_URL")},
		{"mysql", serverURL(t, "INCRC_TEST_MYSQL_URL")},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			os.MkdirAll("specs", 0o755)
			url := eng.url
			switch {
			case eng.name == "duckdb":
				url = "duckdb:" + filepath.Join(dir, "wh.duckdb")
			case eng.name == "sqlite":
				url = "sqlite:" + filepath.Join(dir, "wh.db")
			case url == "":
				t.Skip("not configured")
			}
			id := fmt.Sprintf("n%d", time.Now().UnixNano()%1e9)
			app, dw := "app_"+id, "dw_"+id
			f := newFixture(t, url, []string{app, dw}, "dw_orders_"+id, "dw_events_"+id, "dw_codes_"+id)
			f.create(app+".orders", []ir.Col{
				{Name: "order_id", Type: ir.Type{Kind: ir.Bigint}},
				{Name: "order_date", Type: ir.Type{Kind: ir.Date}},
				{Name: "amount", Type: ir.Type{Kind: ir.Decimal, Precision: 12, Scale: 2}},
				{Name: "created_at", Type: ir.Type{Kind: ir.Timestamp}},
				{Name: "updated_at", Type: ir.Type{Kind: ir.Timestamp}},
			}, []string{"order_id"},
				"101, '2025-03-14', 50.00, '2025-03-14 10:22:00', '2025-03-14 10:22:00'",
				"102, '2025-03-15', NULL, '2025-03-15 08:00:00', '2025-04-01 00:00:00'")
			f.create(app+".events", []ir.Col{
				{Name: "event_id", Type: ir.Type{Kind: ir.Bigint}},
				{Name: "kind", Type: ir.Type{Kind: ir.Varchar, Length: 16}},
			}, []string{"event_id"}, "7, 'a'", "9, NULL")
			f.create(app+".codes", []ir.Col{
				{Name: "code", Type: ir.Type{Kind: ir.Varchar, Length: 8}},
				{Name: "label", Type: ir.Type{Kind: ir.Varchar, Length: 32}},
			}, nil, "'a', 'A'")

			out := mustCmd(t, exitOK, "new", "dw_orders_"+id, "--source", app+".orders", "--target-table", dw+".orders", "--from-table", "--target", url, "--out", "specs/orders.yaml")
			for _, want := range []string{
				"updated_at  timestamp  change time    moves when a row changes: a merge by the key sees every update  <- picked", "created_at  timestamp  creation time", "order_id    bigint     monotonic id",
				"Picked strategy merge by order_id, watermark updated_at",
				"watermark.start 2025-03-14: the day of its oldest value, 2025-03-14 10:22:00",
				"amount (1 of 2 rows)",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("incrc new does not say %q:\n%s", want, out)
				}
			}
			s, err := compiler.LoadSpec("specs/orders.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if s.Strategy.Value != "merge" || s.Watermark.Column.Value != "updated_at" || s.Watermark.Start.Value != "2025-03-14" {
				t.Errorf("orders: strategy %s, watermark %s from %s", s.Strategy.Value, s.Watermark.Column.Value, s.Watermark.Start.Value)
			}
			for _, c := range s.Columns {
				if c.Nullable != (c.Name.Value == "amount") {
					t.Errorf("column %s nullable %v: only amount holds NULLs", c.Name.Value, c.Nullable)
				}
			}

			out = mustCmd(t, exitOK, "new", "dw_events_"+id, "--source", app+".events", "--target-table", dw+".events", "--from-table", "--target", url, "--out", "specs/events.yaml")
			if !strings.Contains(out, "Picked strategy append, watermark event_id") || !strings.Contains(out, "watermark.start 7: its smallest value") {
				t.Errorf("events:\n%s", out)
			}
			s, err = compiler.LoadSpec("specs/events.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if s.Strategy.Value != "append" || s.Watermark.Column.Value != "event_id" || s.Watermark.Start.Value != "7" || s.Watermark.Lag.Set() {
				t.Errorf("events: strategy %s, watermark %s from %s, lag %q", s.Strategy.Value, s.Watermark.Column.Value, s.Watermark.Start.Value, s.Watermark.Lag.Text)
			}

			out = mustCmd(t, exitOK, "new", "dw_codes_"+id, "--source", app+".codes", "--target-table", dw+".codes", "--from-table", "--target", url, "--out", "specs/codes.yaml")
			if !strings.Contains(out, "No watermark candidate") || !strings.Contains(out, "Picked strategy full_refresh") {
				t.Errorf("codes:\n%s", out)
			}

			mustCmd(t, exitOK, "validate")
			// A merge asked for where no column is a change time is refused,
			// naming what to do; nothing is written.
			code, _, stderr := cmdOut(t, "new", "dw_events2_"+id, "--strategy", "merge", "--source", app+".events", "--from-table", "--target", url, "--out", "specs/events2.yaml")
			if code != exitError || !strings.Contains(stderr, "no column of "+app+".events is named like a change time") {
				t.Errorf("merge without a change time: exit %d\n%s", code, stderr)
			}
			if _, err := os.Stat("specs/events2.yaml"); err == nil {
				t.Error("a refused spec was written")
			}
			// The specs run: the first run reads the whole history.
			out = mustCmd(t, exitOK, "run", "--target", url, "dw_orders_"+id, "--until", "2025-05-01")
			if !strings.Contains(out, "read 2, inserted 2") {
				t.Errorf("the first run of orders: %s", out)
			}
			out = mustCmd(t, exitOK, "run", "--target", url, "dw_events_"+id)
			if !strings.Contains(out, "read 2, inserted 2") {
				t.Errorf("the first run of events: %s", out)
			}
		})
	}
}

// fixture makes source tables on a target for a test of the command line,
// and drops what the test made when it ends: its schemas, and its
// pipelines' rows of the shared state tables.
type fixture struct {
	t  *testing.T
	tg *runner.Target
}

func newFixture(t *testing.T, url string, schemas []string, pipelines ...string) *fixture {
	t.Helper()
	ctx := context.Background()
	tg, err := runner.Open(ctx, all.Lookup, url, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		defer tg.Close()
		for _, s := range schemas {
			switch tg.Dialect.Name() {
			case "postgres":
				tg.DB.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+tg.Dialect.QuoteIdent(s)+" CASCADE")
			case "mysql":
				tg.DB.ExecContext(ctx, "DROP DATABASE IF EXISTS "+tg.Dialect.QuoteIdent(s))
			}
		}
		for _, p := range pipelines {
			for _, table := range []string{"incrc_state", "incrc_runs", "incrc_partitions"} {
				tg.DB.ExecContext(ctx, "DELETE FROM "+table+" WHERE pipeline = '"+p+"'")
			}
		}
	})
	return &fixture{t: t, tg: tg}
}

// create makes a table of cols (and key) and inserts rows, each a list of
// SQL literals every engine reads.
func (f *fixture) create(name string, cols []ir.Col, key []string, rows ...string) {
	f.t.Helper()
	ctx := context.Background()
	tb := ir.Table{Parts: strings.Split(name, ".")}
	var parts []dialects.Part
	for _, op := range []ir.Op{ir.CreateSchema{Schema: tb.Schema()}, ir.CreateTable{Table: tb, Columns: cols, PrimaryKey: key}} {
		ps, err := dialects.RenderStatement(f.tg.Dialect, &ir.Statement{Name: "fixture", Op: op})
		if err != nil {
			f.t.Fatal(err)
		}
		parts = append(parts, ps...)
	}
	for _, p := range parts {
		if _, err := f.tg.DB.ExecContext(ctx, p.SQL); err != nil {
			f.t.Fatalf("%s: %v", p.SQL, err)
		}
	}
	quoted := ""
	if n, ok := f.tg.Dialect.(dialects.TableNamer); ok {
		quoted = n.TableName(tb)
	} else {
		for i, p := range tb.Parts {
			if i > 0 {
				quoted += "."
			}
			quoted += f.tg.Dialect.QuoteIdent(p)
		}
	}
	for _, r := range rows {
		if _, err := f.tg.DB.ExecContext(ctx, "INSERT INTO "+quoted+" VALUES ("+r+")"); err != nil {
			f.t.Fatalf("insert %s: %v", r, err)
		}
	}
}
