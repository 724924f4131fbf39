package runner

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"
)

func engineByName(name string) engine {
	for _, e := range engines() {
		if e.name == name {
			return e
		}
	}
	panic("no engine " + name)
}

// transferCols are the source table's columns in the transfer scenarios.
var transferCols = []ir.Col{
	{Name: "order_id", Type: ir.Type{Kind: ir.Bigint}, NotNull: true},
	{Name: "customer", Type: ir.Type{Kind: ir.Varchar, Length: 20}},
	{Name: "amount", Type: ir.Type{Kind: ir.Decimal, Precision: 12, Scale: 2}},
	{Name: "qty", Type: ir.Type{Kind: ir.Integer}},
	{Name: "paid", Type: ir.Type{Kind: ir.Boolean}},
	{Name: "order_date", Type: ir.Type{Kind: ir.Date}},
	{Name: "updated_at", Type: ir.Type{Kind: ir.Timestamp}},
	{Name: "doc", Type: ir.Type{Kind: ir.JSON}},
}

const transferSpec = `
pipeline: {name}_{id}
source: { connection: app, table: app_{id}.orders }
target: { table: dw_{id}.{name} }
columns:
  order_id: bigint
  customer: varchar(20)
  amount: decimal(12,2)
  qty: integer
  paid: boolean
  order_date: date
  updated_at: timestamp
  doc: json
strategy: merge
unique_key: [order_id]
watermark: { column: updated_at, start: 2026-01-01, lookback: 1d }
quality: { checks: ["amount >= 0"] }
reconcile: { by: order_date, measures: [count, sum(amount)] }
`

var transferColNames = []string{"order_id", "customer", "amount", "qty", "paid", "order_date", "updated_at", "doc"}

// TestTransfer: a source in another database, on pairs of engines: the
// window's read runs on the source, in its dialect, the rows stream into
// the target's staging through its bulk path, and the incremental target
// equals a full refresh of the same source; state stays in the target.
func TestTransfer(t *testing.T) {
	pairs := [][2]string{
		{"postgres", "duckdb"}, {"mysql", "postgres"}, {"postgres", "sqlite"},
		{"duckdb", "mysql"}, {"sqlite", "postgres"}, {"mysql", "duckdb"},
	}
	for _, pair := range pairs {
		t.Run(pair[0]+"_to_"+pair[1], func(t *testing.T) {
			src := newEnv(t, engineByName(pair[0]))
			dst := newEnv(t, engineByName(pair[1]))
			dst.id = src.id // one suffix for both sides' names
			dst.tg.SourceURLs = map[string]string{"app": src.url}
			src.createTable("app_{id}.orders", transferCols)
			src.insert("app_{id}.orders", transferCols,
				[]any{int64(1), "ann", "10.50", int64(1), true, "2026-01-10", "2026-01-10 09:00:00", `{"a":1}`},
				[]any{int64(2), "bob", "20.00", int64(2), false, "2026-01-11", "2026-01-11 09:00:00", `["x","y"]`},
				[]any{int64(3), "cy", "-5.00", int64(3), nil, "2026-01-12", "2026-01-12 09:00:00", nil},
				[]any{int64(4), "dee", "7.25", nil, true, "2026-01-20", "2026-01-20 09:00:00", `{"n":{"m":2.5}}`},
			)
			inc := dst.spec(strings.ReplaceAll(transferSpec, "{name}", "orders"))
			full := dst.spec(strings.ReplaceAll(transferSpec, "{name}", "orders_full"))

			res := mustRun(t, dst, inc, Options{Until: until("2026-01-15")})
			checkCounts(t, "first run", res, counts{Read: 3, Inserted: 2, Quarantined: 1})
			src.update("app_{id}.orders", transferCols, "order_id", int64(2), map[string]any{"amount": "22.00", "updated_at": "2026-01-16 10:00:00"})
			src.insert("app_{id}.orders", transferCols,
				[]any{int64(5), "eve", "1.00", int64(5), false, "2026-01-14", "2026-01-14 23:00:00", nil}) // late: inside the lookback
			res = mustRun(t, dst, inc, Options{Until: until("2026-01-21")})
			checkCounts(t, "second run", res, counts{Read: 3, Inserted: 2, Updated: 1})
			mustRun(t, dst, full, Options{Until: until("2026-01-21"), FullRefresh: true})

			got, want := dst.rows("dw_{id}.orders", transferColNames), dst.rows("dw_{id}.orders_full", transferColNames)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("incremental target differs from a full refresh (-full +incremental):\n%s", diff)
			}
			if len(got) != 4 {
				t.Errorf("target rows: %q, want 4", got)
			}
			for _, r := range got {
				// A JSON document arrives as a document, never as a JSON string of its text.
				// (DuckDB's driver reads an object back as a map; the others as its text.)
				doc := r[strings.LastIndex(r, "| ")+2:]
				want := `{"a":1}`
				if pair[1] == "duckdb" {
					want = "map[a:1]"
				}
				if strings.HasPrefix(r, "1 |") && strings.ReplaceAll(doc, " ", "") != want {
					t.Errorf("row 1's doc: %q", r)
				}
			}
			if st := dst.state(inc); st.Watermark != "2026-01-21T00:00:00Z" {
				t.Errorf("watermark in the target: %q", st.Watermark)
			}
			rec, err := dst.tg.Reconcile(dst.ctx, inc, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Drifted) > 0 || len(rec.Groups) == 0 {
				t.Errorf("reconcile against the source: %+v", rec)
			}
		})
	}
}

