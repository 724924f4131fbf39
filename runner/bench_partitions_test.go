//go:build bench

package runner

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler"
)

// The partition benchmarks (issue 4) measure a backfill of 30 daily
// partitions with two partitions at a time against one at a time, and a
// reconciliation against a bare GROUP BY scan of source and target. Like
// bench_test.go they run only with -bench and assert nothing about time:
// BENCHMARKS.md has the numbers.
//
//	export INCRC_TEST_POSTGRES_URL='postgres://postgres@127.0.0.1:5432/test?sslmode=disable'
//	go test -tags bench ./runner -run '^$' -bench BackfillParallel -benchtime 1x -timeout 30m -v
//	go test -tags bench ./runner -run '^$' -bench 'Reconcile$' -benchtime 5x -timeout 30m -v
//
// -incrc.dayrows changes the rows per daily partition (default 30,000: a
// source of 900,000 rows); -v logs a per-statement breakdown, what the
// server's sessions were doing (pg_stat_activity samples) and EXPLAIN
// ANALYZE of the source-side statements.

var benchDayRows = flag.Int("incrc.dayrows", 30_000, "source rows per daily partition of the partition benchmarks")

// benchDays is the number of daily partitions, 2026-01-01 .. 2026-01-30.
const benchDays = 30

var (
	partFrom = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	partTo   = partFrom.AddDate(0, 0, benchDays)
	// partHi is the watermark after the loading run: past every
	// updated_at (late payments move some by two days), and recent enough
	// that no partition of the range is finalized (finalize_after 35d).
	partHi = partTo.AddDate(0, 0, 4)
)

// partBenchSpec is conformance_scenarios_test.go's revenueSpec (story 2: a merge
// pipeline partitioned by order_date day, reconciled by count and
// sum(amount)) with bench_test.go's wider orders rows.
const partBenchSpec = `
pipeline: bench_rev_{id}
source:
  table: app_{id}.orders
target:
  table: dw_{id}.revenue
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
  start: 2026-01-01
  lookback: 1d
partition:
  column: order_date
  granularity: day
  finalize_after: 35d
reconcile:
  by: order_date
  measures: [count, sum(amount)]
`

// partLoad fills the source with perDay orders on each of the 30 days in
// one statement (fixture only): order_id in day order, 1% unpaid (amount
// NULL), 2% paid late (updated_at two days after the order).
func partLoad(engine, table string, perDay int) string {
	n := perDay * benchDays
	from := partFrom.Format("2006-01-02")
	if engine == "duckdb" {
		day := fmt.Sprintf("CAST((i - 1) // %d AS INTEGER)", perDay)
		return fmt.Sprintf(`INSERT INTO %s
SELECT i,
  1 + (i * 7919) %% 50000,
  DATE '%s' + %s,
  CASE WHEN i %% 100 = 0 THEN 'placed' ELSE 'paid' END,
  CASE i %% 3 WHEN 0 THEN 'EUR' WHEN 1 THEN 'USD' ELSE 'INR' END,
  CASE WHEN i %% 100 = 0 THEN NULL ELSE CAST(((i * 104729) %% 50000) / 100.0 AS DECIMAL(12,2)) END,
  CAST(DATE '%s' + %s AS TIMESTAMP) + to_seconds((i * 7919) %% 86400) + CASE WHEN i %% 50 = 0 THEN INTERVAL 2 DAY ELSE INTERVAL 0 DAY END
FROM range(1, %d) AS r(i)`, table, from, day, from, day, n+1)
	}
	day := fmt.Sprintf("((i - 1) / %d)::int", perDay)
	return fmt.Sprintf(`INSERT INTO %s
SELECT i,
  1 + (i * 7919) %% 50000,
  DATE '%s' + %s,
  CASE WHEN i %% 100 = 0 THEN 'placed' ELSE 'paid' END,
  CASE i %% 3 WHEN 0 THEN 'EUR' WHEN 1 THEN 'USD' ELSE 'INR' END,
  CASE WHEN i %% 100 = 0 THEN NULL ELSE (((i * 104729) %% 50000) / 100.0)::numeric(12,2) END,
  (DATE '%s' + %s)::timestamp + ((i * 7919) %% 86400) * INTERVAL '1 second' + CASE WHEN i %% 50 = 0 THEN INTERVAL '2 days' ELSE INTERVAL '0' END
FROM generate_series(1::bigint, %d) AS g(i)`, table, from, day, from, day, n)
}

