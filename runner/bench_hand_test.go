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
)

// BenchmarkVsHandWritten measures what incrc costs against the SQL a good
// engineer would write by hand for the same change, on the same data, in
// the same process: a target of -incrc.rows keys (default 1,000,000), and
// per iteration 1% of the keys changed (untimed), then, timed, an
// incremental run of the pipeline and the hand-written statements applying
// the same window to a copy of the same target, in turns (which goes first
// alternates). After each iteration the two targets must be equal. Three
// pipelines:
//
//   - cdc: a change log applied by key (strategy cdc); by hand: the window
//     deduped per key by sequence, then one MERGE that skips what is not
//     newer than the target's row, deletes, updates and inserts;
//   - scd2_by_time: a table of versions (strategy scd2, by: time); by hand:
//     the window deduped per key and time, versions not after the key's
//     current one skipped, the current versions closed at the first new
//     one (UPDATE ... FROM), the new ones inserted with LEAD() ends;
//   - scd2_from_cdc: the change log kept as versions (scd2 with a cdc
//     block); by hand: as scd2_by_time, from the log's commit times, a
//     delete closing and inserting nothing.
//
// The hand-written statements are correct for a log (or version table)
// that arrives in order, which is what these benchmarks generate; they
// keep no tombstones and would resurrect a deleted key, or misplace a
// version, for a change that arrives after a newer one. That is part of
// what the difference pays for. It asserts no time: BENCHMARKS.md has the
// numbers.
//
//	go test -tags bench ./runner -run '^$' -bench VsHandWritten -benchtime 3x -timeout 90m -v
func BenchmarkVsHandWritten(b *testing.B) {
	for _, eng := range handEngines() {
		for _, hc := range handCases() {
			b.Run(eng.name+"/"+hc.name, func(b *testing.B) {
				f := newHandBench(b, eng, hc, *benchRows)
				b.Run(fmt.Sprintf("keys=%d", f.keys), f.measure)
			})
		}
	}
}

// handEngine fills a source set-based: the rows i in [lo, hi).
type handEngine struct {
	name    string
	url     func(b *testing.B) string
	series  string // a FROM clause of the rows i in [{lo}, {hi})
	seconds string // i seconds, as an interval
	// postgres: an index on the source's watermark, and VACUUM ANALYZE
	// between iterations (what autovacuum would do, at a moment of its
	// own choosing).
	postgres bool
	// DuckDB checkpoints its write-ahead log at the commit that takes it
	// past 16 MB: a cost out of proportion to one apply, paid by whichever
	// apply happens to cross the line, for what the other one wrote too. setup turns that off; checkpoint then runs after each
	// timed apply, timed and counted with it: each side pays for its own
	// writes, every time.
	setup, checkpoint string
}

func handEngines() []handEngine {
	return []handEngine{
		{name: "duckdb", url: func(b *testing.B) string { return "duckdb:" + filepath.Join(b.TempDir(), "bench.duckdb") },
			series: "range({lo}, {hi}) AS r(i)", seconds: "to_seconds(i)",
			setup: "SET checkpoint_threshold = '100GB'", checkpoint: "CHECKPOINT"},
		{name: "postgres", url: func(b *testing.B) string {
			u := os.Getenv("INCRC_TEST_POSTGRES_URL")
			if u == "" {
				b.Skip("INCRC_TEST_POSTGRES_URL not set: skipping PostgreSQL")
			}
			return u
		}, series: "generate_series({lo}::bigint, {hi} - 1) AS g(i)", seconds: "i * INTERVAL '1 second'", postgres: true},
	}
}

var handStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// handCase is one pipeline and its hand-written counterpart.
type handCase struct {
	name      string
	spec      string // {id}
	source    string // the source's table name, in schema app_{id}
	watermark string
	// rows is the fixture INSERT of the source rows i in [lo, hi): {key}
	// is the key of row i, {at} its time (row i is i seconds after the
	// start).
	rows string
	// hand is the hand-written apply, in one transaction: {source},
	// {hand} are the tables; {lo} and {hi} are the window [lo, hi), the
	// same as the run's, as timestamp literals.
	hand []handStmt
}

type handStmt struct{ name, sql string }

