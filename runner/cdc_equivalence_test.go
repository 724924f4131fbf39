package runner

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/incrc/incrc/compiler/ir"
)

// The equivalence property for strategy cdc, as TestEquivalence states it
// for merge: after every incremental run the target and its tombstones
// equal a full replay of the change log at the same hi, and both equal an
// in-Go model of the replay. The histories are random (a fixed seed per
// subtest): inserts, updates, deletes (without an image), invalid images,
// unknown op codes, several changes of a key in a window, changes that
// arrive after a newer change of their key (held back, then written into a
// later window, behind the watermark within the lookback or ahead of it),
// windows run twice, and, with truncate codes, truncates (no key): in
// order, late (below changes already applied), and older than the one
// applied. The run's counts are checked against the model
// too: every change read is inserted, updated, deleted, quarantined or
// ignored.

const ledgerSpec = `
pipeline: ledger_{target}_{id}
source:
  table: app_{id}.ledger_log
target:
  table: dw_{id}.ledger_{target}
columns:
  id: bigint
  val: bigint
  note: varchar(16)
  op: varchar(1)
  lsn: bigint
  at: timestamp
  ingested: timestamp
strategy: cdc
unique_key: [id]
watermark:
  column: ingested
  start: 2026-03-01
  lookback: 2h
cdc:
  op: op
  sequence: lsn
  at: at
  deletes: {deletes}
{ops}  exclude: [op, ingested]
quality:
  checks: ["val >= 0"]
`

var (
	ledgerStart    = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	ledgerLookback = 2 * time.Hour
)

// cdcChange is one row of the change log.
type cdcChange struct {
	id, lsn int64
	val     any // nil or int64
	note    any // nil or text
	op      any // nil or text
	at, ing time.Time
	delayed bool // held back: written in a later run than the one it was made in
}

func (c cdcChange) valid() bool {
	switch c.op {
	case "c", "r", "u":
		v, ok := c.val.(int64)
		return !ok || v >= 0 // a check that is NULL passes
	case "d", "t":
		return true // a delete or a truncate has no image to check
	}
	return false
}

func (c cdcChange) isDelete() bool   { return c.op == "d" }
func (c cdcChange) isTruncate() bool { return c.op == "t" }

// cdcState is a target and its tombstones, per key, and the sequence of
// the newest truncate (0: none).
type cdcState struct {
	rows  map[int64]cdcRow
	tombs map[int64]cdcChange
	trunc int64
}

// truncated is st emptied up to the truncate at lsn: its rows and
// tombstones not newer go.
func (st cdcState) truncated(lsn int64) cdcState {
	out := cdcState{rows: map[int64]cdcRow{}, tombs: map[int64]cdcChange{}, trunc: max(st.trunc, lsn)}
	for id, r := range st.rows {
		if r.image.lsn > out.trunc {
			out.rows[id] = r
		}
	}
	for id, d := range st.tombs {
		if d.lsn > out.trunc {
			out.tombs[id] = d
		}
	}
	return out
}

type cdcRow struct {
	image   cdcChange // the insert or update whose image the row holds
	deleted *cdcChange
}

// replay is what a full refresh writes from the changes: per key, the
// newest valid change wins; with soft deletes the row keeps the newest
// insert's or update's image, marked when a delete is newer. A change not
// newer than the newest truncate is as if it never was.
func replay(changes []cdcChange, soft bool) cdcState {
	upsert, del, newest := map[int64]cdcChange{}, map[int64]cdcChange{}, map[int64]cdcChange{}
	var trunc int64
	for _, c := range changes {
		if c.valid() && c.isTruncate() {
			trunc = max(trunc, c.lsn)
		}
	}
	for _, c := range changes {
		if !c.valid() || c.isTruncate() || c.lsn <= trunc {
			continue
		}
		if n, ok := newest[c.id]; !ok || c.lsn > n.lsn {
			newest[c.id] = c
		}
		m := upsert
		if c.isDelete() {
			m = del
		}
		if n, ok := m[c.id]; !ok || c.lsn > n.lsn {
			m[c.id] = c
		}
	}
	st := cdcState{rows: map[int64]cdcRow{}, tombs: map[int64]cdcChange{}, trunc: trunc}
	for id, n := range newest {
		if n.isDelete() {
			st.tombs[id] = n
		}
		switch {
		case !soft && !n.isDelete():
			st.rows[id] = cdcRow{image: n}
		case soft:
			if u, ok := upsert[id]; ok {
				r := cdcRow{image: u}
				if n.isDelete() {
					d := del[id]
					r.deleted = &d
				}
				st.rows[id] = r
			}
		}
	}
	return st
}

