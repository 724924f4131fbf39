package runner

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
)

// revenueSpec is story 2 of docs/stories.md: daily partitions of orders, reconciled
// by count and sum(amount).
const revenueSpec = `
pipeline: revenue_{target}_{id}
source:
  table: app_{id}.orders
target:
  table: dw_{id}.revenue_{target}
columns:
  order_id: bigint
  order_date: date
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

func revenuePlan(e *env, target string) *compiler.Plan {
	return e.spec(strings.ReplaceAll(revenueSpec, "{target}", target))
}

// seedRevenue creates 14 days of orders, 2026-01-01..14, three a day, and
// loads them incrementally up to 2026-01-15.
func seedRevenue(t *testing.T, e *env, p *compiler.Plan) {
	e.createTable("app_{id}.orders", p.Columns)
	var rows [][]any
	for d := 1; d <= 14; d++ {
		for k := 0; k < 3; k++ {
			day := fmt.Sprintf("2026-01-%02d", d)
			rows = append(rows, []any{d*10 + k, day, fmt.Sprintf("%d.25", 10*d+k), day + " 12:00:00"})
		}
	}
	e.insert("app_{id}.orders", p.Columns, rows...)
	for _, day := range []string{"2026-01-05", "2026-01-10", "2026-01-15"} {
		mustRun(t, e, p, Options{Until: until(day)})
	}
}

// corrupt multiplies the target's amounts of [from, to) by 100: the
// currency bug.
func corrupt(e *env, table, from, to string) {
	e.t.Helper()
	date := compiler.Col{Name: "order_date", Type: compiler.Type{Kind: compiler.Date}}
	e.exec(e.render(compiler.Update{
		Table: e.table(table),
		Set:   []compiler.Assign{{Column: "amount", Value: compiler.Binary{Op: "*", L: compiler.ColRef{Name: "amount"}, R: compiler.Lit{Text: "100"}}}},
		Where: compiler.Binary{Op: "AND",
			L: compiler.Binary{Op: ">=", L: compiler.ColRef{Name: "order_date"}, R: compiler.ParamRef{Name: "a"}},
			R: compiler.Binary{Op: "<", L: compiler.ColRef{Name: "order_date"}, R: compiler.ParamRef{Name: "b"}}},
	}, compiler.Param{Name: "a"}, compiler.Param{Name: "b"}), map[string]any{"a": e.bind(date, from), "b": e.bind(date, to)})
}

func days(from, to int) []string {
	var out []string
	for d := from; d <= to; d++ {
		out = append(out, fmt.Sprintf("2026-01-%02d", d))
	}
	return out
}

// TestStory2 is story 2 of docs/stories.md on every engine: a bug corrupts the
// partitions of the 3rd to the 13th; reconciliation finds exactly those,
// --only-drifted rebuilds exactly those and leaves the others untouched,
// and the watermark does not move.
func TestStory2(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := revenuePlan(e, "a")
			seedRevenue(t, e, p)
			before, err := e.tg.State(e.ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			corrupt(e, "dw_{id}.revenue_a", "2026-01-03", "2026-01-14")
			untouched := e.rowVersions(t, "dw_{id}.revenue_a", []string{"2026-01-01", "2026-01-02", "2026-01-14"})
			from, to := *until("2026-01-01"), *until("2026-01-15")
			rec, err := e.tg.Reconcile(e.ctx, p, from, to)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(days(3, 13), rec.Drifted); diff != "" {
				t.Fatalf("drifted partitions (-want +got):\n%s", diff)
			}
			res, err := e.tg.Backfill(e.ctx, p, BackfillOptions{From: from, To: to, OnlyDrifted: true, Parallel: 2})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(days(3, 13), statuses(res, PartRebuilt)); diff != "" {
				t.Errorf("rebuilt (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"2026-01-01", "2026-01-02", "2026-01-14"}, statuses(res, PartOK)); diff != "" {
				t.Errorf("left alone (-want +got):\n%s", diff)
			}
			if after := e.rowVersions(t, "dw_{id}.revenue_a", []string{"2026-01-01", "2026-01-02", "2026-01-14"}); !cmp.Equal(untouched, after) {
				t.Errorf("partitions outside the drift were rewritten: row versions %v, then %v", untouched, after)
			}
			rec, err = e.tg.Reconcile(e.ctx, p, from, to)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Drifted) != 0 {
				t.Errorf("still drifted after the backfill: %v", rec.Drifted)
			}
			after, err := e.tg.State(e.ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if after.Watermark != before.Watermark || after.LeaseOwner != "" {
				t.Errorf("watermark %q -> %q, lease %q: a backfill never moves the watermark", before.Watermark, after.Watermark, after.LeaseOwner)
			}
			if r := after.Runs[0]; r.Kind != "backfill" || r.Status != "succeeded" || r.RowsInserted != 33 {
				t.Errorf("backfill in the run log: %+v", r)
			}
		})
	}
}

// rowVersions reads what identifies the physical version of rows where the
// engine exposes one (PostgreSQL's xmin); elsewhere the rows themselves,
// which a rewrite from a corrupted target would change too.
func (e *env) rowVersions(t *testing.T, table string, dates []string) []string {
	t.Helper()
	if e.tg.Dialect.Name() == "postgres" {
		var out []string
		for _, d := range dates {
			rows, err := e.tg.DB.QueryContext(e.ctx, "SELECT order_id, xmin::text FROM "+e.tg.Dialect.QuoteIdent("dw_"+e.id)+"."+e.tg.Dialect.QuoteIdent(strings.TrimPrefix(table, "dw_{id}."))+" WHERE order_date = $1 ORDER BY order_id", d)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id, xmin string
				rows.Scan(&id, &xmin)
				out = append(out, id+"@"+xmin)
			}
			rows.Close()
		}
		return out
	}
	var out []string
	for _, r := range e.rows(table, orderCols) {
		for _, d := range dates {
			if strings.Contains(r, " | "+d+" | ") {
				out = append(out, r)
			}
		}
	}
	return out
}

// TestBackfillResumes: a backfill interrupted at a partition resumes after
// the partitions it finished, without redoing them; --restart redoes all.
func TestBackfillResumes(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := revenuePlan(e, "a")
			seedRevenue(t, e, p)
			corrupt(e, "dw_{id}.revenue_a", "2026-01-03", "2026-01-14")
			from, to := *until("2026-01-03"), *until("2026-01-14")
			boom := errors.New("injected crash")
			_, err := e.tg.Backfill(e.ctx, p, BackfillOptions{From: from, To: to, BeforeStatement: func(part, stmt string) error {
				if part == "2026-01-06" && stmt == compiler.StmtReplacePartition {
					return boom
				}
				return nil
			}})
			if !errors.Is(err, boom) {
				t.Fatalf("backfill: %v, want the injected crash", err)
			}
			var rebuilt []string
			res, err := e.tg.Backfill(e.ctx, p, BackfillOptions{From: from, To: to, BeforeStatement: func(part, stmt string) error {
				if stmt == compiler.StmtReplacePartition {
					rebuilt = append(rebuilt, part)
				}
				return nil
			}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(days(3, 5), statuses(res, PartDone)); diff != "" {
				t.Errorf("resumed after (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(days(6, 13), rebuilt); diff != "" {
				t.Errorf("rebuilt on resume (-want +got):\n%s", diff)
			}
			rebuilt = nil
			if _, err := e.tg.Backfill(e.ctx, p, BackfillOptions{From: from, To: to, Restart: true, BeforeStatement: func(part, stmt string) error {
				if stmt == compiler.StmtReplacePartition {
					rebuilt = append(rebuilt, part)
				}
				return nil
			}}); err != nil {
				t.Fatal(err)
			}
			if len(rebuilt) != 11 {
				t.Errorf("--restart rebuilt %v", rebuilt)
			}
		})
	}
}

// TestBackfillStopsAtMismatch: a partition whose rewrite does not match the
// source (here: a row arrives between the rewrite and its check) stops the
// backfill there and names it.
func TestBackfillStopsAtMismatch(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := revenuePlan(e, "a")
			seedRevenue(t, e, p)
			res, err := e.tg.Backfill(e.ctx, p, BackfillOptions{From: *until("2026-01-03"), To: *until("2026-01-10"), BeforeStatement: func(part, stmt string) error {
				if part == "2026-01-05" && stmt == compiler.StmtCheckPartitionSrc {
					e.insert("app_{id}.orders", p.Columns, []any{999, "2026-01-05", "1.00", "2026-01-05 12:00:00"})
				}
				return nil
			}})
			if !errors.Is(err, ErrMismatch) || res.Mismatch == nil || res.Mismatch.Key != "2026-01-05" {
				t.Fatalf("backfill: %v, mismatch %+v; want a mismatch at 2026-01-05", err, res.Mismatch)
			}
			if diff := cmp.Diff(days(6, 9), statuses(res, PartPending)); diff != "" {
				t.Errorf("not reached (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBackfillLeaseAndFinalized: a backfill is refused while a run holds
// the lease, and partitions older than finalize_after need --restate.
func TestBackfillLeaseAndFinalized(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := revenuePlan(e, "a")
			seedRevenue(t, e, p)
			prog, _ := compile(e.tg.Dialect, p, 0)
			now := time.Now()
			vals := params{"pipeline": p.Pipeline, "owner": "a-run", "expires_at": stateTime(now.Add(time.Hour)), "now": stateTime(now)}
			if n, err := prog.exec(e.ctx, e.tg.DB, compiler.StmtAcquireLease, vals); err != nil || n != 1 {
				t.Fatalf("hold the lease: %d, %v", n, err)
			}
			var locked *LockedError
			if _, err := e.tg.Backfill(e.ctx, p, BackfillOptions{From: *until("2026-01-03"), To: *until("2026-01-05")}); !errors.As(err, &locked) || locked.Owner != "a-run" {
				t.Errorf("backfill during a run: %v, want locked by a-run", err)
			}
			if _, err := prog.exec(e.ctx, e.tg.DB, compiler.StmtForceRelease, vals); err != nil {
				t.Fatal(err)
			}
			// The watermark is 2026-01-15: finalize_after 35d closes partitions before 2025-12-11.
			_, err := e.tg.Backfill(e.ctx, p, BackfillOptions{From: *until("2025-12-01"), To: *until("2026-01-02")})
			if err == nil || !strings.Contains(err.Error(), "--restate") || !strings.Contains(err.Error(), "2025-12-01 .. 2025-12-10") {
				t.Errorf("finalized partitions: %v", err)
			}
			if _, err := e.tg.Backfill(e.ctx, p, BackfillOptions{From: *until("2025-12-01"), To: *until("2026-01-02"), Restate: true}); err != nil {
				t.Errorf("--restate: %v", err)
			}
		})
	}
}

// eventsSpec is story 5 of docs/stories.md: append-only events, partition overwrite.
const eventsSpec = `
pipeline: events_{target}_{id}
source:
  table: app_{id}.events
