package runner

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/dialects"
)

// The scd2 scenarios of issue 10, on every engine: versions by time (a
// table of versions read through a window, and a snapshot read whole) and
// by columns; keys that vanish and come back under each delete mode; a
// late version that splits the interval it falls in; reruns that change
// nothing; and after every run, queries that find no overlap, no empty
// interval, at most one current version per key, and no gap but the ones
// a vanished key leaves.

// scdUntil is --until for a date or an RFC 3339 time.
func scdUntil(s string) *time.Time {
	t, err := ir.ParseTime(s)
	if err != nil {
		panic(err)
	}
	return &t
}

// scdCounts is what a run reports that a scenario predicts.
type scdCounts struct{ read, inserted, updated, deleted, ignored int64 }

func scdRun(t *testing.T, e *env, p *ir.Plan, until string, want *scdCounts) *Result {
	t.Helper()
	res, err := e.tg.Run(e.ctx, p, Options{Until: scdUntil(until)})
	if err != nil {
		t.Fatalf("run %s until %s: %v", p.Pipeline, until, err)
	}
	if msg := accounted(p, res); msg != "" {
		t.Errorf("run until %s: %s: %+v", until, msg, countsOf(res))
	}
	if want != nil {
		got := scdCounts{res.RowsRead, res.RowsInserted, res.RowsUpdated, res.RowsDeleted, res.RowsIgnored}
		if got != *want {
			t.Errorf("run until %s: read, inserted, updated, deleted, ignored = %+v, want %+v", until, got, *want)
		}
	}
	return res
}

// scdName spells a table of the env as the engine names it.
func scdName(e *env, name string) string {
	t := e.table(name)
	if n, ok := e.tg.Dialect.(dialects.TableNamer); ok {
		return n.TableName(t)
	}
	parts := make([]string, len(t.Parts))
	for i, p := range t.Parts {
		parts[i] = e.tg.Dialect.QuoteIdent(p)
	}
	return strings.Join(parts, ".")
}

// scdCount runs a query of one integer; {T} is the table, {k} {vf} {vt}
// the quoted key, valid_from and valid_to.
func scdCount(e *env, query string, v scdShape) int64 {
	e.t.Helper()
	q := e.tg.Dialect.QuoteIdent
	query = strings.NewReplacer("{T}", scdName(e, v.table), "{k}", q(v.key), "{vf}", q(v.vf), "{vt}", q(v.vt)).Replace(query)
	var n int64
	if err := e.tg.DB.QueryRowContext(e.ctx, query).Scan(&n); err != nil {
		e.t.Fatalf("%s\n%v", query, err)
	}
	return n
}

// scdShape names a versioned table's columns for the queries.
type scdShape struct{ table, key, vf, vt string }

// An open version ends at NULL or at a sentinel (every test's is in the
// year 9999).
const (
	scdOpen   = "(a.{vt} IS NULL OR a.{vt} >= '9000-01-01')"
	scdClosed = "(a.{vt} IS NOT NULL AND a.{vt} < '9000-01-01')"
)

// checkTimeline asserts, with queries on the target, the invariants of a
// versioned table: no two versions of a key overlap, none is empty, a key
// has at most one current version, and the closed versions that no
// version of the key follows at once (the gaps a vanished key leaves)
// number gaps.
func checkTimeline(t *testing.T, e *env, v scdShape, gaps int64) {
	t.Helper()
	checkTimelineFar(t, e, v, gaps, "'9000-01-01'")
}

// checkTimelineFar is checkTimeline for versions whose sentinels are at or
// after far: a literal of the validity's type (a number where the versions
// are numbered by a sequence).
func checkTimelineFar(t *testing.T, e *env, v scdShape, gaps int64, far string) {
	t.Helper()
	scdOpen := strings.ReplaceAll(scdOpen, "'9000-01-01'", far)
	scdClosed := strings.ReplaceAll(scdClosed, "'9000-01-01'", far)
	if n := scdCount(e, "SELECT COUNT(*) FROM {T} a JOIN {T} b ON a.{k} = b.{k} AND a.{vf} < b.{vf} AND "+strings.Replace(scdOpen, ">= "+far, "> b.{vf}", 1), v); n != 0 {
		t.Errorf("%d pair(s) of versions overlap", n)
	}
	if n := scdCount(e, "SELECT COUNT(*) FROM {T} a WHERE a.{vt} IS NOT NULL AND a.{vt} <= a.{vf}", v); n != 0 {
		t.Errorf("%d version(s) end before they start", n)
	}
	if n := scdCount(e, "SELECT COUNT(*) FROM (SELECT a.{k} FROM {T} a WHERE "+scdOpen+" GROUP BY a.{k} HAVING COUNT(*) > 1) x", v); n != 0 {
		t.Errorf("%d key(s) have more than one current version", n)
	}
	if n := scdCount(e, "SELECT COUNT(*) FROM {T} a WHERE "+scdClosed+" AND NOT EXISTS (SELECT 1 FROM {T} b WHERE b.{k} = a.{k} AND b.{vf} = a.{vt})", v); n != gaps {
		t.Errorf("%d gap(s) between versions, want %d", n, gaps)
	}
}

