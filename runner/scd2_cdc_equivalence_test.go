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

// The equivalence property for scd2 from a change log, as
// TestCDCEquivalence states it for strategy cdc: after every incremental
// run the versions and the tombstones equal a replay of the whole log at
// the same hi, and both equal an in-Go model of the replay. The histories
// are random (a fixed seed per subtest), over few keys so that their
// changes collide: inserts, updates, deletes, invalid images, unknown op
// codes, changes without a commit time, changes committed in the past
// (late: they split a version, end one early, or open one in a gap),
// changes at the commit time of an event already applied (with a greater
// sequence they replace it, with a smaller one they are ignored), retries
// of applied changes, changes held back and written into a later window
// (behind the watermark within the lookback, or ahead of hi), and windows
// run twice. The counts are the model's too. With scd2.tracked: [val] the
// target holds the model's versions merged where val does not change
// (merged), and <target>_events the versions unmerged. Without cdc.at
// (seq) the versions are numbered by the sequence: a change's time is its
// lsn, and a late change is one held back below an lsn already applied.
// With scd2.open_start (start) each key's earliest version starts there
// in the target, and <target>_events holds the versions as they are.

const versionLogSpec = `
pipeline: vlog_{target}_{id}
source:
  table: app_{id}.vlog
target:
  table: dw_{id}.vlog_{target}
columns:
  id: bigint
  val: bigint
  note: varchar(16)
  op: varchar(1)
  lsn: bigint
  at: timestamp
  ingested: timestamp
strategy: scd2
unique_key: [id]
watermark:
  column: ingested
  start: 2026-03-01
  lookback: 2h
cdc:
  op: op
  sequence: lsn
  at: at
  exclude: [op, ingested]
quality:
  checks: ["val >= 0"]
{scd2}`

var vlogCols = []string{"id", "val", "note", "incrc_sequence", "valid_from", "valid_to"}

// vchange is one row of the change log; at is nil for a change without a
// commit time.
type vchange struct {
	id, lsn int64
	val     any // nil or int64
	note    any // nil or text
	op      any // nil or text
	at      *time.Time
	ing     time.Time
}

func (c vchange) valid(seq bool) bool {
	if c.at == nil && !seq {
		return false
	}
	switch c.op {
	case "c", "r", "u":
		v, ok := c.val.(int64)
		return !ok || v >= 0
	case "d":
		return true
	}
	return false
}

// eventKey is a key and a commit time (by the sequence alone, the lsn as
// seconds: see when).
type eventKey struct {
	id int64
	at time.Time
}

// vstate is what the target and the tombstones hold: one event per key
// and time, the change that counts there.
type vstate map[eventKey]vchange

// events keeps, per key and commit time, the valid change with the
// greatest sequence. A tie on the sequence is a retry of one change: the
// copies differ only in what the target does not keep.
func events(changes []vchange, seq bool) vstate {
	st := vstate{}
	for _, c := range changes {
		if !c.valid(seq) {
			continue
		}
		k := eventKey{c.id, c.when(seq)}
		if held, ok := st[k]; !ok || c.lsn > held.lsn {
			st[k] = c
		}
	}
	return st
}

// when is a change's place in time: its commit time, or with seq its
// lsn, as seconds after the epoch.
func (c vchange) when(seq bool) time.Time {
	if seq {
		return time.Unix(c.lsn, 0).UTC()
	}
	return *c.at
}

// point is how the validity columns print a place in time: the time, or
// with seq the lsn it stands for (see when).
type point func(time.Time) any

func points(seq bool) point {
	if seq {
		return func(t time.Time) any { return t.Unix() }
	}
	return func(t time.Time) any { return t }
}

// end prints a version's end: open, or a place in time.
func (pt point) end(e any) any {
	if t, ok := e.(time.Time); ok {
		return pt(t)
	}
	return e
}

// sortedEvents are a state's keys and times in order.
func (st vstate) sortedEvents() []eventKey {
	keys := make([]eventKey, 0, len(st))
	for k := range st {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b eventKey) int {
		if a.id != b.id {
			return int(a.id - b.id)
		}
		return a.at.Compare(b.at)
	})
	return keys
}

