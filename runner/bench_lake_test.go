//go:build bench

package runner

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/compiler/ir"
)

// BenchmarkLake measures the promise where teams grow into it: story 1's
// merge pipeline (benchSpec) on Spark + Delta Lake, Spark + Iceberg and
// Trino + Iceberg, a source of -incrc.rows orders (default 1,000,000).
// Per iteration 1% of the orders change (their updated_at moves into the
// next week; untimed), then, timed:
//
//   - an incremental run of the pipeline and the hand-written job a
//     PySpark team starts from, in turns (which goes first alternates):
//     one MERGE INTO a copy of the target USING the window deduped per
//     key, the same window as the run's. The job keeps its watermark in a
//     file: no lease, no run log, no quality, no compare-and-set, none of
//     which it times;
//   - a full refresh of the pipeline to the same hi.
//
// After each iteration the target and the copy must hold the same rows.
// It reports incr/full and incrc/hand; it asserts no time (BENCHMARKS.md
// has the numbers). Each engine is measured when its URL is set, as for
// the conformance suite (.ci/engines start ENGINE; .ci/engines url ENGINE):
//
//	INCRC_TEST_SPARK_DELTA_URL=$(.ci/engines url spark) go test -tags bench ./runner -run '^$' -bench 'Lake/spark$' -benchtime 3x -timeout 90m -v
func BenchmarkLake(b *testing.B) {
	for _, eng := range lakeBenches() {
		b.Run(eng.name, func(b *testing.B) {
			u := os.Getenv(eng.env)
			if u == "" {
				b.Skipf("%s not set: skipping %s", eng.env, eng.name)
			}
			f := newLakeBench(b, eng, u, *benchRows)
			b.Run(fmt.Sprintf("rows=%d", f.rows), f.measure)
		})
	}
}

// lakeBench is one engine's spelling of the fixture: the source's rows,
// their change, and the copy of the target the hand-written job writes.
type lakeBench struct {
	name, env string
	// rows is a FROM clause of the rows i in [1, {n}] ({k} is (n-1)/1000).
	rows string
	// seconds adds {n} seconds to the timestamp {ts}; ts is a timestamp
	// literal of the source's updated_at type.
	seconds, ts string
	// using is what CREATE TABLE ... AS needs to write the table format.
	using string
}

func lakeBenches() []lakeBench {
	spark := lakeBench{name: "spark", env: "INCRC_TEST_SPARK_DELTA_URL",
		rows: "(SELECT id AS i FROM range(1, {n} + 1)) AS r", seconds: "TIMESTAMPADD(SECOND, {n}, {ts})",
		ts: "TIMESTAMP_NTZ '%s'", using: "USING delta "}
	iceberg := spark
	iceberg.name, iceberg.env, iceberg.using = "spark_iceberg", "INCRC_TEST_SPARK_ICEBERG_URL", "USING iceberg "
	// Trino's sequence() stops at 10,000 elements: thousands of
	// thousands ({k} of them).
	trino := lakeBench{name: "trino", env: "INCRC_TEST_TRINO_URL",
		rows:    "(SELECT a * 1000 + c + 1 AS i FROM UNNEST(sequence(0, {k})) AS x(a) CROSS JOIN UNNEST(sequence(0, 999)) AS y(c)) AS r WHERE i <= {n}",
		seconds: "date_add('second', {n}, {ts})", ts: "TIMESTAMP '%s'"}
	return []lakeBench{spark, iceberg, trino}
}

// lakeChangeEvery: the rows with order_id % 100 = k change at a step, 1%
// of the source.
const lakeChangeEvery = 100

type lakeFixture struct {
	eng                  lakeBench
	ctx                  context.Context
	tg                   *Target
	plan                 *ir.Plan
	source, target, hand string // quoted
	cols                 []string
	rows                 int
	hi                   time.Time
	steps                int
	incrSteps, fullSteps *stepTimes
}