// partFixture is one engine's source and target of 30 daily partitions,
// the target loaded once by an incremental run.
type partFixture struct {
	engine string
	ctx    context.Context
	tg     *Target
	plan   *compiler.Plan
	prog   *compiled
	id     string
	app    string // application_name of the benchmark's PostgreSQL sessions
	source string // quoted
	target string // quoted
	rows   int
}

func newPartFixture(b *testing.B, engine string, perDay int) *partFixture {
	ctx := context.Background()
	id := uniq()
	f := &partFixture{engine: engine, ctx: ctx, id: id, rows: perDay * benchDays}
	var url string
	switch engine {
	case "duckdb":
		url = "duckdb:" + filepath.Join(b.TempDir(), "bench.duckdb")
	case "postgres":
		url = os.Getenv("INCRC_TEST_POSTGRES_URL")
		if url == "" {
			b.Skip("INCRC_TEST_POSTGRES_URL not set: skipping PostgreSQL")
		}
		// The benchmark's sessions carry a name of their own, so that
		// pg_stat_activity tells them from the other users of the server.
		f.app = "incrc_bench_" + id
		sep := "?"
		if strings.Contains(url, "?") {
			sep = "&"
		}
		url += sep + "application_name=" + f.app
	}
	tg, err := Open(ctx, url, "")
	if err != nil {
		b.Fatal(err)
	}
	f.tg = tg
	b.Cleanup(func() { tg.Close() })
	var version string
	if err := tg.DB.QueryRowContext(ctx, "SELECT version()").Scan(&version); err != nil {
		b.Fatal(err)
	}
	b.Logf("%s: %s", engine, version)
	s, err := compiler.Parse("bench.yaml", []byte(strings.ReplaceAll(partBenchSpec, "{id}", id)))
	if err != nil {
		b.Fatal(err)
	}
	if d := compiler.Validate(s); len(d) > 0 {
		b.Fatal(d.Err())
	}
	if f.plan, err = compiler.Lower(s); err != nil {
		b.Fatal(err)
	}
	if f.prog, err = compile(tg.Dialect, f.plan, 0); err != nil {
		b.Fatal(err)
	}
	q := tg.Dialect.QuoteIdent
	f.source, f.target = q("app_"+id)+"."+q("orders"), q("dw_"+id)+"."+q("revenue")
	b.Cleanup(f.drop)

	src := compiler.Table{Parts: []string{"app_" + id, "orders"}}
	if err := tg.ExecOp(ctx, compiler.CreateSchema{Schema: src.Schema()}, nil); err != nil {
		b.Fatal(err)
	}
	if err := tg.ExecOp(ctx, compiler.CreateTable{Table: src, Columns: f.plan.Columns, PrimaryKey: []string{"order_id"}}, nil); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	f.sql(b, partLoad(engine, f.source, perDay))
	if engine == "postgres" {
		f.sql(b, "ANALYZE "+f.source)
	}
	b.Logf("%s: loaded %d source rows (%d days x %d) in %v", engine, f.rows, benchDays, perDay, time.Since(start).Round(time.Millisecond))

	start = time.Now()
	hi := partHi
	res, err := tg.Run(ctx, f.plan, Options{Until: &hi})
	if err != nil {
		b.Fatal(err)
	}
	if res.RowsInserted != int64(f.rows) {
		b.Fatalf("loading run inserted %d rows, want %d", res.RowsInserted, f.rows)
	}
	b.Logf("%s: target loaded by a run in %v", engine, time.Since(start).Round(time.Millisecond))
	f.maintain(b)
	return f
}