// The keys a step changes: row i changes key (i * 7919) mod keys, a
// permutation of the keys over any run of consecutive rows, and every
// sixth row the key of the row before it (a second change of that key in
// the window). The first `keys` rows are each key's first version.
const handKey = "CASE WHEN i < {keys} THEN i WHEN i % 6 = 5 THEN ((i - 1) * 7919) % {keys} ELSE (i * 7919) % {keys} END"

const handLogSpec = `
pipeline: hand_{kind}_{id}
source:
  table: app_{id}.changes
target:
  table: dw_{id}.{kind}
columns:
  customer_id: bigint
  name: varchar(32)
  country: varchar(2)
  balance: decimal(12,2)
  op: varchar(1)
  lsn: bigint
  committed_at: timestamp
  ingested_at: timestamp
strategy: {strategy}
unique_key: [customer_id]
watermark:
  column: ingested_at
  start: 2025-01-01
  lookback: 15m
cdc:
  op: op
  sequence: lsn
  at: committed_at
  exclude: [op, ingested_at]
`

// handLogRows: one in fifty changes is a delete; an update of a deleted
// key brings it back.
const handLogRows = `INSERT INTO {source}
SELECT ` + handKey + `, 'name ' || CAST(i AS VARCHAR(20)), 'DE', CAST(i % 1000 AS DECIMAL(12,2)),
  CASE WHEN i < {keys} THEN 'c' WHEN i % 50 = 0 THEN 'd' ELSE 'u' END,
  i, {at}, {at}
FROM {series}`

func handCases() []handCase {
	return []handCase{
		{
			name: "cdc", spec: strings.NewReplacer("{kind}", "customers", "{strategy}", "cdc").Replace(handLogSpec), source: "changes", watermark: "ingested_at",
			rows: handLogRows,
			hand: []handStmt{
				{"stage", `CREATE TEMPORARY TABLE hand_window AS
SELECT customer_id, name, country, balance, op, lsn, committed_at
FROM (
  SELECT customer_id, name, country, balance, op, lsn, committed_at,
    ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY lsn DESC) AS rn
  FROM {source}
  WHERE ingested_at >= {lo} AND ingested_at < {hi}
) AS r
WHERE rn = 1`},
				{"merge", `MERGE INTO {hand} AS t
USING hand_window AS s
ON t.customer_id = s.customer_id
WHEN MATCHED AND s.lsn > t.incrc_sequence AND s.op = 'd' THEN DELETE
WHEN MATCHED AND s.lsn > t.incrc_sequence THEN UPDATE SET
  name = s.name, country = s.country, balance = s.balance, lsn = s.lsn, committed_at = s.committed_at, incrc_sequence = s.lsn
WHEN NOT MATCHED AND s.op <> 'd' THEN INSERT (customer_id, name, country, balance, lsn, committed_at, incrc_sequence)
  VALUES (s.customer_id, s.name, s.country, s.balance, s.lsn, s.committed_at, s.lsn)`},
			},
		},
		{
			name: "scd2_by_time", source: "versions", watermark: "changed_at",
			spec: `
pipeline: hand_plans_{id}
source:
  table: app_{id}.versions
target:
  table: dw_{id}.plans
columns:
  plan_id: bigint
  name: varchar(32)
  price: decimal(10,2)
  changed_at: timestamp
strategy: scd2
unique_key: [plan_id]
watermark:
  column: changed_at
  start: 2025-01-01
  lookback: 15m
scd2:
  by: time
`,
			rows: `INSERT INTO {source}
SELECT ` + handKey + `, 'plan ' || CAST(i AS VARCHAR(20)), CAST(i % 1000 AS DECIMAL(10,2)), {at}
FROM {series}`,
			hand: []handStmt{
				// Versions not after the key's current one are already
				// applied (the lookback reads them again).
				{"stage", `CREATE TEMPORARY TABLE hand_window AS
SELECT v.plan_id, v.name, v.price, v.changed_at
FROM (
  SELECT plan_id, name, price, changed_at,
    ROW_NUMBER() OVER (PARTITION BY plan_id, changed_at ORDER BY name DESC, price DESC) AS rn
  FROM {source}
  WHERE changed_at >= {lo} AND changed_at < {hi}
) AS v
WHERE rn = 1
  AND NOT EXISTS (SELECT 1 FROM {hand} AS t WHERE t.plan_id = v.plan_id AND t.valid_to IS NULL AND t.valid_from >= v.changed_at)`},
				{"close", `UPDATE {hand} AS t
SET valid_to = f.first_at
FROM (SELECT plan_id, MIN(changed_at) AS first_at FROM hand_window GROUP BY plan_id) AS f
WHERE t.plan_id = f.plan_id AND t.valid_to IS NULL`},
				{"insert", `INSERT INTO {hand} (plan_id, name, price, changed_at, valid_from, valid_to)
SELECT plan_id, name, price, changed_at, changed_at, LEAD(changed_at) OVER (PARTITION BY plan_id ORDER BY changed_at)
FROM hand_window`},
			},
		},
		{
			name: "scd2_from_cdc", spec: strings.NewReplacer("{kind}", "history", "{strategy}", "scd2").Replace(handLogSpec), source: "changes", watermark: "ingested_at",
			rows: handLogRows,
			hand: []handStmt{
				// Events not after the key's last known time (a version's
				// start, or its end: a delete) are already applied.
				{"stage", `CREATE TEMPORARY TABLE hand_window AS
SELECT e.customer_id, e.name, e.country, e.balance, e.op, e.lsn, e.committed_at
FROM (
  SELECT customer_id, name, country, balance, op, lsn, committed_at,
    ROW_NUMBER() OVER (PARTITION BY customer_id, committed_at ORDER BY lsn DESC) AS rn
  FROM {source}
  WHERE ingested_at >= {lo} AND ingested_at < {hi}
) AS e
WHERE rn = 1
  AND NOT EXISTS (SELECT 1 FROM {hand} AS t WHERE t.customer_id = e.customer_id AND COALESCE(t.valid_to, t.valid_from) >= e.committed_at)`},
				{"close", `UPDATE {hand} AS t
SET valid_to = f.first_at
FROM (SELECT customer_id, MIN(committed_at) AS first_at FROM hand_window GROUP BY customer_id) AS f
WHERE t.customer_id = f.customer_id AND t.valid_to IS NULL`},
				{"insert", `INSERT INTO {hand} (customer_id, name, country, balance, lsn, committed_at, incrc_sequence, valid_from, valid_to)
SELECT customer_id, name, country, balance, lsn, committed_at, lsn, committed_at, next_at
FROM (
  SELECT customer_id, name, country, balance, op, lsn, committed_at,
    LEAD(committed_at) OVER (PARTITION BY customer_id ORDER BY committed_at) AS next_at
  FROM hand_window
) AS x
WHERE op <> 'd'`},
			},
		},
	}
}

