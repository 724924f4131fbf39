package runner

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"
)

var timeUTC = time.UTC

// stateTimeLayout is how state tables store times: fixed width, so that
// text order is time order on every engine.
const stateTimeLayout = "2006-01-02T15:04:05.000000Z"

func stateTime(t time.Time) string { return t.UTC().Format(stateTimeLayout) }

// ClockSkew is how far --until may be ahead of this machine's clock before
// it is refused as a mistake (see Options.AllowFuture).
const ClockSkew = 5 * time.Minute

// mark is a watermark value: a time (timestamp or date watermark) or an
// integer (monotonic id watermark). With a tiebreak (tied) it is a
// position (t, id) in the order of the time then the id; noID, the
// smallest int64, is before every id: (t, noID) reads every row of t.
type mark struct {
	t     time.Time
	n     int64
	isInt bool
	date  bool
	tied  bool
	id    int64
}

const noID = math.MinInt64

// String is how the state, the run log and the messages write a mark: a
// tied one as TIME/ID, or TIME alone when it is before every id of TIME.
func (m mark) String() string {
	switch {
	case m.isInt:
		return strconv.FormatInt(m.n, 10)
	case m.date:
		return m.t.Format("2006-01-02")
	case m.tied && m.id != noID:
		return m.t.UTC().Format(time.RFC3339Nano) + "/" + strconv.FormatInt(m.id, 10)
	}
	return m.t.UTC().Format(time.RFC3339Nano)
}

func (m mark) less(o mark) bool {
	switch {
	case m.isInt:
		return m.n < o.n
	case m.tied && m.t.Equal(o.t):
		return m.id < o.id
	}
	return m.t.Before(o.t)
}

// parseWM reads a saved or configured watermark of a pipeline: with a
// tiebreak, TIME or TIME/ID (TIME alone is before every id of TIME, as
// watermark.start and a watermark saved before the tiebreak was added).
func parseWM(wm *ir.Watermarking, s string) (mark, error) {
	if wm.Tiebreak == "" {
		if i := strings.LastIndexByte(s, '/'); i >= 0 && wm.Type.IsTime() {
			// Saved while the spec had a tiebreak: its time, every row of
			// which the next run reads again rather than miss one.
			s = s[:i]
		}
		return parseMark(wm.Type, s)
	}
	id := int64(noID)
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		n, err := strconv.ParseInt(s[i+1:], 10, 64)
		if err != nil {
			return mark{}, fmt.Errorf("%q: the part after / is the tiebreak %s, an integer", s, wm.Tiebreak)
		}
		s, id = s[:i], n
	}
	m, err := parseMark(wm.Type, s)
	m.tied, m.id = true, id
	return m, err
}

// parseMark reads a saved or configured watermark for the column type.
func parseMark(t ir.Type, s string) (mark, error) {
	canon, err := ir.ParseWatermark(t, s)
	if err != nil {
		return mark{}, err
	}
	if t.IsInteger() {
		n, _ := strconv.ParseInt(canon, 10, 64)
		return mark{n: n, isInt: true}, nil
	}
	tm, err := ir.ParseTime(canon)
	return mark{t: tm, date: t.Kind == ir.Date}, err
}

// window is the half-open range [lo, hi) a program reads, fixed once
// before its first step.
type window struct {
	lo, hi       mark
	hasLo, hasHi bool
	saved        *mark // the saved watermark, nil before the first run
	// advance is where a program that moves the watermark moves it: hi,
	// never below the saved one.
	advance mark
	// heldBy names the upstream pipeline whose saved watermark held hi
	// back from heldFrom (see holdBack); empty when none did.
	heldBy   string
	heldFrom mark
	// more: hi is the end of a batch (watermark.batch) before the run's
	// own hi: another batch follows.
	more bool
}

// empty reports whether the window holds no value at all.
func (w window) empty() bool { return w.hasLo && w.hasHi && !w.lo.less(w.hi) }

// bounds says how to fix a window: the clock, --until and whether a
// future --until is meant.
type bounds struct {
	now         time.Time
	until       *time.Time
	allowFuture bool
	// preview: only read what the next run would (incrc plan --target):
	// an upstream without state, or without state tables, has written
	// nothing, instead of failing.
	preview bool
	// batch: hi is cut at the end of the batch the window starts in
	// (watermark.batch).
	batch bool
}

