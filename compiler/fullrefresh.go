package compiler

import "github.com/incrc/incrc/compiler/ir"

// refreshing is strategy full_refresh: every run rebuilds the target from
// the whole source.
type refreshing struct{ staging }

func (refreshing) validate(*validator) {}

// rebuildsEveryRun: the pipeline's runs read the whole source, never a
// window of it.
func (l *lowerer) rebuildsEveryRun() bool { return l.p.Strategy == ir.FullRefresh }

func (refreshing) write(l *lowerer) { l.endWrite() }

// programs: a full_refresh pipeline's run is a full refresh: it never
// appends.
func (refreshing) programs(l *lowerer) (run, full *ir.Program) {
	run, full = l.fullRefresh(), l.fullRefresh()
	run.Mode = ir.ModeRun
	return run, full
}