target:
  table: dw_{id}.events_{target}
columns:
  event_id: bigint
  event_date: date
  kind: varchar(16)
  ingested_at: timestamp
strategy: overwrite_partitions
watermark:
  column: ingested_at
  start: 2026-01-01
partition:
  column: event_date
  granularity: day
reconcile:
  by: event_date
  measures: [count]
`

// TestLateEvent: a late event lands in the partition it belongs to, by a
// rewrite of that partition; nothing is doubled; the target equals a full
// refresh.
func TestLateEvent(t *testing.T) {
	eventCols := []string{"event_id", "event_date", "kind", "ingested_at"}
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := e.spec(strings.ReplaceAll(eventsSpec, "{target}", "inc"))
			ref := e.spec(strings.ReplaceAll(eventsSpec, "{target}", "ref"))
			e.createTable("app_{id}.events", p.Columns)
			e.insert("app_{id}.events", p.Columns,
				[]any{1, "2026-01-10", "view", "2026-01-10 10:00:00"},
				[]any{2, "2026-01-10", "click", "2026-01-10 11:00:00"},
				[]any{3, "2026-01-11", "view", "2026-01-11 09:00:00"},
			)
			mustRun(t, e, p, Options{Until: until("2026-01-12")})
			// Event 4 happened on the 10th and arrives on the 12th.
			e.insert("app_{id}.events", p.Columns,
				[]any{4, "2026-01-10", "buy", "2026-01-12 08:00:00"},
				[]any{5, "2026-01-12", "view", "2026-01-12 09:00:00"},
			)
			pv, err := e.tg.Preview(e.ctx, p, *until("2026-01-13"))
			if err != nil {
				t.Fatal(err)
			}
			if pv.Rows != 2 || !cmp.Equal(pv.Partitions, []string{"2026-01-10", "2026-01-12"}) || pv.WindowLo != "2026-01-12T00:00:00Z" {
				t.Errorf("preview of the late run: %+v", pv)
			}
			r := mustRun(t, e, p, Options{Until: until("2026-01-13")})
			if r.RowsRead != 2 || r.RowsDeleted != 2 || r.RowsInserted != 4 {
				t.Errorf("late run: read %d, deleted %d, inserted %d; want 2 read, partition 01-10 (2 rows) rewritten with 3, 01-12 added", r.RowsRead, r.RowsDeleted, r.RowsInserted)
			}
			mustRun(t, e, ref, Options{Until: until("2026-01-13"), FullRefresh: true})
			want := e.rows("dw_{id}.events_ref", eventCols)
			if diff := cmp.Diff(want, e.rows("dw_{id}.events_inc", eventCols)); diff != "" {
				t.Errorf("(-full +incremental):\n%s", diff)
			}
			if len(want) != 5 || !strings.Contains(want[3], "4 | 2026-01-10") {
				t.Errorf("full refresh: %v", want)
			}
		})
	}
}

// clicksSpec partitions by the hour of a timestamp and (salesSpec) by the
// month of a date: the granularities that need the engine's truncation.
const clicksSpec = `
pipeline: clicks_{target}_{id}
source:
  table: app_{id}.clicks