// maintain is what autovacuum would do at a moment of its own: a backfill
// deletes and reinserts every row of the target.
func (f *partFixture) maintain(b *testing.B) {
	if f.engine == "postgres" {
		f.sql(b, "VACUUM ANALYZE "+f.source)
		f.sql(b, "VACUUM ANALYZE "+f.target)
	}
}

func (f *partFixture) sql(b *testing.B, stmt string) {
	b.Helper()
	if _, err := f.tg.DB.ExecContext(f.ctx, stmt); err != nil {
		b.Fatalf("%s\n%v", stmt, err)
	}
}

// drop removes what the benchmark created on a shared server database.
func (f *partFixture) drop() {
	if f.engine != "postgres" {
		return // DuckDB's file is in a temporary directory
	}
	q := f.tg.Dialect.QuoteIdent
	for _, s := range []string{"app_" + f.id, "dw_" + f.id} {
		f.tg.DB.ExecContext(f.ctx, "DROP SCHEMA IF EXISTS "+q(s)+" CASCADE")
	}
	for _, t := range []string{"incrc_state", "incrc_runs", "incrc_partitions"} {
		f.tg.DB.ExecContext(f.ctx, "DELETE FROM "+q(t)+" WHERE "+q("pipeline")+" = $1", f.plan.Pipeline)
	}
}

// BenchmarkBackfillParallel: Target.Backfill of the 30 daily partitions
// with Parallel: 1 and Parallel: 2, Restart: true so that each redoes all
// 30, in one process on the same data; reports par2/seq. Each iteration
// runs both, the first of them alternating, with VACUUM ANALYZE (untimed)
// before each.
func BenchmarkBackfillParallel(b *testing.B) {
	f := newPartFixture(b, "postgres", *benchDayRows)
	b.Run(fmt.Sprintf("rows_per_day=%d", *benchDayRows), f.backfillParallel)
}

func (f *partFixture) backfillParallel(b *testing.B) {
	var took [3]time.Duration
	var steps [3]*partSteps
	var act [3]*activity
	var cpu [3]float64
	for _, p := range []int{1, 2} {
		steps[p], act[p] = newPartSteps(), newActivity()
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		order := []int{1, 2}
		if i%2 == 1 {
			order = []int{2, 1}
		}
		for _, par := range order {
			b.StopTimer()
			f.maintain(b)
			stop := f.sample(act[par])
			c0 := readCPU()
			b.StartTimer()

			t0 := time.Now()
			res, err := f.tg.Backfill(f.ctx, f.plan, BackfillOptions{From: partFrom, To: partTo, Parallel: par, Restart: true,
				BeforeStatement: steps[par].hook, Progress: steps[par].progress})
			d := time.Since(t0)

			b.StopTimer()
			cpu[par] += readCPU().busySince(c0) * d.Seconds()
			stop()
			if err != nil {
				b.Fatal(err)
			}
			if n := len(statuses(res, PartRebuilt)); n != benchDays {
				b.Fatalf("parallel %d rebuilt %d partitions, want %d: %+v", par, n, benchDays, res.Partitions)
			}
			took[par] += d
			b.Logf("iteration %d, parallel %d: %v", i, par, d.Round(time.Millisecond))
			b.StartTimer()
		}
	}
	b.StopTimer()
	b.ReportMetric(took[1].Seconds()/float64(b.N), "seq-s/op")
	b.ReportMetric(took[2].Seconds()/float64(b.N), "par2-s/op")
	b.ReportMetric(float64(took[2])/float64(took[1]), "par2/seq")
	for _, p := range []int{1, 2} {
		b.Logf("parallel %d, statement time summed over partitions (per backfill): %s", p, steps[p].report(b.N))
		if cpu[p] > 0 {
			b.Logf("parallel %d: machine CPU busy %.2f of 2 cores on average (/proc/stat, every process)", p, cpu[p]/took[p].Seconds())
		}
		b.Logf("parallel %d, pg_stat_activity samples of the benchmark's active sessions: %s", p, act[p].report())
	}
	if testing.Verbose() {
		mid := makePartition(partFrom.AddDate(0, 0, benchDays/2), grain{unit: "day", loc: time.UTC})
		vals := f.partitionVals(mid)
		f.explain(b, compiler.StmtCheckPartitionSrc, vals)
		f.explain(b, compiler.StmtCheckPartitionTgt, vals)
	}
}

