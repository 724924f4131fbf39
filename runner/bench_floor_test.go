//go:build bench

package runner

import (
	"flag"
	"fmt"
	"sort"
	"testing"
	"time"
)

// BenchmarkFloor is issue 28's measure: a whole incrc run (open the
// database, run, close it, as `incrc run` does in its own process) against
// the honest hand-written run of the same change: open, one transaction
// that reads the watermark, runs the hand-written statement(s), appends
// the run's row to the run log and advances the watermark by
// compare-and-set (failing if another run moved it), then close. That is
// the least a durable, leased, recorded run can do: the compare-and-set
// in the write's transaction stands in for the lease, and the run's row
// commits with the data. Anything incrc spends beyond it is its own cost.
//
// The fixture is BenchmarkWritePath's (-incrc.rows source rows, default
// 1,000,000; a merge by id, 1 hour lookback; the hand-written side keeps a
// copy of the target, compared with it after every pair). Each row runs
// -incrc.pairs pairs (default 7), alternating which side goes first, and
// prints the median, min and max of each side and of the per-pair ratio:
//
//   - duckdb/incremental_merge: 0.5% of the source changed (untimed), then
//     incrc run against the hand-written window MERGE;
//   - duckdb/empty_window and postgres/empty_window: a run whose window
//     holds nothing, against the same MERGE over the same empty window;
//   - duckdb/full_refresh: 0.5% changed, then incrc run --full-refresh
//     against one MERGE ... WHEN NOT MATCHED BY SOURCE THEN DELETE.
//
// The pairs do not follow b.N: run it with -benchtime 1x. It asserts no
// time; BENCHMARKS.md has the figures.
//
//	go test -tags bench ./runner -run '^$' -bench Floor -benchtime 1x -timeout 60m -v
func BenchmarkFloor(b *testing.B) {
	for _, eng := range writeEngines() {
		b.Run(eng.name, func(b *testing.B) {
			f := newWriteBench(b, eng, *benchRows)
			h := f.honestState(b)
			b.Run("empty_window", func(b *testing.B) {
				f.floorPairs(b, func() {}, false, h, eng.apply, 0)
			})
			if eng.name != "duckdb" {
				return
			}
			b.Run("incremental_merge", func(b *testing.B) {
				f.floorPairs(b, func() { f.change(b) }, false, h, eng.apply, int64(f.rows/200))
			})
			b.Run("full_refresh", func(b *testing.B) {
				f.floorPairs(b, func() { f.change(b) }, true, h, eng.rebuild, -1)
			})
		})
	}
}

var benchPairs = flag.Int("incrc.pairs", 7, "pairs of BenchmarkFloor's rows (at least 5)")

// honestState adds the hand-written side's row to incrc_state, at the
// fixture's hi, and returns its pipeline name.
func (f *writeBench) honestState(b *testing.B) string {
	name := "honest_" + f.plan.Pipeline
	f.sql(b, fmt.Sprintf(`INSERT INTO incrc_state (pipeline, watermark) VALUES ('%s', '%s')`, name, f.hi.Format(benchTS)))
	b.Cleanup(func() {
		if f.tg != nil && f.eng.name == "postgres" {
			for _, t := range []string{"incrc_state", "incrc_runs"} {
				f.tg.DB.ExecContext(f.ctx, "DELETE FROM "+t+" WHERE pipeline = $1", name)
			}
		}
	})
	return name
}

// floorPairs runs the pairs of one row: before (untimed, on the
// benchmark's connection), then both sides whole, the benchmark's
// connection closed meanwhile, then the target and the copy compared.
func (f *writeBench) floorPairs(b *testing.B, before func(), full bool, pipeline string, stmts []string, changed int64) {
	if *benchPairs < 5 {
		b.Fatalf("-incrc.pairs %d: at least 5", *benchPairs)
	}
	var inc, hon []time.Duration
	steps := newStepTimes()
	load := loadAvg()
	b.ResetTimer()
	for i := 0; i < *benchPairs; i++ {
		b.StopTimer()
		f.reopen(b)
		before()
		f.tg.Close()
		f.tg = nil
		b.StartTimer()
		incrc := func() { inc = append(inc, f.floorIncrc(b, steps, full, changed)) }
		honest := func() { hon = append(hon, f.honestRun(b, pipeline, stmts, full)) }
		if i%2 == 0 {
			incrc()
			honest()
		} else {
			honest()
			incrc()
		}
		b.StopTimer()
		f.reopen(b)
		f.same(b)
		b.StartTimer()
	}
	b.StopTimer()
	ratios := make([]float64, len(inc))
	for i := range inc {
		ratios[i] = float64(inc[i]) / float64(hon[i])
	}
	mi, hi := spread(inc), spread(hon)
	mr := spreadF(ratios)
	b.ReportMetric(mi[0], "incrc-ms")
	b.ReportMetric(hi[0], "honest-ms")
	b.ReportMetric(mr[0], "incrc/honest")
	b.Logf("%d pairs, load average %s -> %s\n  incrc   median %.1f ms (min %.1f, max %.1f)\n  honest  median %.1f ms (min %.1f, max %.1f)\n  ratio   median %.2f (min %.2f, max %.2f)\n  incrc per statement: %s",
		len(inc), load, loadAvg(), mi[0], mi[1], mi[2], hi[0], hi[1], hi[2], mr[0], mr[1], mr[2], steps.report(len(inc)))
}

