//go:build bench

package runner

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler"
)

// The runner benchmarks measure the product's promise in numbers: an
// incremental run of a merge pipeline against a full refresh of the same
// pipeline, on the same data, in one process, and the cost of a run whose
// window holds nothing. They never run under a plain `go test` (only with
// -bench) and assert nothing about time: BENCHMARKS.md has the numbers.
//
//	go test -tags bench ./runner -run '^$' -bench IncrementalVsFullRefresh -benchtime 5x -timeout 60m -v
//	go test -tags bench ./runner -run '^$' -bench EmptyWindow -benchtime 30x -v
//
// PostgreSQL is measured when INCRC_TEST_POSTGRES_URL is set; -incrc.rows
// changes the source's size; -v logs a per-statement breakdown.

var benchRows = flag.Int("incrc.rows", 1_000_000, "source rows of the runner benchmarks")

// benchSpec is story 1's orders pipeline (merge by order_id, updated_at
// watermark with a 2-day lookback, dedupe, quality with quarantine) with a
// few more columns, so that rows are as wide as a real orders table.
const benchSpec = `
pipeline: bench_orders_{id}
source:
  table: app_{id}.orders
target:
  table: dw_{id}.orders
columns:
  order_id: bigint
  customer_id: bigint
  order_date: date
  status: varchar(16)
  currency: varchar(3)
  amount: decimal(12,2)
  updated_at: timestamp
strategy: merge
unique_key: [order_id]
watermark:
  column: updated_at
  start: 2025-01-01
  lookback: 2d
  lag: 5m
dedupe_by: updated_at
quality:
  not_null: [order_date]
  checks: ["amount >= 0"]
  on_invalid: quarantine
reconcile:
  by: order_date
  measures: [count, sum(amount)]
`

// changeEvery picks the rows a step changes: order_id % 200 = k, that is
// 0.5% of the source, different rows at each step.
const changeEvery = 200

// The source's history: orders placed over 2025, one updated_at each,
// then steps of a week from firstHi on. firstHi leaves the lookback span
// before it empty, so that a rerun at the same hi reads no rows.
var (
	historyStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	firstHi      = time.Date(2026, 1, 10, 0, 0, 0, 0, time.UTC)
	step         = 7 * 24 * time.Hour
)

// benchEngine is an engine as the benchmarks see it: where it is, and the
// hand-written, set-based SQL that fills and changes the source (fixture
// only: the measured work goes through Target.Run).
type benchEngine struct {
	name string
	url  func(b *testing.B) string
	// load fills the source with n generated orders in one statement.
	load func(table string, n int) string
	// change moves the updated_at of the rows with order_id % 200 = k to a
	// time in [at, at + 1 day) and marks them paid.
	change func(table string, k int, at time.Time) string
	// indexes are created on the source after the load: what the
	// application database has besides its primary key.
	indexes []string
	// maintain is what a database's own maintenance (autovacuum) does
	// between runs; nothing on DuckDB.
	maintain []string
}

// benchEngines: DuckDB, and PostgreSQL twice: with a source that has only
// its primary key, and with an index on the watermark column, as an
// application database that is read incrementally usually has. DuckDB has
// no such variant: it prunes a range by its row groups' min/max, and an
// ART index serves point lookups, not ranges.
func benchEngines() []benchEngine {
	pg := postgresBench()
	pgIndexed := pg
	pgIndexed.name = "postgres_indexed"
	pgIndexed.indexes = []string{"CREATE INDEX {name} ON {source} (updated_at)"}
	return []benchEngine{duckdbBench(), pg, pgIndexed}
}

const benchTS = "2006-01-02 15:04:05"

