package runner

import (
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"
)

// Story 4 of docs/stories.md: a change log applied by key. The spec keeps
// the sequence (lsn) and the commit time in the target and leaves the op
// and the ingestion time out.
const cdcCustomersSpec = `
pipeline: customers_{target}_{id}
source:
  table: app_{id}.customers_log
target:
  table: dw_{id}.customers_{target}
columns:
  customer_id: bigint
  name: varchar(32)
  country: varchar(2)
  op: varchar(1)
  lsn: bigint
  committed_at: timestamp
  ingested_at: timestamp
strategy: cdc
unique_key: [customer_id]
watermark:
  column: ingested_at
  start: 2026-01-01
  lookback: 1h
cdc:
  op: op
  sequence: lsn
  at: committed_at
  deletes: {deletes}
  exclude: [op, ingested_at]
{quality}`

const customersQuality = `quality:
  not_null: [country]
  checks: ["country <> 'XX'"]
  on_invalid: quarantine
`

func customersPlan(e *env, target, deletes, quality string) *ir.Plan {
	return e.spec(strings.NewReplacer("{target}", target, "{deletes}", deletes, "{quality}", quality).Replace(cdcCustomersSpec))
}

// change is one row of the change log: key, name, country, op, lsn,
// committed_at, ingested_at (times on 2026-01-01, as HH:MM).
type change struct {
	id            int64
	name, country any
	op            any
	lsn           int64
	committed     string
	ingested      string
}

func day(hhmm string) string { return "2026-01-01T" + hhmm + ":00Z" }

func (c change) row() []any {
	return []any{c.id, c.name, c.country, c.op, c.lsn, day(c.committed), day(c.ingested)}
}

func (e *env) changes(p *ir.Plan, cs ...change) {
	e.t.Helper()
	for _, c := range cs {
		e.insert("app_{id}.customers_log", p.Columns, c.row())
	}
}

// cdcCounts is what a cdc run reports: every change read is inserted,
// updated, deleted, quarantined or ignored.
type cdcCounts struct {
	Read, Inserted, Updated, Deleted, Quarantined, Ignored int64
}

func cdcCountsOf(r *Result) cdcCounts {
	return cdcCounts{r.RowsRead, r.RowsInserted, r.RowsUpdated, r.RowsDeleted, r.RowsQuarantined, r.RowsIgnored}
}

// cdcState reads a cdc target and its tombstones, each row canonical; a
// soft delete's flag reads as true or false on every engine (MariaDB and
// SQLite store a boolean as 1 or 0).
func (e *env) cdcState(p *ir.Plan) (target, tombstones []string) {
	e.t.Helper()
	cols := columnNamesOf(p.CDC.TargetColumns)
	target = e.rows(strings.Join(p.Target.Parts, "."), cols)
	if p.CDC.Soft {
		flag := len(cols) - 2
		for i, r := range target {
			f := strings.Split(r, " | ")
			switch f[flag] {
			case "1":
				f[flag] = "true"
			case "0":
				f[flag] = "false"
			}
			target[i] = strings.Join(f, " | ")
		}
	}
	tomb := append(append([]string(nil), p.Key...), ir.SequenceColumn, ir.DeletedAtColumn)
	tombstones = e.rows(strings.Join(p.CDC.Tombstones.Parts, "."), tomb)
	return target, tombstones
}

func columnNamesOf(cols []ir.Col) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

func at(hhmm string) string { return "2026-01-01 " + hhmm + ":00" }