// scdRows reads a table ordered by the given columns, each value
// canonical; a flag reads true or false on every engine.
func scdRows(e *env, name string, cols []string, order ...string) []string {
	e.t.Helper()
	var by []ir.Order
	for _, o := range order {
		by = append(by, ir.Order{Column: o})
	}
	parts := e.render(ir.SelectRows{Table: e.table(name), Columns: cols, OrderBy: by})
	rs, err := e.tg.DB.QueryContext(e.ctx, parts[0].SQL)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			e.t.Fatal(err)
		}
		s := make([]string, len(vals))
		for i, v := range vals {
			s[i] = Canon(v)
			if cols[i] == "gone" || cols[i] == "is_deleted" {
				// A boolean reads back as 0 and 1 where it is a number (SQLite,
				// MariaDB's TINYINT).
				s[i] = map[string]string{"0": "false", "1": "true", "false": "false", "true": "true"}[s[i]]
			}
		}
		out = append(out, strings.Join(s, " | "))
	}
	if err := rs.Err(); err != nil {
		e.t.Fatal(err)
	}
	return out
}

func scdLine(vals ...any) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = Canon(v)
	}
	return strings.Join(s, " | ")
}

const planVersionsSpec = `
pipeline: plans_{target}_{id}
source:
  table: app_{id}.plan_versions
target:
  table: dw_{id}.plans_{target}
columns:
  plan_id: bigint
  price: decimal(10,2)
  changed_at: timestamp
strategy: scd2
unique_key: [plan_id]
watermark:
  column: changed_at
  start: 2026-01-01
  lookback: 3d
scd2:
  by: time
`

func planVersions(e *env, target string) *ir.Plan {
	return e.spec(strings.ReplaceAll(planVersionsSpec, "{target}", target))
}

var planCols = []string{"plan_id", "price", "changed_at", "valid_from", "valid_to"}

// TestSCD2ByTimeVersions: a table of versions read through a window. New
// keys and versions land, a rerun changes nothing, a version committed
// late (inside the lookback) is inserted where it belongs and splits the
// version it falls in, and the target equals a full refresh of the
// version table (which needs no --force: the source holds every version).
func TestSCD2ByTimeVersions(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := planVersions(e, "inc")
			shape := scdShape{"dw_{id}.plans_inc", "plan_id", "valid_from", "valid_to"}
			e.createTable("app_{id}.plan_versions", p.Columns)
			e.insert("app_{id}.plan_versions", p.Columns,
				[]any{1, "10.00", "2026-01-02 00:00:00"},
				[]any{1, "12.00", "2026-01-05 00:00:00"},
				[]any{2, "5.00", "2026-01-03 09:30:00"},
				[]any{2, "5.00", "2026-01-03 09:30:00"}, // a retry wrote it twice: one version
			)
			scdRun(t, e, p, "2026-01-06", &scdCounts{read: 4, inserted: 2, updated: 1, ignored: 1})
			want := []string{
				scdLine(1, "10.00", "2026-01-02", "2026-01-02", "2026-01-05"),
				scdLine(1, "12.00", "2026-01-05", "2026-01-05", nil),
				scdLine(2, "5.00", "2026-01-03 09:30:00", "2026-01-03 09:30:00", nil),
			}
			if diff := cmp.Diff(want, scdRows(e, shape.table, planCols, "plan_id", "valid_from")); diff != "" {
				t.Fatalf("first run (-want +got):\n%s", diff)
			}
			// Reruns, the lookback re-reading [3rd, hi): nothing changes.
			scdRun(t, e, p, "2026-01-06", &scdCounts{read: 3, ignored: 3})
			scdRun(t, e, p, "2026-01-07", &scdCounts{read: 3, ignored: 3})
			// A version of plan 1 dated the 4th commits late: the next run's
			// window [7th - 3d, 9th) reads it. It splits [2nd, 5th).
			e.insert("app_{id}.plan_versions", p.Columns,
				[]any{1, "11.00", "2026-01-04 00:00:00"},
				[]any{1, "13.00", "2026-01-08 00:00:00"},
				[]any{3, "7.00", "2026-01-07 12:00:00"},
			)
			scdRun(t, e, p, "2026-01-09", &scdCounts{read: 4, inserted: 1, updated: 2, ignored: 1})
			want = []string{
				scdLine(1, "10.00", "2026-01-02", "2026-01-02", "2026-01-04"),
				scdLine(1, "11.00", "2026-01-04", "2026-01-04", "2026-01-05"),
				scdLine(1, "12.00", "2026-01-05", "2026-01-05", "2026-01-08"),
				scdLine(1, "13.00", "2026-01-08", "2026-01-08", nil),
				scdLine(2, "5.00", "2026-01-03 09:30:00", "2026-01-03 09:30:00", nil),
				scdLine(3, "7.00", "2026-01-07 12:00:00", "2026-01-07 12:00:00", nil),
			}
			got := scdRows(e, shape.table, planCols, "plan_id", "valid_from")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("after the late version (-want +got):\n%s", diff)
			}
			checkTimeline(t, e, shape, 0)
			scdRun(t, e, p, "2026-01-09", &scdCounts{read: 2, ignored: 2})
			// Plan 3's version is corrected in place, at the same time, inside
			// the lookback: the version is rewritten, no new one.
			e.update("app_{id}.plan_versions", p.Columns, "plan_id", 3, map[string]any{"price": "7.50"})
			scdRun(t, e, p, "2026-01-10", &scdCounts{read: 2, updated: 1, ignored: 1})
			want[5] = scdLine(3, "7.50", "2026-01-07 12:00:00", "2026-01-07 12:00:00", nil)
			got = scdRows(e, shape.table, planCols, "plan_id", "valid_from")
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("after the correction (-want +got):\n%s", diff)
			}
			// The rebuild: the same spec, written from the whole version table.
			ref := planVersions(e, "ref")
			if ref.Program(ir.ModeFullRefresh).Force != "" {
				t.Error("a full refresh of a version table needs no --force: the source holds every version")
			}
			res, err := e.tg.Run(e.ctx, ref, Options{Until: scdUntil("2026-01-10"), FullRefresh: true})
			if err != nil {
				t.Fatal(err)
			}
			if msg := accounted(ref, res); msg != "" {
				t.Errorf("full refresh: %s: %+v", msg, countsOf(res))
			}
			// Each key's first version is inserted, the later ones updated.
			if res.RowsInserted != 3 || res.RowsUpdated != 3 {
				t.Errorf("full refresh inserted %d versions and updated %d, want 3 and 3", res.RowsInserted, res.RowsUpdated)
			}
			if diff := cmp.Diff(got, scdRows(e, "dw_{id}.plans_ref", planCols, "plan_id", "valid_from")); diff != "" {
				t.Errorf("incremental differs from a full refresh (-incremental +full):\n%s", diff)
			}
		})
	}
}

