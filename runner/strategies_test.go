package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
)

// This file runs the write strategies and window kinds through the same
// scenario table on every executed engine: append from a source query on
// an integer watermark, merge on a composite key with a nullable part,
// quality (quarantine and fail), full refresh after drift, and date
// windows. Each scenario computes what the target must hold from its own
// fixture and checks the run results the runner reports.

const appendSpec = `
pipeline: events_{target}_{id}
source:
  query: |
    SELECT id, kind, amount
    FROM {src}
    WHERE kind <> 'test'
target:
  table: dw_{id}.events_{target}
columns:
  id: bigint
  kind: varchar(16)
  amount: decimal(12,2)
strategy: append
watermark:
  column: id
  start: 1
`

// TestAppendQueryIntegerWatermark: an append pipeline reads a source query
// (the window is applied outside it) by id. Each run reads the ids above
// the last one it saw, up to the largest present; the target equals a
// full refresh after every run, and a rerun with nothing new adds nothing.
func TestAppendQueryIntegerWatermark(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			plan := func(target string) *compiler.Plan {
				y := strings.ReplaceAll(appendSpec, "{target}", target)
				return e.spec(strings.ReplaceAll(y, "{src}", e.sourceName("app_{id}.events")))
			}
			inc, ref := plan("inc"), plan("ref")
			cols := []string{"id", "kind", "amount"}
			e.createTable("app_{id}.events", inc.Columns)

			// The scenario's model: the source, and what the query keeps.
			type event struct {
				id     int64
				kind   string
				amount any
			}
			var source []event
			want := func() (rows []string, maxID int64) {
				for _, ev := range source {
					if ev.kind != "test" {
						rows = append(rows, line(ev.id, ev.kind, ev.amount))
						maxID = max(maxID, ev.id)
					}
				}
				return rows, maxID
			}
			add := func(evs ...event) {
				for _, ev := range evs {
					source = append(source, ev)
					e.insert("app_{id}.events", inc.Columns, []any{ev.id, ev.kind, ev.amount})
				}
			}
			step := func(what string, wantCounts counts) {
				t.Helper()
				r := mustRun(t, e, inc, Options{})
				checkCounts(t, what, r, wantCounts)
				rows, maxID := want()
				if diff := cmp.Diff(rows, e.rows("dw_{id}.events_inc", cols)); diff != "" {
					t.Errorf("%s: target (-want +got):\n%s", what, diff)
				}
				mustRun(t, e, ref, Options{FullRefresh: true})
				if diff := cmp.Diff(e.rows("dw_{id}.events_ref", cols), e.rows("dw_{id}.events_inc", cols)); diff != "" {
					t.Errorf("%s: incremental differs from a full refresh (-full +incremental):\n%s", what, diff)
				}
				if st := e.state(inc); st.Watermark != fmt.Sprint(maxID+1) {
					t.Errorf("%s: watermark %q, want %d (the largest id the query returns, plus one)", what, st.Watermark, maxID+1)
				}
			}

			add(event{1, "sale", "10.00"}, event{2, "sale", "20.50"}, event{3, "test", "99.00"}, event{4, "refund", "-5.00"})
			step("first run", counts{Lo: "1", Hi: "5", Read: 3, Inserted: 3})
			add(event{5, "sale", nil}, event{6, "sale", "7.25"}, event{7, "test", "1.00"})
			// 7 is filtered out by the query: the window ends after 6.
			step("second run", counts{Lo: "5", Hi: "7", Read: 2, Inserted: 2})
			step("rerun, nothing new", counts{Lo: "7", Hi: "7"})
			add(event{8, "sale", "8.00"}, event{9, "test", "9.00"})
			step("a filtered id opens the window", counts{Lo: "7", Hi: "9", Read: 1, Inserted: 1})
			add(event{10, "sale", "10.00"}, event{11, "sale", "11.00"}, event{12, "refund", "-1.00"})
			step("fourth run", counts{Lo: "9", Hi: "13", Read: 3, Inserted: 3})
			step("rerun again", counts{Lo: "13", Hi: "13"})

			st := e.state(inc)
			if len(st.Runs) != 6 || st.Runs[0].Status != "succeeded" || st.Runs[0].RowsRead != 0 || st.Runs[0].WindowHi != "13" {
				t.Errorf("run log: %+v", st.Runs)
			}
			// --until is a time: it has no meaning for an id window.
			_, err := e.tg.Run(e.ctx, inc, Options{Until: until("2026-01-02")})
			if err == nil || !strings.Contains(err.Error(), "--until does not apply") {
				t.Errorf("--until on an integer watermark: %v", err)
			}
		})
	}
}