func (st cdcState) lines(soft bool) (rows, tombs []string) {
	for _, id := range sortedKeys(st.rows) {
		r := st.rows[id]
		f := []any{id, r.image.val, r.image.note, r.image.lsn, r.image.at, r.image.lsn}
		if soft {
			if r.deleted != nil {
				f = append(f, true, r.deleted.at)
			} else {
				f = append(f, false, nil)
			}
		}
		rows = append(rows, line(f...))
	}
	for _, id := range sortedKeys(st.tombs) {
		d := st.tombs[id]
		tombs = append(tombs, line(id, d.lsn, d.at))
	}
	return rows, tombs
}

func sortedKeys[V any](m map[int64]V) []int64 {
	ids := make([]int64, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// ledger is a change log, its model, and the runs over it.
type ledger struct {
	t       *testing.T
	e       *env
	rng     *rand.Rand
	soft    bool
	trunc   bool // the log has truncates
	inc     *ir.Plan
	ref     *ir.Plan
	log     []cdcChange // written to the source
	held    []cdcChange // made, not written yet: they arrive late
	state   cdcState    // the model of the incremental target
	wm      time.Time
	nextID  int64
	nextLSN int64
	seen    map[string]int
}

func newLedger(t *testing.T, e *env, seed uint64, deletes string, trunc bool) *ledger {
	ops := ""
	if trunc {
		ops = "  ops: {insert: [c, r], update: [u], delete: [d], truncate: [t]}\n"
	}
	plan := func(target string) *ir.Plan {
		return e.spec(strings.NewReplacer("{target}", target, "{deletes}", deletes, "{ops}", ops).Replace(ledgerSpec))
	}
	l := &ledger{t: t, e: e, rng: rand.New(rand.NewPCG(seed, seed^0xcdc)), soft: deletes == "soft", trunc: trunc,
		inc: plan("inc"), ref: plan("ref"), nextID: 1, seen: map[string]int{}}
	l.state = replay(nil, l.soft)
	e.createTable("app_{id}.ledger_log", nullableCols(l.inc.Columns))
	return l
}

func (l *ledger) lo() time.Time {
	if l.wm.IsZero() {
		return ledgerStart
	}
	return maxTime(l.wm.Add(-ledgerLookback), ledgerStart)
}

// at picks a time in [a, b), whole minutes mostly, sometimes a bound.
func (l *ledger) at(a, b time.Time) time.Time {
	if !a.Before(b) {
		return a
	}
	switch l.rng.IntN(8) {
	case 0:
		return a
	case 1:
		return b.Add(-time.Microsecond)
	}
	t := a.Add(time.Duration(l.rng.Int64N(int64(b.Sub(a)/time.Minute)+1)) * time.Minute)
	if !t.Before(b) {
		t = b.Add(-time.Microsecond)
	}
	return t
}

// make makes one change of a key: its lsn is the next one, so a change
// held back arrives after newer changes of its key.
func (l *ledger) make(hi time.Time) cdcChange {
	l.nextLSN++
	c := cdcChange{lsn: l.nextLSN, at: l.at(ledgerStart, hi)}
	if l.nextID == 1 || l.rng.IntN(4) == 0 {
		c.id = l.nextID
		l.nextID++
	} else {
		c.id = 1 + l.rng.Int64N(l.nextID-1)
	}
	if l.trunc && l.rng.IntN(25) == 0 {
		c.id, c.op = 0, "t" // a truncate has no key
		l.seen["truncate"]++
		return c
	}
	switch k := l.rng.IntN(100); {
	case k < 20:
		c.op = []string{"c", "r"}[l.rng.IntN(2)]
	case k < 55:
		c.op = "u"
	case k < 80:
		c.op = "d"
	case k < 90:
		c.op, c.val = "u", int64(-1-l.rng.IntN(9)) // an image that breaks val >= 0
		l.seen["invalid image"]++
	case k < 95:
		c.op = "x"
		l.seen["unknown op"]++
	default:
		c.op = nil
		l.seen["NULL op"]++
	}
	if c.op != "d" && c.val == nil && l.rng.IntN(8) > 0 {
		c.val = int64(l.rng.IntN(1000))
	}
	if c.op != "d" && l.rng.IntN(4) > 0 {
		c.note = []string{"red", "green", "blue"}[l.rng.IntN(3)]
	}
	return c
}

// write writes a change into the log, ingested in the window of the run
// up to hi: usually after the watermark, sometimes behind it within the
// lookback, sometimes after hi (a later run reads it).
func (l *ledger) write(c cdcChange, hi time.Time) {
	lo := l.lo()
	switch k := l.rng.IntN(10); {
	case k < 2 && l.wm.After(lo):
		c.ing = l.at(lo, l.wm)
		l.seen["behind the watermark"]++
	case k < 3:
		c.ing = l.at(hi, hi.Add(3*time.Hour))
		l.seen["after hi"]++
	default:
		c.ing = l.at(maxTime(lo, l.wm), hi)
	}
	if c.delayed {
		l.seen["held back"]++
	}
	l.log = append(l.log, c)
	var id any = c.id
	if c.isTruncate() {
		id = nil
	}
	l.e.insert("app_{id}.ledger_log", l.inc.Columns, []any{id, c.val, c.note, c.op, c.lsn,
		l.e.tg.Dialect.BindTime(c.at, ir.Timestamp), l.e.tg.Dialect.BindTime(c.ing, ir.Timestamp)})
}

// change makes a few changes before the run up to hi: some written now,
// some held back, and some held before written now.
func (l *ledger) change(hi time.Time) {
	held := l.held
	l.held = nil
	for _, c := range held {
		if l.rng.IntN(3) == 0 {
			l.held = append(l.held, c) // later still
			continue
		}
		l.write(c, hi)
	}
	for n := 3 + l.rng.IntN(8); n > 0; n-- {
		c := l.make(hi)
		// A truncate is held back more often: one that arrives after
		// newer changes is the case a replay must agree with.
		if l.rng.IntN(5) == 0 || c.isTruncate() && l.rng.IntN(2) == 0 {
			c.delayed = true
			l.held = append(l.held, c)
			continue
		}
		l.write(c, hi)
	}
}

// run runs the pipeline up to hi and checks its counts, its target and
// tombstones against the model, and against a full replay.
func (l *ledger) run(hi time.Time) {
	t := l.t
	t.Helper()
	lo := l.lo()
	var window, upTo []cdcChange
	for _, c := range l.log {
		if c.ing.Before(hi) {
			upTo = append(upTo, c)
			if !c.ing.Before(lo) {
				window = append(window, c)
			}
		}
	}
	want := l.counts(window)
	res := mustRun(t, l.e, l.inc, Options{Until: &hi})
	what := fmt.Sprintf("run [%s, %s)", lo.Format(time.RFC3339), hi.Format(time.RFC3339))
	if diff := cmp.Diff(want, cdcCountsOf(res)); diff != "" {
		t.Errorf("%s: counts (-model +run):\n%s", what, diff)
	}
	l.wm = hi
	l.state = replay(upTo, l.soft)
	wantRows, wantTombs := l.state.lines(l.soft)
	rows, tombs := l.e.cdcState(l.inc)
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("%s: target (-model +db):\n%s", what, diff)
	}
	if diff := cmp.Diff(wantTombs, tombs); diff != "" {
		t.Errorf("%s: tombstones (-model +db):\n%s", what, diff)
	}
	mustRun(t, l.e, l.ref, Options{Until: &hi, FullRefresh: true})
	fullRows, fullTombs := l.e.cdcState(l.ref)
	if diff := cmp.Diff(fullRows, rows); diff != "" {
		t.Errorf("%s: the target differs from a full replay (-replay +incremental):\n%s", what, diff)
	}
	if diff := cmp.Diff(fullTombs, tombs); diff != "" {
		t.Errorf("%s: the tombstones differ from a full replay (-replay +incremental):\n%s", what, diff)
	}
}

// counts is what the model says a run of the window does, from the state
// before it: per key, the newest change (with soft deletes: the newest
// insert or update, and the newest change if it is a delete) is applied
// when it is newer than what the target holds; every other valid change
// is ignored.
//
// The window's newest truncate applies (a delete) when it is newer than
// the one applied: the target is emptied up to it first, and every change
// not newer than the newest truncate is ignored.
func (l *ledger) counts(window []cdcChange) cdcCounts {
	c := cdcCounts{Read: int64(len(window))}
	newest, upsert := map[int64]cdcChange{}, map[int64]cdcChange{}
	var valid, trunc int64
	for _, ch := range window {
		if ch.valid() && ch.isTruncate() {
			trunc = max(trunc, ch.lsn)
		}
	}
	st := l.state
	switch {
	case trunc > st.trunc:
		c.Deleted++
		for _, r := range st.rows {
			if r.image.lsn > trunc {
				l.seen["late truncate"]++
				break
			}
		}
		st = st.truncated(trunc)
	case trunc > 0:
		l.seen["truncate not newer than the one applied"]++
	}
	for _, ch := range window {
		if !ch.valid() {
			c.Quarantined++
			continue
		}
		valid++
		if ch.isTruncate() || ch.lsn <= st.trunc {
			continue
		}
		if n, ok := newest[ch.id]; !ok || ch.lsn > n.lsn {
			newest[ch.id] = ch
		}
		if n, ok := upsert[ch.id]; !ch.isDelete() && (!ok || ch.lsn > n.lsn) {
			upsert[ch.id] = ch
		}
	}
	// A row whose newest image is older than a late change of its key, or
	// a key ignored for a tombstone newer than the change: what the
	// history exercised.
	for id, n := range newest {
		row, hasRow := st.rows[id]
		tomb, hasTomb := st.tombs[id]
		imageSeq, tombSeq := int64(-1), int64(-1)
		if hasRow {
			imageSeq = row.image.lsn
		}
		if hasTomb {
			tombSeq = tomb.lsn
		}
		if !l.soft {
			if n.lsn > imageSeq && n.lsn > tombSeq {
				switch {
				case n.isDelete():
					c.Deleted++
				case hasRow:
					c.Updated++
				default:
					c.Inserted++
				}
			} else if hasTomb {
				l.seen["ignored for a tombstone"]++
			}
			continue
		}
		if u, ok := upsert[id]; ok && u.lsn > imageSeq {
			if hasRow {
				c.Updated++
			} else {
				c.Inserted++
			}
			if hasTomb && u.lsn < tombSeq {
				l.seen["late image of a deleted row"]++
			}
		}
		if n.isDelete() && n.lsn > imageSeq && n.lsn > tombSeq {
			c.Deleted++
		}
	}
	c.Ignored = valid - c.Inserted - c.Updated - c.Deleted
	if c.Ignored > 0 {
		l.seen["ignored"]++
	}
	return c
}

// TestCDCEquivalence: random change logs over ten runs each, with hard and
// soft deletes, on every engine; after each run the target and its
// tombstones equal a full replay at the same hi and the model, and the
// counts are the model's.
func TestCDCEquivalence(t *testing.T) {
	steps := []time.Duration{0, 30 * time.Minute, time.Hour, 90 * time.Minute, 2 * time.Hour, 3 * time.Hour, 5 * time.Hour}
	variants := []struct {
		deletes string
		trunc   bool
		seeds   []uint64
	}{{"hard", false, []uint64{1, 2}}, {"soft", false, []uint64{1, 2}}, {"hard", true, []uint64{6, 11}}, {"soft", true, []uint64{6, 11}}}
	for _, eng := range append(engines(), distributedEngines()...) {
		for _, v := range variants {
			deletes := v.deletes
			name := eng.name + "/" + deletes
			if v.trunc {
				name += "/truncate"
			}
			seeds, runs := v.seeds, 10
			if eng.serial {
				if v.trunc {
					continue // hard and soft deletes, not every variant: the engine's time is bounded
				}
				seeds, runs = lakeHistory()
			}
			t.Run(name, func(t *testing.T) {
				if !eng.serial {
					t.Parallel()
				}
				seen, ran := map[string]int{}, 0
				for _, seed := range seeds {
					t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
						e := newEnv(t, eng)
						ran++
						l := newLedger(t, e, seed, deletes, v.trunc)
						hi := ledgerStart
						for run := 0; run < runs && !t.Failed(); run++ {
							step := steps[l.rng.IntN(len(steps))]
							switch {
							case run == 0 && step == 0:
								step = 2 * time.Hour
							case run == runs/2:
								step = 0 // every history runs a window twice
							}
							if step == 0 {
								seen["window run twice"]++
							}
							hi = hi.Add(step)
							if step > 0 {
								l.change(hi)
							}
							l.run(hi)
						}
						if t.Failed() {
							t.Logf("seed %d: %d changes, %d keys, exercised %v", seed, len(l.log), l.nextID-1, l.seen)
						}
						for what, n := range l.seen {
							seen[what] += n
						}
					})
				}
				if ran == 0 || eng.serial {
					return // the engine is not available; or the short history of a lake engine
				}
				want := []string{"window run twice", "invalid image", "unknown op", "NULL op", "behind the watermark", "after hi", "held back", "ignored"}
				switch {
				case deletes == "hard":
					want = append(want, "ignored for a tombstone")
				case !v.trunc:
					// Truncates empty what such an image would land on:
					// the histories without them have it.
					want = append(want, "late image of a deleted row")
				}
				if v.trunc {
					want = append(want, "truncate", "late truncate", "truncate not newer than the one applied")
				}
				for _, what := range want {
					if seen[what] == 0 {
						t.Errorf("no history exercised %q (%v): the generator got weaker", what, seen)
					}
				}
			})
		}
	}
}