// TestTransferFullRefreshReplaces: a full refresh from another database
// into a target that holds rows makes it exactly the source's valid rows,
// on every target engine: a key the source lost is deleted, a changed row
// takes the source's values, an unchanged one stays, a new one is added;
// the same as a full refresh into an empty target. The run says how many
// rows the target held (deleted) and holds (inserted).
func TestTransferFullRefreshReplaces(t *testing.T) {
	for _, pair := range [][2]string{{"sqlite", "duckdb"}, {"sqlite", "postgres"}, {"duckdb", "sqlite"}, {"sqlite", "mysql"}} {
		t.Run(pair[0]+"_to_"+pair[1], func(t *testing.T) {
			src := newEnv(t, engineByName(pair[0]))
			dst := newEnv(t, engineByName(pair[1]))
			dst.id = src.id
			dst.tg.SourceURLs = map[string]string{"app": src.url}
			src.createTable("app_{id}.orders", transferCols)
			src.insert("app_{id}.orders", transferCols,
				[]any{int64(1), "ann", "10.50", int64(1), true, "2026-01-10", "2026-01-10 09:00:00", nil},
				[]any{int64(2), "bob", "20.00", int64(2), false, "2026-01-11", "2026-01-11 09:00:00", nil},
				[]any{int64(3), "cy", "-5.00", int64(3), nil, "2026-01-12", "2026-01-12 09:00:00", nil},
				[]any{int64(4), "dee", "7.25", nil, true, "2026-01-13", "2026-01-13 09:00:00", nil},
			)
			p := dst.spec(strings.ReplaceAll(transferSpec, "{name}", "orders"))
			fresh := dst.spec(strings.ReplaceAll(transferSpec, "{name}", "orders_fresh"))
			full := Options{Until: until("2026-01-21"), FullRefresh: true}
			res := mustRun(t, dst, p, full)
			checkCounts(t, "first full refresh", res, counts{Read: 4, Inserted: 3, Quarantined: 1})

			src.deleteWhere("app_{id}.orders", "order_id", int64(1))
			src.update("app_{id}.orders", transferCols, "order_id", int64(2), map[string]any{"amount": "22.00", "updated_at": "2026-01-16 10:00:00"})
			src.insert("app_{id}.orders", transferCols,
				[]any{int64(5), "eve", "1.00", int64(5), false, "2026-01-14", "2026-01-14 23:00:00", nil})
			res = mustRun(t, dst, p, full)
			checkCounts(t, "second full refresh", res, counts{Read: 4, Inserted: 3, Deleted: 3, Quarantined: 1})
			mustRun(t, dst, fresh, full)

			names := []string{"order_id", "customer", "amount", "qty", "paid", "order_date", "updated_at"}
			got, want := dst.rows("dw_{id}.orders", names), dst.rows("dw_{id}.orders_fresh", names)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("full refresh over the old rows differs from one into an empty target (-empty +over):\n%s", diff)
			}
			var keys []string
			for _, r := range got {
				keys = append(keys, r[:strings.Index(r, " ")])
			}
			if strings.Join(keys, ",") != "2,4,5" {
				t.Errorf("target keys %v, want 2,4,5 (1 deleted at the source, 3 quarantined): %q", keys, got)
			}
			if len(got) == 3 && !strings.Contains(got[0], "22") {
				t.Errorf("order 2 kept its old amount: %q", got[0])
			}
		})
	}
}

