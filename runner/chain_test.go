package runner

import (
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
)

// project parses spec templates as one project ({id} replaced), checks
// it as LoadSpecs does (the graph of pipelines that feed each other) and
// lowers each.
func (e *env) project(yamls ...string) []*ir.Plan {
	e.t.Helper()
	var specs []*compiler.Spec
	for i, y := range yamls {
		s, err := compiler.Parse("spec"+string(rune('a'+i))+".yaml", []byte(strings.ReplaceAll(y, "{id}", e.id)))
		if err != nil {
			e.t.Fatal(err)
		}
		if d := compiler.Validate(s); len(d) > 0 {
			e.t.Fatal(d.Err())
		}
		specs = append(specs, s)
	}
	if d := compiler.CheckProject(specs); len(d) > 0 {
		e.t.Fatal(d.Err())
	}
	var plans []*ir.Plan
	for _, s := range specs {
		p, err := compiler.Lower(s)
		if err != nil {
			e.t.Fatal(err)
		}
		plans = append(plans, p)
	}
	return plans
}

const chainUp = `
pipeline: up_{id}
source: { table: app_{id}.orders }
target: { table: dw_{id}.orders }
columns: { order_id: bigint, amount: "decimal(12,2)", updated_at: timestamp }
strategy: merge
unique_key: [order_id]
watermark: { column: updated_at, start: 2026-01-01, lookback: 1d }
`

const chainDown = `
pipeline: down_{id}
source: { table: dw_{id}.orders }
target: { table: dw_{id}.big_orders }
columns: { order_id: bigint, amount: "decimal(12,2)", updated_at: timestamp }
strategy: merge
unique_key: [order_id]
watermark: { column: updated_at, start: 2026-01-01, lookback: 1d }
quality: { checks: ["amount >= 20"] }
`

// TestChainedPipelines: a pipeline that reads another's target is held
// back to the upstream's watermark while the upstream lags, catches up
// once it has run, and ends equal to a full refresh of both.
func TestChainedPipelines(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			plans := e.project(chainDown, chainUp)
			down, up := plans[0], plans[1]
			if diff := cmp.Diff([]ir.Upstream{{Pipeline: up.Pipeline, Via: "source", Bounds: true, Watermark: ir.Type{Kind: ir.Timestamp}}}, down.Upstream); diff != "" {
				t.Fatalf("downstream's upstreams (-want +got):\n%s", diff)
			}
			cols := up.Columns
			e.createTable("app_{id}.orders", cols)
			e.insert("app_{id}.orders", cols,
				[]any{int64(1), "10.00", "2026-01-10 09:00:00"},
				[]any{int64(2), "20.00", "2026-01-11 09:00:00"},
				[]any{int64(3), "30.00", "2026-01-12 09:00:00"},
				[]any{int64(4), "40.00", "2026-01-13 09:00:00"})

			// The downstream before its upstream ever ran: nothing is
			// complete upstream; the run is refused, saying so.
			if _, err := e.tg.Run(e.ctx, down, Options{Until: until("2026-01-14")}); err == nil || !strings.Contains(err.Error(), "which has not run yet") {
				t.Errorf("downstream before its upstream ran: %v, want a refusal", err)
			}
			pv, err := e.tg.Preview(e.ctx, down, *mustTime("2026-01-14"))
			if err != nil || pv.HeldBy != up.Pipeline || pv.WindowHi != "2026-01-01T00:00:00Z" {
				t.Errorf("preview before the upstream ran: %+v, %v; want an empty window held back by %s", pv, err, up.Pipeline)
			}

			// The upstream lags: it has run up to the 12th.
			mustRun(t, e, up, Options{Until: until("2026-01-12")})
			res := mustRun(t, e, down, Options{Until: until("2026-01-14")})
			checkCounts(t, "downstream held back", res, counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-12T00:00:00Z", Read: 2, Inserted: 1, Quarantined: 1})
			if res.HeldBy != up.Pipeline || !strings.Contains(res.Note, "held back from 2026-01-14T00:00:00Z by upstream "+up.Pipeline) {
				t.Errorf("held by %q, note %q", res.HeldBy, res.Note)
			}
			if got := e.state(down).Runs[0].Note; !strings.Contains(got, "held back") {
				t.Errorf("the run log's note: %q, want it to say hi was held back", got)
			}
			want := []string{line(2, "20.00", "2026-01-11T09:00:00Z")}
			if diff := cmp.Diff(want, e.rows("dw_{id}.big_orders", []string{"order_id", "amount", "updated_at"})); diff != "" {
				t.Errorf("downstream while the upstream lags (-want +got):\n%s", diff)
			}

			// A late change upstream, inside both lookbacks; then the
			// upstream catches up, and so does the downstream.
			e.update("app_{id}.orders", cols, "order_id", int64(1), map[string]any{"amount": "25.00", "updated_at": "2026-01-11 18:00:00"})
			mustRun(t, e, up, Options{Until: until("2026-01-14")})
			res = mustRun(t, e, down, Options{Until: until("2026-01-14")})
			checkCounts(t, "downstream caught up", res, counts{Lo: "2026-01-11T00:00:00Z", Hi: "2026-01-14T00:00:00Z", Read: 4, Inserted: 3, Updated: 1})
			if res.HeldBy != "" {
				t.Errorf("held by %q once the upstream caught up", res.HeldBy)
			}
			incremental := e.rows("dw_{id}.big_orders", []string{"order_id", "amount", "updated_at"})

			// A full refresh of both gives the same target.
			mustRun(t, e, up, Options{Until: until("2026-01-14"), FullRefresh: true})
			mustRun(t, e, down, Options{Until: until("2026-01-14"), FullRefresh: true})
			full := e.rows("dw_{id}.big_orders", []string{"order_id", "amount", "updated_at"})
			if diff := cmp.Diff(full, incremental); diff != "" {
				t.Errorf("incremental downstream vs a full refresh of both (-full +incremental):\n%s", diff)
			}
			if len(full) != 4 {
				t.Errorf("full refresh: %d rows, want 4: %v", len(full), full)
			}
		})
	}
}