// byVersion are the state's versions by key and start, as the target
// prints them: each ends at its key's next event, or at open. gaps counts
// the versions that a delete ends.
func (st vstate) byVersion(open any, pt point, start any) (versions map[eventKey]string, gaps int64) {
	versions = map[eventKey]string{}
	keys := st.sortedEvents()
	first := map[int64]bool{}
	for i, k := range keys {
		c := st[k]
		if c.op == "d" {
			continue
		}
		from := pt(k.at)
		if !first[k.id] && start != nil {
			from = start // every test's open_start is before every change
		}
		first[k.id] = true
		end := open
		if i+1 < len(keys) && keys[i+1].id == k.id {
			end = keys[i+1].at
			if st[keys[i+1]].op == "d" {
				gaps++
			}
		}
		versions[k] = line(k.id, c.val, c.note, c.lsn, from, pt.end(end))
	}
	return versions, gaps
}

// lines are the state's versions and tombstones as the tables print them,
// in order of key and time.
func (st vstate) lines(open any, pt point, start any) (versions, tombs []string, gaps int64) {
	byKey, gaps := st.byVersion(open, pt, start)
	for _, k := range st.sortedEvents() {
		if v, ok := byKey[k]; ok {
			versions = append(versions, v)
		} else {
			tombs = append(tombs, line(k.id, pt(k.at), st[k].lsn))
		}
	}
	return versions, tombs, gaps
}

// merged are the state's versions as a target with tracked: [val] holds
// them: a key's consecutive versions, the one ending where the next
// starts, with equal val (NULL equal to NULL), are one, from the first's
// start with the last's image and end. n counts the versions merged away.
func (st vstate) merged(open any, pt point, start any) (versions []string, n int) {
	keys := st.sortedEvents()
	type island struct {
		id          int64
		first, last eventKey
		end         any
	}
	var cur *island
	first := map[int64]bool{}
	flush := func() {
		if cur != nil {
			c := st[cur.last]
			from := pt(cur.first.at)
			if !first[cur.id] && start != nil {
				from = start
			}
			first[cur.id] = true
			versions = append(versions, line(cur.id, c.val, c.note, c.lsn, from, pt.end(cur.end)))
			cur = nil
		}
	}
	for i, k := range keys {
		c := st[k]
		if c.op == "d" {
			flush()
			continue
		}
		end := open
		if i+1 < len(keys) && keys[i+1].id == k.id {
			end = keys[i+1].at
		}
		if cur != nil && cur.id == k.id && cur.end == any(k.at) && st[cur.last].val == c.val {
			cur.last, cur.end = k, end
			n++
			continue
		}
		flush()
		cur = &island{id: k.id, first: k, last: k, end: end}
	}
	flush()
	return versions, n
}

// vlog is a change log, its model and the runs over it.
type vlog struct {
	t        *testing.T
	e        *env
	rng      *rand.Rand
	open     any
	tracked  bool // scd2.tracked: [val]
	seq      bool // no cdc.at: versions by the sequence alone
	start    any  // scd2.open_start, or nil
	used     map[eventKey]bool
	inc, ref *ir.Plan
	log      []vchange // written to the source
	held     []vchange // made, not written yet: they arrive late
	state    vstate    // the model of what the incremental run left
	wm, hi   time.Time
	nextLSN  int64
	seen     map[string]int
}

var vlogStart = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)

func newVlog(t *testing.T, e *env, seed uint64, open string, tracked, seq bool, start any) *vlog {
	scd2 := ""
	var openValue any
	if open != "" {
		scd2, openValue = "  open_end: "+open+"\n", open
	}
	if tracked {
		scd2 += "  tracked: [val]\n"
	}
	if start != nil {
		scd2 += fmt.Sprintf("  open_start: %v\n", start)
	}
	if scd2 != "" {
		scd2 = "scd2:\n" + scd2
	}
	plan := func(target string) *ir.Plan {
		spec := versionLogSpec
		if seq {
			spec = strings.Replace(spec, "  at: at\n", "", 1)
		}
		return e.spec(strings.NewReplacer("{target}", target, "{scd2}", scd2).Replace(spec))
	}
	l := &vlog{t: t, e: e, rng: rand.New(rand.NewPCG(seed, seed^0x5cd2)), open: openValue, tracked: tracked, seq: seq, start: start, used: map[eventKey]bool{},
		inc: plan("inc"), ref: plan("ref"), state: vstate{}, hi: vlogStart, seen: map[string]int{}}
	e.createTable("app_{id}.vlog", nullableCols(l.inc.Columns))
	return l
}