// handBench is one engine's source, the pipeline's target, and the copy
// the hand-written statements keep.
type handBench struct {
	eng              handEngine
	hc               handCase
	ctx              context.Context
	tg               *Target
	plan             *ir.Plan
	source, hand     string // quoted
	target           ir.Table
	cols             []string // the target's columns
	keys, next       int      // next: the next row of the source
	hi               time.Time
	lookback         time.Duration
	maintain         []string
	handSQL          []handStmt
	incrSteps, steps *stepTimes // of the current measure
}

func newHandBench(b *testing.B, eng handEngine, hc handCase, keys int) *handBench {
	ctx := context.Background()
	tg, err := Open(ctx, all.Lookup, eng.url(b), "")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { tg.Close() })
	id := uniq()
	plan := benchPlan(b, hc.spec, id)
	q := tg.Dialect.QuoteIdent
	f := &handBench{eng: eng, hc: hc, ctx: ctx, tg: tg, plan: plan, keys: keys, target: plan.Target,
		source: q("app_"+id) + "." + q(hc.source), hand: q("dw_"+id) + "." + q("hand"), lookback: plan.Watermark.Lookback.Value}
	b.Cleanup(func() {
		if eng.postgres {
			for _, sch := range []string{"app_" + id, "dw_" + id} {
				tg.DB.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+q(sch)+" CASCADE")
			}
			for _, t := range []string{"incrc_state", "incrc_runs"} {
				tg.DB.ExecContext(ctx, "DELETE FROM "+q(t)+" WHERE "+q("pipeline")+" = $1", plan.Pipeline)
			}
		}
	})
	for _, st := range hc.hand {
		f.handSQL = append(f.handSQL, handStmt{st.name, strings.NewReplacer("{source}", f.source, "{hand}", f.hand).Replace(st.sql)})
	}
	if eng.setup != "" {
		f.sql(b, eng.setup)
	}
	src := ir.Table{Parts: []string{"app_" + id, hc.source}}
	if err := tg.ExecOp(ctx, ir.CreateSchema{Schema: src.Schema()}, nil); err != nil {
		b.Fatal(err)
	}
	if err := tg.ExecOp(ctx, ir.CreateTable{Table: src, Columns: plan.Columns}, nil); err != nil {
		b.Fatal(err)
	}
	if eng.postgres {
		f.sql(b, fmt.Sprintf("CREATE INDEX %s ON %s (%s)", q("src_wm_"+id), f.source, q(hc.watermark)))
	}
	start := time.Now()
	f.append(b, keys)
	b.Logf("%s/%s: loaded %d source rows in %v", eng.name, hc.name, keys, time.Since(start).Round(time.Millisecond))

	// The target as the first deployment would have written it, and the
	// hand-written pipeline's copy of it: the same columns and key.
	start = time.Now()
	if _, err := tg.Run(ctx, plan, Options{Until: &f.hi, FullRefresh: true}); err != nil {
		b.Fatal(err)
	}
	b.Logf("%s/%s: initial full refresh in %v", eng.name, hc.name, time.Since(start).Round(time.Millisecond))
	ct := plan.Statement(ir.StmtCreateTarget).Op.(ir.CreateTable)
	for _, c := range ct.Columns {
		f.cols = append(f.cols, c.Name)
	}
	ct.Table = ir.Table{Parts: []string{"dw_" + id, "hand"}}
	if err := tg.ExecOp(ctx, ct, nil); err != nil {
		b.Fatal(err)
	}
	f.sql(b, fmt.Sprintf("INSERT INTO %s SELECT %s FROM %s", f.hand, strings.Join(f.cols, ", "), f.targetName()))
	if eng.postgres {
		for _, t := range plan.Statements {
			if t.Phase == ir.PhaseSetup {
				if ct, ok := t.Op.(ir.CreateTable); ok && len(ct.Table.Parts) == 2 && ct.Table.Parts[0] == "dw_"+id {
					f.maintain = append(f.maintain, "VACUUM ANALYZE "+q(ct.Table.Parts[0])+"."+q(ct.Table.Parts[1]))
				}
			}
		}
		f.maintain = append(f.maintain, "VACUUM ANALYZE "+f.source, "VACUUM ANALYZE "+f.hand)
	}
	f.vacuum(b)
	if eng.checkpoint != "" {
		f.sql(b, eng.checkpoint)
	}
	return f
}

