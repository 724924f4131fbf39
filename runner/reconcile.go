package runner

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler"
)

// Group is one reconcile.by value: the source's and the target's measures.
type Group struct {
	Key    string   `json:"key"`
	Source []string `json:"source"` // count first, then each measure; nil when absent
	Target []string `json:"target"`
	Match  bool     `json:"match"`
}

// Reconciliation compares source and target per reconcile.by value.
type Reconciliation struct {
	Pipeline string   `json:"pipeline"`
	By       string   `json:"by"`
	From     string   `json:"from"`
	To       string   `json:"to"`
	Measures []string `json:"measures"`
	// Uncompared are the spec's measures of the columns a merge writes on
	// insert only (InsertOnly): the target keeps each key's first value
	// there, which differs from the source by design, so they are left
	// out of the comparison, and said so.
	Uncompared []string `json:"uncompared,omitempty"`
	InsertOnly []string `json:"insert_only,omitempty"`
	Groups     []Group  `json:"groups"`
	Drifted    []string `json:"drifted"`
	// Pending are the groups that differ but that the pipeline has not
	// read to their end yet: they end after its saved watermark (every
	// group, before its first run). They are not drift: the next runs
	// fill them. (A row of an older group that was committed after the
	// watermark is still reported as drift: reconcile compares everything
	// the source holds.)
	Pending   []string `json:"pending"`
	Watermark string   `json:"watermark,omitempty"`
	// Restate: a drifted partition is finalized (older than
	// finalize_after before the watermark), so a backfill that rebuilds
	// it needs --restate.
	Restate bool `json:"restate,omitempty"`
}

// Reconcile compares source and target in [from, to) of reconcile.by:
// the plan's reconcile program, read-only.
func (t *Target) Reconcile(ctx context.Context, plan *compiler.Plan, from, to time.Time) (*Reconciliation, error) {
	from, to = localBound(plan, from), localBound(plan, to)
	if plan.ReconcileBy == "" {
		return nil, fmt.Errorf("%s: pipeline %s has no reconcile section (reconcile: {by: COLUMN, measures: [count, sum(COLUMN)]})", plan.File, plan.Pipeline)
	}
	var by compiler.Col
	for _, c := range plan.Columns {
		if c.Name == plan.ReconcileBy {
			by = c
		}
	}
	if !by.Type.IsTime() {
		return nil, fmt.Errorf("%s: reconcile.by %s is %s: --from/--to ranges need a date or timestamp column", plan.File, by.Name, by.Type)
	}
	c, conn, err := t.session(ctx, plan)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	defer c.release()
	pr, err := c.program(compiler.ModeReconcile)
	if err != nil {
		return nil, err
	}
	// Read-only: no setup. A target that was never run has no table to
	// compare, and the engine says so.
	m := newMachine(c, conn, params{"from": c.bindBound(from, by.Type), "to": c.bindBound(to, by.Type)})
	if _, err := fixWindow(ctx, m, pr, nil, bounds{now: time.Now()}); err != nil {
		return nil, err
	}
	if err := m.walk(ctx, pr); err != nil {
		return nil, err
	}
	src, tgt := m.rows[compiler.RegSource], m.rows[compiler.RegTarget]
	rec := &Reconciliation{Pipeline: plan.Pipeline, By: by.Name, From: formatBound(from, by.Type), To: formatBound(to, by.Type), Measures: measureNames(plan), Groups: []Group{}, Drifted: []string{},
		Uncompared: plan.Uncompared, InsertOnly: plan.InsertOnly}
	groups := map[string]*Group{}
	zoned := plan.ReconcileGroups != nil && plan.ReconcileGroups.Zone != ""
	side := func(rows [][]any, target bool) error {
		for _, row := range rows {
			key := Canon(row[0])
			if zoned && row[0] != nil {
				// The engine grouped by UTC hour: the hours of one local
				// day (or month) are one group.
				t, err := asTime(row[0])
				if err != nil {
					return err
				}
				gr := grainOf(plan.ReconcileGroups)
				key = makePartition(t, gr).Key(gr)
			}
			g := groups[key]
			if g == nil {
				g = &Group{Key: key}
				groups[key] = g
			}
			vals := make([]string, len(row)-1)
			for i, v := range row[1:] {
				vals[i] = Canon(v)
			}
			have := &g.Source
			if target {
				have = &g.Target
			}
			if *have != nil {
				vals = foldMeasures(plan.Measures, *have, vals)
			}
			*have = vals
		}
		return nil
	}
	if err := side(src, false); err != nil {
		return nil, err
	}
	if err := side(tgt, true); err != nil {
		return nil, err
	}
	for _, g := range groups {
		g.Match = strings.Join(g.Source, "\x00") == strings.Join(g.Target, "\x00") && g.Source != nil && g.Target != nil
		rec.Groups = append(rec.Groups, *g)
	}
	sort.Slice(rec.Groups, func(i, j int) bool { return rec.Groups[i].Key < rec.Groups[j].Key })
	saved, known := reconcileMark(ctx, c, conn, rec)
	rec.Pending = []string{}
	for _, g := range rec.Groups {
		switch {
		case g.Match:
		case known && notReached(plan, by.Type, g.Key, saved):
			rec.Pending = append(rec.Pending, g.Key)
		default:
			rec.Drifted = append(rec.Drifted, g.Key)
			if finalized(plan, g.Key, saved) {
				rec.Restate = true
			}
		}
	}
	return rec, nil
}