const stockSpec = `
pipeline: stock_{target}_{id}
source:
  table: app_{id}.stock
target:
  table: dw_{id}.stock_{target}
columns:
  sku: bigint
  region: {type: varchar(8), nullable: true}
  qty: integer
  updated_at: timestamp
strategy: merge
unique_key: [sku, region]
watermark:
  column: updated_at
  start: 2026-01-01
dedupe_by: updated_at
`

// TestMergeNullableCompositeKey: a composite key whose region part may be
// NULL ("no region"). A NULL region matches a NULL region: the next
// version of such a row updates it rather than adding a second one, both
// within one window (dedupe) and across windows (merge).
func TestMergeNullableCompositeKey(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			plan := func(target string) *compiler.Plan {
				return e.spec(strings.ReplaceAll(stockSpec, "{target}", target))
			}
			inc, ref := plan("inc"), plan("ref")
			cols := []string{"sku", "region", "qty", "updated_at"}
			e.createTable("app_{id}.stock", inc.Columns)
			ins := func(rows ...[]any) { e.insert("app_{id}.stock", inc.Columns, rows...) }
			check := func(what, hi string, want []string) {
				t.Helper()
				got := sorted(e.rows("dw_{id}.stock_inc", cols))
				if diff := cmp.Diff(sorted(want), got); diff != "" {
					t.Errorf("%s: target (-want +got):\n%s", what, diff)
				}
				mustRun(t, e, ref, Options{Until: until(hi), FullRefresh: true})
				if diff := cmp.Diff(sorted(e.rows("dw_{id}.stock_ref", cols)), got); diff != "" {
					t.Errorf("%s: incremental differs from a full refresh (-full +incremental):\n%s", what, diff)
				}
			}

			ins([]any{1, nil, 10, "2026-01-01 10:00:00"},
				[]any{1, "eu", 20, "2026-01-01 11:00:00"},
				[]any{2, nil, 30, "2026-01-01 12:00:00"},
				[]any{2, nil, 31, "2026-01-01 13:00:00"}) // two versions of (2, NULL) in one window
			r := mustRun(t, e, inc, Options{Until: until("2026-01-02")})
			checkCounts(t, "first run", r, counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-02T00:00:00Z", Read: 4, Inserted: 3})
			check("first run", "2026-01-02", []string{
				line(1, nil, 10, "2026-01-01 10:00:00"),
				line(1, "eu", 20, "2026-01-01 11:00:00"),
				line(2, nil, 31, "2026-01-01 13:00:00"),
			})

			ins([]any{1, nil, 11, "2026-01-02 09:00:00"},
				[]any{2, nil, 32, "2026-01-02 10:00:00"},
				[]any{3, nil, 40, "2026-01-02 11:00:00"},
				[]any{1, "us", 50, "2026-01-02 12:00:00"})
			r = mustRun(t, e, inc, Options{Until: until("2026-01-03")})
			checkCounts(t, "second run", r, counts{Lo: "2026-01-02T00:00:00Z", Hi: "2026-01-03T00:00:00Z", Read: 4, Inserted: 2, Updated: 2})
			check("second run", "2026-01-03", []string{
				line(1, nil, 11, "2026-01-02 09:00:00"),
				line(1, "eu", 20, "2026-01-01 11:00:00"),
				line(1, "us", 50, "2026-01-02 12:00:00"),
				line(2, nil, 32, "2026-01-02 10:00:00"),
				line(3, nil, 40, "2026-01-02 11:00:00"),
			})

			// A key with a region gets a NULL-region sibling and both change:
			// neither is confused with the other.
			ins([]any{3, "eu", 41, "2026-01-03 09:00:00"},
				[]any{3, nil, 42, "2026-01-03 10:00:00"},
				[]any{1, "eu", 21, "2026-01-03 11:00:00"})
			r = mustRun(t, e, inc, Options{Until: until("2026-01-04")})
			checkCounts(t, "third run", r, counts{Lo: "2026-01-03T00:00:00Z", Hi: "2026-01-04T00:00:00Z", Read: 3, Inserted: 1, Updated: 2})
			check("third run", "2026-01-04", []string{
				line(1, nil, 11, "2026-01-02 09:00:00"),
				line(1, "eu", 21, "2026-01-03 11:00:00"),
				line(1, "us", 50, "2026-01-02 12:00:00"),
				line(2, nil, 32, "2026-01-02 10:00:00"),
				line(3, nil, 42, "2026-01-03 10:00:00"),
				line(3, "eu", 41, "2026-01-03 09:00:00"),
			})
		})
	}
}

