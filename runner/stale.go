package runner

import (
	"context"

	"github.com/incrc/incrc/compiler"
)

// Stale lists the partitions of a pipeline's target whose rows were
// computed with another logic than the plan's (compiler.LogicHash), oldest
// first: what incrc backfill --stale rebuilds.
//
// A partition's rows come from its last rebuild (the latest full refresh,
// or its latest backfill marker, whichever is newer) and from the runs
// after it. It is stale when that rebuild used another logic, or when a
// run after it did: a run's window is on the watermark, so any partition
// may hold rows it wrote. A run or marker an older incrc recorded, without
// a logic, is taken as current: nothing says otherwise.
func (t *Target) Stale(ctx context.Context, plan *compiler.Plan) ([]string, error) {
	if plan.Partition == nil {
		return nil, nil
	}
	c, conn, err := t.session(ctx, plan)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	defer c.release()
	if err := newMachine(c, conn, params{}).walk(ctx, plan.StateSetup()); err != nil {
		return nil, err
	}
	return staleOn(ctx, c, conn)
}

func staleOn(ctx context.Context, c *compiled, q querier) ([]string, error) {
	plan := c.plan
	g := grainOf(plan.Partition)
	vals := params{"pipeline": plan.Pipeline}
	rows, err := c.query(ctx, q, compiler.StmtTargetPartitions, vals)
	if err != nil {
		return nil, err
	}
	type built struct{ logic, at string }
	markers := map[string]built{}
	mrows, err := c.query(ctx, q, compiler.StmtLogicMarkers, vals)
	if err != nil {
		return nil, err
	}
	for _, r := range mrows {
		k, _ := text(r[0])
		l, _ := text(r[1])
		at, _ := text(r[2])
		markers[k] = built{l, at} // ordered by updated_at: the latest wins
	}
	rrows, err := c.query(ctx, q, compiler.StmtLogicRuns, vals)
	if err != nil {
		return nil, err
	}
	var full built
	var runs []built
	for _, r := range rrows {
		kind, _ := text(r[0])
		l, _ := text(r[1])
		at, _ := text(r[2])
		switch kind {
		case "full_refresh":
			full = built{l, at}
		case "run":
			runs = append(runs, built{l, at})
		}
	}
	other := func(l string) bool { return l != "" && l != plan.LogicHash }
	var out []string
	for _, r := range rows {
		if r[0] == nil {
			continue // rows without a partition: no backfill rebuilds them
		}
		tm, err := asTime(r[0])
		if err != nil {
			return nil, err
		}
		key := makePartition(tm, g).Key(g)
		last := full
		if m, ok := markers[key]; ok && m.at > last.at {
			last = m
		}
		stale := other(last.logic)
		for _, rn := range runs {
			stale = stale || rn.at > last.at && other(rn.logic)
		}
		if stale && (len(out) == 0 || out[len(out)-1] != key) {
			// (the hours of one day of a zone come one after the other)
			out = append(out, key)
		}
	}
	return out, nil
}