func duckdbBench() benchEngine {
	return benchEngine{
		name: "duckdb",
		url:  func(b *testing.B) string { return "duckdb:" + filepath.Join(b.TempDir(), "bench.duckdb") },
		load: func(table string, n int) string {
			day := fmt.Sprintf("CAST((i - 1) * 365 // %d AS INTEGER)", n)
			return fmt.Sprintf(`INSERT INTO %s
SELECT i,
  1 + (i * 7919) %% 50000,
  DATE '%s' + %s,
  CASE WHEN i %% 100 = 0 THEN 'placed' ELSE 'paid' END,
  CASE i %% 3 WHEN 0 THEN 'EUR' WHEN 1 THEN 'USD' ELSE 'INR' END,
  CASE WHEN i %% 100 = 0 THEN NULL ELSE CAST(((i * 104729) %% 50000) / 100.0 AS DECIMAL(12,2)) END,
  CAST(DATE '%s' + %s AS TIMESTAMP) + to_seconds((i * 7919) %% 86400)
FROM range(1, %d) AS r(i)`, table, historyStart.Format("2006-01-02"), day, historyStart.Format("2006-01-02"), day, n+1)
		},
		change: func(table string, k int, at time.Time) string {
			return fmt.Sprintf(`UPDATE %s
SET updated_at = TIMESTAMP '%s' + to_seconds((order_id * 13) %% 86400),
    amount = COALESCE(amount, 0) + 1,
    status = 'paid'
WHERE order_id %% %d = %d`, table, at.Format(benchTS), changeEvery, k)
		},
	}
}

func postgresBench() benchEngine {
	return benchEngine{
		name: "postgres",
		url: func(b *testing.B) string {
			u := os.Getenv("INCRC_TEST_POSTGRES_URL")
			if u == "" {
				b.Skip("INCRC_TEST_POSTGRES_URL not set: skipping PostgreSQL")
			}
			return u
		},
		load: func(table string, n int) string {
			day := fmt.Sprintf("((i - 1) * 365 / %d)::int", n)
			return fmt.Sprintf(`INSERT INTO %s
SELECT i,
  1 + (i * 7919) %% 50000,
  DATE '%s' + %s,
  CASE WHEN i %% 100 = 0 THEN 'placed' ELSE 'paid' END,
  CASE i %% 3 WHEN 0 THEN 'EUR' WHEN 1 THEN 'USD' ELSE 'INR' END,
  CASE WHEN i %% 100 = 0 THEN NULL ELSE (((i * 104729) %% 50000) / 100.0)::numeric(12,2) END,
  (DATE '%s' + %s)::timestamp + ((i * 7919) %% 86400) * INTERVAL '1 second'
FROM generate_series(1::bigint, %d) AS g(i)`, table, historyStart.Format("2006-01-02"), day, historyStart.Format("2006-01-02"), day, n)
		},
		change: func(table string, k int, at time.Time) string {
			return fmt.Sprintf(`UPDATE %s
SET updated_at = TIMESTAMP '%s' + ((order_id * 13) %% 86400) * INTERVAL '1 second',
    amount = COALESCE(amount, 0) + 1,
    status = 'paid'
WHERE order_id %% %d = %d`, table, at.Format(benchTS), changeEvery, k)
		},
		// Autovacuum would get there on its own, at a moment of its
		// choosing; doing it between runs, untimed, keeps it out of
		// the measurements. The full refresh leaves as many dead rows
		// in the target as it has live ones.
		maintain: []string{"VACUUM ANALYZE {source}", "VACUUM ANALYZE {target}"},
	}
}

// benchFixture is one engine's source, target and pipeline, shared by the
// sub-benchmarks so that the source is loaded once.
type benchFixture struct {
	eng    benchEngine
	ctx    context.Context
	tg     *Target
	plan   *ir.Plan
	source string // quoted
	target string // quoted
	rows   int
	hi     time.Time // the watermark after the last run
	steps  int
}

// BenchmarkIncrementalVsFullRefresh: the story-1 merge pipeline on a
// source of -incrc.rows orders (default 1,000,000). Each iteration changes
// 0.5% of the rows (their updated_at moves into the next window), then
// times an incremental run and a full refresh of the same pipeline to the
// same hi, and reports incr/full over all iterations.
func BenchmarkIncrementalVsFullRefresh(b *testing.B) {
	for _, eng := range benchEngines() {
		b.Run(eng.name, func(b *testing.B) {
			f := newBenchFixture(b, eng, *benchRows)
			b.Run(f.name(), f.incrementalVsFull)
		})
	}
}

// BenchmarkEmptyWindow: a run of the same pipeline with nothing new since
// the last one, on the same source: the window is the 2-day lookback span
// and holds no rows.
func BenchmarkEmptyWindow(b *testing.B) {
	for _, eng := range benchEngines() {
		b.Run(eng.name, func(b *testing.B) {
			f := newBenchFixture(b, eng, *benchRows)
			b.Run(f.name(), f.emptyWindow)
		})
	}
}

// name names the measured sub-benchmark, which the framework calls once
// per b.N it tries: the fixture is built once, by its parent.
func (f *benchFixture) name() string { return fmt.Sprintf("rows=%d", f.rows) }