const paymentsSpec = `
pipeline: pay_{target}_{id}
source:
  table: app_{id}.payments
target:
  table: dw_{id}.payments_{target}
columns:
  payment_id: bigint
  amount: decimal(12,2)
  updated_at: timestamp
strategy: merge
unique_key: [payment_id]
watermark:
  column: updated_at
  start: 2026-01-01
{quality}
`

// TestQuality: rows that break a rule go to <target>_quarantine with the
// run id and the first rule they break, and are counted; with on_invalid:
// fail the run fails, writes nothing, keeps the watermark and is logged as
// failed. A NULL in a key column not declared nullable is a broken rule
// even without a quality section.
func TestQuality(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			plan := func(target, quality string) *compiler.Plan {
				y := strings.ReplaceAll(paymentsSpec, "{target}", target)
				return e.spec(strings.ReplaceAll(y, "{quality}", quality))
			}
			const rules = "quality:\n  not_null: [amount]\n  checks: [\"amount >= 0\"]\n  on_invalid: "
			quar := plan("q", rules+"quarantine")
			fail := plan("f", rules+"fail")
			bare := plan("bare", "")
			cols := []string{"payment_id", "amount", "updated_at"}
			e.createTable("app_{id}.payments", nullableCols(quar.Columns))
			ins := func(rows ...[]any) { e.insert("app_{id}.payments", quar.Columns, rows...) }
			ins([]any{1, "10.00", "2026-01-01 09:00:00"},
				[]any{2, "-5.00", "2026-01-01 15:00:00"},
				[]any{nil, "3.00", "2026-01-01 16:00:00"},
				[]any{nil, "-1.00", "2026-01-01 16:30:00"}, // same NULL key: dedupe keeps this newer one
				[]any{4, nil, "2026-01-01 17:00:00"},
				[]any{5, "0.00", "2026-01-01 18:00:00"})

			// Quarantine: the three invalid rows leave with their reason.
			r := mustRun(t, e, quar, Options{Until: until("2026-01-02")})
			checkCounts(t, "quarantine run", r, counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-02T00:00:00Z", Read: 6, Inserted: 2, Quarantined: 3})
			want := []string{line(1, "10.00", "2026-01-01 09:00:00"), line(5, "0.00", "2026-01-01 18:00:00")}
			if diff := cmp.Diff(want, e.rows("dw_{id}.payments_q", cols)); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
			qcols := []string{"incrc_reason", "incrc_run_id", "payment_id", "amount", "updated_at"}
			wantQ := sorted([]string{
				line("check: amount >= 0", r.RunID, 2, "-5.00", "2026-01-01 15:00:00"),
				line("not_null(payment_id)", r.RunID, nil, "-1.00", "2026-01-01 16:30:00"),
				line("not_null(amount)", r.RunID, 4, nil, "2026-01-01 17:00:00"),
			})
			if diff := cmp.Diff(wantQ, sorted(e.rows("dw_{id}.payments_q_quarantine", qcols))); diff != "" {
				t.Errorf("quarantine (-want +got):\n%s", diff)
			}
			if st := e.state(quar); st.Runs[0].RowsQuarantined != 3 || st.Runs[0].Status != "succeeded" {
				t.Errorf("run log: %+v", st.Runs[0])
			}
			// The corrected payment arrives as a new version and is written.
			ins([]any{2, "5.00", "2026-01-02 10:00:00"})
			r = mustRun(t, e, quar, Options{Until: until("2026-01-03")})
			checkCounts(t, "corrected", r, counts{Lo: "2026-01-02T00:00:00Z", Hi: "2026-01-03T00:00:00Z", Read: 1, Inserted: 1})
			if got := e.rows("dw_{id}.payments_q", cols); len(got) != 3 || got[1] != line(2, "5.00", "2026-01-02 10:00:00") {
				t.Errorf("after the correction: %v", got)
			}
			if got := e.rows("dw_{id}.payments_q_quarantine", qcols); len(got) != 3 {
				t.Errorf("quarantine after a clean run: %v", got)
			}

			// Fail: a clean window first, then the window with the bad rows.
			mustRun(t, e, fail, Options{Until: until("2026-01-01T12:00:00Z")})
			before := e.rows("dw_{id}.payments_f", cols)
			if diff := cmp.Diff([]string{line(1, "10.00", "2026-01-01 09:00:00")}, before); diff != "" {
				t.Errorf("clean run (-want +got):\n%s", diff)
			}
			r, err := e.tg.Run(e.ctx, fail, Options{Until: until("2026-01-02")})
			if err == nil || !strings.Contains(err.Error(), "3 staged row(s) break quality rules") {
				t.Fatalf("on_invalid: fail: %v, want the run to fail on 3 rows", err)
			}
			if r.Status != "failed" || r.RowsInserted != 0 || r.WatermarkAfter != "2026-01-01T12:00:00Z" {
				t.Errorf("failed run's result: %+v", r)
			}
			if diff := cmp.Diff(before, e.rows("dw_{id}.payments_f", cols)); diff != "" {
				t.Errorf("a failed run wrote (-before +after):\n%s", diff)
			}
			st := e.state(fail)
			if st.Watermark != "2026-01-01T12:00:00Z" || st.LeaseOwner != "" || len(st.Runs) != 2 {
				t.Errorf("state after the failed run: %+v", st)
			}
			if f := st.Runs[0]; f.Status != "failed" || !strings.Contains(f.Error, "break quality rules") || f.WatermarkAfter != "2026-01-01T12:00:00Z" || f.RowsRead != 5 {
				t.Errorf("failed run in the log: %+v", f)
			}

			// No quality section: only the NULL key is a broken rule.
			_, err = e.tg.Run(e.ctx, bare, Options{Until: until("2026-01-02")})
			if err == nil || !strings.Contains(err.Error(), "1 staged row(s)") || !strings.Contains(err.Error(), "NULL unique key") {
				t.Errorf("NULL key without a quality section: %v, want 1 row rejected", err)
			}
			if got := e.rows("dw_{id}.payments_bare", cols); len(got) != 0 {
				t.Errorf("rows written despite a NULL key: %v", got)
			}
			if st := e.state(bare); st.Watermark != "" || st.Runs[0].Status != "failed" {
				t.Errorf("state after the NULL key: %+v", st)
			}
		})
	}
}