// fixWindow fixes a program's window from the plan's watermark policy and
// the saved watermark, and binds it: start, lo, hi, watermark, and the
// window register (1 when the window is not empty). It reads the source
// for an integer watermark's hi.
func fixWindow(ctx context.Context, m *machine, pr *ir.Program, saved *mark, b bounds) (window, error) {
	p := m.c.plan
	w := window{saved: saved}
	wm := p.Watermark
	if b.until != nil && b.until.After(b.now.Add(ClockSkew)) && !b.allowFuture && pr.Hi == ir.HiNow {
		return w, fmt.Errorf("--until %s is later than now (%s): a watermark in the future makes every later run read nothing until then; pass --allow-future if you mean it",
			b.until.UTC().Format(time.RFC3339), b.now.UTC().Format(time.RFC3339))
	}
	if wm == nil {
		// No watermark: a full_refresh pipeline reads the whole source, up to now.
		hi := b.now
		if b.until != nil {
			hi = *b.until
		}
		w.hi, w.hasHi, w.advance = mark{t: hi.UTC()}, true, mark{t: hi.UTC()}
		m.vals["watermark"] = w.advance.String()
		// hi is the run's time, bound as a timestamp: what a program that
		// stamps rows with it (a version's start) reads.
		m.vals["hi"] = m.c.d.BindTime(hi.UTC(), ir.Timestamp)
		m.vals[ir.RegWindow] = int64(1)
		return w, nil
	}
	start, err := parseWM(wm, wm.Start)
	if err != nil {
		return w, fmt.Errorf("watermark.start of %s: %w", p.Pipeline, err)
	}
	kind := wm.Type.Kind
	if pr.Lo != ir.LoNone {
		m.vals["start"] = m.c.bindMark(start, kind)
	}
	switch pr.Hi {
	case ir.HiNone:
		return w, nil
	case ir.HiSaved:
		if saved == nil {
			return w, fmt.Errorf("pipeline %s has not run yet: an append backfill reads up to the watermark, and there is none", p.Pipeline)
		}
		w.hi = *saved
	case ir.HiNow:
		if w.hi, err = hiNow(ctx, m, wm, saved, b); err != nil {
			return w, err
		}
	}
	w.hasHi = true
	if b.until != nil && saved != nil && w.hi.less(*saved) && pr.Hi == ir.HiNow {
		return w, fmt.Errorf("--until %s is before the saved watermark %s of %s: the watermark never moves backwards (a backfill rebuilds the past; incrc state --rewind moves it back on purpose)", w.hi, saved, p.Pipeline)
	}
	if b.until != nil && saved == nil && w.hi.less(start) {
		return w, fmt.Errorf("--until %s is before watermark.start %s of %s: nothing before start is ever read", w.hi, start, p.Pipeline)
	}
	if pr.Hi == ir.HiNow {
		if err := holdBack(ctx, m, &w, b); err != nil {
			return w, err
		}
	}
	if b.batch && pr.Hi == ir.HiNow {
		from := start
		if saved != nil {
			from = *saved
		}
		if end := batchEnd(start, from, wm.Batch); end.less(w.hi) {
			w.hi, w.more = end, true
		}
	}
	if saved != nil && w.hi.less(*saved) && pr.Hi == ir.HiNow {
		// The clock (minus the lag) is behind a watermark set with --until,
		// or an upstream is behind this pipeline: nothing to read yet.
		w.hi = *saved
	}
	if saved == nil && w.hi.less(start) {
		// Nothing before watermark.start is ever read, so the first
		// watermark is never below it.
		w.hi = start
	}
	w.advance = w.hi
	m.vals["hi"] = m.c.bindMark(w.hi, kind)
	if w.hi.tied {
		m.vals["hi_id"] = w.hi.id
	}
	m.vals["watermark"] = w.advance.String()
	// Partitions finalize relative to the pipeline's own clock, the saved
	// watermark, as in a backfill: a partition is closed once the runs
	// have moved finalize_after past it. Before the first run nothing has
	// been written, so nothing is closed: the first run writes what a full
	// refresh writes.
	if pt := p.Partition; pt != nil && pt.FinalizeAfter.Value > 0 && saved != nil && !saved.isInt {
		m.finalBound = partitionStart(saved.t.Add(-pt.FinalizeAfter.Value), grainOf(pt))
	}
	switch pr.Lo {
	case ir.LoStart:
		w.lo, w.hasLo = start, true
	case ir.LoWatermark:
		from := start
		if saved != nil {
			from = *saved
		}
		var finalize time.Duration
		if p.Partition != nil {
			finalize = p.Partition.FinalizeAfter.Value
		}
		w.lo, w.hasLo = lowerBound(from, wm.Lookback, finalize), true
		if w.lo.tied && wm.Lookback.Value > 0 {
			w.lo.id = noID // a lookback reads every row of its first instant
		}
		if w.lo.less(start) {
			w.lo = start // a lookback never reaches before the configured start
		}
		if w.hi.less(w.lo) {
			w.lo = w.hi
		}
		m.vals["lo"] = m.c.bindMark(w.lo, kind)
		if w.lo.tied {
			// The rows without a time are read by id from the saved
			// watermark's: a lookback is a duration, on the time only.
			m.vals["lo_id"] = from.id
		}
	}
	if !w.empty() {
		m.vals[ir.RegWindow] = int64(1)
	}
	return w, nil
}

