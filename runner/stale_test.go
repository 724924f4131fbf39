package runner

import (
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"
)

const staleSpec = `
pipeline: stale_{id}
source: { table: app_{id}.events }
target: { table: dw_{id}.events }
columns:
  event_id: bigint
  event_date: date
  amount: "decimal(12,2)"
  updated_at: timestamp
strategy: merge
unique_key: [event_id]
watermark: { column: updated_at, start: 2026-01-01, lookback: LOOKBACK }
partition: { column: event_date }
quality: { checks: ["CHECK"] }
`

func staleVersion(lookback, check string) string {
	return strings.NewReplacer("LOOKBACK", lookback, "CHECK", check).Replace(staleSpec)
}

// TestStalePartitions: a change to the logic (a check) makes the
// partitions built before it stale, a change to the lookback does not;
// backfill --stale rebuilds exactly the stale ones, oldest first, and
// leaves the others physically untouched.
func TestStalePartitions(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			v1 := e.spec(staleVersion("1d", "amount >= 0"))
			v1b := e.spec(staleVersion("2d", "amount >= 0")) // timing only
			v2 := e.spec(staleVersion("1d", "amount >= 1"))  // logic
			if v1.LogicHash != v1b.LogicHash || v1.LogicHash == v2.LogicHash {
				t.Fatalf("logic hashes: v1 %s, lookback changed %s, check changed %s", v1.LogicHash, v1b.LogicHash, v2.LogicHash)
			}
			e.createTable("app_{id}.events", v1.Columns)
			for d := 1; d <= 5; d++ {
				day := "2026-01-0" + string(rune('0'+d))
				e.insert("app_{id}.events", v1.Columns,
					[]any{int64(d * 10), day, "5.00", day + " 09:00:00"},
					[]any{int64(d*10 + 1), day, "0.50", day + " 10:00:00"})
			}
			mustRun(t, e, v1, Options{Until: until("2026-01-06")})
			stale := func(p *ir.Plan) []string {
				t.Helper()
				keys, err := e.tg.Stale(e.ctx, p)
				if err != nil {
					t.Fatal(err)
				}
				return keys
			}
			all := []string{"2026-01-01", "2026-01-02", "2026-01-03", "2026-01-04", "2026-01-05"}
			if got := stale(v1); len(got) != 0 {
				t.Errorf("stale with the logic that built them: %v", got)
			}
			if got := stale(v1b); len(got) != 0 {
				t.Errorf("stale after a lookback change: %v", got)
			}
			if diff := cmp.Diff(all, stale(v2)); diff != "" {
				t.Errorf("stale after a check changed (-want +got):\n%s", diff)
			}

			// A backfill of the last two days with the new logic: those are
			// no longer stale.
			if _, err := e.tg.Backfill(e.ctx, v2, BackfillOptions{From: *until("2026-01-04"), To: *until("2026-01-06")}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(all[:3], stale(v2)); diff != "" {
				t.Errorf("stale after a backfill of the last two days (-want +got):\n%s", diff)
			}
			st := e.state(v2)
			if diff := cmp.Diff(all[:3], st.Stale); diff != "" {
				t.Errorf("state's stale partitions (-want +got):\n%s", diff)
			}
			pv, err := e.tg.Preview(e.ctx, v2, *until("2026-01-06"))
			if err != nil || !cmp.Equal(all[:3], pv.Stale) {
				t.Errorf("plan --target's stale partitions: %v, %v", pv, err)
			}

			// Mark a row in a stale partition and in a fresh one: the stale
			// one is rebuilt (the mark gone), the fresh one is not touched
			// (the mark stays).
			cols := []ir.Col{{Name: "amount", Type: v1.Columns[2].Type}}
			e.update("dw_{id}.events", cols, "event_id", int64(20), map[string]any{"amount": "999.00"})
			e.update("dw_{id}.events", cols, "event_id", int64(50), map[string]any{"amount": "777.00"})
			var order []string
			res, err := e.tg.Backfill(e.ctx, v2, BackfillOptions{Stale: true, From: *until("2026-01-01"), To: *until("2026-01-06"),
				BeforeStatement: func(part, stmt string) error {
					if stmt == ir.StmtReplacePartition {
						order = append(order, part)
					}
					return nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(all[:3], order); diff != "" {
				t.Errorf("partitions rebuilt, in order (-want +got):\n%s", diff)
			}
			var rebuilt, ok []string
			for _, p := range res.Partitions {
				switch p.Status {
				case PartRebuilt:
					rebuilt = append(rebuilt, p.Key)
				case PartOK:
					ok = append(ok, p.Key)
				}
			}
			if !cmp.Equal(all[:3], rebuilt) || !cmp.Equal(all[3:], ok) {
				t.Errorf("backfill --stale: rebuilt %v, left %v", rebuilt, ok)
			}
			want := []string{
				line(10, "5.00"), line(20, "5.00"), line(30, "5.00"), // rebuilt: 0.50 rows fail the new check
				line(40, "5.00"), line(50, "777.00"), // untouched since the earlier backfill
			}
			if diff := cmp.Diff(want, e.rows("dw_{id}.events", []string{"event_id", "amount"})); diff != "" {
				t.Errorf("target after backfill --stale (-want +got):\n%s", diff)
			}
			if got := stale(v2); len(got) != 0 {
				t.Errorf("still stale after backfill --stale: %v", got)
			}
			// Nothing stale: nothing to do.
			res, err = e.tg.Backfill(e.ctx, v2, BackfillOptions{Stale: true})
			if err != nil || len(res.Partitions) != 0 {
				t.Errorf("backfill --stale with nothing stale: %+v, %v", res, err)
			}
			// A run with the new logic keeps them fresh; one with the old
			// logic makes them stale again.
			mustRun(t, e, v2, Options{Until: until("2026-01-07")})
			if got := stale(v2); len(got) != 0 {
				t.Errorf("stale after a run with the spec's logic: %v", got)
			}
			mustRun(t, e, v1, Options{Until: until("2026-01-08")})
			if diff := cmp.Diff(all, stale(v2)); diff != "" {
				t.Errorf("stale after a run with the old logic (-want +got):\n%s", diff)
			}
		})
	}
}