func (l *vlog) lo() time.Time {
	if l.wm.IsZero() {
		return vlogStart
	}
	return maxTime(l.wm.Add(-2*time.Hour), vlogStart)
}

// pick is a time in [a, b): whole minutes, sometimes a bound.
func (l *vlog) pick(a, b time.Time) time.Time {
	if !a.Before(b) {
		return a
	}
	if l.rng.IntN(8) == 0 {
		return a
	}
	t := a.Add(time.Duration(l.rng.Int64N(int64(b.Sub(a)/time.Minute)+1)) * time.Minute)
	if !t.Before(b) {
		t = b.Add(-time.Second)
	}
	return t
}

// made are the changes made so far, written or held.
func (l *vlog) made() []vchange { return append(append([]vchange(nil), l.log...), l.held...) }

// make makes one change before hi.
func (l *vlog) make(hi time.Time) vchange {
	l.nextLSN += 10
	c := vchange{id: 1 + l.rng.Int64N(5), lsn: l.nextLSN}
	at := l.pick(maxTime(l.wm.Add(-time.Hour), vlogStart), hi)
	made := l.made()
	switch k := l.rng.IntN(10); {
	case k < 2 && len(made) > 0:
		// At the commit time of another change of the key: with the next
		// sequence it wins there; sometimes with a smaller one, it loses.
		o := made[l.rng.IntN(len(made))]
		if l.seq {
			// By the sequence alone a time is an lsn: a change just
			// before another of its key, so it falls in the version
			// before that one, once the other is applied.
			lsn := o.lsn - 1 - l.rng.Int64N(5)
			if k := (eventKey{o.id, time.Unix(lsn, 0).UTC()}); o.lsn > 10 && !l.used[k] {
				l.nextLSN -= 10
				c.id, c.lsn = o.id, lsn
				l.seen["just before another change"]++
			}
		} else if o.at != nil {
			c.id, at = o.id, *o.at
			if l.rng.IntN(3) == 0 && o.lsn > 10 {
				c.lsn = o.lsn - 1 - l.rng.Int64N(5)
				l.seen["smaller sequence at a taken time"]++
			}
		}
	case k < 4:
		at = l.pick(vlogStart, hi) // committed in the past: late
	}
	switch k := l.rng.IntN(100); {
	case k < 15:
		c.op = []string{"c", "r"}[l.rng.IntN(2)]
	case k < 55:
		c.op = "u"
	case k < 78:
		c.op = "d"
	case k < 86:
		c.op, c.val = "u", int64(-1-l.rng.IntN(9)) // breaks val >= 0
		l.seen["invalid image"]++
	case k < 91:
		c.op = "x"
		l.seen["unknown op"]++
	case k < 94:
		c.op = nil
		l.seen["NULL op"]++
	}
	if c.op != "d" && c.val == nil && l.rng.IntN(8) > 0 {
		c.val = int64(l.rng.IntN(1000))
		if l.tracked {
			c.val = int64(l.rng.IntN(3)) // few values: consecutive versions often share one
		}
	}
	if c.op != "d" && l.rng.IntN(4) > 0 {
		c.note = []string{"red", "green", "blue"}[l.rng.IntN(3)]
	}
	if c.op == nil || l.rng.IntN(30) > 0 {
		c.at = &at
	} else if !l.seq {
		l.seen["no commit time"]++
	}
	l.used[eventKey{c.id, time.Unix(c.lsn, 0).UTC()}] = true
	return c
}

// write writes a change into the log, ingested in the window of the run
// up to hi: usually after the watermark, sometimes behind it within the
// lookback, sometimes after hi (the next run reads it).
func (l *vlog) write(c vchange, hi time.Time) {
	lo := l.lo()
	switch k := l.rng.IntN(10); {
	case k < 2 && l.wm.After(lo):
		c.ing = l.pick(lo, l.wm)
		l.seen["behind the watermark"]++
	case k < 3:
		c.ing = l.pick(hi, hi.Add(2*time.Hour))
		l.seen["after hi"]++
	default:
		c.ing = l.pick(maxTime(lo, l.wm), hi)
	}
	l.log = append(l.log, c)
	var at any
	if c.at != nil {
		at = l.e.tg.Dialect.BindTime(*c.at, ir.Timestamp)
	}
	l.e.insert("app_{id}.vlog", l.inc.Columns, []any{c.id, c.val, c.note, c.op, c.lsn, at, l.e.tg.Dialect.BindTime(c.ing, ir.Timestamp)})
}

