//go:build bench

package runner

import (
	"testing"
	"time"

	"github.com/incrc/incrc/compiler/ir"
)

// BenchmarkSchemaCheck: what the schema checks of the setup program
// (check_target_columns, check_quarantine_columns: the target and the
// quarantine compared with the spec's columns, issue 13) add to a run.
// Each iteration runs the empty window twice, alternating, on the same
// target: with the plan as compiled, and with the checks left out of its
// setup program. The ratio is the cost of the checks on the cheapest run
// there is; a run that reads rows pays the same absolute time.
func BenchmarkSchemaCheck(b *testing.B) {
	for _, eng := range benchEngines() {
		if eng.name == "postgres_indexed" {
			continue // the same target as postgres for this purpose
		}
		b.Run(eng.name, func(b *testing.B) {
			f := newBenchFixture(b, eng, 10_000)
			without := *f.plan
			without.Programs = nil
			for _, pr := range f.plan.Programs {
				if pr.Mode == ir.ModeSetup {
					cp := *pr
					cp.Steps = nil
					for _, s := range pr.Steps {
						if s.Read != ir.ReadSchema {
							cp.Steps = append(cp.Steps, s)
						}
					}
					pr = &cp
				}
				without.Programs = append(without.Programs, pr)
			}
			b.Run(f.name(), func(b *testing.B) {
				var with, plain time.Duration
				for i := 0; i < b.N; i++ {
					for _, p := range []*ir.Plan{f.plan, &without} {
						t0 := time.Now()
						res, err := f.tg.Run(f.ctx, p, Options{Until: &f.hi})
						d := time.Since(t0)
						if err != nil {
							b.Fatal(err)
						}
						if res.RowsRead != 0 {
							b.Fatalf("empty window read %d rows", res.RowsRead)
						}
						if p == f.plan {
							with += d
						} else {
							plain += d
						}
					}
				}
				b.ReportMetric(ms(with)/float64(b.N), "ms/run-checked")
				b.ReportMetric(ms(plain)/float64(b.N), "ms/run-unchecked")
				b.ReportMetric(float64(with)/float64(plain), "ratio")
			})
		})
	}
}
