package compiler

import "github.com/incrc/incrc/compiler/ir"

// overwriting is strategy overwrite_partitions: every partition the
// window touches rewritten whole from the source.
type overwriting struct {
	staging
	incremental
}

func (overwriting) validate(v *validator) { v.needsWatermark() }

// write: the write is replace_partition, once per touched partition
// (partitions adds it, as for a backfill).
func (overwriting) write(l *lowerer) {
	p := l.p
	l.refreshStaged()
	if l.mode == "quarantine" {
		window, _ := l.windows()
		pc := p.Partition.Column
		l.add(ir.StmtQuarantineUnpartited, ir.PhaseWrite, "Rows of the window whose partition column is NULL belong to no partition: quarantined, with the reason.",
			ir.QuarantineRows{Into: p.Quarantine, From: p.Source, Window: window, Columns: columnNames(p.Columns),
				Rules: []ir.Rule{{Reason: "not_null(" + pc + "): the partition column, so the row belongs to no partition", Invalid: ir.IsNull{X: col(pc)}}}},
			append([]ir.Param{pRunID}, windowParams(window)...)...)
	}
	l.advanceAndRecord()
	l.rebuild()
}
