package ir

import (
	"fmt"
	"strings"
)

// Strategy is how a pipeline writes its target.
type Strategy string

const (
	Append              Strategy = "append"
	Merge               Strategy = "merge"
	OverwritePartitions Strategy = "overwrite_partitions"
	CDCApply            Strategy = "cdc"
	SCD2Strategy        Strategy = "scd2"
	FullRefresh         Strategy = "full_refresh"
)

// Idempotent reports whether writing the same window twice leaves the
// target as writing it once: the condition for a lookback.
func (s Strategy) Idempotent() bool { return s != Append }

// ParseWatermark checks a watermark value (such as watermark.start) against
// the watermark column's type and returns its canonical text: RFC 3339 in
// UTC for timestamps, YYYY-MM-DD for dates, decimal digits for integers.
func ParseWatermark(t Type, s string) (string, error) {
	switch {
	case t.IsInteger():
		var n int64
		if _, err := fmt.Sscan(s, &n); err != nil || fmt.Sprint(n) != strings.TrimSpace(s) {
			return "", fmt.Errorf("%q is not an integer, and the watermark column is %s", s, t)
		}
		if lo, hi := t.IntRange(); n < lo || n > hi {
			return "", fmt.Errorf("%s is outside the range of the watermark column's type %s (%d to %d)", s, t, lo, hi)
		}
		return fmt.Sprint(n), nil
	case t.Kind == Date:
		tm, err := ParseTime(s)
		if err != nil {
			return "", err
		}
		if !tm.Equal(tm.Truncate(24 * 3600e9)) {
			return "", fmt.Errorf("%q is not a date, and the watermark column is a date", s)
		}
		return tm.Format("2006-01-02"), nil
	default:
		tm, err := ParseTime(s)
		if err != nil {
			return "", err
		}
		return tm.Format("2006-01-02T15:04:05.999999999Z07:00"), nil
	}
}