// floorIncrc is incrc's side, whole: open, run, close. changed is the
// rows the run must update (-1: not checked).
func (f *writeBench) floorIncrc(b *testing.B, steps *stepTimes, full bool, changed int64) time.Duration {
	t0 := time.Now()
	tg := f.open(b)
	steps.add("open", time.Since(t0))
	steps.begin()
	res, err := tg.Run(f.ctx, f.plan, Options{Until: &f.hi, FullRefresh: full, BeforeStatement: steps.hook})
	steps.end()
	if err != nil {
		b.Fatal(err)
	}
	t1 := time.Now()
	if err := tg.Close(); err != nil {
		b.Fatal(err)
	}
	steps.add("close", time.Since(t1))
	d := time.Since(t0)
	if changed >= 0 && res.RowsUpdated != changed {
		b.Fatalf("the run updated %d rows, want %d", res.RowsUpdated, changed)
	}
	if changed == 0 && res.RowsRead != 0 {
		b.Fatalf("an empty window read %d rows", res.RowsRead)
	}
	return d
}

// honestRun is the honest hand-written run, whole: open, one transaction
// (read the watermark, the statements over [watermark - 1h, hi) or, for a
// full refresh, everything below hi, the run's row, the compare-and-set),
// close.
func (f *writeBench) honestRun(b *testing.B, pipeline string, stmts []string, full bool) time.Duration {
	t0 := time.Now()
	tg := f.open(b)
	tx, err := tg.DB.BeginTx(f.ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	var wm string
	if err := tx.QueryRowContext(f.ctx, `SELECT watermark FROM incrc_state WHERE pipeline = $1`, pipeline).Scan(&wm); err != nil {
		b.Fatal(err)
	}
	before, err := time.Parse(benchTS, wm)
	if err != nil {
		b.Fatal(err)
	}
	lo := before.Add(-time.Hour)
	var rows int64
	for _, st := range stmts {
		stmt := f.fill(st, map[string]string{"{lo}": ts(lo), "{hi}": ts(f.hi)})
		res, err := tx.ExecContext(f.ctx, stmt)
		if err != nil {
			b.Fatalf("%s\n%v", stmt, err)
		}
		n, _ := res.RowsAffected()
		rows += n
	}
	kind := "run"
	if full {
		kind = "full_refresh"
	}
	started, now := t0.UTC().Format(time.RFC3339Nano), time.Now().UTC().Format(time.RFC3339Nano)
	if _, err := tx.ExecContext(f.ctx, `INSERT INTO incrc_runs (run_id, pipeline, kind, status, window_lo, window_hi, watermark_before, watermark_after,
  rows_read, rows_inserted, rows_updated, rows_deleted, rows_quarantined, rows_skipped, rows_ignored, started_at, finished_at, duration_ms, spec_hash, logic_hash)
VALUES ($1, $2, $3, 'succeeded', $4, $5, $6, $5, $7, 0, $7, 0, 0, 0, 0, $8, $9, $10, $11, $12)`,
		fmt.Sprintf("%s-%d", pipeline, time.Now().UnixNano()), pipeline, kind, lo.Format(benchTS), f.hi.Format(benchTS), wm,
		rows, started, now, time.Since(t0).Milliseconds(), f.plan.SpecHash, f.plan.LogicHash); err != nil {
		b.Fatal(err)
	}
	res, err := tx.ExecContext(f.ctx, `UPDATE incrc_state SET watermark = $1, updated_at = $2 WHERE pipeline = $3 AND watermark = $4`,
		f.hi.Format(benchTS), now, pipeline, wm)
	if err != nil {
		b.Fatal(err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		b.Fatalf("the compare-and-set moved %d rows (%v), want 1", n, err)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if err := tg.Close(); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// spread is the median, min and max of ds, in milliseconds.
func spread(ds []time.Duration) [3]float64 {
	fs := make([]float64, len(ds))
	for i, d := range ds {
		fs[i] = ms(d)
	}
	return spreadF(fs)
}

func spreadF(fs []float64) [3]float64 {
	s := append([]float64(nil), fs...)
	sort.Float64s(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return [3]float64{med, s[0], s[n-1]}
}