// change makes the changes before the run up to hi: some written now,
// some held back, held ones written now, and retries of written ones.
func (l *vlog) change(hi time.Time) {
	held := l.held
	l.held = nil
	for _, c := range held {
		if l.rng.IntN(3) == 0 {
			l.held = append(l.held, c)
			continue
		}
		l.seen["held back"]++
		l.write(c, hi)
	}
	for n := 3 + l.rng.IntN(8); n > 0; n-- {
		if len(l.log) > 0 && l.rng.IntN(12) == 0 {
			l.write(l.log[l.rng.IntN(len(l.log))], hi) // a retry: the same change again
			l.seen["retry"]++
			continue
		}
		c := l.make(hi)
		if l.rng.IntN(5) == 0 {
			l.held = append(l.held, c)
			continue
		}
		l.write(c, hi)
	}
}

// run runs the pipeline up to hi and checks its counts, versions and
// tombstones against the model, and against a replay of the log.
func (l *vlog) run(hi time.Time) {
	t := l.t
	t.Helper()
	lo := l.lo()
	var window, upTo []vchange
	for _, c := range l.log {
		if c.ing.Before(hi) {
			upTo = append(upTo, c)
			if !c.ing.Before(lo) {
				window = append(window, c)
			}
		}
	}
	next := events(upTo, l.seq)
	want := l.counts(window, next)
	res := mustRun(t, l.e, l.inc, Options{Until: &hi})
	what := fmt.Sprintf("run [%s, %s)", lo.Format(time.RFC3339), hi.Format(time.RFC3339))
	if diff := cmp.Diff(want, cdcCountsOf(res)); diff != "" {
		t.Errorf("%s: counts (-model +run):\n%s", what, diff)
	}
	if msg := accounted(l.inc, res); msg != "" {
		t.Errorf("%s: %s: %+v", what, msg, countsOf(res))
	}
	l.wm, l.state = hi, next
	pt := points(l.seq)
	wantRows, wantTombs, gaps := next.lines(l.open, pt, nil)
	if l.tracked || l.start != nil {
		events := scdRows(l.e, strings.Join(l.inc.Target.Parts, ".")+"_events", vlogCols, "id", "valid_from")
		if diff := cmp.Diff(wantRows, events); diff != "" {
			t.Errorf("%s: events (-model +db):\n%s", what, diff)
		}
		wantRows, _, _ = next.lines(l.open, pt, l.start)
	}
	if l.tracked {
		var n int
		wantRows, n = next.merged(l.open, pt, l.start)
		l.seen["merged"] += n
	}
	rows, tombs := l.read(l.inc)
	if diff := cmp.Diff(wantRows, rows); diff != "" {
		t.Errorf("%s: versions (-model +db):\n%s", what, diff)
	}
	if diff := cmp.Diff(wantTombs, tombs); diff != "" {
		t.Errorf("%s: tombstones (-model +db):\n%s", what, diff)
	}
	far := "'9000-01-01'"
	if l.seq {
		far = "9000000000000000000"
	}
	checkTimelineFar(t, l.e, scdShape{"dw_{id}.vlog_inc", "id", "valid_from", "valid_to"}, gaps, far)
	mustRun(t, l.e, l.ref, Options{Until: &hi, FullRefresh: true})
	fullRows, fullTombs := l.read(l.ref)
	if diff := cmp.Diff(fullRows, rows); diff != "" {
		t.Errorf("%s: the versions differ from a replay (-replay +incremental):\n%s", what, diff)
	}
	if diff := cmp.Diff(fullTombs, tombs); diff != "" {
		t.Errorf("%s: the tombstones differ from a replay (-replay +incremental):\n%s", what, diff)
	}
}

func (l *vlog) read(p *ir.Plan) (rows, tombs []string) {
	name := strings.Join(p.Target.Parts, ".")
	return scdRows(l.e, name, vlogCols, "id", "valid_from"), scdRows(l.e, name+"_tombstones", []string{"id", "valid_from", "incrc_sequence"}, "id", "valid_from")
}

