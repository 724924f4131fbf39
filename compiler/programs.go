package compiler

import (
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// programs decides, for each mode the pipeline has, which statements run
// in which order; the run and the full refresh are the strategy's (its
// programs method, in its file).
func (l *lowerer) programs() {
	p := l.p
	n := 0
	for _, st := range p.Statements {
		if st.Phase == ir.PhaseSetup {
			n++
		}
	}
	setup := &ir.Program{Mode: ir.ModeSetup, Doc: "Idempotent DDL, each statement on its own: on engines whose DDL commits, before any transaction.",
		Steps: make([]ir.Step, 0, n)}
	for _, st := range p.Statements {
		if st.Phase != ir.PhaseSetup {
			continue
		}
		s := ir.Step{Stmt: st.Name}
		switch {
		case st.Name == ir.StmtProbeState:
			s.Read, s.Into = ir.ReadColumns, []string{stateColumnPrefix}
		case strings.HasPrefix(st.Name, addStateColumn("")):
			s.If = "!" + stateColumnPrefix + st.Name[len(addStateColumn("")):]
		case st.Name == ir.StmtProbeRuns:
			s.Read, s.Into = ir.ReadColumns, []string{runsColumnPrefix}
		case st.Name == ir.StmtProbeRunsIndex:
			s.Read, s.Into = ir.ReadCount, []string{RegRunsIndexed}
		case st.Name == ir.StmtCreateRunsIndex:
			s.If = "!" + RegRunsIndexed
		case isAddRunsColumn(st.Name):
			s.If = "!" + runsColumnPrefix + st.Name[len(addRunsColumn("")):]
		case st.Name == ir.StmtProbePartitions:
			s.Read, s.Into = ir.ReadColumns, []string{partitionsColumnPrefix}
		case strings.HasPrefix(st.Name, addPartitionsColumn("")):
			s.If = "!" + partitionsColumnPrefix + st.Name[len(addPartitionsColumn("")):]
		case st.Name == ir.StmtProbeFiles:
			s.Read, s.Into = ir.ReadColumns, []string{filesColumnPrefix}
		case strings.HasPrefix(st.Name, addFilesColumn("")):
			s.If = "!" + filesColumnPrefix + st.Name[len(addFilesColumn("")):]
		case isSchemaCheck(st):
			s.Read = ir.ReadSchema
		}
		setup.Steps = append(setup.Steps, s)
	}
	p.Programs = append(p.Programs, setup)

	run, full := l.strategy.programs(l)
	p.Programs = append(p.Programs, run, full)
	if p.Partition != nil {
		p.Programs = append(p.Programs, l.backfill())
	}
	if p.ReconcileBy != "" {
		p.Programs = append(p.Programs, l.reconcileProgram())
	}
	p.Programs = append(p.Programs, l.preview(), l.rewind())
}

// isSchemaCheck: a probe of a table the pipeline writes, against the
// columns it declares (schema evolution).
func isSchemaCheck(st *ir.Statement) bool {
	pc, ok := st.Op.(ir.ProbeColumns)
	return ok && pc.Declared != nil
}

// RegRunsIndexed is 1 when the run log has its index (probe_runs_index).
const RegRunsIndexed = "runs_indexed"

// runsColumnPrefix names the registers probe_runs sets: one per column of
// the run log, so that setup adds only the columns a table lacks.
const runsColumnPrefix = "runs."

// stateColumnPrefix names the registers probe_state sets.
const stateColumnPrefix = "state."

// partitionsColumnPrefix names the registers probe_partitions sets.
const partitionsColumnPrefix = "partitions."

func isAddRunsColumn(name string) bool {
	prefix := addRunsColumn("")
	return len(name) > len(prefix) && name[:len(prefix)] == prefix
}

// program starts a program that records a run of the given kind.
func (l *lowerer) program(m ir.Mode, record string, lo ir.LoBound, hi ir.HiBound) *ir.Program {
	pr := &ir.Program{Mode: m, Setup: true, Lease: true, Record: record, Lo: lo, Hi: hi}
	if l.p.Watermark == nil {
		pr.Lo, pr.Hi = ir.LoNone, ir.HiNow // no watermark: everything up to now
	}
	pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtRecordStart})
	if m == ir.ModeRun && (pr.Lo == ir.LoWatermark || l.byFile()) {
		pr.Steps = append(pr.Steps, l.keptSteps()...)
	}
	pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtProbeSource, Read: ir.ReadTypes})
	pr.Steps = append(pr.Steps, l.lookupSteps()...)
	return pr
}