// TestFullRefreshAfterDrift: rows deleted in the source, a row changed
// behind the watermark and a late row are drift that no incremental run
// sees; a full refresh makes the target equal the source below hi again
// and sets the watermark to hi. A full refresh of an empty source empties
// the target.
func TestFullRefreshAfterDrift(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := ordersPlan(e, "inc", "")
			seedOrders(e, p)
			// The model of app.orders, kept in step with the fixture.
			src := map[int][]any{
				101: {101, "2026-01-20", "50.00", "2026-01-20 09:00:00"},
				102: {102, "2026-01-21", "75.50", "2026-01-21 10:00:00"},
				103: {103, "2026-01-22", "45.00", "2026-01-22 11:00:00"},
				104: {104, "2026-01-23", "50.00", "2026-01-23 12:00:00"},
				105: {105, "2026-01-20", nil, "2026-01-20 13:00:00"},
			}
			below := func(hi string) []string {
				var out []string
				for _, r := range src {
					if r[3].(string) < hi {
						out = append(out, line(r...))
					}
				}
				return sorted(out)
			}
			mustRun(t, e, p, Options{Until: until("2026-01-24")})
			if diff := cmp.Diff(below("2026-01-24"), e.rows("dw_{id}.orders_inc", orderCols)); diff != "" {
				t.Fatalf("before the drift (-want +got):\n%s", diff)
			}

			e.deleteWhere("app_{id}.orders", "order_id", 102)
			delete(src, 102)
			e.update("app_{id}.orders", p.Columns, "order_id", 103, map[string]any{"amount": "46.00"})
			src[103][2] = "46.00"
			late := []any{106, "2026-01-23", "12.00", "2026-01-23 08:00:00"}
			future := []any{107, "2026-01-26", "7.00", "2026-01-26 10:00:00"}
			e.insert("app_{id}.orders", p.Columns, late, future)
			src[106], src[107] = late, future

			r := mustRun(t, e, p, Options{Until: until("2026-01-25")})
			if r.RowsRead != 0 {
				t.Errorf("the incremental run read %d rows of drift it cannot see", r.RowsRead)
			}
			drifted := e.rows("dw_{id}.orders_inc", orderCols)
			if cmp.Equal(below("2026-01-25"), drifted) {
				t.Fatalf("no drift to repair: %v", drifted)
			}

			r = mustRun(t, e, p, Options{Until: until("2026-01-26"), FullRefresh: true})
			want := below("2026-01-26") // 101, 103 (changed), 104, 105, 106; not 102 (deleted) nor 107 (at hi)
			checkCounts(t, "full refresh", r, counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-26T00:00:00Z", Read: int64(len(want)), Inserted: int64(len(want)), Deleted: int64(len(drifted))})
			if r.Kind != "full_refresh" || r.WatermarkBefore != "2026-01-25T00:00:00Z" || r.WatermarkAfter != "2026-01-26T00:00:00Z" {
				t.Errorf("full refresh result: %+v", r)
			}
			if diff := cmp.Diff(want, e.rows("dw_{id}.orders_inc", orderCols)); diff != "" {
				t.Errorf("after the full refresh (-source +target):\n%s", diff)
			}
			if st := e.state(p); st.Watermark != "2026-01-26T00:00:00Z" || st.Runs[0].Kind != "full_refresh" {
				t.Errorf("state after the full refresh: watermark %q, last run %+v", st.Watermark, st.Runs[0])
			}
			// Incremental runs carry on from hi.
			r = mustRun(t, e, p, Options{Until: until("2026-01-27")})
			checkCounts(t, "after the full refresh", r, counts{Lo: "2026-01-26T00:00:00Z", Hi: "2026-01-27T00:00:00Z", Read: 1, Inserted: 1})
			if diff := cmp.Diff(below("2026-01-27"), e.rows("dw_{id}.orders_inc", orderCols)); diff != "" {
				t.Errorf("after the next run (-source +target):\n%s", diff)
			}

			e.deleteWhere("app_{id}.orders", "", nil)
			r = mustRun(t, e, p, Options{Until: until("2026-01-28"), FullRefresh: true})
			checkCounts(t, "empty source", r, counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-28T00:00:00Z", Deleted: int64(len(below("2026-01-27")))})
			if got := e.rows("dw_{id}.orders_inc", orderCols); len(got) != 0 {
				t.Errorf("a full refresh of an empty source left %v", got)
			}
			if st := e.state(p); st.Watermark != "2026-01-28T00:00:00Z" {
				t.Errorf("watermark after the empty full refresh: %q", st.Watermark)
			}
		})
	}
}