target:
  table: dw_{id}.clicks_{target}
columns:
  click_id: bigint
  clicked_at: timestamp
  ingested_at: timestamp
strategy: overwrite_partitions
unique_key: [click_id]
watermark:
  column: ingested_at
  start: 2026-01-01
partition:
  column: clicked_at
  granularity: {granularity}
`

// TestHourAndMonthPartitions: a late click rewrites its own hour (or
// month), nothing else; reconciliation and backfills name partitions the
// same way on every engine.
func TestHourAndMonthPartitions(t *testing.T) {
	cols := []string{"click_id", "clicked_at", "ingested_at"}
	for _, g := range []struct {
		granularity string
		touched     []string // partitions the late run rewrites
		from, to    string   // a range to reconcile and backfill
	}{
		{"hour", []string{"2026-01-10T09", "2026-01-10T14"}, "2026-01-10T08:00:00Z", "2026-01-10T16:00:00Z"},
		{"month", []string{"2026-01"}, "2026-01-01", "2026-03-01"},
	} {
		for _, eng := range engines() {
			t.Run(g.granularity+"/"+eng.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, eng)
				y := strings.ReplaceAll(clicksSpec, "{granularity}", g.granularity)
				p := e.spec(strings.ReplaceAll(y, "{target}", "inc"))
				ref := e.spec(strings.ReplaceAll(y, "{target}", "ref"))
				e.createTable("app_{id}.clicks", p.Columns)
				e.insert("app_{id}.clicks", p.Columns,
					[]any{1, "2026-01-10 09:15:00", "2026-01-10 09:20:00"},
					[]any{2, "2026-01-10 09:45:00", "2026-01-10 09:50:00"},
					[]any{3, "2026-01-10 11:05:00", "2026-01-10 11:10:00"},
					[]any{4, "2026-02-03 10:00:00", "2026-01-10 10:30:00"}, // scheduled ahead
				)
				mustRun(t, e, p, Options{Until: until("2026-01-10T12:00:00Z")})
				// Click 5 happened at 09:30 and arrives at 14:00; click 6 is new.
				e.insert("app_{id}.clicks", p.Columns,
					[]any{5, "2026-01-10 09:30:00", "2026-01-10 14:00:00"},
					[]any{6, "2026-01-10 14:10:00", "2026-01-10 14:15:00"},
				)
				var touched []string
				pv, err := e.tg.Preview(e.ctx, p, *until("2026-01-10T15:00:00Z"))
				if err != nil {
					t.Fatal(err)
				}
				touched = pv.Partitions
				if diff := cmp.Diff(g.touched, touched); diff != "" {
					t.Errorf("partitions the late run rewrites (-want +got):\n%s", diff)
				}
				mustRun(t, e, p, Options{Until: until("2026-01-10T15:00:00Z")})
				mustRun(t, e, ref, Options{Until: until("2026-01-10T15:00:00Z"), FullRefresh: true})
				if diff := cmp.Diff(e.rows("dw_{id}.clicks_ref", cols), e.rows("dw_{id}.clicks_inc", cols)); diff != "" {
					t.Errorf("(-full +incremental):\n%s", diff)
				}
				rec, err := e.tg.Reconcile(e.ctx, p, *until(g.from), *until(g.to))
				if err != nil {
					t.Fatal(err)
				}
				var keys []string
				for _, gr := range rec.Groups {
					keys = append(keys, PartitionKey(p, gr.Key))
				}
				want := map[string][]string{"hour": {"2026-01-10T09", "2026-01-10T11", "2026-01-10T14"}, "month": {"2026-01", "2026-02"}}[g.granularity]
				if diff := cmp.Diff(want, keys); diff != "" || len(rec.Drifted) != 0 {
					t.Errorf("reconciled partitions (-want +got):\n%s\ndrifted: %v", diff, rec.Drifted)
				}
				res, err := e.tg.Backfill(e.ctx, p, BackfillOptions{From: *until(g.from), To: *until(g.to)})
				if err != nil {
					t.Fatal(err)
				}
				if n := len(statuses(res, PartRebuilt)); n != len(PartitionKeys(p, *until(g.from), *until(g.to))) {
					t.Errorf("backfill rebuilt %d of %v", n, res.Partitions)
				}
			})
		}
	}
}