// holdBack lowers hi to the saved watermark of each upstream pipeline
// that bounds this one (ir.Upstream.Bounds): a window covers only
// rows its upstream has finished writing. An upstream that has not run
// has finished nothing. The lowest bound wins and is recorded in w.
func holdBack(ctx context.Context, m *machine, w *window, b bounds) error {
	p := m.c.plan
	for _, u := range p.Upstream {
		if !u.Bounds {
			continue
		}
		var saved string
		st, err := readState(ctx, m.c, m.conn, u.Pipeline)
		switch {
		case err != nil && !b.preview:
			return fmt.Errorf("read the watermark of upstream pipeline %s: %w", u.Pipeline, err)
		case err == nil:
			saved = st.Watermark
		}
		if saved == "" && !b.preview {
			return fmt.Errorf("%s reads the target of pipeline %s, which has not run yet: nothing of it is complete; run it first (incrc run --select +%s runs both, in order)", p.Pipeline, u.Pipeline, p.Pipeline)
		}
		var bound mark
		if saved == "" {
			// Nothing is complete upstream: the lowest hi there is.
			bound = w.hi
			bound.t, bound.n = time.Time{}, -1<<63
		} else {
			if i := strings.LastIndexByte(saved, '/'); i >= 0 && !u.Watermark.IsInteger() {
				saved = saved[:i] // an upstream's tiebreak: its time bounds this window
			}
			up, err := parseMark(u.Watermark, saved)
			if err != nil {
				return fmt.Errorf("saved watermark %q of upstream pipeline %s: %w", saved, u.Pipeline, err)
			}
			bound = convertMark(up, p.Watermark.Type)
		}
		if bound.less(w.hi) {
			if w.heldBy == "" {
				w.heldFrom = w.hi
			}
			w.hi, w.heldBy = bound, u.Pipeline
		}
	}
	if w.heldBy != "" {
		addNote(m.vals, "hi held back from "+w.heldFrom.String()+" by upstream "+w.heldBy+"'s watermark")
	}
	return nil
}

// convertMark reads an upstream's watermark as a bound of this pipeline's
// watermark type: a time as a date is the start of its day (the day is
// not complete yet), a date as a time its midnight. Validation refuses an
// integer against a time.
func convertMark(up mark, t ir.Type) mark {
	switch {
	case t.IsInteger():
		return mark{n: up.n, isInt: true}
	case t.Kind == ir.Date:
		return mark{t: up.t.UTC().Truncate(24 * time.Hour), date: true}
	}
	return mark{t: up.t.UTC()}
}

// intMax is the largest value of an integer watermark's column type.
func intMax(t ir.Type) int64 {
	_, hi := t.IntRange()
	return hi
}