// byFile: a files source loaded by file, whose bookmark (incrc_files) says
// which files the target holds.
func (l *lowerer) byFile() bool { return l.p.From != nil && l.p.From.ByFile }

// keptSteps refuse a run that would go on from the saved watermark (or a
// files source's bookmark) into a target that lost its rows: one that
// holds none now, while the run that last moved the watermark left rows in
// it (the state's target_filled), was emptied (TRUNCATE, DELETE) or
// dropped and created again since, and a run would leave out every row
// before the watermark, without a word. Two EXISTS-cheap reads; a target
// that was dropped and not created again is refused before the setup
// (runner/kept.go).
func (l *lowerer) keptSteps() []ir.Step {
	target := strings.ReplaceAll(strings.Join(l.p.Target.Parts, "."), "%", "%%")
	fail := "the target " + target + " holds no rows, but the run that last moved the watermark left rows in it (incrc_state.target_filled = %d): it was emptied (TRUNCATE, DELETE) or dropped and created again since, and a run from the watermark would leave out every row before it. Rebuild it from the source with incrc run --full-refresh, or move the watermark back with incrc state --rewind (to watermark.start to re-read everything)"
	if l.byFile() {
		fail = "the target " + target + " holds no rows, but the run that last loaded files left rows in it (incrc_state.target_filled = %d): it was emptied (TRUNCATE, DELETE) or dropped and created again since, and the bookmark (incrc_files) still lists the files it loaded, which a run would not load again. Load every file again with incrc run --full-refresh"
	}
	return []ir.Step{
		{Stmt: ir.StmtTargetHasRows, Read: ir.ReadCount, Into: []string{ir.RegTargetFound}},
		{Stmt: ir.StmtCheckKept, If: "!" + ir.RegTargetFound, Read: ir.ReadCount, Fail: fail},
	}
}

// nullFail is the message of a run that meets rows whose watermark is NULL
// and has no quarantine for them.
func (l *lowerer) nullFail() string {
	return fmt.Sprintf("%%d source row(s) have a NULL %s, so no window reads them: fix the source, or quarantine them with quality: {on_invalid: quarantine}", l.p.Watermark.Name)
}

// nullStaged are the steps for the staged rows whose watermark is NULL:
// counted to fail the run, or quarantined; and kept from the write.
func (l *lowerer) nullStaged(guard string) (before, inTx []ir.Step) {
	if l.p.Watermark == nil {
		return nil, nil
	}
	if l.nullMode() == "fail" {
		before = []ir.Step{{Stmt: ir.StmtCountNullWatermark, If: guard, Read: ir.ReadCount, Fail: l.nullFail()}}
	} else {
		inTx = []ir.Step{{Stmt: ir.StmtQuarantineNullWM, Tx: true, If: guard, Read: ir.ReadAffected, Into: []string{ir.RegQuarantined}}}
		if l.dedupe() != nil {
			// Read from the raw rows, which counted them as ignored.
			inTx[0].Into = append(inTx[0].Into, "-"+ir.RegIgnored)
		}
	}
	if l.dedupe() == nil {
		inTx = append(inTx, ir.Step{Stmt: ir.StmtDeleteNullWatermark, Tx: true, If: guard})
	}
	return before, inTx
}

// stageSteps create the session tables the rows are staged in.
func (l *lowerer) stageSteps(guard string) []ir.Step {
	steps := []ir.Step{{Stmt: ir.StmtDropStage, If: guard}, {Stmt: ir.StmtCreateStage, If: guard}}
	if l.dedupe() != nil {
		steps = append(steps, ir.Step{Stmt: ir.StmtDropRaw, If: guard}, ir.Step{Stmt: ir.StmtCreateRaw, If: guard})
	}
	return steps
}

