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
)

// The equivalence property with versions that arrive late and out of
// order: the watermark is when a row arrived (ingested_at), dedupe_by the
// version (updated_at). A key's older version can arrive after a newer one
// was written: late within the lookback, in a re-delivered batch (the same
// rows again, arrived later), or in a second batch of the source's history.
// A merge must never replace the newer row with it, so after every run the
// incremental target equals a full refresh at the same hi, and the run
// counts the rows it did not apply as ignored.

const versionsSpec = `
pipeline: vers_{target}_{id}
source:
  table: app_{id}.versions
target:
  table: dw_{id}.versions_{target}
columns:
  id: bigint
  val: bigint
  updated_at: timestamp
  ingested_at: timestamp
strategy: merge
unique_key: [id]
watermark:
  column: ingested_at
  start: 2026-03-01
  lookback: 6h
dedupe_by: updated_at
`

var versionCols = []string{"id", "val", "updated_at", "ingested_at"}

// version is one source row: val is unique per row but for a re-delivered
// copy, which repeats its original's, so that a key's versions are ordered
// by (updated_at, val, ingested_at), the dedupe's order.
type version struct {
	id, val      int64
	updated, arr time.Time
}

func (v version) line() string { return line(v.id, v.val, v.updated, v.arr) }

func (v version) newer(o version) bool {
	if !v.updated.Equal(o.updated) {
		return v.updated.After(o.updated)
	}
	if v.val != o.val {
		return v.val > o.val
	}
	return v.arr.After(o.arr)
}

type versionHistory struct {
	t       *testing.T
	e       *env
	rng     *rand.Rand
	inc     *ir.Plan
	rows    []version
	target  map[int64]version
	wm      time.Time
	nextID  int64
	nextVal int64
	seen    map[string]int
}

func (h *versionHistory) lo() time.Time {
	if h.wm.IsZero() {
		return itemsStart
	}
	return maxTime(h.wm.Add(-itemsLookback), itemsStart)
}

// arrival is when a row arrives for the run up to hi: in the window's new
// part mostly, sometimes behind the watermark (within the lookback), and
// sometimes after hi (for a later run).
func (h *versionHistory) arrival(hi time.Time) time.Time {
	switch k := h.rng.IntN(10); {
	case k == 0:
		return hi.Add(time.Duration(1+h.rng.IntN(180)) * time.Minute)
	case k < 3 && !h.wm.IsZero():
		h.seen["late arrival"]++
		return h.lo().Add(time.Duration(h.rng.Int64N(int64(h.wm.Sub(h.lo())/time.Minute)+1)) * time.Minute)
	}
	from := maxTime(h.wm, h.lo())
	return from.Add(time.Duration(h.rng.Int64N(int64(hi.Sub(from)/time.Minute))) * time.Minute)
}

// newest is the key's newest version among the source's rows, and whether
// it has one.
func (h *versionHistory) newest(id int64) (version, bool) {
	var best version
	ok := false
	for _, r := range h.rows {
		if r.id == id && (!ok || r.newer(best)) {
			best, ok = r, true
		}
	}
	return best, ok
}

func (h *versionHistory) add(v version) {
	h.rows = append(h.rows, v)
	h.e.insert("app_{id}.versions", h.inc.Columns, []any{v.id, v.val, h.e.tg.Dialect.BindTime(v.updated, ir.Timestamp), h.e.tg.Dialect.BindTime(v.arr, ir.Timestamp)})
}

func (h *versionHistory) val() int64 { h.nextVal++; return h.nextVal }

// change lands a few rows that a run up to hi may read.
func (h *versionHistory) change(hi time.Time) {
	for n := 2 + h.rng.IntN(6); n > 0; n-- {
		switch k := h.rng.IntN(10); {
		case k < 3 || h.nextID == 1: // a new key
			id := h.nextID
			h.nextID++
			h.add(version{id: id, val: h.val(), updated: hi.Add(-time.Duration(1+h.rng.IntN(600)) * time.Minute), arr: h.arrival(hi)})
		case k < 5: // a newer version of a key
			id := 1 + h.rng.Int64N(h.nextID-1)
			cur, _ := h.newest(id)
			h.add(version{id: id, val: h.val(), updated: cur.updated.Add(time.Duration(1+h.rng.IntN(120)) * time.Minute), arr: h.arrival(hi)})
		case k < 8: // an older version, arriving after the newer one
			id := 1 + h.rng.Int64N(h.nextID-1)
			cur, _ := h.newest(id)
			h.seen["older version"]++
			h.add(version{id: id, val: h.val(), updated: cur.updated.Add(-time.Duration(1+h.rng.IntN(600)) * time.Minute), arr: h.arrival(hi)})
		default: // a batch delivered again: rows already in the source, arriving again
			arr := h.arrival(hi)
			for i := h.rng.IntN(3); i >= 0 && len(h.rows) > 0; i-- {
				again := h.rows[h.rng.IntN(len(h.rows))]
				again.arr = arr
				h.seen["delivered again"]++
				h.add(again)
			}
		}
	}
}