// TestTransferSameDatabase: a spec without connection still reads its
// source in the target, with no copy step.
func TestTransferSameDatabase(t *testing.T) {
	e := newEnv(t, engineByName("duckdb"))
	p := e.spec(strings.ReplaceAll(strings.ReplaceAll(transferSpec, "connection: app, ", ""), "{name}", "orders"))
	for _, pr := range p.Programs {
		for _, s := range pr.Steps {
			if s.On == ir.OnSource || s.Read == ir.ReadCopy {
				t.Errorf("program %s: step %s runs on a source outside the target", pr.Mode, s.Stmt)
			}
		}
	}
	e.createTable("app_{id}.orders", transferCols)
	e.insert("app_{id}.orders", transferCols, []any{int64(1), "ann", "10.50", int64(1), true, "2026-01-10", "2026-01-10 09:00:00", nil})
	res := mustRun(t, e, p, Options{Until: until("2026-01-15")})
	checkCounts(t, "run", res, counts{Read: 1, Inserted: 1})
}

// TestTransferValueDoesNotFit: a source value its declared column cannot
// hold fails the run, naming the row's key and the column, and writes
// nothing. SQLite keeps no types, so the probe lets it through and the
// copy meets the value.
func TestTransferValueDoesNotFit(t *testing.T) {
	for _, target := range []string{"duckdb", "postgres", "sqlite", "mysql"} {
		t.Run(target, func(t *testing.T) {
			src := newEnv(t, engineByName("sqlite"))
			dst := newEnv(t, engineByName(target))
			dst.id = src.id
			dst.tg.SourceURLs = map[string]string{"app": src.url}
			src.createTable("app_{id}.orders", transferCols)
			src.insert("app_{id}.orders", transferCols,
				[]any{int64(1), "ann", "10.50", int64(1), true, "2026-01-10", "2026-01-10 09:00:00", nil},
				[]any{int64(7), "bob", "10.505", int64(1), true, "2026-01-10", "2026-01-10 09:00:00", nil})
			p := dst.spec(strings.ReplaceAll(transferSpec, "{name}", "orders"))
			_, err := dst.tg.Run(dst.ctx, p, Options{Until: until("2026-01-15")})
			if err == nil || !strings.Contains(err.Error(), "order_id=7") || !strings.Contains(err.Error(), "column amount") {
				t.Fatalf("run: %v, want a failure naming order_id=7 and column amount", err)
			}
			if target == "duckdb" {
				t.Log(err)
			}
			if rows, _ := dst.read("dw_{id}.orders", transferColNames); len(rows) != 0 {
				t.Errorf("target rows after a failed run: %q", rows)
			}
		})
	}
}

