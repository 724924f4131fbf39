package runner

import (
	"context"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler/ir"
)

// A write whose caller gave up (its context ended while Spark ran it)
// must be over when the call returns, and its answer must be the truth:
// Spark Connect does not stop an operation its client left, so before
// the adapter waited for the server the call failed with the deadline,
// the UPDATE committed afterwards all the same, and the next write to the
// table lost a commit conflict against it (DELTA_CONCURRENT_APPEND: what
// failed story1 on the shared state tables after a release that took
// longer than the cleanup's bound).
func TestSparkCancelledWriteEnds(t *testing.T) {
	for _, eng := range distributedEngines() {
		if eng.name != "spark" && eng.name != "spark_iceberg" {
			continue
		}
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			cols := []ir.Col{{Name: "k", Type: ir.Type{Kind: ir.Bigint}}, {Name: "v", Type: ir.Type{Kind: ir.Bigint}}}
			e.createTable("app_{id}.ghost", cols)
			e.insert("app_{id}.ghost", cols, []any{1, 0}, []any{2, 0})

			parts := e.render(ir.Update{Table: e.table("app_{id}.ghost"),
				Set:   []ir.Assign{{Column: "v", Value: ir.Lit{Text: "1"}}},
				Where: ir.Binary{Op: "=", L: ir.ColRef{Name: "k"}, R: ir.Lit{Text: "1"}}})
			// Long enough for the statement to reach the server, far
			// shorter than a Delta or Iceberg UPDATE takes.
			ctx, cancel := context.WithTimeout(e.ctx, 300*time.Millisecond)
			_, first := e.tg.DB.ExecContext(ctx, parts[0].SQL)
			cancel()
			// The next write, at once: it must not meet the first still
			// committing.
			e.update("app_{id}.ghost", cols, "k", 2, map[string]any{"v": 2})

			got := e.rows("app_{id}.ghost", []string{"k", "v"})
			want := []string{line(1, 1), line(2, 2)}
			if first != nil {
				// The call failed: then nothing of it may have landed.
				want[0] = line(1, 0)
			}
			if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
				t.Errorf("rows %q, want %q (the cancelled UPDATE answered %v)", got, want, first)
			}
		})
	}
}
