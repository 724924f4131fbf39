//go:build bench

package runner

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
)

// BenchmarkCDCIncrementalVsReplay measures a cdc pipeline as
// BenchmarkIncrementalVsFullRefresh measures a merge: a change log of
// -incrc.rows changes (default 1,000,000) over a tenth as many keys, then,
// per iteration, 0.5% more changes (updates, deletes, new keys; untimed)
// and, timed, an incremental run and a full replay of the whole log to the
// same hi. It asserts no time: BENCHMARKS.md has the numbers.
//
//	go test -tags bench ./runner -run '^$' -bench CDCIncrementalVsReplay -benchtime 3x -timeout 60m -v
func BenchmarkCDCIncrementalVsReplay(b *testing.B) {
	for _, eng := range cdcBenchEngines() {
		b.Run(eng.name, func(b *testing.B) {
			f := newCDCBench(b, eng, *benchRows)
			b.Run(fmt.Sprintf("changes=%d", f.rows), f.incrementalVsReplay)
		})
	}
}

const cdcBenchSpec = `
pipeline: bench_customers_{id}
source:
  table: app_{id}.customers_log
target:
  table: dw_{id}.customers
columns:
  customer_id: bigint
  name: varchar(32)
  country: varchar(2)
  balance: decimal(12,2)
  op: varchar(1)
  lsn: bigint
  committed_at: timestamp
  ingested_at: timestamp
strategy: cdc
unique_key: [customer_id]
watermark:
  column: ingested_at
  start: 2025-01-01
  lookback: 1h
cdc:
  op: op
  sequence: lsn
  at: committed_at
  exclude: [op, ingested_at]
quality:
  not_null: [country]
  checks: ["balance >= 0"]
`

// cdcBenchEngine fills and extends the change log set-based: change i
// (lsn i) is of key i % keys, ingested i seconds after the start; one in
// fifty is a delete, the first change of a key an insert, the rest
// updates.
type cdcBenchEngine struct {
	name    string
	url     func(b *testing.B) string
	series  string // the rows lo..hi-1 as i: a FROM clause
	seconds string // i seconds as an interval
	index   string
}

var cdcBenchStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func cdcBenchEngines() []cdcBenchEngine {
	return []cdcBenchEngine{
		{name: "duckdb", url: func(b *testing.B) string { return "duckdb:" + filepath.Join(b.TempDir(), "bench.duckdb") },
			series: "range({lo}, {hi}) AS r(i)", seconds: "to_seconds(i)"},
		{name: "postgres", url: func(b *testing.B) string {
			u := os.Getenv("INCRC_TEST_POSTGRES_URL")
			if u == "" {
				b.Skip("INCRC_TEST_POSTGRES_URL not set: skipping PostgreSQL")
			}
			return u
		}, series: "generate_series({lo}::bigint, {hi} - 1) AS g(i)", seconds: "i * INTERVAL '1 second'",
			index: "CREATE INDEX {name} ON {source} (ingested_at)"},
	}
}

type cdcBench struct {
	eng          cdcBenchEngine
	ctx          context.Context
	tg           *Target
	plan         *ir.Plan
	source       string
	rows, keys   int
	next         int // the next lsn
	hi           time.Time
	pgMaintained []string
}

func (f *cdcBench) append(b *testing.B, n int) {
	b.Helper()
	stmt := fmt.Sprintf(`INSERT INTO %s
SELECT i %% %d, 'name ' || CAST(i AS VARCHAR(20)), 'DE', CAST(i %% 1000 AS DECIMAL(12,2)),
  CASE WHEN i < %d THEN 'c' WHEN i %% 50 = 0 THEN 'd' ELSE 'u' END,
  i, TIMESTAMP '%s' + %s, TIMESTAMP '%s' + %s
FROM %s`, f.source, f.keys, f.keys, cdcBenchStart.Format(benchTS), f.eng.seconds, cdcBenchStart.Format(benchTS), f.eng.seconds,
		strings.NewReplacer("{lo}", fmt.Sprint(f.next), "{hi}", fmt.Sprint(f.next+n)).Replace(f.eng.series))
	if _, err := f.tg.DB.ExecContext(f.ctx, stmt); err != nil {
		b.Fatalf("%s\n%v", stmt, err)
	}
	f.next += n
	f.hi = cdcBenchStart.Add(time.Duration(f.next) * time.Second)
	for _, m := range f.pgMaintained {
		f.tg.DB.ExecContext(f.ctx, m)
	}
}