// full is what a full refresh at hi writes: per key, the newest version
// arrived in [start, hi).
func (h *versionHistory) full(hi time.Time) map[int64]version {
	out := map[int64]version{}
	for _, r := range h.rows {
		if r.arr.Before(hi) && !r.arr.Before(itemsStart) {
			if cur, ok := out[r.id]; !ok || r.newer(cur) {
				out[r.id] = r
			}
		}
	}
	return out
}

func versionLines(m map[int64]version) []string {
	var out []string
	for _, v := range m {
		out = append(out, v.line())
	}
	slices.Sort(out)
	return out
}

// run runs the pipeline up to hi and checks its counts, its target and a
// full refresh against the model.
func (h *versionHistory) run(hi time.Time) {
	t := h.t
	t.Helper()
	lo := h.lo()
	staged := map[int64]version{}
	var read int64
	for _, r := range h.rows {
		if !r.arr.Before(lo) && r.arr.Before(hi) {
			read++
			if cur, ok := staged[r.id]; !ok || r.newer(cur) {
				staged[r.id] = r
			}
		}
	}
	var inserted, updated int64
	ignored := read - int64(len(staged))
	for id, r := range staged {
		cur, ok := h.target[id]
		switch {
		case !ok:
			inserted++
		case cur.updated.After(r.updated):
			ignored++
			h.seen["older than the target"]++
			continue
		default:
			updated++
		}
		h.target[id] = r
	}
	res := mustRun(t, h.e, h.inc, Options{Until: &hi})
	what := "run until " + hi.Format(time.RFC3339)
	checkCounts(t, what, res, counts{Lo: lo.Format(time.RFC3339Nano), Hi: hi.Format(time.RFC3339Nano), Read: read, Inserted: inserted, Updated: updated})
	if res.RowsIgnored != ignored {
		t.Errorf("%s: ignored %d, want %d", what, res.RowsIgnored, ignored)
	}
	h.wm = hi
	inc := sorted(h.e.rows("dw_{id}.versions_inc", versionCols))
	if diff := cmp.Diff(versionLines(h.target), inc); diff != "" {
		t.Errorf("%s: target (-model +db):\n%s", what, diff)
	}
	ref := h.e.spec(strings.ReplaceAll(versionsSpec, "{target}", "ref"))
	mustRun(t, h.e, ref, Options{Until: &hi, FullRefresh: true})
	full := sorted(h.e.rows("dw_{id}.versions_ref", versionCols))
	if diff := cmp.Diff(versionLines(h.full(hi)), full); diff != "" {
		t.Errorf("full refresh until %s (-model +db):\n%s", hi.Format(time.RFC3339), diff)
	}
	if diff := cmp.Diff(full, inc); diff != "" {
		t.Errorf("%s: incremental differs from a full refresh (-full +incremental):\n%s", what, diff)
	}
}

// TestEquivalenceLateVersions: random histories whose older versions of a
// key arrive after newer ones (late, delivered again, in a later batch),
// over ten runs: after each the incremental target equals a full refresh
// at the same hi and the model, and the run's counts add up, the rows not
// applied counted as ignored.
func TestEquivalenceLateVersions(t *testing.T) {
	steps := []time.Duration{time.Hour, 2 * time.Hour, 3 * time.Hour, 5 * time.Hour, 9 * time.Hour}
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			seen, ran := map[string]int{}, 0
			for _, seed := range []uint64{1, 2, 3} {
				t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
					e := newEnv(t, eng)
					ran++
					h := &versionHistory{t: t, e: e, rng: rand.New(rand.NewPCG(seed, seed)), target: map[int64]version{}, nextID: 1, seen: map[string]int{}}
					h.inc = e.spec(strings.ReplaceAll(versionsSpec, "{target}", "inc"))
					e.createTable("app_{id}.versions", h.inc.Columns)
					hi := itemsStart.Add(12 * time.Hour)
					for run := 0; run < 10 && !t.Failed(); run++ {
						h.change(hi)
						h.run(hi)
						hi = hi.Add(steps[h.rng.IntN(len(steps))])
					}
					if t.Failed() {
						t.Logf("seed %d: %d source rows, exercised %v", seed, len(h.rows), h.seen)
					}
					for what, n := range h.seen {
						seen[what] += n
					}
				})
			}
			if ran == 0 {
				return
			}
			for _, what := range []string{"late arrival", "older version", "delivered again", "older than the target"} {
				if seen[what] == 0 {
					t.Errorf("no history exercised %q (%v): the generator got weaker", what, seen)
				}
			}
		})
	}
}