// counts is what the model says a run of the window does, from the state
// before it (l.state) to the state after (next): the window's changes that
// break a rule are quarantined; per key and time its newest valid change
// is a new event when it beats the event held there, and every other
// valid change is ignored. A new delete is deleted; a new version is
// updated when it replaces a version held at its time or follows a version
// of its key (the event before it, after the run), inserted otherwise.
func (l *vlog) counts(window []vchange, next vstate) cdcCounts {
	c := cdcCounts{Read: int64(len(window))}
	var valid int64
	for _, ch := range window {
		if ch.valid(l.seq) {
			valid++
		} else {
			c.Quarantined++
		}
	}
	fresh := events(window, l.seq)
	var news int64
	for k, ev := range fresh {
		held, ok := l.state[k]
		if ok && ev.lsn <= held.lsn {
			if ev.lsn < held.lsn {
				l.seen["ignored: smaller sequence at a held time"]++
			}
			continue
		}
		news++
		switch {
		case ev.op == "d":
			c.Deleted++
		case ok && held.op != "d":
			c.Updated++
		case ok:
			c.Inserted++ // it replaces a delete
		default:
			var before *vchange
			for nk, n := range next {
				if nk.id == k.id && nk.at.Before(k.at) && (before == nil || nk.at.After(before.when(l.seq))) {
					n := n
					before = &n
				}
			}
			if before != nil && before.op != "d" {
				c.Updated++
			} else {
				c.Inserted++
			}
		}
		switch {
		case ok && held.op != "d" && ev.op == "d":
			l.seen["a delete at a version's time"]++
		case ok:
			l.seen["replaces a held event"]++
		}
		for hk, h := range l.state {
			if hk.id == k.id && hk.at.After(k.at) && h.op != "d" {
				l.seen["late: before a held version"]++
				break
			}
		}
	}
	c.Ignored = valid - news
	if c.Ignored > 0 {
		l.seen["ignored"]++
	}
	return c
}

// TestSCD2FromCDCEquivalence: random change logs over ten runs each, with
// the open end NULL and a sentinel, and versioned by the sequence alone
// (no cdc.at, the open end NULL), on every engine; after each run the
// versions and tombstones equal a replay at the same hi and the model, and
// the counts are the model's.
func TestSCD2FromCDCEquivalence(t *testing.T) {
	steps := []time.Duration{0, 30 * time.Minute, time.Hour, 90 * time.Minute, 2 * time.Hour, 3 * time.Hour}
	variants := []struct {
		open    string
		tracked bool
		seq     bool
		start   any // scd2.open_start
	}{{"", false, false, nil}, {"9999-12-31", false, false, nil}, {"", true, false, nil}, {"9999-12-31", true, false, nil}, {"", false, true, nil}, {"", true, true, nil},
		{"9999-12-31", false, false, "1970-01-01"}, {"", true, true, int64(0)}}
	for _, eng := range engines() {
		for _, v := range variants {
			open := v.open
			name := eng.name + "/open end NULL"
			if open != "" {
				name = eng.name + "/open end " + open
			}
			if v.tracked {
				name += "/tracked"
			}
			if v.seq {
				name += "/by the sequence"
			}
			if v.start != nil {
				name += fmt.Sprintf("/open start %v", v.start)
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				seen, ran := map[string]int{}, 0
				seeds := []uint64{1, 2}
				if v.seq {
					seeds = append(seeds, 3) // NULL op codes are rarer than the changes this mode leaves out
				}
				for _, seed := range seeds {
					t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
						e := newEnv(t, eng)
						ran++
						l := newVlog(t, e, seed, open, v.tracked, v.seq, v.start)
						hi := vlogStart
						for run := 0; run < 10 && !t.Failed(); run++ {
							step := steps[l.rng.IntN(len(steps))]
							switch {
							case run == 0 && step == 0:
								step = 2 * time.Hour
							case run == 5:
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
							t.Logf("seed %d: %d changes, exercised %v", seed, len(l.log), l.seen)
						}
						for what, n := range l.seen {
							seen[what] += n
						}
					})
				}
				if ran == 0 {
					return // the engine is not available
				}
				want := []string{"window run twice", "invalid image", "unknown op", "NULL op", "behind the watermark", "after hi",
					"held back", "retry", "ignored", "late: before a held version", map[bool]string{true: "merged", false: "ignored"}[v.tracked]}
				if v.seq {
					// One time is one lsn: nothing replaces a held event.
					want = append(want, "just before another change")
				} else {
					want = append(want, "no commit time", "smaller sequence at a taken time", "ignored: smaller sequence at a held time", "a delete at a version's time", "replaces a held event")
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
