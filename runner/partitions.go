package runner

import (
	"fmt"
	"time"

	"github.com/incrc/incrc/compiler/ir"
)

// partition is one partition: the half-open range [start, end) of the
// partition column.
type partition struct {
	start, end time.Time
}

// Key names a partition in markers, grids and messages.
func (p partition) Key(g string) string {
	switch g {
	case "hour":
		return p.start.Format("2006-01-02T15")
	case "month":
		return p.start.Format("2006-01")
	}
	return p.start.Format("2006-01-02")
}

// partitionStart truncates t to the start of its partition, in UTC.
func partitionStart(t time.Time, g string) time.Time {
	t = t.UTC()
	switch g {
	case "hour":
		return t.Truncate(time.Hour)
	case "month":
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
}

func nextPartition(t time.Time, g string) time.Time {
	switch g {
	case "hour":
		return t.Add(time.Hour)
	case "month":
		return t.AddDate(0, 1, 0)
	}
	return t.AddDate(0, 0, 1)
}

func makePartition(t time.Time, g string) partition {
	s := partitionStart(t, g)
	return partition{start: s, end: nextPartition(s, g)}
}

// partitionsIn lists the partitions that intersect [from, to), oldest first.
func partitionsIn(from, to time.Time, g string) []partition {
	var out []partition
	for s := partitionStart(from, g); s.Before(to); s = nextPartition(s, g) {
		out = append(out, partition{start: s, end: nextPartition(s, g)})
	}
	return out
}

// asTime reads a partition start as an engine returns it: a time, or ISO
// text.
func asTime(v any) (time.Time, error) {
	if t, ok := v.(time.Time); ok {
		return t.UTC(), nil
	}
	s, ok := text(v)
	if !ok {
		return time.Time{}, fmt.Errorf("a NULL partition value: rows whose partition column is NULL belong to no partition")
	}
	return ir.ParseTime(s)
}

// PartitionKeys names the partitions of a pipeline that intersect
// [from, to), oldest first, as markers, grids and reconciliation name them.
func PartitionKeys(plan *ir.Plan, from, to time.Time) []string {
	g := plan.Partition.Granularity
	var keys []string
	for _, p := range partitionsIn(from, to, g) {
		keys = append(keys, p.Key(g))
	}
	return keys
}

// PartitionKey names the partition (or, without partitions, the group of
// reconcile.granularity) a reconciliation key falls in.
func PartitionKey(plan *ir.Plan, value string) string {
	t, err := ir.ParseTime(value)
	if err != nil || plan.ReconcileGroups == nil {
		return value
	}
	g := plan.ReconcileGroups.Granularity
	return makePartition(t, g).Key(g)
}

// PartitionBounds spells where the partition a reconciliation key falls
// in starts and ends as --from and --to read them: a date, or RFC 3339
// for hours (a partition key such as 2026-01 or 2026-01-02T15 is not one).
func PartitionBounds(plan *ir.Plan, value string) (from, to string) {
	t, err := ir.ParseTime(value)
	if err != nil {
		return value, value
	}
	g := plan.Partition.Granularity
	p := makePartition(t, g)
	if g == "hour" {
		return p.start.Format(time.RFC3339), p.end.Format(time.RFC3339)
	}
	return p.start.Format("2006-01-02"), p.end.Format("2006-01-02")
}