// partitionVals binds what a backfill binds for one partition's
// source-side statements: start, hi (now) and the partition's bounds.
func (f *partFixture) partitionVals(p partition) params {
	vals := params{}
	bindStart(f.prog, vals)
	vals["hi"] = f.tg.Dialect.BindTime(time.Now().UTC(), compiler.Timestamp)
	bindPartition(f.prog, vals, p)
	return vals
}

// explain logs EXPLAIN ANALYZE of a compiled query (PostgreSQL only).
func (f *partFixture) explain(b *testing.B, name string, vals params) {
	if f.engine != "postgres" {
		return
	}
	part := f.prog.stmts[name].Parts[0]
	args, err := bind(part, vals)
	if err != nil {
		b.Fatal(err)
	}
	rows, err := f.tg.DB.QueryContext(f.ctx, "EXPLAIN (ANALYZE, BUFFERS) "+part.SQL, args...)
	if err != nil {
		b.Fatalf("explain %s: %v", name, err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		rows.Scan(&l)
		lines = append(lines, l)
	}
	b.Logf("EXPLAIN ANALYZE %s:\n%s", name, strings.Join(lines, "\n"))
}

// partSteps attributes a backfill's time to statements, per partition,
// through BackfillOptions.BeforeStatement: from one hook call of a
// partition to its next is the earlier statement's, and Progress closes
// the last one. With two partitions at a time the sums exceed the wall
// time: a statement that takes longer with parallel 2 than with parallel 1
// waited for something (CPU, I/O, a lock). Not hooked, and so counted with
// the statement before them: count_staged and BEGIN (with
// stage_partition), the commit (with insert_marker), check_partition_target
// and the dropping of the stage (with check_partition_source).
type partSteps struct {
	mu    sync.Mutex
	cur   map[string]partClock
	order []string
	total map[string]time.Duration
}

type partClock struct {
	at   time.Time
	name string
}

func newPartSteps() *partSteps {
	return &partSteps{cur: map[string]partClock{}, total: map[string]time.Duration{}}
}

func (s *partSteps) hook(partition, stmt string) error {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.cur[partition]; ok {
		s.add(c.name, now.Sub(c.at))
	}
	s.cur[partition] = partClock{now, stmt}
	return nil
}

func (s *partSteps) progress(_, _ int, p PartitionResult) {
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c, ok := s.cur[p.Key]; ok {
		s.add(c.name, now.Sub(c.at))
		delete(s.cur, p.Key)
	}
}

func (s *partSteps) add(name string, d time.Duration) {
	if _, ok := s.total[name]; !ok {
		s.order = append(s.order, name)
	}
	s.total[name] += d
}

func (s *partSteps) report(n int) string {
	var parts []string
	var sum time.Duration
	for _, name := range s.order {
		parts = append(parts, fmt.Sprintf("%s %.0fms", name, ms(s.total[name])/float64(n)))
		sum += s.total[name]
	}
	return fmt.Sprintf("%s; total %.0fms", strings.Join(parts, ", "), ms(sum)/float64(n))
}

// activity counts what the benchmark's active server sessions were doing,
// sampled from pg_stat_activity: "CPU" when active with no wait event,
// otherwise the wait event (IO, Lock, LWLock ...), by backend type.
type activity struct {
	mu      sync.Mutex
	samples int
	active  int
	what    map[string]int
}

func newActivity() *activity { return &activity{what: map[string]int{}} }

func (a *activity) report() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.samples == 0 {
		return "none"
	}
	var keys []string
	for k := range a.what {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return a.what[keys[i]] > a.what[keys[j]] })
	var parts []string
	rest := 0
	for _, k := range keys {
		if share := 100 * float64(a.what[k]) / float64(a.active); share >= 1 {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", k, share))
		} else {
			rest += a.what[k]
		}
	}
	parts = append(parts, fmt.Sprintf("others under 1%% each %.0f%%", 100*float64(rest)/float64(a.active)))
	return fmt.Sprintf("%d samples, %.2f active sessions on average: %s", a.samples, float64(a.active)/float64(a.samples), strings.Join(parts, ", "))
}

