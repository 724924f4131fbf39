//go:build bench

package runner

import (
	"testing"
	"time"

	"github.com/incrc/incrc/dialects/script"
)

// BenchmarkScriptVsRunner: the PostgreSQL procedure against the runner on
// the story-1 merge pipeline of BenchmarkIncrementalVsFullRefresh, one
// pipeline taking turns: each iteration changes 0.5% of the source
// (untimed) and times a run by the runner, then changes another 0.5% and
// times the same run by CALL incrc_run_<pipeline>(...); then both at the
// hi they reached (an empty window: the fixed cost). It reports
// script/runner for each.
//
//	go test -tags bench ./runner -run '^$' -bench ScriptVsRunner -benchtime 6x -incrc.rows 200000 -timeout 30m -v
func BenchmarkScriptVsRunner(b *testing.B) {
	eng := postgresBench()
	f := newBenchFixture(b, eng, *benchRows)
	files, err := script.Render(f.tg.Dialect, f.plan, "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	for _, file := range files {
		if _, err := f.tg.DB.ExecContext(f.ctx, string(file.Data)); err != nil {
			b.Fatal(err)
		}
		name := script.ProcName(f.plan.Pipeline, file.Mode)
		b.Cleanup(func() { f.tg.DB.ExecContext(f.ctx, `DROP PROCEDURE IF EXISTS "`+name+`"`) })
	}
	call := `CALL "` + script.ProcName(f.plan.Pipeline, "run") + `"($1)`
	b.Run(f.name(), func(b *testing.B) {
		var byRunner, byScript, emptyRunner, emptyScript time.Duration
		changed := int64(f.rows / changeEvery)
		next := func() {
			prev := f.hi
			f.hi = prev.Add(step)
			f.sql(b, f.eng.change(f.source, f.steps%changeEvery, prev))
			f.steps++
			f.maintain(b)
		}
		for i := 0; i < b.N; i++ {
			next()
			t0 := time.Now()
			res, err := f.tg.Run(f.ctx, f.plan, Options{Until: &f.hi})
			byRunner += time.Since(t0)
			if err != nil || res.RowsUpdated != changed {
				b.Fatalf("runner: %+v, %v", res, err)
			}
			next()
			t0 = time.Now()
			_, err = f.tg.DB.ExecContext(f.ctx, call, f.hi)
			byScript += time.Since(t0)
			if err != nil {
				b.Fatal(err)
			}
			if st, err := f.tg.State(f.ctx, f.plan); err != nil || st.Runs[0].RowsUpdated != changed {
				b.Fatalf("procedure: %+v, %v", st.Runs[0], err)
			}
			t0 = time.Now()
			if _, err := f.tg.Run(f.ctx, f.plan, Options{Until: &f.hi}); err != nil {
				b.Fatal(err)
			}
			emptyRunner += time.Since(t0)
			t0 = time.Now()
			if _, err := f.tg.DB.ExecContext(f.ctx, call, f.hi); err != nil {
				b.Fatal(err)
			}
			emptyScript += time.Since(t0)
		}
		n := float64(b.N)
		b.ReportMetric(ms(byRunner)/n, "runner-ms/op")
		b.ReportMetric(ms(byScript)/n, "script-ms/op")
		b.ReportMetric(float64(byScript)/float64(byRunner), "script/runner")
		b.ReportMetric(ms(emptyRunner)/n, "empty-runner-ms/op")
		b.ReportMetric(ms(emptyScript)/n, "empty-script-ms/op")
		b.ReportMetric(float64(emptyScript)/float64(emptyRunner), "empty-script/runner")
	})
}
