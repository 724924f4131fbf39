package runner

import (
	"testing"

	"github.com/incrc/incrc/compiler/ir"
)

// TestBookkeepingTwice: the bookkeeping every pipeline of a target shares
// (the setup of the state tables, the run log and the markers, in the
// dialect's _incrc.sql) applied twice changes nothing the second time and
// fails nothing, on every engine; and two pipelines share it: the second
// pipeline's first run finds it there, and both runs are in one run log.
func TestBookkeepingTwice(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			spec := func(name string) *ir.Plan {
				return e.spec(`pipeline: ` + name + `_{id}
source: { query: "SELECT 1 AS id" }
target: { table: dw_{id}.` + name + ` }
columns: { id: bigint }
strategy: full_refresh
`)
			}
			a, b := spec("a"), spec("b")
			setup := func(what string, p *ir.Plan) {
				t.Helper()
				c, conn, err := e.tg.session(e.ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				defer conn.Close()
				defer c.release()
				if err := newMachine(c, conn, params{}).walk(e.ctx, p.StateSetup()); err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
			setup("the first time", a)
			cols := func() []TableColumn {
				info, err := e.tg.Describe(e.ctx, ir.RunsTable)
				if err != nil {
					t.Fatal(err)
				}
				return info.Columns
			}
			before := cols()
			setup("the second time", a)
			setup("for another pipeline", b)
			if after := cols(); len(after) != len(before) {
				t.Fatalf("the run log's columns: %v, then %v", before, after)
			}
			mustRun(t, e, a, Options{})
			mustRun(t, e, b, Options{})
			if sa, sb := e.state(a), e.state(b); len(sa.Runs) != 1 || len(sb.Runs) != 1 {
				t.Fatalf("runs logged: %d and %d, want 1 each", len(sa.Runs), len(sb.Runs))
			}
		})
	}
}
