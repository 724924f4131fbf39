package compiler

import "github.com/incrc/incrc/compiler/ir"

// overwriting is strategy overwrite_partitions: every partition the
// window touches rewritten whole from the source.
type overwriting struct{ staging }

func (overwriting) validate(v *validator) {
	v.needsWatermark()
	if v.s.Partition == nil && !v.reported("partition") {
		v.errf(v.s.Strategy.Pos, "strategy overwrite_partitions needs partition: {column: COLUMN, granularity: day}")
	}
}

// rewritesPartitions: the pipeline's runs rewrite the partitions their
// window touches, whole, rather than writing the window's rows.
func (l *lowerer) rewritesPartitions() bool { return l.p.Strategy == ir.OverwritePartitions }

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

// programs: the run rewrites each partition the window touches; the full
// refresh is every strategy's (refresh.go).
func (overwriting) programs(l *lowerer) (run, full *ir.Program) {
	p := l.p
	pr := l.runProgram()
	if p.Watermark != nil && l.nullMode() == "fail" {
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtCountNullWMSource, Read: ir.ReadCount, Fail: l.nullFail()})
	}
	// Rows read are the rows the run reads to write: each partition it
	// rewrites, whole, and the window's rows of the partitions it
	// leaves out (finalized: skipped; none: quarantined or failed).
	pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtTouchedPartitions, If: ir.RegWindow, Read: ir.ReadPartitions, Into: []string{ir.RegRead}})
	if l.mode == "fail" {
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtCountUnpartitioned, If: ir.RegUnpartitioned, Read: ir.ReadCount,
			Fail: "%d row(s) of the window have a NULL " + p.Partition.Column + " and belong to no partition, and on_invalid is fail: nothing written"})
	}
	pr.Steps = append(pr.Steps, l.stageSteps(ir.RegPartitions)...)
	if l.dedupe() != nil {
		// Every row of the partition counts as ignored until the
		// dedupe stages it: what is left are older versions of a key.
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtCountPartitionSource, Each: true, Read: ir.ReadCount, Into: []string{ir.RegRead, ir.RegIgnored}},
			ir.Step{Stmt: ir.StmtStagePartition, Each: true, Read: ir.ReadAffected, Into: []string{"-" + ir.RegIgnored}})
	} else {
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtStagePartition, Each: true, Read: ir.ReadAffected, Into: []string{ir.RegRead}})
	}
	pr.Steps = append(pr.Steps, l.quality(ir.RegPartitions, false, failInvalid)...)
	pr.Steps = append(pr.Steps,
		ir.Step{Stmt: ir.StmtCountStaged, Tx: true, If: ir.RegPartitions, Read: ir.ReadCount, Into: []string{ir.RegInserted}},
		ir.Step{Stmt: ir.StmtCountPartition, Tx: true, Each: true, Read: ir.ReadCount, Into: []string{ir.RegDeleted}},
		ir.Step{Stmt: ir.StmtReplacePartition, Tx: true, Each: true})
	if l.mode == "quarantine" {
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtQuarantineUnpartited, Tx: true, If: ir.RegUnpartitioned, Read: ir.ReadAffected, Into: []string{ir.RegQuarantined}})
	}
	if p.Watermark != nil && l.nullMode() == "quarantine" {
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtQuarantineNullWMSrc, Tx: true, Read: ir.ReadAffected, Into: []string{ir.RegRead, ir.RegQuarantined}})
	}
	l.endRun(pr)
	return pr, l.fullRefresh()
}