func (f *handBench) targetName() string {
	q := f.tg.Dialect.QuoteIdent
	parts := make([]string, len(f.target.Parts))
	for i, p := range f.target.Parts {
		parts[i] = q(p)
	}
	return strings.Join(parts, ".")
}

// append adds the source rows [next, next+n), and moves hi past them.
func (f *handBench) append(b *testing.B, n int) {
	b.Helper()
	at := fmt.Sprintf("TIMESTAMP '%s' + %s", handStart.Format(benchTS), f.eng.seconds)
	stmt := strings.NewReplacer("{source}", f.source, "{keys}", fmt.Sprint(f.keys), "{at}", at,
		"{series}", strings.NewReplacer("{lo}", fmt.Sprint(f.next), "{hi}", fmt.Sprint(f.next+n)).Replace(f.eng.series)).Replace(f.hc.rows)
	f.sql(b, stmt)
	f.next += n
	f.hi = handStart.Add(time.Duration(f.next) * time.Second)
}

func (f *handBench) sql(b *testing.B, stmt string, args ...any) {
	b.Helper()
	if _, err := f.tg.DB.ExecContext(f.ctx, stmt, args...); err != nil {
		b.Fatalf("%s\n%v", stmt, err)
	}
}

func (f *handBench) vacuum(b *testing.B) {
	for _, m := range f.maintain {
		f.sql(b, m)
	}
}