func newBenchFixture(b *testing.B, eng benchEngine, rows int) *benchFixture {
	ctx := context.Background()
	tg, err := Open(ctx, all.Lookup, eng.url(b), "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tg.Close() })
	// The engine's version belongs with its numbers.
	var version string
	if err := tg.DB.QueryRowContext(ctx, "SELECT version()").Scan(&version); err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %s", eng.name, version)
	id := uniq()
	plan := benchPlan(b, benchSpec, id)
	q := tg.Dialect.QuoteIdent
	f := &benchFixture{eng: eng, ctx: ctx, tg: tg, plan: plan, rows: rows,
		source: q("app_"+id) + "." + q("orders"), target: q("dw_"+id) + "." + q("orders")}
	b.Cleanup(func() { f.drop(id) })

	// The source as an application database has it: keyed by order_id.
	src := ir.Table{Parts: []string{"app_" + id, "orders"}}
	if err := tg.ExecOp(ctx, ir.CreateSchema{Schema: src.Schema()}, nil); err != nil {
		b.Fatal(err)
	}
	if err := tg.ExecOp(ctx, ir.CreateTable{Table: src, Columns: plan.Columns, PrimaryKey: []string{"order_id"}}, nil); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	f.sql(b, eng.load(f.source, rows))
	for _, ix := range eng.indexes {
		f.sql(b, strings.NewReplacer("{name}", q("orders_updated_at_"+id), "{source}", f.source).Replace(ix))
	}
	if tg.Dialect.Name() == "postgres" {
		f.sql(b, "ANALYZE "+f.source)
	}
	b.Logf("%s: loaded %d source rows in %v", eng.name, rows, time.Since(start).Round(time.Millisecond))

	// The target's starting point: everything up to firstHi, as the first
	// deployment of the pipeline would have written it.
	f.hi = firstHi
	start = time.Now()
	res, err := tg.Run(ctx, plan, Options{Until: &f.hi, FullRefresh: true})
	if err != nil {
		b.Fatal(err)
	}
	if res.RowsInserted != int64(rows) {
		b.Fatalf("initial full refresh inserted %d rows, want %d", res.RowsInserted, rows)
	}
	b.Logf("%s: initial full refresh in %v", eng.name, time.Since(start).Round(time.Millisecond))
	f.maintain(b)
	return f
}

// incrementalVsFull is one step per iteration: change 0.5% of the source
// (untimed), then an incremental run and a full refresh to the same hi.
func (f *benchFixture) incrementalVsFull(b *testing.B) {
	var incr, full time.Duration
	incrSteps, fullSteps := newStepTimes(), newStepTimes()
	changed := int64(f.rows / changeEvery)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		prev := f.hi
		f.hi = prev.Add(step)
		f.sql(b, f.eng.change(f.source, f.steps%changeEvery, prev))
		f.steps++
		f.maintain(b)
		b.StartTimer()

		t0 := incrSteps.begin()
		res, err := f.tg.Run(f.ctx, f.plan, Options{Until: &f.hi, BeforeStatement: incrSteps.hook})
		t1 := incrSteps.end()
		if err != nil {
			b.Fatal(err)
		}
		// The full refresh starts from the target the incremental run
		// left, as a user's repair run would.
		t1 = fullSteps.begin()
		ref, err := f.tg.Run(f.ctx, f.plan, Options{Until: &f.hi, FullRefresh: true, BeforeStatement: fullSteps.hook})
		t2 := fullSteps.end()
		if err != nil {
			b.Fatal(err)
		}
		incr += t1.Sub(t0)
		full += t2.Sub(t1)

		b.StopTimer()
		if res.RowsRead != changed || res.RowsUpdated != changed {
			b.Fatalf("incremental run read %d and updated %d rows, want %d", res.RowsRead, res.RowsUpdated, changed)
		}
		if ref.RowsInserted != int64(f.rows) {
			b.Fatalf("full refresh inserted %d rows, want %d", ref.RowsInserted, f.rows)
		}
		b.StartTimer()
	}
	b.ReportMetric(ms(incr)/float64(b.N), "incr-ms/op")
	b.ReportMetric(ms(full)/float64(b.N), "full-ms/op")
	b.ReportMetric(float64(incr)/float64(full), "incr/full")
	b.Logf("incremental run, per statement: %s", incrSteps.report(b.N))
	b.Logf("full refresh, per statement: %s", fullSteps.report(b.N))
}