const customersSpec = `
pipeline: cust_{mode}_{id}
source:
  table: app_{id}.customers
target:
  table: dw_{id}.cust_{mode}
columns:
  customer_id: bigint
  country: varchar(2)
  updated_at: timestamp
strategy: scd2
unique_key: [customer_id]
watermark:
  column: updated_at
  start: 2000-01-01
scd2:
  by: time
  snapshot: true
  deletes: {mode}
  {extra}
`

// TestSCD2ByTimeSnapshot: a snapshot with one row per key, updated in
// place, read whole by every run, under each delete mode. Customer 1
// moves (a version at its updated_at, the previous one closed there);
// customers 2, 3 and 4 leave the snapshot, then 2 comes back as it was (a
// restore: its time is older than the close, so it opens at hi), 3 with a
// new time, and 4 changed, with a time inside its closed version (which
// that version is split at: the new values hold from then to the close,
// and again from hi). Unchanged rows open nothing, reruns change nothing, and
// a full refresh is refused without --force.
func TestSCD2ByTimeSnapshot(t *testing.T) {
	type mode struct {
		extra        string
		vanish, back scdCounts // the runs on the 10th (2 and 3 gone) and the 12th (back)
		gaps         int64     // after the run on the 10th, and at the end
		rows         []string  // customer_id, country, updated_at, valid_from, valid_to[, is_deleted]
	}
	const end = "9999-12-31"
	modes := map[string]mode{
		"ignore": {vanish: scdCounts{read: 1, ignored: 1}, back: scdCounts{read: 4, updated: 2, ignored: 2}, rows: []string{
			scdLine(1, "IN", "2026-01-01", "2026-01-01", "2026-01-08"),
			scdLine(1, "DE", "2026-01-08", "2026-01-08", nil),
			scdLine(2, "FR", "2026-01-02", "2026-01-02", nil),
			scdLine(3, "ES", "2026-01-01", "2026-01-01", "2026-01-11"),
			scdLine(3, "ES", "2026-01-11", "2026-01-11", nil),
			scdLine(4, "DK", "2026-01-01", "2026-01-01", "2026-01-06"),
			scdLine(4, "PT", "2026-01-06", "2026-01-06", nil)}},
		"close": {extra: "open_end: " + end, vanish: scdCounts{read: 1, deleted: 3, ignored: 1}, back: scdCounts{read: 4, inserted: 1, updated: 2, ignored: 1}, gaps: 3, rows: []string{
			scdLine(1, "IN", "2026-01-01", "2026-01-01", "2026-01-08"),
			scdLine(1, "DE", "2026-01-08", "2026-01-08", end),
			scdLine(2, "FR", "2026-01-02", "2026-01-02", "2026-01-10"),
			scdLine(2, "FR", "2026-01-02", "2026-01-12", end),
			scdLine(3, "ES", "2026-01-01", "2026-01-01", "2026-01-10"),
			scdLine(3, "ES", "2026-01-11", "2026-01-11", end),
			scdLine(4, "DK", "2026-01-01", "2026-01-01", "2026-01-06"),
			scdLine(4, "PT", "2026-01-06", "2026-01-06", "2026-01-10"),
			scdLine(4, "PT", "2026-01-06", "2026-01-12", end)}},
		"new_record": {vanish: scdCounts{read: 1, deleted: 3, ignored: 1}, back: scdCounts{read: 4, inserted: 1, updated: 2, ignored: 1}, rows: []string{
			scdLine(1, "IN", "2026-01-01", "2026-01-01", "2026-01-08", "false"),
			scdLine(1, "DE", "2026-01-08", "2026-01-08", nil, "false"),
			scdLine(2, "FR", "2026-01-02", "2026-01-02", "2026-01-10", "false"),
			scdLine(2, "FR", "2026-01-02", "2026-01-10", "2026-01-12", "true"),
			scdLine(2, "FR", "2026-01-02", "2026-01-12", nil, "false"),
			scdLine(3, "ES", "2026-01-01", "2026-01-01", "2026-01-10", "false"),
			scdLine(3, "ES", "2026-01-01", "2026-01-10", "2026-01-11", "true"),
			scdLine(3, "ES", "2026-01-11", "2026-01-11", nil, "false"),
			scdLine(4, "DK", "2026-01-01", "2026-01-01", "2026-01-06", "false"),
			scdLine(4, "PT", "2026-01-06", "2026-01-06", "2026-01-10", "false"),
			scdLine(4, "DK", "2026-01-01", "2026-01-10", "2026-01-12", "true"),
			scdLine(4, "PT", "2026-01-06", "2026-01-12", nil, "false")}},
	}
	for _, eng := range engines() {
		for _, name := range []string{"ignore", "close", "new_record"} {
			m := modes[name]
			t.Run(eng.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, eng)
				p := e.spec(strings.NewReplacer("{mode}", name, "{extra}", m.extra).Replace(customersSpec))
				target := "dw_{id}.cust_" + name
				shape := scdShape{target, "customer_id", "valid_from", "valid_to"}
				cols := []string{"customer_id", "country", "updated_at", "valid_from", "valid_to"}
				if name == "new_record" {
					cols = append(cols, "is_deleted")
				}
				e.createTable("app_{id}.customers", p.Columns)
				e.insert("app_{id}.customers", p.Columns,
					[]any{1, "IN", "2026-01-01"}, []any{2, "FR", "2026-01-02"}, []any{3, "ES", "2026-01-01"}, []any{4, "DK", "2026-01-01"})
				scdRun(t, e, p, "2026-01-03", &scdCounts{read: 4, inserted: 4})
				scdRun(t, e, p, "2026-01-03", &scdCounts{read: 4, ignored: 4})
				scdRun(t, e, p, "2026-01-05", &scdCounts{read: 4, ignored: 4})
				// Customer 1 moves on the 8th.
				e.update("app_{id}.customers", p.Columns, "customer_id", 1, map[string]any{"country": "DE", "updated_at": "2026-01-08"})
				scdRun(t, e, p, "2026-01-09", &scdCounts{read: 4, updated: 1, ignored: 3})
				checkTimeline(t, e, shape, 0)
				for _, id := range []int{2, 3, 4} {
					e.deleteRows("app_{id}.customers", "customer_id", id)
				}
				scdRun(t, e, p, "2026-01-10", &m.vanish)
				checkTimeline(t, e, shape, m.gaps)
				scdRun(t, e, p, "2026-01-10", &scdCounts{read: 1, ignored: 1})
				e.insert("app_{id}.customers", p.Columns, []any{2, "FR", "2026-01-02"}, []any{3, "ES", "2026-01-11"}, []any{4, "PT", "2026-01-06"})
				scdRun(t, e, p, "2026-01-12", &m.back)
				checkTimeline(t, e, shape, m.gaps)
				scdRun(t, e, p, "2026-01-12", &scdCounts{read: 4, ignored: 4})
				scdRun(t, e, p, "2026-01-13", &scdCounts{read: 4, ignored: 4})
				got := scdRows(e, target, cols, "customer_id", "valid_from")
				if diff := cmp.Diff(m.rows, got); diff != "" {
					t.Errorf("versions (-want +got):\n%s", diff)
				}
				// A full refresh would keep only the snapshot's current rows.
				_, err := e.tg.Run(e.ctx, p, Options{Until: scdUntil("2026-01-14"), FullRefresh: true})
				if err == nil || !strings.Contains(err.Error(), "--force") || !strings.Contains(err.Error(), "history") {
					t.Fatalf("a full refresh of a snapshot-fed scd2 target without --force: %v", err)
				}
				if diff := cmp.Diff(got, scdRows(e, target, cols, "customer_id", "valid_from")); diff != "" {
					t.Errorf("the refused full refresh changed the target:\n%s", diff)
				}
				res, err := e.tg.Run(e.ctx, p, Options{Until: scdUntil("2026-01-14"), FullRefresh: true, Force: true})
				if err != nil {
					t.Fatal(err)
				}
				if msg := accounted(p, res); msg != "" {
					t.Errorf("full refresh: %s: %+v", msg, countsOf(res))
				}
				if res.RowsInserted != 4 || res.RowsDeleted != int64(len(got)) {
					t.Errorf("forced full refresh: inserted %d, deleted %d; want 4 and %d", res.RowsInserted, res.RowsDeleted, len(got))
				}
				checkTimeline(t, e, shape, 0)
			})
		}
	}
}