func (l *lowerer) cleanup() []string {
	if l.dedupe() != nil {
		return []string{ir.StmtDropStage, ir.StmtDropRaw}
	}
	return []string{ir.StmtDropStage}
}

// quality splits the staged rows: invalid ones are quarantined (and a
// merge retracts the key they would replace) or fail the program.
func (l *lowerer) quality(guard string, retract bool, failMsg string) []ir.Step {
	if len(l.rules) == 0 {
		return nil
	}
	count := ir.Step{Stmt: ir.StmtCountInvalid, Tx: true, If: guard, Read: ir.ReadCount, Into: []string{ir.RegInvalid}}
	if l.mode == "fail" {
		count.Fail = failMsg
		return []ir.Step{count}
	}
	count.Into = append(count.Into, ir.RegQuarantined)
	steps := []ir.Step{count, {Stmt: ir.StmtQuarantine, Tx: true, If: ir.RegInvalid}}
	if retract && l.upserts() {
		steps = append(steps, ir.Step{Stmt: ir.StmtRetractInvalid, Tx: true, If: ir.RegInvalid, Read: ir.ReadAffected, Into: []string{ir.RegDeleted}})
	}
	return append(steps, ir.Step{Stmt: ir.StmtDeleteInvalid, Tx: true, If: ir.RegInvalid})
}

const failInvalid = "%d staged row(s) break quality rules and on_invalid is fail (a NULL unique key counts): nothing written"

// finish is the end of every write transaction: the watermark advances,
// keeping whether the target holds a row (see keptSteps), the run is
// recorded.
func (l *lowerer) finish() []ir.Step {
	return []ir.Step{{Stmt: ir.StmtTargetHasRows, Tx: true, Read: ir.ReadCount, Into: []string{ir.RegTargetFilled}},
		{Stmt: ir.StmtAdvance, Tx: true, Read: ir.ReadSwap}, {Stmt: ir.StmtRecordFinish, Tx: true}}
}

