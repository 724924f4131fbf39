package runner

import (
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
)

// intWindowSpec is a merge by an integer id that is its own watermark.
const intWindowSpec = `
pipeline: ids_{name}_{id}
source:
  table: app_{id}.ids_{name}
target:
  table: dw_{id}.ids_{name}
columns:
  id: {type}
  note: text
strategy: merge
unique_key: [id]
watermark:
  column: id
  start: "{start}"
  {lookback}
`

func intWindowPlan(e *env, name, typ, start, lookback string) *compiler.Plan {
	return e.spec(strings.NewReplacer("{name}", name, "{type}", typ, "{start}", start, "{lookback}", lookback).Replace(intWindowSpec))
}

// TestIntegerWindowLimits: the arithmetic of an integer window is checked
// at the ends of the column's type (issue 22, item 4). A lookback below the
// smallest bigint once wrapped to the largest and left every window empty,
// so the run read nothing and exited 0; the largest value of the type, as
// the source's largest id, made max + 1 wrap to the smallest. The first now
// reads every row, the second fails the run naming the value, before
// anything is written, on every engine.
func TestIntegerWindowLimits(t *testing.T) {
	minStart := strconv.FormatInt(math.MinInt64, 10)
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)

			t.Run("lookback at the smallest bigint", func(t *testing.T) {
				p := intWindowPlan(e, "min", "bigint", minStart, "lookback: 1")
				e.createTable("app_{id}.ids_min", p.Columns)
				e.insert("app_{id}.ids_min", p.Columns, []any{int64(math.MinInt64), "first"}, []any{0, "zero"}, []any{5, "five"})
				res := mustRun(t, e, p, Options{})
				checkCounts(t, "first run", res, counts{Lo: minStart, Hi: "6", Read: 3, Inserted: 3})
				want := []string{line(int64(math.MinInt64), "first"), line(0, "zero"), line(5, "five")}
				if diff := cmp.Diff(want, e.rows("dw_{id}.ids_min", []string{"id", "note"})); diff != "" {
					t.Errorf("target (-want +got):\n%s", diff)
				}
				// The lookback re-reads the last id: a merge writes it again.
				res = mustRun(t, e, p, Options{})
				checkCounts(t, "second run", res, counts{Lo: "5", Hi: "6", Read: 1, Updated: 1})
			})

			for _, c := range []struct {
				typ string
				max int64
			}{{"bigint", math.MaxInt64}, {"integer", math.MaxInt32}, {"smallint", math.MaxInt16}} {
				t.Run("the largest "+c.typ, func(t *testing.T) {
					p := intWindowPlan(e, c.typ, c.typ, "0", "")
					src := "app_{id}.ids_" + c.typ
					e.createTable(src, p.Columns)
					e.insert(src, p.Columns, []any{1, "one"}, []any{c.max, "last"})
					res, err := e.tg.Run(e.ctx, p, Options{})
					want := strconv.FormatInt(c.max, 10) + ", the largest " + c.typ + " value"
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("run over a source holding the largest %s: %v, want an error saying %q", c.typ, err, want)
					}
					if res != nil && (res.RowsInserted != 0 || res.WatermarkAfter != "") {
						t.Errorf("the failed run wrote: %+v", res)
					}
					if st := e.state(p); st.Watermark != "" {
						t.Errorf("the watermark moved to %q", st.Watermark)
					}
					if rows, err := e.read("dw_{id}.ids_"+c.typ, []string{"id"}); err == nil && len(rows) > 0 {
						t.Errorf("the target holds %v", rows)
					}
				})
			}
		})
	}
}

// TestTiedMarks: a tiebreak watermark is saved as TIME/ID and read back
// the same; TIME alone (watermark.start, a watermark saved before the
// spec had a tiebreak) is before every id of that time; and a spec that
// drops its tiebreak reads a saved TIME/ID as its time.
func TestTiedMarks(t *testing.T) {
	tied := &compiler.Watermarking{Col: compiler.Col{Name: "updated_at", Type: compiler.Type{Kind: compiler.Timestamp}}, Tiebreak: "id"}
	plain := &compiler.Watermarking{Col: tied.Col}
	at, _ := parseWM(tied, "2026-01-10T12:00:00Z/8")
	if at.String() != "2026-01-10T12:00:00Z/8" {
		t.Errorf("saved %q, read back as %q", "2026-01-10T12:00:00Z/8", at)
	}
	bare, _ := parseWM(tied, "2026-01-10T12:00:00Z")
	if !bare.less(at) || bare.String() != "2026-01-10T12:00:00Z" {
		t.Errorf("a bare time %q must come before %q and print as itself", bare, at)
	}
	later, _ := parseWM(tied, "2026-01-10T12:00:01Z/1")
	if !at.less(later) || later.less(at) {
		t.Errorf("%q must come before %q: the time orders first", at, later)
	}
	if _, err := parseWM(tied, "2026-01-10T12:00:00Z/x"); err == nil || !strings.Contains(err.Error(), "an integer") {
		t.Errorf("a malformed id: %v", err)
	}
	dropped, err := parseWM(plain, "2026-01-10T12:00:00Z/8")
	if err != nil || dropped.String() != "2026-01-10T12:00:00Z" {
		t.Errorf("a saved TIME/ID without a tiebreak: %q, %v", dropped, err)
	}
}

// TestZonePartitions: days of Europe/Berlin start at its midnights, in
// UTC, so its 2026 clock changes make a day of 23 and one of 25 hours;
// a date given as --from is that zone's day.
func TestZonePartitions(t *testing.T) {
	plan := &compiler.Plan{Partition: &compiler.Partitioning{Granularity: "day", Zone: "Europe/Berlin"}}
	g := grainOf(plan.Partition)
	for _, c := range []struct {
		day   string
		start string
		hours float64
	}{
		{"2026-03-28", "2026-03-27T23:00:00Z", 24},
		{"2026-03-29", "2026-03-28T23:00:00Z", 23},
		{"2026-03-30", "2026-03-29T22:00:00Z", 24},
		{"2026-10-25", "2026-10-24T22:00:00Z", 25},
		{"2026-10-26", "2026-10-25T23:00:00Z", 24},
	} {
		from, err := keyStart(plan, c.day)
		if err != nil {
			t.Fatal(err)
		}
		p := makePartition(from, g)
		if got := p.start.Format(time.RFC3339); got != c.start || p.Key(g) != c.day || p.end.Sub(p.start).Hours() != c.hours {
			t.Errorf("Berlin day %s: [%s, %s) keyed %s, %v hours; want from %s, %v hours", c.day, got, p.end.Format(time.RFC3339), p.Key(g), p.end.Sub(p.start).Hours(), c.start, c.hours)
		}
	}
	month := grain{unit: "month", loc: g.loc}
	if p := makePartition(*mustTime("2026-03-15"), month); p.end.Sub(p.start).Hours() != 31*24-1 {
		t.Errorf("Berlin's March 2026: %v hours, want %d", p.end.Sub(p.start).Hours(), 31*24-1)
	}
}