// writeParquet writes rows into a parquet file through an in-memory
// DuckDB: the landing folder's producer.
func writeParquet(t *testing.T, path string, rows string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := fmt.Sprintf(`COPY (SELECT * FROM (VALUES %s) AS v(order_id, customer, amount, updated_at)) TO '%s' (FORMAT parquet)`, rows, path)
	if _, err := db.Exec(q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

const filesSpec = `
pipeline: {name}_{id}
source: { files: "{dir}/**/*.parquet" }
target: { table: dw_{id}.{name} }
columns:
  order_id: bigint
  customer: text
  amount: decimal(12,2)
  updated_at: timestamp
  day: date
strategy: merge
unique_key: [order_id]
watermark: { files: new }
reconcile: { by: day, measures: [count, sum(amount)] }
`

// TestFilesByFile: a landing folder picked up file by file, on every
// target: each run loads exactly the files not loaded before (a late file
// once), a rewritten file is reported and loaded again only when asked, a
// run that dies loads its files again and nothing twice, and the target
// equals a full refresh of the folder.
func TestFilesByFile(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			dir := t.TempDir()
			spec := strings.ReplaceAll(filesSpec, "{dir}", dir)
			inc := e.spec(strings.ReplaceAll(spec, "{name}", "orders"))
			full := e.spec(strings.ReplaceAll(spec, "{name}", "orders_full"))
			writeParquet(t, dir+"/day=2026-01-10/a.parquet", "(1, 'ann', 10.5, TIMESTAMP '2026-01-10 09:00:00'), (2, 'bob', 20.0, TIMESTAMP '2026-01-10 10:00:00')")
			writeParquet(t, dir+"/day=2026-01-11/b.parquet", "(3, 'cy', 3.25, TIMESTAMP '2026-01-11 09:00:00')")

			res := mustRun(t, e, inc, Options{})
			checkCounts(t, "first run", res, counts{Read: 3, Inserted: 3})
			if !strings.HasPrefix(res.Note, "2 new file(s) loaded") {
				t.Errorf("note: %q", res.Note)
			}
			res = mustRun(t, e, inc, Options{})
			checkCounts(t, "nothing new", res, counts{})

			// A late file in an old folder, and a new folder.
			writeParquet(t, dir+"/day=2026-01-10/late.parquet", "(4, 'dee', 4.0, TIMESTAMP '2026-01-10 11:00:00')")
			writeParquet(t, dir+"/day=2026-01-12/c.parquet", "(2, 'bob', 22.0, TIMESTAMP '2026-01-12 10:00:00')")
			// The run dies at its commit: nothing recorded, the files load again.
			_, err := e.tg.Run(e.ctx, inc, Options{BeforeStatement: func(name string) error {
				if name == "commit" {
					return fmt.Errorf("killed")
				}
				return nil
			}})
			if err == nil {
				t.Fatal("the killed run succeeded")
			}
			res = mustRun(t, e, inc, Options{})
			checkCounts(t, "late and new files", res, counts{Read: 2, Inserted: 1, Updated: 1})

			// A file rewritten in place is reported, not loaded. Its mtime
			// is set apart from the first write's: a rewrite within the
			// file system's timestamp resolution would keep it.
			writeParquet(t, dir+"/day=2026-01-11/b.parquet", "(3, 'cy', 3.50, TIMESTAMP '2026-01-11 09:30:00')")
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(dir+"/day=2026-01-11/b.parquet", later, later); err != nil {
				t.Fatal(err)
			}
			res = mustRun(t, e, inc, Options{})
			checkCounts(t, "rewritten, not reloaded", res, counts{})
			if !strings.Contains(res.Note, "rewritten in place") || !strings.Contains(res.Note, "day=2026-01-11/b.parquet") {
				t.Errorf("note: %q", res.Note)
			}
			res = mustRun(t, e, inc, Options{ReloadRewritten: true})
			checkCounts(t, "rewritten, reloaded", res, counts{Read: 1, Updated: 1})
			res = mustRun(t, e, inc, Options{})
			checkCounts(t, "after the reload", res, counts{})

			mustRun(t, e, full, Options{FullRefresh: true})
			cols := []string{"order_id", "customer", "amount", "updated_at", "day"}
			got, want := e.rows("dw_{id}.orders", cols), e.rows("dw_{id}.orders_full", cols)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("incremental target differs from a full refresh (-full +incremental):\n%s", diff)
			}
			if len(got) != 4 {
				t.Errorf("target: %q", got)
			}
			rec, err := e.tg.Reconcile(e.ctx, inc, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Drifted) > 0 || len(rec.Groups) == 0 {
				t.Errorf("reconcile against the files: %+v", rec)
			}
			pv, err := e.tg.Preview(e.ctx, inc, time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if pv.NewFiles == nil || *pv.NewFiles != 0 || !strings.Contains(pv.Source, dir) {
				t.Errorf("preview: %+v", pv)
			}
			writeParquet(t, dir+"/day=2026-01-13/d.parquet", "(5, 'eve', 5.0, TIMESTAMP '2026-01-13 10:00:00')")
			if st := e.state(inc); st.NewFiles == nil || *st.NewFiles != 1 || !strings.Contains(st.Source, dir) {
				t.Errorf("state: source %q, new files %v", st.Source, st.NewFiles)
			}
		})
	}
}

var _ = context.Background