// reconcileMark reads the pipeline's saved watermark: nil before its first
// run. known is false when it cannot be compared with reconcile.by (an
// integer watermark) or the state cannot be read: then nothing is called
// pending.
func reconcileMark(ctx context.Context, c *compiled, q querier, rec *Reconciliation) (saved *mark, known bool) {
	st, err := readState(ctx, c, q, c.plan.Pipeline)
	if err != nil || c.plan.Watermark == nil || c.plan.Watermark.Type.IsInteger() {
		return nil, false
	}
	rec.Watermark = st.Watermark
	saved, err = parseSaved(c.plan, st.Watermark)
	return saved, err == nil
}

// notReached reports whether the group key ends after the saved
// watermark: the runs have not read all of it yet.
func notReached(plan *compiler.Plan, typ compiler.Type, key string, saved *mark) bool {
	if saved == nil {
		return true
	}
	t, err := keyStart(plan, key)
	if err != nil {
		return false
	}
	end := t.Add(time.Nanosecond) // a timestamp group is one instant
	switch {
	case plan.ReconcileGroups != nil:
		end = makePartition(t, grainOf(plan.ReconcileGroups)).end
	case typ.Kind == compiler.Date:
		end = t.AddDate(0, 0, 1)
	}
	return end.After(saved.t)
}

// finalized reports whether the partition of a group key is closed, as a
// backfill decides it: it starts before finalize_after before the saved
// watermark.
func finalized(plan *compiler.Plan, key string, saved *mark) bool {
	pt := plan.Partition
	if pt == nil || pt.FinalizeAfter.Value <= 0 || saved == nil || saved.isInt {
		return false
	}
	t, err := keyStart(plan, key)
	if err != nil {
		return false
	}
	bound := partitionStart(saved.t.Add(-pt.FinalizeAfter.Value), grainOf(pt))
	return partitionStart(t, grainOf(pt)).Before(bound)
}

// foldMeasures combines the measures of two groups into those of their
// union, canonical: counts and sums add (NULL, a sum of no value, adds
// nothing), min and max keep the lesser or greater (numbers by value,
// times and text in their canonical order, which is time order).
func foldMeasures(ms []compiler.Measure, a, b []string) []string {
	out := make([]string, len(a))
	for i := range a {
		x, y := a[i], b[i]
		switch {
		case x == "NULL":
			out[i] = y
			continue
		case y == "NULL":
			out[i] = x
			continue
		}
		rx, okx := new(big.Rat).SetString(x)
		ry, oky := new(big.Rat).SetString(y)
		num := okx && oky
		switch ms[i].Fn {
		case "count", "sum":
			if !num {
				out[i] = x // not a number: never from these engines
				continue
			}
			out[i] = Canon(new(big.Rat).Add(rx, ry).FloatString(12))
		case "min", "max":
			less := x < y
			if num {
				less = rx.Cmp(ry) < 0
			}
			if less == (ms[i].Fn == "min") {
				out[i] = x
			} else {
				out[i] = y
			}
		default:
			out[i] = x
		}
	}
	return out
}

// measureNames are the plan's measures as reconciliations name them.
func measureNames(plan *compiler.Plan) []string {
	names := make([]string, len(plan.Measures))
	for i, m := range plan.Measures {
		names[i] = m.String()
	}
	return names
}

func formatBound(t time.Time, typ compiler.Type) string {
	if typ.Kind == compiler.Date {
		return t.Format("2006-01-02")
	}
	return t.Format(time.RFC3339)
}

// Canon spells a value read from any engine the same way: numbers without
// trailing zeros, times in UTC as "2006-01-02" or "2006-01-02 15:04:05",
// NULL as NULL. Engines return one decimal as a string, bytes, a float or
// a driver type; reconciliation and tests compare what they mean.
func Canon(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case time.Time:
		return canonTime(v)
	case []byte:
		return canonText(string(v))
	case string:
		return canonText(v)
	case bool:
		return strconv.FormatBool(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case int:
		return strconv.Itoa(v)
	case float64:
		return canonNumber(strconv.FormatFloat(v, 'f', -1, 64))
	case fmt.Stringer:
		return canonText(v.String())
	}
	return canonText(fmt.Sprint(v))
}

func canonTime(t time.Time) string {
	t = t.UTC()
	if t.Equal(t.Truncate(24 * time.Hour)) {
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02 15:04:05.999999")
}

func canonText(s string) string {
	if n, ok := canonNumberOK(s); ok {
		return n
	}
	if len(s) >= 10 && s[4] == '-' && s[7] == '-' {
		if t, err := compiler.ParseTime(strings.TrimSuffix(s, "+00:00")); err == nil {
			return canonTime(t)
		}
	}
	return s
}

func canonNumberOK(s string) (string, bool) {
	if s == "" || strings.ContainsAny(s, "xX") {
		return "", false
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return "", false
	}
	if r.IsInt() {
		return r.Num().String(), true
	}
	out := r.FloatString(12)
	out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	return out, true
}

func canonNumber(s string) string {
	if n, ok := canonNumberOK(s); ok {
		return n
	}
	return s
}