// emptyWindow reruns the pipeline at the hi of its last run: the window is
// the 2-day lookback span, which holds no rows. What is left is the run's
// fixed cost (setup DDL, lease, state, run log, the commit) plus counting
// the window.
func (f *benchFixture) emptyWindow(b *testing.B) {
	var total time.Duration
	steps := newStepTimes()
	for i := 0; i < b.N; i++ {
		t0 := steps.begin()
		res, err := f.tg.Run(f.ctx, f.plan, Options{Until: &f.hi, BeforeStatement: steps.hook})
		total += steps.end().Sub(t0)
		if err != nil {
			b.Fatal(err)
		}
		if res.RowsRead != 0 {
			b.Fatalf("empty window read %d rows", res.RowsRead)
		}
	}
	b.ReportMetric(ms(total)/float64(b.N), "ms/run")
	b.Logf("empty window, per statement: %s", steps.report(b.N))
}

// stepTimes attributes a run's time to its statements through the
// runner's BeforeStatement hook: the time from one hook call to the next
// is the earlier statement's. What precedes the first hook (setup DDL,
// reading the state) is "(before init_state)". The commit, dropping the
// stage and releasing the lease have no hook: they count with the last
// statement, record_finish. The hook costs a clock read, nothing next to a
// statement. It is how -v tells which statement dominates without a
// profiler.
type stepTimes struct {
	last  time.Time
	name  string
	order []string
	total map[string]time.Duration
}

func newStepTimes() *stepTimes { return &stepTimes{total: map[string]time.Duration{}} }

// begin marks the start of a run and returns it.
func (s *stepTimes) begin() time.Time {
	s.last, s.name = time.Now(), "(before init_state)"
	return s.last
}

func (s *stepTimes) hook(name string) error {
	now := time.Now()
	s.add(s.name, now.Sub(s.last))
	s.last, s.name = now, name
	return nil
}

// end closes the last statement of a run and returns the time it ended.
func (s *stepTimes) end() time.Time {
	now := time.Now()
	s.add(s.name, now.Sub(s.last))
	return now
}

func (s *stepTimes) add(name string, d time.Duration) {
	if _, ok := s.total[name]; !ok {
		s.order = append(s.order, name)
	}
	s.total[name] += d
}

func (s *stepTimes) report(n int) string {
	var parts []string
	for _, name := range s.order {
		parts = append(parts, fmt.Sprintf("%s %.1fms", name, ms(s.total[name])/float64(n)))
	}
	return strings.Join(parts, ", ")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// sql runs fixture SQL written for the engine at hand.
func (f *benchFixture) sql(b *testing.B, stmt string) {
	b.Helper()
	if _, err := f.tg.DB.ExecContext(f.ctx, stmt); err != nil {
		b.Fatalf("%s\n%v", stmt, err)
	}
}

func (f *benchFixture) maintain(b *testing.B) {
	for _, m := range f.eng.maintain {
		f.sql(b, strings.NewReplacer("{source}", f.source, "{target}", f.target).Replace(m))
	}
}

// drop removes what the benchmark created on a shared server database:
// its schemas and its rows in the state tables.
func (f *benchFixture) drop(id string) {
	if f.tg.Dialect.Name() != "postgres" {
		return // DuckDB's file is in a temporary directory
	}
	q := f.tg.Dialect.QuoteIdent
	for _, s := range []string{"app_" + id, "dw_" + id} {
		f.tg.DB.ExecContext(f.ctx, "DROP SCHEMA IF EXISTS "+q(s)+" CASCADE")
	}
	for _, t := range []string{"incrc_state", "incrc_runs"} {
		f.tg.DB.ExecContext(f.ctx, "DELETE FROM "+q(t)+" WHERE "+q("pipeline")+" = $1", f.plan.Pipeline)
	}
}

// benchPlan parses, validates and lowers a benchmark's spec template, {id}
// replaced by id.
func benchPlan(b *testing.B, spec, id string) *ir.Plan {
	b.Helper()
	s, err := compiler.Parse("bench.yaml", []byte(strings.ReplaceAll(spec, "{id}", id)))
	if err != nil {
		b.Fatal(err)
	}
	if d := compiler.Validate(s); len(d) > 0 {
		b.Fatal(d.Err())
	}
	plan, err := compiler.Lower(s)
	if err != nil {
		b.Fatal(err)
	}
	return plan
}