// handApply runs the hand-written statements for the window [lo, hi) in
// one transaction, on one connection (the session's temporary table),
// and attributes the time to them.
func (f *handBench) handApply(b *testing.B, lo, hi time.Time) time.Duration {
	t0 := time.Now()
	conn, err := f.tg.DB.Conn(f.ctx)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	tx, err := conn.BeginTx(f.ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	last := time.Now()
	f.steps.add("begin", last.Sub(t0))
	window := strings.NewReplacer("{lo}", "TIMESTAMP '"+lo.Format(benchTS)+"'", "{hi}", "TIMESTAMP '"+hi.Format(benchTS)+"'")
	for _, st := range f.handSQL {
		stmt := window.Replace(st.sql)
		if _, err := tx.ExecContext(f.ctx, stmt); err != nil {
			b.Fatalf("%s\n%v", stmt, err)
		}
		now := time.Now()
		f.steps.add(st.name, now.Sub(last))
		last = now
	}
	if _, err := tx.ExecContext(f.ctx, "DROP TABLE hand_window"); err != nil {
		b.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	f.steps.add("commit", now.Sub(last))
	return now.Sub(t0)
}

// checkpoint writes what an apply committed into the database file, where
// the engine does that apart from the commit, and attributes the time to
// the apply.
func (f *handBench) checkpoint(b *testing.B, steps *stepTimes) time.Duration {
	if f.eng.checkpoint == "" {
		return 0
	}
	t0 := time.Now()
	f.sql(b, f.eng.checkpoint)
	d := time.Since(t0)
	steps.add("checkpoint", d)
	return d
}

// differ counts the rows of the target and the hand-written copy that the
// other lacks.
func (f *handBench) differ(b *testing.B) int64 {
	return rowsDiffer(b, f.ctx, f.tg, f.cols, f.targetName(), f.hand)
}

// rowsDiffer counts the rows of tables x and y (quoted names) that the
// other lacks, compared on cols (quoted).
func rowsDiffer(b *testing.B, ctx context.Context, tg *Target, cols []string, x, y string) int64 {
	b.Helper()
	list := strings.Join(cols, ", ")
	stmt := fmt.Sprintf(`SELECT
  (SELECT COUNT(*) FROM (SELECT %[1]s FROM %[2]s EXCEPT SELECT %[1]s FROM %[3]s) AS a) +
  (SELECT COUNT(*) FROM (SELECT %[1]s FROM %[3]s EXCEPT SELECT %[1]s FROM %[2]s) AS b)`, list, x, y)
	var n int64
	if err := tg.DB.QueryRowContext(ctx, stmt).Scan(&n); err != nil {
		b.Fatalf("%s\n%v", stmt, err)
	}
	return n
}

// measure: per iteration, 1.2% of the keys' worth of new source rows (1%
// of the keys, a fifth of them twice; untimed), then the run and the
// hand-written apply of the same window, in turns.
func (f *handBench) measure(b *testing.B) {
	var incr, hand time.Duration
	f.incrSteps, f.steps = newStepTimes(), newStepTimes()
	n := f.keys/100 + f.keys/500
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		lo := f.hi.Add(-f.lookback)
		f.append(b, n)
		f.vacuum(b)
		var res *Result
		run := func() {
			t0 := f.incrSteps.begin()
			var err error
			res, err = f.tg.Run(f.ctx, f.plan, Options{Until: &f.hi, BeforeStatement: f.incrSteps.hook})
			incr += f.incrSteps.end().Sub(t0)
			if err != nil {
				b.Fatal(err)
			}
		}
		byHand := func() { hand += f.handApply(b, lo, f.hi) + f.checkpoint(b, f.steps) }
		byRun := func() { run(); incr += f.checkpoint(b, f.incrSteps) }
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
		if res.RowsRead < int64(n) {
			b.Fatalf("the run read %d rows, want at least %d: %+v", res.RowsRead, n, res)
		}
		if d := f.differ(b); d != 0 {
			b.Fatalf("iteration %d: the target and the hand-written copy differ in %d rows", i, d)
		}
		b.Logf("run: read %d, inserted %d, updated %d, deleted %d, ignored %d", res.RowsRead, res.RowsInserted, res.RowsUpdated, res.RowsDeleted, res.RowsIgnored)
		b.StartTimer()
	}
	b.ReportMetric(ms(incr)/float64(b.N), "incrc-ms/op")
	b.ReportMetric(ms(hand)/float64(b.N), "hand-ms/op")
	b.ReportMetric(float64(incr)/float64(hand), "incrc/hand")
	b.Logf("incrc run, per statement: %s", f.incrSteps.report(b.N))
	b.Logf("hand-written, per statement: %s", f.steps.report(b.N))
}