const dailySpec = `
pipeline: daily_{target}_{id}
source:
  table: app_{id}.daily
target:
  table: dw_{id}.daily_{target}
columns:
  id: bigint
  total: integer
  changed_on: date
strategy: merge
unique_key: [id]
watermark:
  column: changed_on
  start: 2026-01-01
  {lookback}
`

// TestDateWatermark: a date watermark's window ends at the start of the
// day --until falls in (that day is not complete), and a 1-day lookback
// re-reads the last complete day, so a change written late with that day
// is caught; one dated two days back is missed, as the contract says.
func TestDateWatermark(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			plan := func(target, lookback string) *compiler.Plan {
				y := strings.ReplaceAll(dailySpec, "{target}", target)
				return e.spec(strings.ReplaceAll(y, "{lookback}", lookback))
			}
			inc, ref := plan("inc", "lookback: 1d"), plan("ref", "")
			cols := []string{"id", "total", "changed_on"}
			e.createTable("app_{id}.daily", inc.Columns)
			e.insert("app_{id}.daily", inc.Columns,
				[]any{1, 10, "2026-01-02"},
				[]any{2, 20, "2026-01-04"},
				[]any{3, 30, "2026-01-05"})
			r := mustRun(t, e, inc, Options{Until: until("2026-01-05T13:00:00Z")})
			checkCounts(t, "first run", r, counts{Lo: "2026-01-01", Hi: "2026-01-05", Read: 2, Inserted: 2})
			if r.WatermarkAfter != "2026-01-05" {
				t.Errorf("watermark after the first run: %q", r.WatermarkAfter)
			}
			// Written after the run: a change dated inside the lookback (the
			// 4th) and one dated before it (the 3rd).
			e.update("app_{id}.daily", inc.Columns, "id", 2, map[string]any{"total": 21})
			e.update("app_{id}.daily", inc.Columns, "id", 1, map[string]any{"total": 11, "changed_on": "2026-01-03"})
			u, err := ParseUntil("2026-01-06")
			if err != nil {
				t.Fatal(err)
			}
			r = mustRun(t, e, inc, Options{Until: &u})
			checkCounts(t, "second run", r, counts{Lo: "2026-01-04", Hi: "2026-01-06", Read: 2, Inserted: 1, Updated: 1})
			want := []string{line(1, 10, "2026-01-02"), line(2, 21, "2026-01-04"), line(3, 30, "2026-01-05")}
			if diff := cmp.Diff(want, e.rows("dw_{id}.daily_inc", cols)); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
			mustRun(t, e, ref, Options{Until: &u, FullRefresh: true})
			full := e.rows("dw_{id}.daily_ref", cols)
			if diff := cmp.Diff([]string{line(1, 11, "2026-01-03"), want[1], want[2]}, full); diff != "" {
				t.Errorf("full refresh (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUntilDateOnTimestamp: --until given as a date on a timestamp
// watermark means midnight UTC: the last microsecond of the day before is
// in the window, midnight itself is in the next.
func TestUntilDateOnTimestamp(t *testing.T) {
	u, err := ParseUntil("2026-01-22")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 1, 22, 0, 0, 0, 0, time.UTC); !u.Equal(want) {
		t.Fatalf("ParseUntil(2026-01-22) = %v, want %v", u, want)
	}
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := ordersPlan(e, "inc", "")
			e.createTable("app_{id}.orders", p.Columns)
			e.insert("app_{id}.orders", p.Columns,
				[]any{1, "2026-01-21", "1.00", "2026-01-21 00:00:00"},
				[]any{2, "2026-01-21", "2.00", "2026-01-21 23:59:59.999999"},
				[]any{3, "2026-01-22", "3.00", "2026-01-22 00:00:00"})
			r := mustRun(t, e, p, Options{Until: &u})
			checkCounts(t, "until a date", r, counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-22T00:00:00Z", Read: 2, Inserted: 2})
			want := []string{line(1, "2026-01-21", "1.00", "2026-01-21 00:00:00"), line(2, "2026-01-21", "2.00", "2026-01-21 23:59:59.999999")}
			if diff := cmp.Diff(want, e.rows("dw_{id}.orders_inc", orderCols)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			r = mustRun(t, e, p, Options{Until: until("2026-01-23")})
			checkCounts(t, "next day", r, counts{Lo: "2026-01-22T00:00:00Z", Hi: "2026-01-23T00:00:00Z", Read: 1, Inserted: 1})
		})
	}
}

// TestDedupeTieSameOnEveryEngine: two versions of a key with the same
// updated_at are told apart by the other columns (compiler.lowerer.dedupe),
// so that every run keeps the same one. It must be the same one on every
// engine too: the same spec over the same source gives the same target.
// The version kept here is the one whose tie-breaking column is not NULL:
// the dedupe orders NULLs last on every engine (PostgreSQL's default would
// put them first in a descending order).
func TestDedupeTieSameOnEveryEngine(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := ordersPlan(e, "inc", "")
			e.createTable("app_{id}.orders", p.Columns)
			e.insert("app_{id}.orders", p.Columns,
				[]any{1, "2026-01-21", nil, "2026-01-21 10:00:00"},
				[]any{1, "2026-01-21", "2.00", "2026-01-21 10:00:00"},
				[]any{2, "2026-01-21", "3.00", "2026-01-21 10:00:00"},
				[]any{2, "2026-01-22", "3.00", "2026-01-21 10:00:00"},
				[]any{3, nil, "4.00", "2026-01-21 10:00:00"},
				[]any{3, "2026-01-22", "4.00", "2026-01-21 10:00:00"})
			mustRun(t, e, p, Options{Until: until("2026-01-22")})
			want := []string{
				line(1, "2026-01-21", "2.00", "2026-01-21 10:00:00"),
				line(2, "2026-01-22", "3.00", "2026-01-21 10:00:00"),
				line(3, "2026-01-22", "4.00", "2026-01-21 10:00:00"),
			}
			if diff := cmp.Diff(want, e.rows("dw_{id}.orders_inc", orderCols)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestIntegerWatermarkNeverBelowStart: watermark.start bounds what the
// first run reads, and what later runs read must not depend on whether
// the first run found any row: a first run over an empty source saves
// start as its watermark, never less, so id 50 is never read. (A full
// refresh reads [start, hi) too, so rows below start are in no target.)
func TestIntegerWatermarkNeverBelowStart(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			y := strings.ReplaceAll(appendSpec, "{target}", "inc")
			y = strings.ReplaceAll(y, "start: 1\n", "start: 100\n")
			p := e.spec(strings.ReplaceAll(y, "{src}", e.sourceName("app_{id}.events")))
			e.createTable("app_{id}.events", p.Columns)
			r := mustRun(t, e, p, Options{})
			if r.RowsRead != 0 || r.RowsInserted != 0 {
				t.Errorf("a run of an empty source: %+v", r)
			}
			e.insert("app_{id}.events", p.Columns, []any{50, "sale", "1.00"}, []any{150, "sale", "2.00"})
			r = mustRun(t, e, p, Options{})
			want := []string{line(150, "sale", "2.00")}
			got := e.rows("dw_{id}.events_inc", []string{"id", "kind", "amount"})
			if diff := cmp.Diff(want, got); diff != "" {
				// runner.window: when hi < start on the first run it sets
				// lo = hi and saves hi, below start.
				t.Errorf("the first run over an empty source saved watermark %q below start 100, and the next run read [%s, %s) (-want +got):\n%s", r.WatermarkBefore, r.WindowLo, r.WindowHi, diff)
			}
			checkCounts(t, "second run", r, counts{Lo: "100", Hi: "151", Read: 1, Inserted: 1})
		})
	}
}