// TestFilesByColumn: a landing folder read by a column's window, on every
// target: the target equals a full refresh, and DuckDB's reader skips the
// files whose day= folder is outside the window.
func TestFilesByColumn(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			dir := t.TempDir()
			spec := strings.ReplaceAll(strings.ReplaceAll(filesSpec, "{dir}", dir), "watermark: { files: new }", "watermark: { column: day, start: 2026-01-01 }")
			inc := e.spec(strings.ReplaceAll(spec, "{name}", "orders"))
			full := e.spec(strings.ReplaceAll(spec, "{name}", "orders_full"))
			writeParquet(t, dir+"/day=2026-01-10/a.parquet", "(1, 'ann', 10.5, TIMESTAMP '2026-01-10 09:00:00'), (2, 'bob', 20.0, TIMESTAMP '2026-01-10 10:00:00')")
			writeParquet(t, dir+"/day=2026-01-11/b.parquet", "(3, 'cy', 3.25, TIMESTAMP '2026-01-11 09:00:00')")
			res := mustRun(t, e, inc, Options{Until: until("2026-01-12")})
			checkCounts(t, "first run", res, counts{Lo: "2026-01-01", Hi: "2026-01-12", Read: 3, Inserted: 3})
			writeParquet(t, dir+"/day=2026-01-12/c.parquet", "(2, 'bob', 22.0, TIMESTAMP '2026-01-12 10:00:00')")
			res = mustRun(t, e, inc, Options{Until: until("2026-01-13")})
			checkCounts(t, "second run", res, counts{Lo: "2026-01-12", Hi: "2026-01-13", Read: 1, Updated: 1})
			mustRun(t, e, full, Options{Until: until("2026-01-13"), FullRefresh: true})
			cols := []string{"order_id", "customer", "amount", "updated_at", "day"}
			if diff := cmp.Diff(e.rows("dw_{id}.orders_full", cols), e.rows("dw_{id}.orders", cols)); diff != "" {
				t.Errorf("incremental target differs from a full refresh (-full +incremental):\n%s", diff)
			}
			if eng.name != "duckdb" {
				return
			}
			// The window's read, as compiled, skips the other days' files.
			c, err := compile(e.tg.Dialect, inc, 0, e.tg.Dialect)
			if err != nil {
				t.Fatal(err)
			}
			st, _ := c.statement("stage_window")
			db, err := sql.Open("duckdb", "")
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			// On a DuckDB target the read stages the rows itself: into the
			// raw table, which the session creates first.
			raw, _ := c.statement("create_raw")
			for _, p := range raw.Parts {
				if _, err := db.Exec(p.SQL); err != nil {
					t.Fatal(err)
				}
			}
			lo, hi := time.Date(2026, 1, 12, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 13, 0, 0, 0, 0, time.UTC)
			var plan strings.Builder
			rows, err := db.Query("EXPLAIN ANALYZE "+st.Parts[0].SQL, lo, hi)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var k, v string
				rows.Scan(&k, &v)
				plan.WriteString(v)
			}
			rows.Close()
			if !strings.Contains(plan.String(), "Scanning Files: 1/3") {
				t.Errorf("the window's read does not skip the other days' files:\n%s", plan.String())
			}
		})
	}
}

