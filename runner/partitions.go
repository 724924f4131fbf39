package runner

import (
	"fmt"
	"time"

	"github.com/incrc/incrc/compiler/ir"
	"github.com/incrc/incrc/runner/transfer"
)

// partition is one partition: the half-open range [start, end) of the
// partition column.
type partition struct {
	start, end time.Time
}

// grain is how a pipeline cuts time into partitions: hours, days or
// months of a time zone (UTC unless partition.timezone says otherwise).
type grain struct {
	unit string
	loc  *time.Location
}

// grainOf is the grain of a partitioning (or of reconcile's groups).
func grainOf(p *ir.Partitioning) grain {
	g := grain{unit: p.Granularity, loc: time.UTC}
	if p.Zone != "" {
		loc, err := time.LoadLocation(p.Zone)
		if err != nil {
			// Validation loaded it from the same compiled-in database.
			panic(fmt.Sprintf("partition.timezone %q passed validation and does not load: %v", p.Zone, err))
		}
		g.loc = loc
	}
	return g
}

// Key names a partition in markers, grids and messages: its start in the
// partitions' zone.
func (p partition) Key(g grain) string {
	s := p.start.In(g.loc)
	switch g.unit {
	case "hour":
		return s.Format("2006-01-02T15")
	case "month":
		return s.Format("2006-01")
	}
	return s.Format("2006-01-02")
}

// partitionStart truncates t to the start of its partition in the grain's
// zone, returned in UTC: a day of Europe/Berlin starts at 22:00 or 23:00
// UTC the day before.
func partitionStart(t time.Time, g grain) time.Time {
	t = t.In(g.loc)
	switch g.unit {
	case "hour":
		return t.Truncate(time.Hour).UTC()
	case "month":
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, g.loc).UTC()
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, g.loc).UTC()
}

// nextPartition is the start of the partition after the one starting at
// t: the next local midnight, 23 or 25 hours on when the clocks change.
func nextPartition(t time.Time, g grain) time.Time {
	switch g.unit {
	case "hour":
		return t.Add(time.Hour)
	case "month":
		return t.In(g.loc).AddDate(0, 1, 0).UTC()
	}
	return t.In(g.loc).AddDate(0, 0, 1).UTC()
}

func makePartition(t time.Time, g grain) partition {
	s := partitionStart(t, g)
	return partition{start: s, end: nextPartition(s, g)}
}

// partitionsIn lists the partitions that intersect [from, to), oldest first.
func partitionsIn(from, to time.Time, g grain) []partition {
	var out []partition
	for s := partitionStart(from, g); s.Before(to); s = nextPartition(s, g) {
		out = append(out, partition{start: s, end: nextPartition(s, g)})
	}
	return out
}

// localBound reads a --from or --to given as a date (midnight UTC) as
// that date's midnight in the partitions' zone: --from 2026-03-29 of a
// Europe/Berlin pipeline is its partition 2026-03-29, which starts at
// 2026-03-28T23:00:00Z. A time with a clock is an instant, kept.
func localBound(plan *ir.Plan, t time.Time) time.Time {
	pt := plan.Partition
	if pt == nil || pt.Zone == "" || t.IsZero() || !t.Equal(t.UTC().Truncate(24*time.Hour)) {
		return t
	}
	u := t.UTC()
	return time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, grainOf(pt).loc).UTC()
}

// keyStart reads a partition key (or a reconcile group key) as the start
// of its partition: a date key of a zone's partitions is that zone's
// midnight.
func keyStart(plan *ir.Plan, key string) (time.Time, error) {
	t, err := ir.ParseTime(key)
	if err != nil {
		return t, err
	}
	return localBound(plan, t), nil
}

// asTime reads a partition start as an engine returns it: a time, or ISO
// text.
func asTime(v any) (time.Time, error) {
	if v == nil {
		return time.Time{}, fmt.Errorf("a NULL partition value: rows whose partition column is NULL belong to no partition")
	}
	return transfer.Time(v)
}

// PartitionKeys names the partitions of a pipeline that intersect
// [from, to), oldest first, as markers, grids and reconciliation name them.
func PartitionKeys(plan *ir.Plan, from, to time.Time) []string {
	g := grainOf(plan.Partition)
	from, to = localBound(plan, from), localBound(plan, to)
	var keys []string
	for _, p := range partitionsIn(from, to, g) {
		keys = append(keys, p.Key(g))
	}
	return keys
}

// PartitionKey names the partition (or, without partitions, the group of
// reconcile.granularity) a reconciliation key falls in.
func PartitionKey(plan *ir.Plan, value string) string {
	t, err := keyStart(plan, value)
	if err != nil || plan.ReconcileGroups == nil {
		return value
	}
	g := grainOf(plan.ReconcileGroups)
	return makePartition(t, g).Key(g)
}

// PartitionBounds spells where the partition a reconciliation key falls
// in starts and ends as --from and --to read them: a date, or RFC 3339
// for hours (a partition key such as 2026-01 or 2026-01-02T15 is not one).
func PartitionBounds(plan *ir.Plan, value string) (from, to string) {
	t, err := keyStart(plan, value)
	if err != nil {
		return value, value
	}
	g := grainOf(plan.Partition)
	p := makePartition(t, g)
	if g.unit == "hour" {
		return p.start.Format(time.RFC3339), p.end.Format(time.RFC3339)
	}
	return p.start.Format("2006-01-02"), p.end.Format("2006-01-02")
}