const scd2ProductsSpec = `
pipeline: prod_{mode}_{id}
source:
  table: app_{id}.products
target:
  table: dw_{id}.prod_{mode}
columns:
  product_id: bigint
  name: varchar(32)
  price: decimal(10,2)
strategy: scd2
unique_key: [product_id]
quality:
  checks: ["price >= 0"]
scd2:
  by: columns
  tracked: [price]
  deletes: {mode}
  {extra}
`

// TestSCD2ByColumns: a snapshot without a change time, read whole. A
// changed tracked column closes the current version at the run's hi and
// opens one there; a changed untracked column is overwritten in the
// current version; an unchanged row opens nothing; a row that breaks a
// quality rule is quarantined and its key keeps its version (it did not
// vanish); a change and a rerun at the same hi rewrite the version that
// opened there instead of leaving one that lasts no time; and each delete
// mode, with a key that vanishes and comes back.
func TestSCD2ByColumns(t *testing.T) {
	cols := []string{"product_id", "name", "price", "starts", "ends"}
	type mode struct {
		extra  string
		open   any
		vanish scdCounts // the run on the 5th, product 2 gone
		back   scdCounts // the run on the 6th, product 2 back
		gaps   int64
		rows   []string
	}
	modes := map[string]mode{
		"ignore": {open: nil, vanish: scdCounts{read: 1, ignored: 1}, back: scdCounts{read: 3, inserted: 1, ignored: 2},
			rows: []string{
				scdLine(1, "tea", "3.50", "2026-01-02", "2026-01-04"), scdLine(1, "tea", "3.80", "2026-01-04", nil),
				scdLine(2, "espresso", "4.00", "2026-01-02", nil),
				scdLine(3, "cocoa", "2.75", "2026-01-06", nil)}},
		"close": {extra: "open_end: 9999-12-31", open: "9999-12-31", vanish: scdCounts{read: 1, deleted: 1, ignored: 1}, back: scdCounts{read: 3, inserted: 2, ignored: 1}, gaps: 1,
			rows: []string{
				scdLine(1, "tea", "3.50", "2026-01-02", "2026-01-04"), scdLine(1, "tea", "3.80", "2026-01-04", "9999-12-31"),
				scdLine(2, "espresso", "4.00", "2026-01-02", "2026-01-05"), scdLine(2, "espresso", "4.00", "2026-01-06", "9999-12-31"),
				scdLine(3, "cocoa", "2.75", "2026-01-06", "9999-12-31")}},
		"new_record": {extra: "deleted: gone", open: nil, vanish: scdCounts{read: 1, deleted: 1, ignored: 1}, back: scdCounts{read: 3, inserted: 2, ignored: 1},
			rows: []string{
				scdLine(1, "tea", "3.50", "2026-01-02", "2026-01-04"), scdLine(1, "tea", "3.80", "2026-01-04", nil),
				scdLine(2, "espresso", "4.00", "2026-01-02", "2026-01-05"), scdLine(2, "espresso", "4.00", "2026-01-05", "2026-01-06"),
				scdLine(2, "espresso", "4.00", "2026-01-06", nil),
				scdLine(3, "cocoa", "2.75", "2026-01-06", nil)}},
	}
	for _, eng := range engines() {
		for _, name := range []string{"ignore", "close", "new_record"} {
			m := modes[name]
			t.Run(eng.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, eng)
				y := strings.NewReplacer("{mode}", name, "{extra}", m.extra+"\n  valid_from: starts\n  valid_to: ends").Replace(scd2ProductsSpec)
				p := e.spec(y)
				target := "dw_{id}.prod_" + name
				shape := scdShape{target, "product_id", "starts", "ends"}
				e.createTable("app_{id}.products", p.Columns)
				e.insert("app_{id}.products", p.Columns, []any{1, "tea", "3.50"}, []any{2, "coffee", "4.00"})
				scdRun(t, e, p, "2026-01-02", &scdCounts{read: 2, inserted: 2})
				scdRun(t, e, p, "2026-01-02", &scdCounts{read: 2, ignored: 2})
				scdRun(t, e, p, "2026-01-03", &scdCounts{read: 2, ignored: 2})
				// A new price for 1, a new name for 2 (not tracked).
				e.update("app_{id}.products", p.Columns, "product_id", 1, map[string]any{"price": "3.80"})
				e.update("app_{id}.products", p.Columns, "product_id", 2, map[string]any{"name": "espresso"})
				scdRun(t, e, p, "2026-01-04", &scdCounts{read: 2, updated: 2})
				checkTimeline(t, e, shape, 0)
				// A price below zero is quarantined: product 1 keeps its version.
				e.update("app_{id}.products", p.Columns, "product_id", 1, map[string]any{"price": "-1.00"})
				res := scdRun(t, e, p, "2026-01-04 12:00:00", &scdCounts{read: 2, ignored: 1})
				if res.RowsQuarantined != 1 {
					t.Errorf("quarantined %d rows, want 1", res.RowsQuarantined)
				}
				e.update("app_{id}.products", p.Columns, "product_id", 1, map[string]any{"price": "3.80"})
				// Product 2 leaves, then comes back; 3 is new.
				e.deleteRows("app_{id}.products", "product_id", 2)
				scdRun(t, e, p, "2026-01-05", &m.vanish)
				checkTimeline(t, e, shape, m.gaps)
				scdRun(t, e, p, "2026-01-05", &scdCounts{read: 1, ignored: 1})
				e.insert("app_{id}.products", p.Columns, []any{2, "espresso", "4.00"}, []any{3, "cocoa", "2.50"})
				scdRun(t, e, p, "2026-01-06", &m.back)
				// Cocoa's price changes within the same hi: the version that
				// opened at hi is rewritten, no version lasts no time.
				e.update("app_{id}.products", p.Columns, "product_id", 3, map[string]any{"price": "2.75"})
				scdRun(t, e, p, "2026-01-06", &scdCounts{read: 3, updated: 1, ignored: 2})
				scdRun(t, e, p, "2026-01-07", &scdCounts{read: 3, ignored: 3})
				checkTimeline(t, e, shape, m.gaps)
				got := scdRows(e, target, cols, "product_id", "starts")
				if diff := cmp.Diff(m.rows, got); diff != "" {
					t.Errorf("versions (-want +got):\n%s", diff)
				}
				if name == "new_record" {
					flags := scdRows(e, target, []string{"product_id", "starts", "gone"}, "product_id", "starts")
					if !slices.Contains(flags, scdLine(2, "2026-01-05", "true")) || slices.Contains(flags, scdLine(2, "2026-01-06", "true")) {
						t.Errorf("the version recording the deletion: %v", flags)
					}
				}
				// The full refresh of a snapshot: refused, then forced.
				if _, err := e.tg.Run(e.ctx, p, Options{Until: scdUntil("2026-01-08"), FullRefresh: true}); err == nil || !strings.Contains(err.Error(), "--force") {
					t.Fatalf("full refresh without --force: %v", err)
				}
				res, err := e.tg.Run(e.ctx, p, Options{Until: scdUntil("2026-01-08"), FullRefresh: true, Force: true})
				if err != nil {
					t.Fatal(err)
				}
				if msg := accounted(p, res); msg != "" {
					t.Errorf("full refresh: %s: %+v", msg, countsOf(res))
				}
				if res.RowsInserted != 3 {
					t.Errorf("forced full refresh inserted %d, want 3", res.RowsInserted)
				}
				rows := scdRows(e, target, cols, "product_id", "starts")
				if len(rows) != 3 || !strings.HasSuffix(rows[0], Canon("2026-01-08")+" | "+Canon(m.open)) {
					t.Errorf("after the forced full refresh: %v", rows)
				}
			})
		}
	}
}

