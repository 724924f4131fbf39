package runner

import (
	"fmt"
	"strconv"
	"time"

	"github.com/incrc/incrc/compiler"
)

var timeUTC = time.UTC

// stateTimeLayout is how state tables store times: fixed width, so that
// text order is time order on every engine.
const stateTimeLayout = "2006-01-02T15:04:05.000000Z"

func stateTime(t time.Time) string { return t.UTC().Format(stateTimeLayout) }

// mark is a watermark value: a time (timestamp or date watermark) or an
// integer (monotonic id watermark).
type mark struct {
	t     time.Time
	n     int64
	isInt bool
	date  bool
}

func (m mark) String() string {
	switch {
	case m.isInt:
		return strconv.FormatInt(m.n, 10)
	case m.date:
		return m.t.Format("2006-01-02")
	}
	return m.t.UTC().Format(time.RFC3339Nano)
}

func (m mark) less(o mark) bool {
	if m.isInt {
		return m.n < o.n
	}
	return m.t.Before(o.t)
}

// parseMark reads a saved or configured watermark for the column type.
func parseMark(t compiler.Type, s string) (mark, error) {
	canon, err := compiler.ParseWatermark(t, s)
	if err != nil {
		return mark{}, err
	}
	if t.IsInteger() {
		n, _ := strconv.ParseInt(canon, 10, 64)
		return mark{n: n, isInt: true}, nil
	}
	tm, err := compiler.ParseTime(canon)
	return mark{t: tm, date: t.Kind == compiler.Date}, err
}

// window is the half-open range [lo, hi) a run reads.
type window struct {
	lo, hi   mark
	hasLo    bool
	previous *mark // the saved watermark, nil on the first run
}

// lowerBound is where a run starts reading: the saved watermark (or
// watermark.start on the first run) minus the lookback, but never before
// the finalization bound (hi - finalize_after) unless the watermark itself
// is older, since partitions older than that bound are closed.
func lowerBound(wm mark, lookback compiler.Duration, finalizeAfter time.Duration, hi mark) mark {
	lo := wm
	switch {
	case wm.isInt:
		lo.n -= lookback.Count
	default:
		lo.t = wm.t.Add(-lookback.Value)
		if finalizeAfter > 0 {
			bound := hi.t.Add(-finalizeAfter)
			if wm.t.Before(bound) {
				bound = wm.t
			}
			if lo.t.Before(bound) {
				lo.t = bound
			}
		}
	}
	return lo
}

// upperBound is where a run stops reading: --until, or now minus the lag,
// so that rows still committing belong to the next run. A date watermark's
// bound is the start of that day: the day itself is not complete yet.
func upperBound(t compiler.Type, until *time.Time, now time.Time, lag time.Duration) mark {
	hi := now.Add(-lag)
	if until != nil {
		hi = *until
	}
	hi = hi.UTC()
	if t.Kind == compiler.Date {
		return mark{t: hi.Truncate(24 * time.Hour), date: true}
	}
	return mark{t: hi}
}

// ParseUntil reads --until: RFC 3339, or a date (midnight UTC).
func ParseUntil(s string) (time.Time, error) {
	t, err := compiler.ParseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("--until: %w", err)
	}
	return t, nil
}
