package compiler

import "github.com/incrc/incrc/compiler/ir"

// A strategy is what sets one strategy apart when a pipeline compiles:
// what it requires of a spec, the statements that stage and write a
// window, and the programs that run them. Each lives in a file of its own
// (append.go, merge.go, overwrite.go, fullrefresh.go, cdc.go, scd2.go);
// the steps every pipeline shares (setup, state, lookups, files, the
// checks of each block) ask the plan's strategy instead of switching on
// its name.
type strategy interface {
	// validate reports what the strategy requires of the spec that the
	// spec lacks. The rules of a block a strategy may not carry (merge:,
	// cdc:, partition:) stay with the block's own check, which reports the
	// block wherever it is.
	validate(v *validator)
	// stage adds the statements that read a window into session tables.
	stage(l *lowerer)
	// write adds the statements that write what stage staged, and those
	// of the modes that rebuild the target (full refresh, backfill,
	// reconcile).
	write(l *lowerer)
	// programs are the strategy's run and its full refresh.
	programs(l *lowerer) (run, full *ir.Program)
}

// preparer is a strategy that lays out, before any statement is added,
// what the shared steps read of it (cdc: the target's and the tombstones'
// columns; scd2: the versions).
type preparer interface{ prepare(l *lowerer) }

// targetDeclarer is a strategy whose target is not the declared columns
// (cdc, scd2): it creates the target, and the tables beside it after the
// target's check (which probes the table created last).
type targetDeclarer interface {
	createTarget(l *lowerer)
	besideTarget(l *lowerer)
}

// strategyTable lists every strategy, in the order a spec's errors and
// the JSON Schema name them. A static table rather than registration from
// each file's init: the order is then one list a reader sees, and no file
// can register a name twice.
var strategyTable = []struct {
	name ir.Strategy
	strategy
}{
	{ir.Append, appending{}},
	{ir.Merge, merging{}},
	{ir.OverwritePartitions, overwriting{}},
	{ir.CDCApply, applyingChanges{}},
	{ir.SCD2Strategy, versioning{}},
	{ir.FullRefresh, refreshing{}},
}

// strategies are the names a spec's strategy may take.
var strategies = func() []string {
	names := make([]string, len(strategyTable))
	for i, st := range strategyTable {
		names[i] = string(st.name)
	}
	return names
}()

// strategyOf is the named strategy, nil for a name the table lacks (which
// Validate reports).
func strategyOf(name ir.Strategy) strategy {
	for _, st := range strategyTable {
		if st.name == name {
			return st.strategy
		}
	}
	return nil
}

// staging is the stage of the strategies that read the window's rows into
// the stage table as the target's columns (lower.go's stage).
type staging struct{}

func (staging) stage(l *lowerer) { l.stage() }

// incremental is the programs of the strategies whose run writes the
// staged window and whose full refresh rebuilds the target from the
// source (refresh.go).
type incremental struct{}

func (incremental) programs(l *lowerer) (run, full *ir.Program) {
	return l.incremental(), l.fullRefresh()
}