// hiNow is where a run stops reading: the largest id present plus one for
// an integer watermark; otherwise --until, or now minus the lag, so that
// rows still committing belong to the next run. A date watermark's bound
// is the start of that day: the day itself is not complete yet.
func hiNow(ctx context.Context, m *machine, wm *ir.Watermarking, saved *mark, b bounds) (mark, error) {
	if wm.Type.IsInteger() {
		if b.until != nil {
			return mark{}, fmt.Errorf("--until does not apply to %s: its watermark %s is an integer, and a run reads up to the largest id present", m.c.plan.Pipeline, wm.Name)
		}
		max, ok, err := m.sourceCount(ctx, wm.MaxStatement)
		if err != nil {
			return mark{}, err
		}
		hi := mark{isInt: true}
		switch {
		case ok && max >= intMax(wm.Type):
			// A half-open window cannot end after the largest value of the
			// type: max + 1 would wrap around to the smallest, and every
			// window from then on would be empty.
			return mark{}, fmt.Errorf("pipeline %s: the source's largest %s is %d, the largest %s value: a window [lo, hi) ends after the largest id it reads, and no %s comes after this one; the run stops rather than skip rows (widen the column, or remove the row)",
				m.c.plan.Pipeline, wm.Name, max, wm.Type, wm.Type)
		case ok:
			hi.n = max + 1
		case saved != nil:
			hi = *saved
		}
		return hi, nil
	}
	hi := b.now.Add(-wm.Lag.Value)
	if b.until != nil {
		hi = *b.until
	}
	hi = hi.UTC()
	if wm.Type.Kind == ir.Date {
		return mark{t: hi.Truncate(24 * time.Hour), date: true}, nil
	}
	// The precision of the column: every engine keeps microseconds, so a
	// nanosecond of the clock or of --until is a bound no row can be
	// told apart by, and it would be saved, printed and compared as if
	// it were one.
	t := mark{t: hi.Truncate(time.Microsecond)}
	if wm.Tiebreak != "" {
		return tiedHi(ctx, m, wm, t, saved)
	}
	return t, nil
}

// sourceCount runs a statement that counts (or finds a largest value)
// where the source is: the target, or the source database outside it.
func (m *machine) sourceCount(ctx context.Context, name string) (int64, bool, error) {
	var q querier = m.q()
	vals := m.vals
	if m.c.plan.From != nil {
		src, err := m.c.source(ctx)
		if err != nil {
			return 0, false, err
		}
		q, vals = src, m.c.sourceVals(name, m.vals)
	}
	return m.c.count(ctx, q, name, vals)
}

// tiedHi gives hi its id: the largest id present plus one, so that the
// rows of hi's time and the rows without a time that exist now are read
// now, and those written later (a larger id) by the next run. It never
// goes below the saved watermark's id, which would read again rows
// without a time that a run has read (after rows were deleted).
func tiedHi(ctx context.Context, m *machine, wm *ir.Watermarking, hi mark, saved *mark) (mark, error) {
	hi.tied, hi.id = true, noID
	if saved != nil {
		hi.id = saved.id
	}
	max, ok, err := m.sourceCount(ctx, wm.TieMaxStatement)
	if err != nil {
		return mark{}, err
	}
	if ok && max == math.MaxInt64 {
		return mark{}, fmt.Errorf("pipeline %s: the source's largest %s is %d, the largest bigint: a window ends after the largest id it reads, and none comes after this one; the run stops rather than skip rows",
			m.c.plan.Pipeline, wm.Tiebreak, max)
	}
	if ok && max+1 > hi.id {
		hi.id = max + 1
	}
	return hi, nil
}

// batchEnd is the end of the batch that from falls in: batches are
// [start + k x size, start + (k+1) x size), so their bounds do not depend
// on when a run happened to stop, and the batch of a watermark that sits
// on a bound is the next one.
func batchEnd(start, from mark, size ir.Duration) mark {
	end := from
	if from.isInt {
		k := int64(0)
		if from.n >= start.n {
			k = (from.n-start.n)/size.Count + 1
		}
		if start.n > math.MaxInt64-k*size.Count {
			end.n = math.MaxInt64 // past the type: no batch cuts the window
			return end
		}
		end.n = start.n + k*size.Count
		return end
	}
	k := int64(0)
	if !from.t.Before(start.t) {
		k = int64(from.t.Sub(start.t)/size.Value) + 1
	}
	end.t = start.t.Add(time.Duration(k) * size.Value)
	return end
}

// lowerBound is where a run starts reading: the saved watermark (or
// watermark.start on the first run) minus the lookback, but never further
// back than finalize_after: older partitions are closed.
func lowerBound(wm mark, lookback ir.Duration, finalizeAfter time.Duration) mark {
	lo := wm
	switch {
	case wm.isInt:
		// Below the smallest int64 the subtraction would wrap to the
		// largest, an empty window; the caller raises lo to start.
		if lookback.Count > 0 && wm.n < math.MinInt64+lookback.Count {
			lo.n = math.MinInt64
		} else {
			lo.n -= lookback.Count
		}
	case finalizeAfter > 0 && finalizeAfter < lookback.Value:
		lo.t = wm.t.Add(-finalizeAfter)
	default:
		lo.t = wm.t.Add(-lookback.Value)
	}
	return lo
}

// ParseUntil reads --until: RFC 3339, or a date (midnight UTC).
func ParseUntil(s string) (time.Time, error) {
	t, err := ir.ParseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--until: %w", err)
	}
	return t, nil
}