// TestTransferStrategies: other strategies from a source in another
// database (SQLite into DuckDB): overwrite_partitions with its backfill,
// an integer watermark (its upper bound read on the source), a change log
// (cdc) and versions (scd2 by time); each equals a full refresh.
func TestTransferStrategies(t *testing.T) {
	cols := []ir.Col{
		{Name: "id", Type: ir.Type{Kind: ir.Bigint}, NotNull: true},
		{Name: "amount", Type: ir.Type{Kind: ir.Decimal, Precision: 12, Scale: 2}},
		{Name: "op", Type: ir.Type{Kind: ir.Varchar, Length: 1}},
		{Name: "seq", Type: ir.Type{Kind: ir.Bigint}},
		{Name: "day", Type: ir.Type{Kind: ir.Date}},
		{Name: "updated_at", Type: ir.Type{Kind: ir.Timestamp}},
	}
	head := `source: { connection: app, table: app_{id}.events }
columns: { id: bigint, amount: "decimal(12,2)", op: varchar(1), seq: bigint, day: date, updated_at: timestamp }
`
	cases := []struct{ name, spec string }{
		{"overwrite", "strategy: overwrite_partitions\npartition: { column: day }\nwatermark: { column: updated_at, start: 2026-01-01 }\nquality: { on_invalid: fail }\n"},
		{"integer", "strategy: append\nwatermark: { column: seq, start: 0 }\n"},
		{"cdc", "strategy: cdc\nunique_key: [id]\nwatermark: { column: updated_at, start: 2026-01-01 }\ncdc: { op: op, sequence: seq, exclude: [op] }\n"},
		{"scd2", "strategy: scd2\nunique_key: [id]\nwatermark: { column: updated_at, start: 2026-01-01 }\nscd2: { by: time }\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := newEnv(t, engineByName("sqlite"))
			dst := newEnv(t, engineByName("duckdb"))
			dst.id = src.id
			dst.tg.SourceURLs = map[string]string{"app": src.url}
			src.createTable("app_{id}.events", cols)
			src.insert("app_{id}.events", cols,
				[]any{int64(1), "1.00", "c", int64(1), "2026-01-10", "2026-01-10 09:00:00"},
				[]any{int64(2), "2.00", "c", int64(2), "2026-01-10", "2026-01-10 10:00:00"},
				[]any{int64(3), "3.00", "c", int64(3), "2026-01-11", "2026-01-11 09:00:00"})
			spec := func(name string) *ir.Plan {
				return dst.spec("pipeline: " + name + "_{id}\n" + head + "target: { table: dw_{id}." + name + " }\n" + tc.spec)
			}
			inc, full := spec("inc"), spec("full")
			at := func(day string) Options {
				if tc.name == "integer" {
					return Options{} // up to the largest id present
				}
				return Options{Until: until(day)}
			}
			mustRun(t, dst, inc, at("2026-01-12"))
			src.insert("app_{id}.events", cols,
				[]any{int64(2), "2.50", "u", int64(4), "2026-01-10", "2026-01-12 10:00:00"},
				[]any{int64(4), "4.00", "c", int64(5), "2026-01-12", "2026-01-12 11:00:00"})
			res := mustRun(t, dst, inc, at("2026-01-13"))
			// The window's 2 rows; a partition overwrite reads the 2
			// partitions it rewrites whole: 3 rows of 2026-01-10, 1 of the 12th.
			want := int64(2)
			if tc.name == "overwrite" {
				want = 4
			}
			if res.RowsRead != want {
				t.Errorf("second run read %d, want %d (%+v)", res.RowsRead, want, res)
			}
			fo := at("2026-01-13")
			fo.FullRefresh = true
			mustRun(t, dst, full, fo)
			names := []string{"id", "amount", "day"}
			if diff := cmp.Diff(sorted(dst.rows("dw_{id}.full", names)), sorted(dst.rows("dw_{id}.inc", names))); diff != "" {
				t.Errorf("incremental target differs from a full refresh (-full +incremental):\n%s", diff)
			}
			if tc.name != "overwrite" {
				return
			}
			bf, err := dst.tg.Backfill(dst.ctx, inc, BackfillOptions{From: time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 1, 13, 0, 0, 0, 0, time.UTC), Parallel: 2})
			if err != nil {
				t.Fatal(err)
			}
			if done := statuses(bf, PartRebuilt); len(done) != 3 {
				t.Errorf("backfill: %+v", bf.Partitions)
			}
			if diff := cmp.Diff(sorted(dst.rows("dw_{id}.full", names)), sorted(dst.rows("dw_{id}.inc", names))); diff != "" {
				t.Errorf("after the backfill (-full +incremental):\n%s", diff)
			}
		})
	}
}

// TestFilesFullRefreshStrategy: a full_refresh pipeline over files loaded
// by file rebuilds from every file on every run, not from the new ones.
func TestFilesFullRefreshStrategy(t *testing.T) {
	e := newEnv(t, engineByName("duckdb"))
	dir := t.TempDir()
	spec := strings.NewReplacer("{dir}", dir, "{name}", "orders", "strategy: merge\nunique_key: [order_id]\n", "strategy: full_refresh\n").Replace(filesSpec)
	p := e.spec(spec)
	writeParquet(t, dir+"/day=2026-01-10/a.parquet", "(1, 'ann', 10.5, TIMESTAMP '2026-01-10 09:00:00')")
	mustRun(t, e, p, Options{})
	writeParquet(t, dir+"/day=2026-01-11/b.parquet", "(2, 'bob', 20.0, TIMESTAMP '2026-01-11 09:00:00')")
	res := mustRun(t, e, p, Options{})
	checkCounts(t, "second run", res, counts{Read: 2, Inserted: 2, Deleted: 1})
	if got := e.rows("dw_{id}.orders", []string{"order_id"}); len(got) != 2 {
		t.Errorf("target: %q, want both files' rows", got)
	}
}

