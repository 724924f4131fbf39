package compiler

import "github.com/incrc/incrc/compiler/ir"

// appending is strategy append: the staged rows inserted; with a
// unique_key, only the keys the target lacks.
type appending struct {
	staging
	incremental
}

func (appending) validate(v *validator) { v.needsWatermark() }

func (appending) write(l *lowerer) {
	p := l.p
	if len(p.Key) > 0 {
		l.add(ir.StmtIgnoreKnown, ir.PhaseWrite, "Staged rows whose key the target holds are ignored: an append with a unique_key writes each key once, so a window read again (a lookback, for ids that commit out of order) appends only the keys it lacks.",
			ir.RetractKeys{Target: p.Stage, Stage: p.Target, Key: p.Key, NullSafe: l.nullableKey()})
	}
	l.add(ir.StmtWrite, ir.PhaseWrite, "Append the staged rows.", ir.InsertFrom{Into: p.Target, From: p.Stage, Columns: columnNames(p.Columns)})
	l.endWrite()
}

// direct: an incremental run may copy the window's rows straight into the
// target inside its write transaction, without a staging table. Only when
// the rows come from outside the target (a copy step streams them either
// way) and nothing reads them staged: an append without quality rules,
// without a dedupe, and without a watermark column (whose NULL rows the
// staged flow counts or quarantines); not a snapshot, nor partitioned.
func (l *lowerer) direct() bool {
	p := l.p
	return p.From != nil && p.CDC == nil && l.scd == nil && p.Strategy == ir.Append && p.Watermark == nil &&
		l.dedupe() == nil && len(l.rules) == 0 && !l.snapshot() && p.Partition == nil
}