// TestQualityNewestVersionInvalid: a key's valid version is written; its
// newer version breaks a check and is quarantined. A full refresh at the
// same hi dedupes first, finds the newest version invalid and writes no
// row for the key; so the incremental run retracts the key's older row
// (retract_invalid) and counts it as deleted.
func TestQualityNewestVersionInvalid(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			y := strings.ReplaceAll(paymentsSpec, "{quality}", "quality:\n  checks: [\"amount >= 0\"]")
			inc := e.spec(strings.ReplaceAll(y, "{target}", "inc"))
			ref := e.spec(strings.ReplaceAll(y, "{target}", "ref"))
			cols := []string{"payment_id", "amount", "updated_at"}
			e.createTable("app_{id}.payments", inc.Columns)
			e.insert("app_{id}.payments", inc.Columns, []any{1, "10.00", "2026-01-01 09:00:00"}, []any{2, "20.00", "2026-01-01 10:00:00"})
			mustRun(t, e, inc, Options{Until: until("2026-01-02")})
			e.insert("app_{id}.payments", inc.Columns, []any{1, "-10.00", "2026-01-02 09:00:00"})
			r := mustRun(t, e, inc, Options{Until: until("2026-01-03")})
			if r.RowsRead != 1 || r.RowsQuarantined != 1 || r.RowsInserted+r.RowsUpdated != 0 {
				t.Errorf("second run: %+v", r)
			}
			mustRun(t, e, ref, Options{Until: until("2026-01-03"), FullRefresh: true})
			full, got := e.rows("dw_{id}.payments_ref", cols), e.rows("dw_{id}.payments_inc", cols)
			if diff := cmp.Diff(full, got); diff != "" {
				t.Errorf("a key whose newest version is quarantined must leave the target, as in a full refresh (-full +incremental):\n%s", diff)
			}
		})
	}
}
