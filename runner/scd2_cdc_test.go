package runner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
)

// SCD2 from a change log (strategy scd2 with a cdc block), on every
// engine: every change is a version from its commit time, a delete ends
// the key's current version, a late change splits the interval it falls
// in, a change at the same commit time with a greater sequence replaces
// the event there, and after every run the target and its tombstones
// equal a replay of the whole log.

// historySpec is story 4's change log (cdc_test.go's customers_log) kept
// as versions; {scd2} may set the open end.
const historySpec = `
pipeline: hist_{target}_{id}
source:
  table: app_{id}.customers_log
target:
  table: dw_{id}.hist_{target}
columns:
  customer_id: bigint
  name: varchar(32)
  country: varchar(2)
  op: varchar(1)
  lsn: bigint
  committed_at: timestamp
  ingested_at: timestamp
strategy: scd2
unique_key: [customer_id]
watermark:
  column: ingested_at
  start: 2026-01-01
  lookback: 1h
cdc:
  op: op
  sequence: lsn
  at: committed_at
  exclude: [op, ingested_at]
quality:
  not_null: [country]
  checks: ["country <> 'XX'"]
{scd2}`

func historyPlan(e *env, target, scd2 string) *compiler.Plan {
	return e.spec(strings.NewReplacer("{target}", target, "{scd2}", scd2).Replace(historySpec))
}

var (
	historyCols = []string{"customer_id", "country", "lsn", "incrc_sequence", "valid_from", "valid_to"}
	tombCols    = []string{"customer_id", "valid_from", "incrc_sequence"}
)

// versions reads an scd2 target fed by a change log and its tombstones.
func (e *env) versions(p *compiler.Plan) (rows, tombs []string) {
	e.t.Helper()
	name := strings.Join(p.Target.Parts, ".")
	return scdRows(e, name, historyCols, "customer_id", "valid_from"), scdRows(e, name+"_tombstones", tombCols, "customer_id", "valid_from")
}