// TestSCD2ByColumnsOpenStart: with scd2.open_start a key's first version
// starts there instead of at the hi of the run that first saw it; a later
// version, and a key back after it vanished, start at hi; a forced full
// refresh starts every key's one version there again.
func TestSCD2ByColumnsOpenStart(t *testing.T) {
	cols := []string{"product_id", "name", "price", "starts", "ends"}
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			y := strings.NewReplacer("{mode}", "close", "{extra}", "open_start: 1970-01-01\n  open_end: 9999-12-31\n  valid_from: starts\n  valid_to: ends").Replace(scd2ProductsSpec)
			p := e.spec(y)
			target := "dw_{id}.prod_close"
			shape := scdShape{target, "product_id", "starts", "ends"}
			e.createTable("app_{id}.products", p.Columns)
			e.insert("app_{id}.products", p.Columns, []any{1, "tea", "3.50"}, []any{2, "coffee", "4.00"})
			scdRun(t, e, p, "2026-01-02", &scdCounts{read: 2, inserted: 2})
			scdRun(t, e, p, "2026-01-03", &scdCounts{read: 2, ignored: 2})
			e.update("app_{id}.products", p.Columns, "product_id", 1, map[string]any{"price": "3.80"})
			scdRun(t, e, p, "2026-01-04", &scdCounts{read: 2, updated: 1, ignored: 1})
			e.deleteRows("app_{id}.products", "product_id", 2)
			scdRun(t, e, p, "2026-01-05", &scdCounts{read: 1, deleted: 1, ignored: 1})
			e.insert("app_{id}.products", p.Columns, []any{2, "coffee", "4.00"}, []any{3, "cocoa", "2.50"})
			scdRun(t, e, p, "2026-01-06", &scdCounts{read: 3, inserted: 2, ignored: 1})
			checkTimeline(t, e, shape, 1)
			want := []string{
				scdLine(1, "tea", "3.50", "1970-01-01", "2026-01-04"), scdLine(1, "tea", "3.80", "2026-01-04", "9999-12-31"),
				scdLine(2, "coffee", "4.00", "1970-01-01", "2026-01-05"), scdLine(2, "coffee", "4.00", "2026-01-06", "9999-12-31"),
				scdLine(3, "cocoa", "2.50", "1970-01-01", "9999-12-31")}
			if diff := cmp.Diff(want, scdRows(e, target, cols, "product_id", "starts")); diff != "" {
				t.Errorf("versions (-want +got):\n%s", diff)
			}
			if _, err := e.tg.Run(e.ctx, p, Options{Until: scdUntil("2026-01-07"), FullRefresh: true, Force: true}); err != nil {
				t.Fatal(err)
			}
			want = []string{
				scdLine(1, "tea", "3.80", "1970-01-01", "9999-12-31"),
				scdLine(2, "coffee", "4.00", "1970-01-01", "9999-12-31"),
				scdLine(3, "cocoa", "2.50", "1970-01-01", "9999-12-31")}
			if diff := cmp.Diff(want, scdRows(e, target, cols, "product_id", "starts")); diff != "" {
				t.Errorf("after a full refresh, versions (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSCD2RunBeforeVersions: a run whose hi is before versions already
// written (here, a by-columns snapshot run with an --until in the past)
// would end a version before it starts: it fails and writes nothing.
func TestSCD2RunBeforeVersions(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := e.spec(strings.NewReplacer("{mode}", "close", "{extra}", "").Replace(scd2ProductsSpec))
			e.createTable("app_{id}.products", p.Columns)
			e.insert("app_{id}.products", p.Columns, []any{1, "tea", "3.50"})
			scdRun(t, e, p, "2026-01-05", nil)
			e.update("app_{id}.products", p.Columns, "product_id", 1, map[string]any{"price": "3.80"})
			before := scdRows(e, "dw_{id}.prod_close", []string{"product_id", "price", "valid_from", "valid_to"}, "product_id", "valid_from")
			_, err := e.tg.Run(e.ctx, p, Options{Until: scdUntil("2026-01-04")})
			if err == nil || !strings.Contains(err.Error(), "would end before they start") {
				t.Fatalf("a run before the versions: %v", err)
			}
			if diff := cmp.Diff(before, scdRows(e, "dw_{id}.prod_close", []string{"product_id", "price", "valid_from", "valid_to"}, "product_id", "valid_from")); diff != "" {
				t.Errorf("the failed run wrote (-before +after):\n%s", diff)
			}
		})
	}
}