// sample polls pg_stat_activity every 50 ms on a connection of its own
// until the returned function is called.
func (f *partFixture) sample(a *activity) (stop func()) {
	if f.engine != "postgres" {
		return func() {}
	}
	ctx, cancel := context.WithCancel(f.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		conn, err := f.tg.DB.Conn(ctx)
		if err != nil {
			return
		}
		defer conn.Close()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			rows, err := conn.QueryContext(ctx, `SELECT backend_type, COALESCE(wait_event_type || ':' || wait_event, 'CPU'), query
FROM pg_stat_activity
WHERE application_name = $1 AND pid <> pg_backend_pid() AND state = 'active'`, f.app)
			if err != nil {
				return
			}
			var got []string
			for rows.Next() {
				var typ, what, query string
				rows.Scan(&typ, &what, &query)
				if typ == "client backend" {
					typ = "backend"
				}
				got = append(got, typ+" "+what+" ("+f.statementOf(query)+")")
			}
			rows.Close()
			a.mu.Lock()
			a.samples++
			a.active += len(got)
			for _, g := range got {
				a.what[g]++
			}
			a.mu.Unlock()
		}
	}()
	return func() { cancel(); <-done }
}

// statementOf names the compiled statement a session was running, from
// its text (a parallel worker shows its leader's).
func (f *partFixture) statementOf(query string) string {
	best, at := "other", -1
	for name, r := range f.prog.stmts {
		for _, p := range r.Parts {
			if p.SQL == query && name != compiler.StmtStageWindow && name != compiler.StmtStageAll {
				if at < 0 || name < best {
					best, at = name, 0
				}
			}
		}
	}
	return best
}

// cpuStat is the machine's CPU time from /proc/stat, in clock ticks.
type cpuStat struct{ busy, total uint64 }

func readCPU() cpuStat {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuStat{}
	}
	line, _, _ := strings.Cut(string(data), "\n")
	var s cpuStat
	for i, field := range strings.Fields(line)[1:] {
		var v uint64
		fmt.Sscan(field, &v)
		s.total += v
		if i != 3 && i != 4 { // idle, iowait
			s.busy += v
		}
	}
	return s
}

// busySince is the number of cores busy on average since c0.
func (c cpuStat) busySince(c0 cpuStat) float64 {
	if c.total == c0.total {
		return 0
	}
	return float64(c.busy-c0.busy) / float64(c.total-c0.total) * 2 // nproc: 2
}

// BenchmarkReconcile: Target.Reconcile of the 30 partitions against the
// baseline, a bare GROUP BY scan of both tables written by hand:
// SELECT order_date, COUNT(*), SUM(amount) ... GROUP BY order_date, on the
// source then on the target. Reports reconcile/bare, and, to tell where a
// difference comes from, the compiled reconcile_source alone against the
// bare scan of the source: the source side deduplicates by key (ROW_NUMBER
// over the whole source window) as a full refresh would.
func BenchmarkReconcile(b *testing.B) {
	for _, engine := range []string{"postgres", "duckdb"} {
		b.Run(engine, func(b *testing.B) {
			f := newPartFixture(b, engine, *benchDayRows)
			b.Run(fmt.Sprintf("rows_per_day=%d", *benchDayRows), f.reconcileVsBare)
		})
	}
}