// incremental is incrc run: the window [watermark - lookback, hi).
func (l *lowerer) incremental() *ir.Program {
	p := l.p
	pr := l.runProgram()
	if l.direct() {
		// Nothing reads the rows between the read and the write: they go
		// into the target as they are read, in the write's transaction.
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtCopyWindow, Tx: true, If: ir.RegWindow, Read: ir.ReadAffected, Into: []string{ir.RegRead, ir.RegInserted}})
	} else {
		// With the direct merge, the source's catalog decides which of the
		// two runs: the staged steps below when it does not prove the key
		// unique (every later staged step is guarded by rows_read, which
		// only stage_window sets), the direct ones after them when it does.
		staged := ir.RegWindow
		if l.directMerge() {
			staged = ir.When(ir.RegWindow, "!"+ir.RegUnique)
			pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtSourceUnique, If: ir.RegWindow, Read: ir.ReadCount, Into: []string{ir.RegUnique}})
			if l.nullMode() == "fail" {
				pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtCountNullWMSource, If: ir.When(ir.RegWindow, ir.RegUnique), Read: ir.ReadCount, Fail: l.nullFail()})
			}
		}
		pr.Steps = append(pr.Steps, l.stageSteps(staged)...)
		// With a dedupe every row read counts as ignored until a step says
		// what became of it: staged (the newest version of its key),
		// quarantined for its NULL watermark; what is left the dedupe
		// dropped, older versions in the window.
		read := ir.Step{Stmt: ir.StmtStageWindow, If: staged, Read: ir.ReadAffected, Into: []string{ir.RegRead}}
		if l.dedupe() != nil {
			read.Into = append(read.Into, ir.RegIgnored)
		}
		pr.Steps = append(pr.Steps, read)
		before, inTx := l.nullStaged(ir.RegRead)
		pr.Steps = append(pr.Steps, before...)
		if l.dedupe() != nil {
			pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtDedupeStage, If: ir.RegRead, Read: ir.ReadAffected, Into: []string{"-" + ir.RegIgnored}})
		}
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtAnalyzeStage, If: ir.RegRead})
		pr.Steps = append(pr.Steps, inTx...)
		if p.Statement(ir.StmtCheckUnique) != nil {
			pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtCheckUnique, Tx: true, If: ir.RegRead, Read: ir.ReadRows, Into: []string{ir.RegDuplicate},
				Fail: "source.unique: true, but the window holds several rows of key (" + strings.Join(p.Key, ", ") + ") %s: nothing written; fix the source, or remove source.unique so that runs keep the newest row of each key"})
		}
		if p.Statement(ir.StmtIgnoreOlder) != nil {
			pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtIgnoreOlder, Tx: true, If: ir.RegRead, Read: ir.ReadAffected, Into: []string{ir.RegIgnored}})
		}
		if p.Statement(ir.StmtIgnoreKnown) != nil {
			pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtIgnoreKnown, Tx: true, If: ir.RegRead, Read: ir.ReadAffected, Into: []string{ir.RegIgnored}})
		}
		pr.Steps = append(pr.Steps, l.quality(ir.RegRead, true, failInvalid)...)
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtCountStaged, Tx: true, If: ir.RegRead, Read: ir.ReadCount, Into: []string{ir.RegInserted}})
		write := ir.Step{Stmt: ir.StmtWrite, Tx: true, If: ir.RegRead}
		if l.upserts() {
			// The merge counts what it updates: the rest it inserted.
			write.Read, write.Into = ir.ReadCount, []string{ir.RegUpdated, "-" + ir.RegInserted}
		}
		pr.Steps = append(pr.Steps, write)
		if l.directMerge() {
			direct := ir.When(ir.RegWindow, ir.RegUnique)
			if l.nullMode() == "quarantine" {
				pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtQuarantineNullWMSrc, Tx: true, If: direct, Read: ir.ReadAffected, Into: []string{ir.RegRead, ir.RegQuarantined}})
			}
			tally := []string{ir.RegRead, ir.RegInserted, ir.RegUpdated}
			if l.version() != "" {
				tally = append(tally, ir.RegIgnored)
			}
			pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtWriteWindow, Tx: true, If: direct, Read: ir.ReadCounts,
				Into: tally, Note: noteDirect})
		}
	}
	l.endRun(pr)
	return pr
}

// runProgram starts the program of an incremental run.
func (l *lowerer) runProgram() *ir.Program {
	pr := l.program(ir.ModeRun, "run", ir.LoWatermark, ir.HiNow)
	pr.Doc = "An incremental run: the window's rows, written by " + string(l.p.Strategy) + "."
	return pr
}

// endRun ends the program of an incremental run: the write transaction's
// end, and the stage dropped unless nothing was staged.
func (l *lowerer) endRun(pr *ir.Program) {
	pr.Steps = append(pr.Steps, l.finish()...)
	if !l.direct() {
		pr.Cleanup = l.cleanup()
	}
}

// backfill is the program of one partition [plo, phi) of incrc backfill:
// rebuilt from the source in its own transaction with its completion
// marker, then checked against the source. The backfill itself holds the
// lease and records the run; this program runs once per partition.
func (l *lowerer) backfill() *ir.Program {
	p := l.p
	// A pipeline whose write is not idempotent (an append) appends what
	// is above the watermark on its next run: a backfill reading those rows
	// too would write them twice. Merge and overwrite rewrite
	// idempotently, so they read everything committed.
	hi := ir.HiNow
	if !p.Strategy.Idempotent() {
		hi = ir.HiSaved
	}
	pr := &ir.Program{Mode: ir.ModeBackfill, Lo: ir.LoStart, Hi: hi,
		Doc: "One partition of a backfill: rebuilt whole from the source, marked done in the same transaction, then checked."}
	if p.Watermark == nil {
		pr.Lo, pr.Hi = ir.LoNone, ir.HiNone
	}
	pr.Steps = l.lookupSteps()
	pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtDropStage}, ir.Step{Stmt: ir.StmtCreateStage}, ir.Step{Stmt: ir.StmtStagePartition})
	pr.Steps = append(pr.Steps, l.quality("", false, "%d row(s) break quality rules and on_invalid is fail: partition left as it was")...)
	pr.Steps = append(pr.Steps,
		ir.Step{Stmt: ir.StmtCountStaged, Tx: true, Read: ir.ReadCount, Into: []string{ir.RegInserted, ir.RegWritten}},
		ir.Step{Stmt: ir.StmtCountPartition, Tx: true, Read: ir.ReadCount, Into: []string{ir.RegDeleted}},
		ir.Step{Stmt: ir.StmtReplacePartition, Tx: true},
		ir.Step{Stmt: ir.StmtDeleteMarker, Tx: true},
		ir.Step{Stmt: ir.StmtInsertMarker, Tx: true},
		ir.Step{Stmt: ir.StmtCheckPartitionSrc, Read: ir.ReadRows, Into: []string{ir.RegSource}},
		ir.Step{Stmt: ir.StmtCheckPartitionTgt, Read: ir.ReadRows, Into: []string{ir.RegTarget}})
	pr.Cleanup = []string{ir.StmtDropStage}
	return pr
}