// TestCDCStory4 applies a change log over four runs, with hard and with
// soft deletes, on every engine: inserts, updates and deletes in one window
// and across windows, several changes of a key in a window, a delete
// without an image, invalid images and an unknown op code quarantined, a
// re-insert after a delete, an update older than a delete applied before
// it, in its window and after its window (ignored, counted), a rerun that
// changes nothing. After every run the
// target and its tombstones equal a full replay of the log up to the same
// hi, and the run's counts add up to the changes read.
func TestCDCStory4(t *testing.T) {
	type run struct {
		hi      string
		add     []change
		want    cdcCounts
		target  []string
		tombs   []string
		comment string
	}
	window1 := []change{
		{1, "ann", "DE", "c", 10, "09:00", "09:01"},
		{2, "bob", "FR", "c", 11, "09:00", "09:01"},
		{2, "bob", "IT", "u", 12, "09:10", "09:11"}, // a second change of key 2 in the window
		{3, "cy", "US", "c", 13, "09:20", "09:21"},  // inserted and deleted in one window
		{3, nil, nil, "d", 14, "09:30", "09:31"},    // a delete has no image, and is not checked
		{4, "dan", nil, "c", 15, "09:40", "09:41"},  // an invalid image: quarantined
		{5, "eve", "ES", "x", 16, "09:45", "09:46"}, // an unknown op code: quarantined
	}
	window2 := []change{
		{1, "ann", "AT", "u", 20, "11:00", "11:01"},
		{2, nil, nil, "d", 21, "11:05", "11:06"},
		{2, "bob", "GB", "u", 19, "10:58", "11:07"}, // arrives after the newer delete
		{3, "cy", "CA", "c", 22, "11:10", "11:11"},  // back after its delete
		{4, "dan", "PL", "u", 23, "11:20", "11:21"},
		{6, "fay", "NL", "c", 24, "11:30", "11:31"},
		{6, "fay", "XX", "u", 25, "11:40", "11:41"}, // the newest change is invalid: the newest valid one wins
	}
	window4 := []change{
		{2, "bob", "GB", "u", 18, "10:50", "12:30"}, // older than the delete applied in run 2
		{2, "bob", "IE", "u", 20, "11:02", "12:40"}, // older than the delete, newer than the image before it
		{1, nil, nil, "d", 30, "13:00", "13:01"},
	}
	window5 := []change{
		{2, "bob", "NO", "u", 17, "10:40", "15:00"}, // older than key 2's tombstone, whose delete the window no longer holds
	}
	cases := map[string][]run{
		"hard": {
			{hi: "10:00", add: window1, want: cdcCounts{Read: 7, Inserted: 2, Deleted: 1, Quarantined: 2, Ignored: 2},
				target: []string{line(1, "ann", "DE", 10, at("09:00"), 10), line(2, "bob", "IT", 12, at("09:10"), 12)},
				tombs:  []string{line(3, 14, at("09:30"))}},
			{hi: "12:00", add: window2, want: cdcCounts{Read: 14, Inserted: 3, Updated: 1, Deleted: 1, Quarantined: 3, Ignored: 6},
				target: []string{line(1, "ann", "AT", 20, at("11:00"), 20), line(3, "cy", "CA", 22, at("11:10"), 22),
					line(4, "dan", "PL", 23, at("11:20"), 23), line(6, "fay", "NL", 24, at("11:30"), 24)},
				tombs: []string{line(2, 21, at("11:05"))}},
			{hi: "12:00", comment: "a rerun of the window", want: cdcCounts{Read: 7, Quarantined: 1, Ignored: 6},
				target: []string{line(1, "ann", "AT", 20, at("11:00"), 20), line(3, "cy", "CA", 22, at("11:10"), 22),
					line(4, "dan", "PL", 23, at("11:20"), 23), line(6, "fay", "NL", 24, at("11:30"), 24)},
				tombs: []string{line(2, 21, at("11:05"))}},
			{hi: "14:00", add: window4, want: cdcCounts{Read: 10, Deleted: 1, Quarantined: 1, Ignored: 8},
				target: []string{line(3, "cy", "CA", 22, at("11:10"), 22), line(4, "dan", "PL", 23, at("11:20"), 23), line(6, "fay", "NL", 24, at("11:30"), 24)},
				tombs:  []string{line(1, 30, at("13:00")), line(2, 21, at("11:05"))}},
			{hi: "16:00", add: window5, want: cdcCounts{Read: 2, Ignored: 2},
				target: []string{line(3, "cy", "CA", 22, at("11:10"), 22), line(4, "dan", "PL", 23, at("11:20"), 23), line(6, "fay", "NL", 24, at("11:30"), 24)},
				tombs:  []string{line(1, 30, at("13:00")), line(2, 21, at("11:05"))}},
		},
		"soft": {
			{hi: "10:00", add: window1, want: cdcCounts{Read: 7, Inserted: 3, Deleted: 1, Quarantined: 2, Ignored: 1},
				target: []string{line(1, "ann", "DE", 10, at("09:00"), 10, false, nil), line(2, "bob", "IT", 12, at("09:10"), 12, false, nil),
					line(3, "cy", "US", 13, at("09:20"), 13, true, at("09:30"))},
				tombs: []string{line(3, 14, at("09:30"))}},
			{hi: "12:00", add: window2, want: cdcCounts{Read: 14, Inserted: 2, Updated: 3, Deleted: 1, Quarantined: 3, Ignored: 5},
				target: []string{line(1, "ann", "AT", 20, at("11:00"), 20, false, nil), line(2, "bob", "GB", 19, at("10:58"), 19, true, at("11:05")),
					line(3, "cy", "CA", 22, at("11:10"), 22, false, nil), line(4, "dan", "PL", 23, at("11:20"), 23, false, nil),
					line(6, "fay", "NL", 24, at("11:30"), 24, false, nil)},
				tombs: []string{line(2, 21, at("11:05"))}},
			{hi: "12:00", comment: "a rerun of the window", want: cdcCounts{Read: 7, Quarantined: 1, Ignored: 6},
				target: []string{line(1, "ann", "AT", 20, at("11:00"), 20, false, nil), line(2, "bob", "GB", 19, at("10:58"), 19, true, at("11:05")),
					line(3, "cy", "CA", 22, at("11:10"), 22, false, nil), line(4, "dan", "PL", 23, at("11:20"), 23, false, nil),
					line(6, "fay", "NL", 24, at("11:30"), 24, false, nil)},
				tombs: []string{line(2, 21, at("11:05"))}},
			{hi: "14:00", add: window4, want: cdcCounts{Read: 10, Updated: 1, Deleted: 1, Quarantined: 1, Ignored: 7},
				target: []string{line(1, "ann", "AT", 20, at("11:00"), 20, true, at("13:00")), line(2, "bob", "IE", 20, at("11:02"), 20, true, at("11:05")),
					line(3, "cy", "CA", 22, at("11:10"), 22, false, nil), line(4, "dan", "PL", 23, at("11:20"), 23, false, nil),
					line(6, "fay", "NL", 24, at("11:30"), 24, false, nil)},
				tombs: []string{line(1, 30, at("13:00")), line(2, 21, at("11:05"))}},
			{hi: "16:00", add: window5, want: cdcCounts{Read: 2, Ignored: 2},
				target: []string{line(1, "ann", "AT", 20, at("11:00"), 20, true, at("13:00")), line(2, "bob", "IE", 20, at("11:02"), 20, true, at("11:05")),
					line(3, "cy", "CA", 22, at("11:10"), 22, false, nil), line(4, "dan", "PL", 23, at("11:20"), 23, false, nil),
					line(6, "fay", "NL", 24, at("11:30"), 24, false, nil)},
				tombs: []string{line(1, 30, at("13:00")), line(2, 21, at("11:05"))}},
		},
	}
	for _, eng := range engines() {
		for _, mode := range []string{"hard", "soft"} {
			t.Run(eng.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, eng)
				inc := customersPlan(e, "inc", mode, customersQuality)
				ref := customersPlan(e, "ref", mode, customersQuality)
				e.createTable("app_{id}.customers_log", nullableCols(inc.Columns))
				for i, r := range cases[mode] {
					e.changes(inc, r.add...)
					what := "run " + string(rune('1'+i)) + " until " + r.hi
					if r.comment != "" {
						what += " (" + r.comment + ")"
					}
					res := mustRun(t, e, inc, Options{Until: until(day(r.hi))})
					if diff := cmp.Diff(r.want, cdcCountsOf(res)); diff != "" {
						t.Errorf("%s: counts (-want +got):\n%s", what, diff)
					}
					c := cdcCountsOf(res)
					if c.Read != c.Inserted+c.Updated+c.Deleted+c.Quarantined+c.Ignored {
						t.Errorf("%s: the counts do not add up to the changes read: %+v", what, c)
					}
					target, tombs := e.cdcState(inc)
					if diff := cmp.Diff(r.target, target); diff != "" {
						t.Errorf("%s: target (-want +got):\n%s", what, diff)
					}
					if diff := cmp.Diff(r.tombs, tombs); diff != "" {
						t.Errorf("%s: tombstones (-want +got):\n%s", what, diff)
					}
					mustRun(t, e, ref, Options{Until: until(day(r.hi)), FullRefresh: true})
					fullTarget, fullTombs := e.cdcState(ref)
					if diff := cmp.Diff(fullTarget, target); diff != "" {
						t.Errorf("%s: the target differs from a full replay (-replay +incremental):\n%s", what, diff)
					}
					if diff := cmp.Diff(fullTombs, tombs); diff != "" {
						t.Errorf("%s: the tombstones differ from a full replay (-replay +incremental):\n%s", what, diff)
					}
				}
				// The whole log replayed: 18 changes, 3 of them invalid.
				res := mustRun(t, e, ref, Options{Until: until(day("16:00")), FullRefresh: true})
				want := map[string]cdcCounts{
					"hard": {Read: 18, Inserted: 3, Deleted: 2, Quarantined: 3, Ignored: 10},
					"soft": {Read: 18, Inserted: 5, Deleted: 2, Quarantined: 3, Ignored: 8},
				}[mode]
				if diff := cmp.Diff(want, cdcCountsOf(res)); diff != "" {
					t.Errorf("full replay: counts (-want +got):\n%s", diff)
				}
				q := e.rows("dw_{id}.customers_inc_quarantine", []string{"customer_id", "lsn", "incrc_reason"})
				wantQ := []string{
					line(4, 15, "not_null(country)"), line(4, 15, "not_null(country)"),
					line(5, 16, "cdc.op: not a known op code (insert: c, r; update: u; delete: d)"), line(5, 16, "cdc.op: not a known op code (insert: c, r; update: u; delete: d)"),
					line(6, 25, "check: country <> 'XX'"), line(6, 25, "check: country <> 'XX'"), line(6, 25, "check: country <> 'XX'"),
				}
				if diff := cmp.Diff(wantQ, sorted(q)); diff != "" {
					t.Errorf("quarantine, once per run that read them (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestRunLogUpgrade: a run log an older incrc created, without the columns
// added since (rows_skipped, note, rows_ignored), is upgraded by setup, and
// a cdc run's ignored changes are recorded and read back by incrc state.
func TestRunLogUpgrade(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			// On PostgreSQL and MariaDB every test shares one database and
			// its run log, which cannot be made older for one test; the
			// embedded engines get a database of their own. (The servers'
			// shared run log was upgraded by the first run of this incrc.)
			if eng.name == "postgres" || eng.name == "mysql" {
				t.Skip("the run log of a server's test database is shared: the embedded engines show the upgrade")
			}
			t.Parallel()
			e := newEnv(t, eng)
			var old []ir.Col
			for _, c := range ir.RunColumns {
				if c.Name != "rows_skipped" && c.Name != "note" && c.Name != ir.RegIgnored {
					old = append(old, c)
				}
			}
			e.exec(e.render(ir.CreateTable{Table: ir.RunsTable, Columns: old, PrimaryKey: []string{"run_id"}}), nil)
			p := customersPlan(e, "inc", "hard", customersQuality)
			e.createTable("app_{id}.customers_log", nullableCols(p.Columns))
			e.changes(p, change{1, "ann", "DE", "c", 10, "09:00", "09:01"}, change{1, "ann", "AT", "u", 11, "09:05", "09:06"})
			res := mustRun(t, e, p, Options{Until: until(day("10:00"))})
			if res.RowsIgnored != 1 || res.RowsInserted != 1 {
				t.Errorf("run: %+v", res)
			}
			st, err := e.tg.State(e.ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Runs) != 1 || st.Runs[0].RowsIgnored != 1 || st.Runs[0].RowsRead != 2 {
				t.Errorf("the run log read back: %+v", st.Runs)
			}
		})
	}
}

// TestCDCFailsOnInvalid: without a quarantine (on_invalid: fail, or no
// quality section), an unknown op code or an invalid image fails the run
// and nothing is written; a delete, which has no image, never does.
func TestCDCFailsOnInvalid(t *testing.T) {
	failQuality := "quality:\n  not_null: [country]\n  on_invalid: fail\n"
	cases := []struct {
		name, quality string
		bad           change
		want          string
	}{
		{"unknown op, no quality section", "", change{2, "bob", "FR", "U", 11, "09:00", "09:01"}, "1 change(s) break a rule"},
		{"NULL op, on_invalid fail", failQuality, change{2, "bob", "FR", nil, 11, "09:00", "09:01"}, "1 change(s) break a rule"},
		{"invalid image, on_invalid fail", failQuality, change{2, "bob", nil, "u", 11, "09:00", "09:01"}, "1 change(s) break a rule"},
	}
	for _, eng := range engines() {
		for _, tt := range cases {
			t.Run(eng.name+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, eng)
				p := customersPlan(e, "inc", "hard", tt.quality)
				e.createTable("app_{id}.customers_log", nullableCols(p.Columns))
				// A delete without an image, in the same window, is valid.
				e.changes(p, change{1, "ann", "DE", "c", 10, "08:00", "08:01"}, change{1, nil, nil, "d", 12, "08:30", "08:31"}, tt.bad)
				res, err := e.tg.Run(e.ctx, p, Options{Until: until(day("10:00"))})
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("run: %v, want %q", err, tt.want)
				}
				if res.Status != "failed" || res.WatermarkAfter != "" {
					t.Errorf("result: %+v", res)
				}
				target, tombs := e.cdcState(p)
				if len(target)+len(tombs) != 0 {
					t.Errorf("a failed run wrote %v and %v", target, tombs)
				}
				// Without the bad change the window applies.
				e.deleteWhere("app_{id}.customers_log", "lsn", 11)
				res = mustRun(t, e, p, Options{Until: until(day("10:00"))})
				if diff := cmp.Diff(cdcCounts{Read: 2, Deleted: 1, Ignored: 1}, cdcCountsOf(res)); diff != "" {
					t.Errorf("the run after the fix (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestCDCNullWatermark: a change whose watermark is NULL is in no window.
// Each run (and each replay) reads it along with its window, quarantines
// it with the reason and counts it as read and quarantined, and never
// applies it; without a quarantine it fails the run.
func TestCDCNullWatermark(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := customersPlan(e, "inc", "hard", customersQuality)
			strict := customersPlan(e, "strict", "hard", "")
			e.createTable("app_{id}.customers_log", nullableCols(p.Columns))
			e.changes(p, change{1, "ann", "DE", "c", 10, "08:00", "08:01"})
			e.insert("app_{id}.customers_log", p.Columns, []any{2, "bob", "FR", "c", 11, day("08:05"), nil})
			for _, opts := range []Options{{Until: until(day("10:00"))}, {Until: until(day("11:00"))}, {Until: until(day("11:00")), FullRefresh: true}} {
				res := mustRun(t, e, p, opts)
				want := cdcCounts{Read: 2, Inserted: 1, Quarantined: 1}
				if opts.Until.Hour() == 11 {
					want = cdcCounts{Read: 1, Quarantined: 1} // the window [10:00, 11:00) holds no change
				}
				if opts.FullRefresh {
					want = cdcCounts{Read: 2, Inserted: 1, Quarantined: 1}
				}
				if diff := cmp.Diff(want, cdcCountsOf(res)); diff != "" {
					t.Errorf("%+v: counts (-want +got):\n%s", opts, diff)
				}
				target, _ := e.cdcState(p)
				if diff := cmp.Diff([]string{line(1, "ann", "DE", 10, at("08:00"), 10)}, target); diff != "" {
					t.Errorf("%+v: target (-want +got):\n%s", opts, diff)
				}
			}
			q := e.rows("dw_{id}.customers_inc_quarantine", []string{"customer_id", "incrc_reason"})
			if diff := cmp.Diff([]string{
				line(2, "not_null(ingested_at): the watermark, so no window reads the row"),
				line(2, "not_null(ingested_at): the watermark, so no window reads the row"),
				line(2, "not_null(ingested_at): the watermark, so no window reads the row"),
			}, q); diff != "" {
				t.Errorf("quarantine (-want +got):\n%s", diff)
			}
			if _, err := e.tg.Run(e.ctx, strict, Options{Until: until(day("10:00"))}); err == nil || !strings.Contains(err.Error(), "1 change(s) break a rule (a NULL watermark") {
				t.Errorf("without a quarantine: %v", err)
			}
		})
	}
}