// TestSCD2FromCDC runs a change log over five windows, with the open end
// NULL and a sentinel, on every engine: inserts, updates, deletes; several
// changes of a key in one window; an insert and an update in one
// transaction (the greater sequence is the version); a key deleted and
// inserted again (a new version after the gap); invalid changes (a NULL
// image column, an unknown op code, a check, a NULL commit time)
// quarantined; late changes that split a version, close one early, and
// open one in a gap; a retry of an applied change; a change at the same
// commit time as a held version with a greater sequence (a correction in
// place) and a delete at the time of a held version (which goes); a rerun
// that changes nothing. After every run: the versions and tombstones, the
// counts, no overlap and no gap but the deletes', and the target equal to
// a replay of the log.
func TestSCD2FromCDC(t *testing.T) {
	type run struct {
		hi, comment string
		add         []change
		nullAt      bool // also a change without a commit time (quarantined)
		want        cdcCounts
		rows, tombs []string
		gaps        int64
	}
	const o = "{open}"
	v := func(id int64, country string, lsn int64, from, to string) string {
		var end any = o
		if to != "" {
			end = at(to)
		}
		return line(id, country, lsn, lsn, at(from), end)
	}
	tomb := func(id int64, when string, lsn int64) string { return line(id, at(when), lsn) }
	window1 := []change{
		{1, "ann", "DE", "c", 100, "09:00", "09:01"},
		{2, "bob", "FR", "c", 110, "09:00", "09:01"},
		{2, "bob", "IT", "u", 120, "09:10", "09:11"}, // a second change of key 2 in the window
		{3, "cy", "US", "c", 130, "09:20", "09:21"},
		{3, nil, nil, "d", 140, "09:30", "09:31"},    // inserted and deleted in one window: a closed version
		{4, "dan", nil, "c", 150, "09:40", "09:41"},  // an image that breaks not_null(country)
		{5, "eve", "ES", "x", 160, "09:45", "09:46"}, // an unknown op code
		{6, "fay", "NL", "c", 170, "09:50", "09:51"},
		{6, "fay", "BE", "u", 180, "09:50", "09:52"}, // one transaction with the insert: the greater lsn is the version
	}
	window2 := []change{
		{1, "ann", "AT", "u", 300, "11:00", "11:01"},
		{2, nil, nil, "d", 310, "11:05", "11:06"},    // ends key 2's current version
		{3, "cy", "CA", "c", 320, "11:10", "11:11"},  // back after its delete: a version after the gap
		{2, "bob", "GB", "u", 115, "09:05", "11:20"}, // committed at 09:05, read now: splits [09:00, 09:10)
		{4, "dan", "PL", "c", 330, "11:30", "11:31"},
		{6, "fay", "XX", "u", 340, "11:40", "11:41"}, // breaks the check: key 6 keeps its version
	}
	window4 := []change{
		{1, nil, nil, "d", 305, "11:30", "12:30"},    // a late delete: ends [11:00, ...) at 11:30
		{1, "ann", "FR", "c", 400, "13:00", "13:01"}, // key 1 back at 13:00, after a gap
		{3, "cy", "MX", "u", 135, "09:25", "12:40"},  // late, before key 3's delete: splits [09:20, 09:30)
		{2, "bob", "NO", "c", 312, "11:08", "12:50"}, // late, in key 2's gap after its delete
		{6, "fay", "BE", "u", 180, "09:50", "12:55"}, // a retry of an applied change
	}
	window5 := []change{
		{1, "ann", "LU", "u", 410, "13:00", "15:00"}, // same commit time as key 1's version, a greater lsn: replaces it
		{4, nil, nil, "d", 420, "11:30", "15:10"},    // a delete at the time of key 4's version: removes it
		{6, "fay", "SE", "u", 175, "09:50", "15:20"}, // same time as key 6's version, a smaller lsn: ignored
	}
	runs := []run{
		{hi: "10:00", add: window1, want: cdcCounts{Read: 9, Inserted: 4, Updated: 1, Deleted: 1, Quarantined: 2, Ignored: 1}, gaps: 1,
			rows: []string{v(1, "DE", 100, "09:00", ""), v(2, "FR", 110, "09:00", "09:10"), v(2, "IT", 120, "09:10", ""),
				v(3, "US", 130, "09:20", "09:30"), v(6, "BE", 180, "09:50", "")},
			tombs: []string{tomb(3, "09:30", 140)}},
		{hi: "12:00", add: window2, nullAt: true, want: cdcCounts{Read: 16, Inserted: 2, Updated: 2, Deleted: 1, Quarantined: 4, Ignored: 7}, gaps: 2,
			rows: []string{v(1, "DE", 100, "09:00", "11:00"), v(1, "AT", 300, "11:00", ""),
				v(2, "FR", 110, "09:00", "09:05"), v(2, "GB", 115, "09:05", "09:10"), v(2, "IT", 120, "09:10", "11:05"),
				v(3, "US", 130, "09:20", "09:30"), v(3, "CA", 320, "11:10", ""),
				v(4, "PL", 330, "11:30", ""), v(6, "BE", 180, "09:50", "")},
			tombs: []string{tomb(2, "11:05", 310), tomb(3, "09:30", 140)}},
		{hi: "12:00", comment: "a rerun of the window", want: cdcCounts{Read: 7, Quarantined: 2, Ignored: 5}, gaps: 2},
		{hi: "14:00", add: window4, want: cdcCounts{Read: 12, Inserted: 2, Updated: 1, Deleted: 1, Quarantined: 2, Ignored: 6}, gaps: 3,
			rows: []string{v(1, "DE", 100, "09:00", "11:00"), v(1, "AT", 300, "11:00", "11:30"), v(1, "FR", 400, "13:00", ""),
				v(2, "FR", 110, "09:00", "09:05"), v(2, "GB", 115, "09:05", "09:10"), v(2, "IT", 120, "09:10", "11:05"), v(2, "NO", 312, "11:08", ""),
				v(3, "US", 130, "09:20", "09:25"), v(3, "MX", 135, "09:25", "09:30"), v(3, "CA", 320, "11:10", ""),
				v(4, "PL", 330, "11:30", ""), v(6, "BE", 180, "09:50", "")},
			tombs: []string{tomb(1, "11:30", 305), tomb(2, "11:05", 310), tomb(3, "09:30", 140)}},
		{hi: "16:00", add: window5, want: cdcCounts{Read: 4, Updated: 1, Deleted: 1, Ignored: 2}, gaps: 3,
			rows: []string{v(1, "DE", 100, "09:00", "11:00"), v(1, "AT", 300, "11:00", "11:30"), v(1, "LU", 410, "13:00", ""),
				v(2, "FR", 110, "09:00", "09:05"), v(2, "GB", 115, "09:05", "09:10"), v(2, "IT", 120, "09:10", "11:05"), v(2, "NO", 312, "11:08", ""),
				v(3, "US", 130, "09:20", "09:25"), v(3, "MX", 135, "09:25", "09:30"), v(3, "CA", 320, "11:10", ""),
				v(6, "BE", 180, "09:50", "")},
			tombs: []string{tomb(1, "11:30", 305), tomb(2, "11:05", 310), tomb(3, "09:30", 140), tomb(4, "11:30", 420)}},
	}
	for _, eng := range engines() {
		for _, open := range []string{"", "9999-12-31"} {
			name := eng.name + "/open end NULL"
			scd2 := ""
			var openValue any
			if open != "" {
				name, scd2, openValue = eng.name+"/open end "+open, "scd2:\n  open_end: "+open+"\n", open
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, eng)
				inc, ref := historyPlan(e, "inc", scd2), historyPlan(e, "ref", scd2)
				if ref.Program(compiler.ModeFullRefresh).Force != "" {
					t.Error("a full refresh from a change log needs no --force: the log holds the history")
				}
				shape := scdShape{"dw_{id}.hist_inc", "customer_id", "valid_from", "valid_to"}
				e.createTable("app_{id}.customers_log", nullableCols(inc.Columns))
				openRow := strings.NewReplacer(o, Canon(openValue))
				var prevRows, prevTombs []string
				for i, r := range runs {
					e.changes(inc, r.add...)
					if r.nullAt {
						e.insert("app_{id}.customers_log", inc.Columns, []any{5, "eve", "ES", "c", 350, nil, day("11:50")})
					}
					what := fmt.Sprintf("run %d until %s", i+1, r.hi)
					if r.comment != "" {
						what += " (" + r.comment + ")"
					}
					res := mustRun(t, e, inc, Options{Until: until(day(r.hi))})
					if diff := cmp.Diff(r.want, cdcCountsOf(res)); diff != "" {
						t.Errorf("%s: counts (-want +got):\n%s", what, diff)
					}
					rows, tombs := e.versions(inc)
					wantRows, wantTombs := prevRows, prevTombs // a rerun: nothing changes
					if r.rows != nil {
						wantRows, wantTombs = nil, r.tombs
						for _, row := range r.rows {
							wantRows = append(wantRows, openRow.Replace(row))
						}
					}
					if diff := cmp.Diff(wantRows, rows); diff != "" {
						t.Errorf("%s: versions (-want +got):\n%s", what, diff)
					}
					if diff := cmp.Diff(wantTombs, tombs); diff != "" {
						t.Errorf("%s: tombstones (-want +got):\n%s", what, diff)
					}
					checkTimeline(t, e, shape, r.gaps)
					mustRun(t, e, ref, Options{Until: until(day(r.hi)), FullRefresh: true})
					fullRows, fullTombs := e.versions(ref)
					if diff := cmp.Diff(fullRows, rows); diff != "" {
						t.Errorf("%s: the versions differ from a replay of the log (-replay +incremental):\n%s", what, diff)
					}
					if diff := cmp.Diff(fullTombs, tombs); diff != "" {
						t.Errorf("%s: the tombstones differ from a replay of the log (-replay +incremental):\n%s", what, diff)
					}
					prevRows, prevTombs = rows, tombs
				}
				// The whole log replayed: 24 changes, 4 invalid, 15 events
				// (the other 5 beaten at their time), 11 of them versions.
				res := mustRun(t, e, ref, Options{Until: until(day("16:00")), FullRefresh: true})
				if diff := cmp.Diff(cdcCounts{Read: 24, Inserted: 7, Updated: 4, Deleted: 4, Quarantined: 4, Ignored: 5}, cdcCountsOf(res)); diff != "" {
					t.Errorf("full replay: counts (-want +got):\n%s", diff)
				}
				q := scdRows(e, "dw_{id}.hist_inc_quarantine", []string{"lsn", "incrc_reason"}, "lsn", "incrc_reason")
				wantQ := []string{
					line(150, "not_null(country)"), line(150, "not_null(country)"),
					line(160, "cdc.op: not a known op code (insert: c, r; update: u; delete: d)"), line(160, "cdc.op: not a known op code (insert: c, r; update: u; delete: d)"),
					line(340, "check: country <> 'XX'"), line(340, "check: country <> 'XX'"), line(340, "check: country <> 'XX'"),
					line(350, "not_null(committed_at): cdc.at, the time the change takes effect"), line(350, "not_null(committed_at): cdc.at, the time the change takes effect"),
					line(350, "not_null(committed_at): cdc.at, the time the change takes effect"),
				}
				if diff := cmp.Diff(wantQ, q); diff != "" {
					t.Errorf("quarantine, once per run that read them (-want +got):\n%s", diff)
				}
			})
		}
	}
}