// deleteRows deletes the rows of a source table where col = v.
func (e *env) deleteRows(name, col string, v any) {
	e.t.Helper()
	op := ir.DeleteRows{Table: e.table(name), Where: ir.Binary{Op: "=", L: ir.ColRef{Name: col}, R: ir.ParamRef{Name: "v"}}}
	e.exec(e.render(op, ir.Param{Name: "v"}), map[string]any{"v": v})
}

// TestSCD2ByTimeEquivalence is the promise for a table of versions, on
// random histories: after every run the target holds exactly the versions
// the source holds below hi, each ending where the next of its key starts
// (what a full refresh writes), also when versions commit late, out of
// order, inside the lookback, twice, or corrected at the same time.
func TestSCD2ByTimeEquivalence(t *testing.T) {
	type ver struct {
		key   int64
		price int64 // cents; the greatest wins a tie at one time, as the dedupe orders
		at    time.Time
	}
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lookback := 72 * time.Hour
	for _, eng := range engines() {
		// With open (scd2.open_start: 1970-01-01) each key's earliest
		// version starts there, and a late version before it takes its
		// place.
		for _, c := range []struct {
			seed uint64
			open bool
		}{{3, false}, {11, false}, {19, true}} {
			seed := c.seed
			name := fmt.Sprintf("%s/seed=%d", eng.name, seed)
			if c.open {
				name += ",open_start"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, eng)
				rng := rand.New(rand.NewPCG(seed, seed))
				versions := func(target string) *ir.Plan {
					y := strings.ReplaceAll(planVersionsSpec, "{target}", target)
					if c.open {
						y = strings.Replace(y, "  by: time\n", "  by: time\n  open_start: 1970-01-01\n", 1)
					}
					return e.spec(y)
				}
				p := versions("inc")
				e.createTable("app_{id}.plan_versions", p.Columns)
				var rows []ver
				model := func(hi time.Time) []string {
					best := map[[2]int64]ver{}
					for _, r := range rows {
						if r.at.Before(start) || !r.at.Before(hi) {
							continue
						}
						k := [2]int64{r.key, r.at.UnixNano()}
						if cur, ok := best[k]; !ok || r.price > cur.price {
							best[k] = r
						}
					}
					var vs []ver
					for _, v := range best {
						vs = append(vs, v)
					}
					slices.SortFunc(vs, func(a, b ver) int {
						if a.key != b.key {
							return int(a.key - b.key)
						}
						return a.at.Compare(b.at)
					})
					var out []string // nil when empty, as the target reads
					for i, v := range vs {
						var end any
						if i+1 < len(vs) && vs[i+1].key == v.key {
							end = vs[i+1].at
						}
						var from any = v.at
						if c.open && (i == 0 || vs[i-1].key != v.key) {
							from = "1970-01-01"
						}
						out = append(out, scdLine(v.key, fmt.Sprintf("%d.%02d", v.price/100, v.price%100), v.at, from, end))
					}
					return out
				}
				hi, wm := start, time.Time{}
				lates, earlier, written := 0, 0, 0
				for run := 0; run < 8; run++ {
					lo := start
					if !wm.IsZero() && wm.Add(-lookback).After(start) {
						lo = wm.Add(-lookback)
					}
					hi = hi.Add(time.Duration(12+rng.IntN(48)) * time.Hour)
					for n := rng.IntN(5); n > 0; n-- {
						at := lo.Add(time.Duration(rng.Int64N(int64(hi.Sub(lo)/time.Hour))) * time.Hour)
						v := ver{key: 1 + rng.Int64N(4), price: 100 + rng.Int64N(900), at: at}
						if !wm.IsZero() && at.Before(wm) {
							lates++
						}
						first, had := time.Time{}, false
						for _, r := range rows[:written] {
							if r.key == v.key && (!had || r.at.Before(first)) {
								first, had = r.at, true
							}
						}
						if had && at.Before(first) {
							earlier++ // before its key's first version written
						}
						rows = append(rows, v)
						if rng.IntN(6) == 0 {
							rows = append(rows, v) // a retry
						}
						if rng.IntN(6) == 0 {
							rows = append(rows, ver{key: v.key, price: v.price + 1, at: v.at}) // a correction at the same time
						}
					}
					for _, r := range rows[written:] {
						e.insert("app_{id}.plan_versions", p.Columns, []any{r.key, fmt.Sprintf("%d.%02d", r.price/100, r.price%100), r.at.Format("2006-01-02 15:04:05")})
					}
					written = len(rows)
					until := hi.Format(time.RFC3339)
					scdRun(t, e, p, until, nil)
					wm = hi
					if diff := cmp.Diff(model(hi), scdRows(e, "dw_{id}.plans_inc", planCols, "plan_id", "valid_from")); diff != "" {
						t.Fatalf("run %d until %s: the target differs from the versions below hi (-model +target):\n%s", run, until, diff)
					}
					checkTimeline(t, e, scdShape{"dw_{id}.plans_inc", "plan_id", "valid_from", "valid_to"}, 0)
				}
				ref := versions("ref")
				if _, err := e.tg.Run(e.ctx, ref, Options{Until: &hi, FullRefresh: true}); err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(scdRows(e, "dw_{id}.plans_inc", planCols, "plan_id", "valid_from"), scdRows(e, "dw_{id}.plans_ref", planCols, "plan_id", "valid_from")); diff != "" {
					t.Errorf("incremental differs from a full refresh (-incremental +full):\n%s", diff)
				}
				if lates == 0 {
					t.Errorf("seed %d wrote no late version: the history tests nothing the timeline splits", seed)
				}
				if c.open && earlier == 0 {
					t.Errorf("seed %d wrote no version before its key's first: open_start's first version never moves", seed)
				}
			})
		}
	}
}