func newLakeBench(b *testing.B, eng lakeBench, url string, rows int) *lakeFixture {
	ctx := context.Background()
	tg, err := Open(ctx, all.Lookup, url, "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tg.Close() })
	id := uniq()
	plan := benchPlan(b, benchSpec, id)
	q := tg.Dialect.QuoteIdent
	f := &lakeFixture{eng: eng, ctx: ctx, tg: tg, plan: plan, rows: rows,
		source: q("app_"+id) + "." + q("orders"), target: q("dw_"+id) + "." + q("orders"),
		hand: q("dw_"+id) + "." + q("orders_by_hand")}
	for _, c := range plan.Columns {
		f.cols = append(f.cols, q(c.Name))
	}
	b.Cleanup(func() {
		for _, s := range []string{"app_" + id, "dw_" + id} {
			if err := tg.DropSchema(ctx, s); err != nil {
				b.Logf("cleanup: %v", err)
			}
		}
		for _, t := range []ir.Table{ir.StateTable, ir.RunsTable} {
			// The id is [a-z0-9_]: safe to spell in the statement.
			tg.DB.ExecContext(ctx, "DELETE FROM "+q(t.Name())+" WHERE pipeline LIKE '%"+id+"'")
		}
	})

	src := ir.Table{Parts: []string{"app_" + id, "orders"}}
	if err := tg.ExecOp(ctx, ir.CreateSchema{Schema: src.Schema()}, nil); err != nil {
		b.Fatal(err)
	}
	if err := tg.ExecOp(ctx, ir.CreateTable{Table: src, Columns: plan.Columns}, nil); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	day := fmt.Sprintf("CAST((i - 1) * 365 / %d AS INTEGER)", rows)
	at := f.at(historyStart, fmt.Sprintf("%s * 86400 + (i * 7919) %% 86400", day))
	f.sql(b, fmt.Sprintf(`INSERT INTO %s
SELECT i,
  1 + (i * 7919) %% 50000,
  CAST(%s AS DATE),
  CASE WHEN i %% 100 = 0 THEN 'placed' ELSE 'paid' END,
  CASE i %% 3 WHEN 0 THEN 'EUR' WHEN 1 THEN 'USD' ELSE 'INR' END,
  CASE WHEN i %% 100 = 0 THEN NULL ELSE CAST(((i * 104729) %% 50000) / 100.0 AS DECIMAL(12,2)) END,
  %s
FROM %s`, f.source, at, at, strings.NewReplacer("{n}", fmt.Sprint(rows), "{k}", fmt.Sprint((rows-1)/1000)).Replace(eng.rows)))
	b.Logf("%s: loaded %d source rows in %v", eng.name, rows, time.Since(start).Round(time.Millisecond))

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
	f.sql(b, "CREATE TABLE "+f.hand+" "+eng.using+"AS SELECT "+strings.Join(f.cols, ", ")+" FROM "+f.target)
	return f
}

// at is the timestamp t plus the integer expression seconds.
func (f *lakeFixture) at(t time.Time, seconds string) string {
	ts := fmt.Sprintf(f.eng.ts, t.Format(benchTS))
	return strings.NewReplacer("{n}", seconds, "{ts}", ts).Replace(f.eng.seconds)
}

func (f *lakeFixture) sql(b *testing.B, stmt string) {
	b.Helper()
	if _, err := f.tg.DB.ExecContext(f.ctx, stmt); err != nil {
		b.Fatalf("%s\n%v", stmt, err)
	}
}

// byHand is the PySpark team's job: the window [lo, hi) deduped per key
// by updated_at, merged into the copy.
func (f *lakeFixture) byHand(b *testing.B, lo, hi time.Time) {
	q := f.tg.Dialect.QuoteIdent
	var set []string
	for _, c := range f.cols[1:] {
		set = append(set, c+" = s."+c)
	}
	cols := strings.Join(f.cols, ", ")
	f.sql(b, fmt.Sprintf(`MERGE INTO %[1]s AS t
USING (
  SELECT %[2]s FROM (
    SELECT %[2]s, ROW_NUMBER() OVER (PARTITION BY %[8]s ORDER BY %[9]s DESC) AS rn
    FROM %[3]s
    WHERE %[9]s >= %[4]s AND %[9]s < %[5]s
  ) AS w WHERE rn = 1
) AS s
ON t.%[8]s = s.%[8]s
WHEN MATCHED THEN UPDATE SET %[6]s
WHEN NOT MATCHED THEN INSERT (%[2]s) VALUES (s.%[7]s)`,
		f.hand, cols, f.source, fmt.Sprintf(f.eng.ts, lo.Format(benchTS)), fmt.Sprintf(f.eng.ts, hi.Format(benchTS)),
		strings.Join(set, ", "), strings.Join(f.cols, ", s."), q("order_id"), q("updated_at")))
}

// differ counts the rows in one of the target and the copy, not the other.
func (f *lakeFixture) differ(b *testing.B) int64 {
	return rowsDiffer(b, f.ctx, f.tg, f.cols, f.target, f.hand)
}

func (f *lakeFixture) measure(b *testing.B) {
	var incr, hand, full time.Duration
	f.incrSteps, f.fullSteps = newStepTimes(), newStepTimes()
	changed := int64(f.rows / lakeChangeEvery)
	lookback := 2 * 24 * time.Hour // benchSpec's
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		prev := f.hi
		f.hi = prev.Add(step)
		lo := prev.Add(-lookback)
		q := f.tg.Dialect.QuoteIdent
		f.sql(b, fmt.Sprintf(`UPDATE %[1]s
SET %[2]s = %[3]s, %[4]s = COALESCE(%[4]s, 0) + 1, %[5]s = 'paid'
WHERE %[6]s %% %[7]d = %[8]d`, f.source, q("updated_at"), f.at(prev, "("+q("order_id")+" * 13) % 86400"),
			q("amount"), q("status"), q("order_id"), lakeChangeEvery, f.steps%lakeChangeEvery))
		f.steps++

		var res *Result
		byRun := func() {
			t0 := f.incrSteps.begin()
			var err error
			res, err = f.tg.Run(f.ctx, f.plan, Options{Until: &f.hi, BeforeStatement: f.incrSteps.hook})
			incr += f.incrSteps.end().Sub(t0)
			if err != nil {
				b.Fatal(err)
			}
		}
		byHand := func() {
			t0 := time.Now()
			f.byHand(b, lo, f.hi)
			hand += time.Since(t0)
		}
		order := []func(){byRun, byHand}
		if i%2 == 1 {
			order = []func(){byHand, byRun}
		}
		for _, apply := range order {
			b.StartTimer()
			apply()
			b.StopTimer()
		}
		if res.WindowLo != lo.Format(time.RFC3339) {
			b.Fatalf("the run's window starts at %s, the hand-written one at %s", res.WindowLo, lo)
		}
		if res.RowsRead != changed || res.RowsUpdated != changed {
			b.Fatalf("incremental run read %d and updated %d rows, want %d", res.RowsRead, res.RowsUpdated, changed)
		}
		if d := f.differ(b); d != 0 {
			b.Fatalf("iteration %d: the target and the hand-written copy differ in %d rows", i, d)
		}

		b.StartTimer()
		t0 := f.fullSteps.begin()
		ref, err := f.tg.Run(f.ctx, f.plan, Options{Until: &f.hi, FullRefresh: true, BeforeStatement: f.fullSteps.hook})
		full += f.fullSteps.end().Sub(t0)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if ref.RowsInserted != int64(f.rows) {
			b.Fatalf("full refresh inserted %d rows, want %d", ref.RowsInserted, f.rows)
		}
		if d := f.differ(b); d != 0 {
			b.Fatalf("iteration %d: after the full refresh, the target and the hand-written copy differ in %d rows", i, d)
		}
		b.StartTimer()
	}
	b.ReportMetric(ms(incr)/float64(b.N), "incr-ms/op")
	b.ReportMetric(ms(hand)/float64(b.N), "hand-ms/op")
	b.ReportMetric(ms(full)/float64(b.N), "full-ms/op")
	b.ReportMetric(float64(incr)/float64(full), "incr/full")
	b.ReportMetric(float64(incr)/float64(hand), "incrc/hand")
	b.Logf("incremental run, per statement: %s", f.incrSteps.report(b.N))
	b.Logf("full refresh, per statement: %s", f.fullSteps.report(b.N))
}