// TestSCD2FromCDCFailsOnInvalid: without a quarantine, a change without a
// commit time fails the run and nothing is written; a delete, which has no
// image, never breaks a quality rule.
func TestSCD2FromCDCFailsOnInvalid(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := e.spec(strings.NewReplacer("{target}", "inc", "{scd2}", "").Replace(strings.Replace(historySpec, "  checks: [\"country <> 'XX'\"]", "  on_invalid: fail", 1)))
			e.createTable("app_{id}.customers_log", nullableCols(p.Columns))
			e.changes(p, change{1, "ann", "DE", "c", 10, "08:00", "08:01"}, change{1, nil, nil, "d", 12, "08:30", "08:31"})
			e.insert("app_{id}.customers_log", p.Columns, []any{2, "bob", "FR", "c", 11, nil, day("08:05")})
			_, err := e.tg.Run(e.ctx, p, Options{Until: until(day("10:00"))})
			if err == nil || !strings.Contains(err.Error(), "1 change(s) break a rule (a NULL watermark, key, sequence or commit time") {
				t.Fatalf("run: %v", err)
			}
			if rows, tombs := e.versions(p); len(rows)+len(tombs) != 0 {
				t.Errorf("a failed run wrote %v and %v", rows, tombs)
			}
			e.deleteWhere("app_{id}.customers_log", "lsn", 11)
			res := mustRun(t, e, p, Options{Until: until(day("10:00"))})
			if diff := cmp.Diff(cdcCounts{Read: 2, Inserted: 1, Deleted: 1}, cdcCountsOf(res)); diff != "" {
				t.Errorf("the run after the fix (-want +got):\n%s", diff)
			}
			rows, tombs := e.versions(p)
			if diff := cmp.Diff([]string{line(1, "DE", 10, 10, at("08:00"), at("08:30"))}, rows); diff != "" {
				t.Errorf("versions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{line(1, at("08:30"), 12)}, tombs); diff != "" {
				t.Errorf("tombstones (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSCD2FromCDCAfterOpenEnd: a change committed at or after the open end
// would make a version that ends before it starts: the run fails, naming
// the cause, and writes nothing.
func TestSCD2FromCDCAfterOpenEnd(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := historyPlan(e, "inc", "scd2:\n  open_end: 2026-01-01T12:00:00Z\n")
			e.createTable("app_{id}.customers_log", nullableCols(p.Columns))
			e.changes(p, change{1, "ann", "DE", "c", 10, "08:00", "08:01"})
			e.insert("app_{id}.customers_log", p.Columns, []any{2, "bob", "FR", "c", 11, day("12:00"), day("08:05")})
			_, err := e.tg.Run(e.ctx, p, Options{Until: until(day("10:00"))})
			if err == nil || !strings.Contains(err.Error(), "1 version(s) would end before they start: a change's committed_at is at or after scd2.open_end") {
				t.Fatalf("run: %v", err)
			}
			if rows, tombs := e.versions(p); len(rows)+len(tombs) != 0 {
				t.Errorf("a failed run wrote %v and %v", rows, tombs)
			}
		})
	}
}