// reconcileProgram compares source and target per reconcile.by value.
func (l *lowerer) reconcileProgram() *ir.Program {
	pr := &ir.Program{Mode: ir.ModeReconcile, Lo: ir.LoStart, Doc: "Source and target per " + l.p.ReconcileBy + " in [from, to); read-only."}
	if l.p.Watermark == nil {
		pr.Lo = ir.LoNone
	}
	if l.spec.UniqueSource() {
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtVersionedKeys, Read: ir.ReadCount, Into: []string{ir.RegVersioned},
			Fail: "%d key(s) have several rows in the source, which the spec declares unique (source.unique: true): runs do not dedupe it, so the target holds an arbitrary row of each (or the write fails); remove source.unique, or fix the source"})
	}
	if l.dedupe() != nil {
		pr.Steps = append(pr.Steps,
			ir.Step{Stmt: ir.StmtVersionedKeys, Read: ir.ReadCount, Into: []string{ir.RegVersioned}},
			ir.Step{Stmt: ir.StmtReconcileSrcFlat, If: "!" + ir.RegVersioned, Read: ir.ReadRows, Into: []string{ir.RegSource}},
			ir.Step{Stmt: ir.StmtReconcileSrc, If: ir.RegVersioned, Read: ir.ReadRows, Into: []string{ir.RegSource}})
	} else {
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtReconcileSrc, Read: ir.ReadRows, Into: []string{ir.RegSource}})
	}
	pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtReconcileTgt, Read: ir.ReadRows, Into: []string{ir.RegTarget}})
	return pr
}

// preview is what incrc plan --target shows of the next run: its window
// and what it would read, found without changing anything.
func (l *lowerer) preview() *ir.Program {
	pr := &ir.Program{Mode: ir.ModePreview, Lo: ir.LoWatermark, Hi: ir.HiNow, Doc: "What the next run would read; read-only."}
	if l.snapshot() {
		pr.Lo = ir.LoStart
	}
	if l.p.Watermark == nil {
		pr.Lo = ir.LoNone
	}
	if l.rewritesPartitions() {
		// The partitions it would rewrite, and the window's rows.
		pr.Steps = []ir.Step{{Stmt: ir.StmtTouchedPartitions, If: ir.RegWindow, Read: ir.ReadPartitions},
			{Stmt: ir.StmtCountRead, If: ir.RegWindow, Read: ir.ReadCount, Into: []string{ir.RegRead}}}
	} else {
		pr.Steps = []ir.Step{{Stmt: ir.StmtCountRead, If: ir.RegWindow, Read: ir.ReadCount, Into: []string{ir.RegRead}}}
	}
	return pr
}

// rewind is incrc state --rewind: the watermark moved back to a time the
// user gives, under the lease and recorded, so the next run re-reads.
func (l *lowerer) rewind() *ir.Program {
	return &ir.Program{Mode: ir.ModeRewind, Setup: true, Lease: true, Record: "rewind",
		Doc:   "Move the watermark back; the next run reads from there.",
		Steps: append([]ir.Step{{Stmt: ir.StmtRecordStart}}, l.finish()...)}
}