// TestFilesAppendDirect: an append of files loaded by file, without
// quality rules or dedupe, copies the rows straight into the target in the
// write's transaction (no staging table; the compiled program says so),
// on every target: the counts in the result and the run log are the rows
// copied, a run that dies after its copy leaves the target and the
// bookmark as they were (its files load again, nothing twice), a value
// that does not fit fails the run with nothing written, and the target
// equals a full refresh of the folder.
func TestFilesAppendDirect(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			dir := t.TempDir()
			spec := strings.ReplaceAll(filesSpec, "{dir}", dir)
			spec = strings.Replace(spec, "strategy: merge\nunique_key: [order_id]\n", "strategy: append\n", 1)
			inc := e.spec(strings.ReplaceAll(spec, "{name}", "orders"))
			full := e.spec(strings.ReplaceAll(spec, "{name}", "orders_full"))
			var listing strings.Builder
			for _, pr := range inc.Programs {
				if pr.Mode == ir.ModeRun {
					for _, s := range pr.Steps {
						fmt.Fprintf(&listing, "%s tx=%v read=%s copy=%s\n", s.Stmt, s.Tx, s.Read, strings.Join(s.Copy.Parts, "."))
					}
				}
			}
			if !strings.Contains(listing.String(), "copy_window tx=true read=copy copy=dw_"+e.id+".orders\n") || strings.Contains(listing.String(), "stage") {
				t.Fatalf("the run program does not copy straight into the target:\n%s", listing.String())
			}
			writeParquet(t, dir+"/day=2026-01-10/a.parquet", "(1, 'ann', 10.5, TIMESTAMP '2026-01-10 09:00:00'), (2, 'bob', 20.0, TIMESTAMP '2026-01-10 10:00:00')")
			writeParquet(t, dir+"/day=2026-01-11/b.parquet", "(3, 'cy', 3.25, TIMESTAMP '2026-01-11 09:00:00')")
			res := mustRun(t, e, inc, Options{})
			checkCounts(t, "first run", res, counts{Read: 3, Inserted: 3})
			res = mustRun(t, e, inc, Options{})
			checkCounts(t, "nothing new", res, counts{})

			// The run dies after its copy, before it commits.
			writeParquet(t, dir+"/day=2026-01-12/c.parquet", "(4, 'dee', 4.0, TIMESTAMP '2026-01-12 11:00:00')")
			for _, at := range []string{"record_finish", "commit"} {
				_, err := e.tg.Run(e.ctx, inc, Options{BeforeStatement: func(name string) error {
					if name == at {
						return fmt.Errorf("killed")
					}
					return nil
				}})
				if err == nil {
					t.Fatalf("the run killed at %s succeeded", at)
				}
				if got := e.rows("dw_{id}.orders", []string{"order_id"}); len(got) != 3 {
					t.Fatalf("target after a run killed at %s: %q", at, got)
				}
			}
			// A value that does not fit, in the second file the copy reads:
			// the first file's rows, already copied, go with the rollback.
			writeParquet(t, dir+"/day=2026-01-13/d.parquet", "(5, 'eve', 123456789012.5, TIMESTAMP '2026-01-13 10:00:00')")
			if _, err := e.tg.Run(e.ctx, inc, Options{}); err == nil || !strings.Contains(err.Error(), "column amount") {
				t.Fatalf("run over a value that does not fit: %v, want a failure naming column amount", err)
			}
			if got := e.rows("dw_{id}.orders", []string{"order_id"}); len(got) != 3 {
				t.Fatalf("target after the failed copy: %q", got)
			}
			writeParquet(t, dir+"/day=2026-01-13/d.parquet", "(5, 'eve', 5.0, TIMESTAMP '2026-01-13 10:00:00')")
			res = mustRun(t, e, inc, Options{})
			checkCounts(t, "after the failures", res, counts{Read: 2, Inserted: 2})
			st := e.state(inc)
			if len(st.Runs) == 0 || st.Runs[0].RowsRead != 2 || st.Runs[0].RowsInserted != 2 {
				t.Errorf("run log: %+v", st.Runs)
			}

			mustRun(t, e, full, Options{FullRefresh: true})
			cols := []string{"order_id", "customer", "amount", "updated_at", "day"}
			got, want := e.rows("dw_{id}.orders", cols), e.rows("dw_{id}.orders_full", cols)
			if diff := cmp.Diff(sorted(want), sorted(got)); diff != "" {
				t.Errorf("incremental target differs from a full refresh (-full +incremental):\n%s", diff)
			}
			if len(got) != 5 {
				t.Errorf("target: %q", got)
			}
		})
	}
}