func newCDCBench(b *testing.B, eng cdcBenchEngine, rows int) *cdcBench {
	ctx := context.Background()
	tg, err := Open(ctx, all.Lookup, eng.url(b), "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tg.Close() })
	id := uniq()
	s, err := compiler.Parse("bench.yaml", []byte(strings.ReplaceAll(cdcBenchSpec, "{id}", id)))
	if err != nil {
		b.Fatal(err)
	}
	plan, err := compiler.Lower(s)
	if err != nil {
		b.Fatal(err)
	}
	q := tg.Dialect.QuoteIdent
	f := &cdcBench{eng: eng, ctx: ctx, tg: tg, plan: plan, rows: rows, keys: rows / 10, source: q("app_"+id) + "." + q("customers_log")}
	b.Cleanup(func() {
		if tg.Dialect.Name() == "postgres" {
			for _, sch := range []string{"app_" + id, "dw_" + id} {
				tg.DB.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+q(sch)+" CASCADE")
			}
			for _, t := range []string{"incrc_state", "incrc_runs"} {
				tg.DB.ExecContext(ctx, "DELETE FROM "+q(t)+" WHERE "+q("pipeline")+" = $1", plan.Pipeline)
			}
		}
	})
	src := ir.Table{Parts: []string{"app_" + id, "customers_log"}}
	if err := tg.ExecOp(ctx, ir.CreateSchema{Schema: src.Schema()}, nil); err != nil {
		b.Fatal(err)
	}
	if err := tg.ExecOp(ctx, ir.CreateTable{Table: src, Columns: plan.Columns}, nil); err != nil {
		b.Fatal(err)
	}
	if eng.index != "" {
		if _, err := tg.DB.ExecContext(ctx, strings.NewReplacer("{name}", q("log_ingested_"+id), "{source}", f.source).Replace(eng.index)); err != nil {
			b.Fatal(err)
		}
	}
	if tg.Dialect.Name() == "postgres" {
		f.pgMaintained = []string{"VACUUM ANALYZE " + f.source, "VACUUM ANALYZE " + q("dw_"+id) + "." + q("customers"),
			"VACUUM ANALYZE " + q("dw_"+id) + "." + q("customers_tombstones")}
	}
	start := time.Now()
	f.append(b, rows)
	b.Logf("%s: loaded %d changes of %d keys in %v", eng.name, rows, f.keys, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	res, err := tg.Run(ctx, plan, Options{Until: &f.hi, FullRefresh: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: initial replay in %v: %+v", eng.name, time.Since(start).Round(time.Millisecond), cdcCountsOf(res))
	return f
}

func (f *cdcBench) incrementalVsReplay(b *testing.B) {
	var incr, full time.Duration
	incrSteps, fullSteps := newStepTimes(), newStepTimes()
	n := f.rows / 200
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		f.append(b, n)
		b.StartTimer()
		t0 := incrSteps.begin()
		res, err := f.tg.Run(f.ctx, f.plan, Options{Until: &f.hi, BeforeStatement: incrSteps.hook})
		t1 := incrSteps.end()
		if err != nil {
			b.Fatal(err)
		}
		t1 = fullSteps.begin()
		ref, err := f.tg.Run(f.ctx, f.plan, Options{Until: &f.hi, FullRefresh: true, BeforeStatement: fullSteps.hook})
		t2 := fullSteps.end()
		if err != nil {
			b.Fatal(err)
		}
		incr += t1.Sub(t0)
		full += t2.Sub(t1)
		b.StopTimer()
		// The window is the new changes and the hour of lookback before them.
		if c := cdcCountsOf(res); c.Read < int64(n) || c.Read != c.Inserted+c.Updated+c.Deleted+c.Quarantined+c.Ignored {
			b.Fatalf("incremental run: %+v", c)
		}
		if ref.RowsRead != int64(f.next) {
			b.Fatalf("the replay read %d changes, want %d", ref.RowsRead, f.next)
		}
		b.Logf("incremental %+v; replay %+v", cdcCountsOf(res), cdcCountsOf(ref))
		b.StartTimer()
	}
	b.ReportMetric(ms(incr)/float64(b.N), "incr-ms/op")
	b.ReportMetric(ms(full)/float64(b.N), "full-ms/op")
	b.ReportMetric(float64(incr)/float64(full), "incr/full")
	b.Logf("incremental run, per statement: %s", incrSteps.report(b.N))
	b.Logf("full replay, per statement: %s", fullSteps.report(b.N))
}