func (f *partFixture) reconcileVsBare(b *testing.B) {
	bare := func(table string) [][]any {
		rows, err := f.tg.DB.QueryContext(f.ctx, "SELECT order_date, COUNT(*), SUM(amount) FROM "+table+" GROUP BY order_date ORDER BY order_date")
		if err != nil {
			b.Fatal(err)
		}
		defer rows.Close()
		var out [][]any
		for rows.Next() {
			var d, c, s any
			if err := rows.Scan(&d, &c, &s); err != nil {
				b.Fatal(err)
			}
			out = append(out, []any{d, c, s})
		}
		return out
	}
	vals := params{"from": f.prog.bindBound(partFrom, compiler.Type{Kind: compiler.Date}), "to": f.prog.bindBound(partTo, compiler.Type{Kind: compiler.Date})}
	if err := bindStart(f.prog, vals); err != nil {
		b.Fatal(err)
	}
	compiled := func(name string) {
		if _, err := f.prog.query(f.ctx, f.tg.DB, name, vals); err != nil {
			b.Fatal(err)
		}
	}
	var rec, bareBoth, srcDedupe, bareSrc, tgtOnly, bareTgt time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		r, err := f.tg.Reconcile(f.ctx, f.plan, partFrom, partTo)
		t1 := time.Now()
		if err != nil {
			b.Fatal(err)
		}
		s := bare(f.source)
		t := bare(f.target)
		t2 := time.Now()
		rec += t1.Sub(t0)
		bareBoth += t2.Sub(t1)

		b.StopTimer()
		if len(r.Groups) != benchDays || len(r.Drifted) != 0 || len(s) != benchDays || len(t) != benchDays {
			b.Fatalf("reconcile: %d groups, %d drifted; bare: %d and %d groups", len(r.Groups), len(r.Drifted), len(s), len(t))
		}
		// The parts, untimed by the benchmark's clock: each side alone.
		t0 = time.Now()
		compiled(compiler.StmtReconcileSrc)
		t1 = time.Now()
		bare(f.source)
		t2 = time.Now()
		compiled(compiler.StmtReconcileTgt)
		t3 := time.Now()
		bare(f.target)
		t4 := time.Now()
		srcDedupe += t1.Sub(t0)
		bareSrc += t2.Sub(t1)
		tgtOnly += t3.Sub(t2)
		bareTgt += t4.Sub(t3)
		b.StartTimer()
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(ms(rec)/n, "reconcile-ms/op")
	b.ReportMetric(ms(bareBoth)/n, "bare-ms/op")
	b.ReportMetric(float64(rec)/float64(bareBoth), "reconcile/bare")
	b.ReportMetric(float64(srcDedupe)/float64(bareSrc), "src/bare-src")
	b.Logf("each side alone, per op: reconcile_source %.1fms vs bare source %.1fms; reconcile_target %.1fms vs bare target %.1fms",
		ms(srcDedupe)/n, ms(bareSrc)/n, ms(tgtOnly)/n, ms(bareTgt)/n)
	if testing.Verbose() {
		f.explain(b, compiler.StmtReconcileSrc, vals)
	}
}

// bindStart binds watermark.start, as a program whose window starts there
// does.
func bindStart(c *compiled, vals params) error {
	wm := c.plan.Watermark
	if wm == nil {
		return nil
	}
	start, err := parseMark(wm.Type, wm.Start)
	if err != nil {
		return err
	}
	vals["start"] = c.bindMark(start, wm.Type.Kind)
	return nil
}
