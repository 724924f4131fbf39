package compiler

import (
	"fmt"
	"strings"
)

// programs decides, for each mode the pipeline has, which statements run
// in which order: the only place where strategies differ in what runs.
func (l *lowerer) programs() {
	p := l.p
	n := 0
	for _, st := range p.Statements {
		if st.Phase == PhaseSetup {
			n++
		}
	}
	setup := &Program{Mode: ModeSetup, Doc: "Idempotent DDL, each statement on its own: on engines whose DDL commits, before any transaction.",
		Steps: make([]Step, 0, n)}
	for _, st := range p.Statements {
		if st.Phase != PhaseSetup {
			continue
		}
		s := Step{Stmt: st.Name}
		switch {
		case st.Name == StmtProbeState:
			s.Read, s.Into = ReadColumns, []string{stateColumnPrefix}
		case strings.HasPrefix(st.Name, addStateColumn("")):
			s.If = "!" + stateColumnPrefix + st.Name[len(addStateColumn("")):]
		case st.Name == StmtProbeRuns:
			s.Read, s.Into = ReadColumns, []string{runsColumnPrefix}
		case st.Name == StmtProbeRunsIndex:
			s.Read, s.Into = ReadCount, []string{RegRunsIndexed}
		case st.Name == StmtCreateRunsIndex:
			s.If = "!" + RegRunsIndexed
		case isAddRunsColumn(st.Name):
			s.If = "!" + runsColumnPrefix + st.Name[len(addRunsColumn("")):]
		case st.Name == StmtProbePartitions:
			s.Read, s.Into = ReadColumns, []string{partitionsColumnPrefix}
		case strings.HasPrefix(st.Name, addPartitionsColumn("")):
			s.If = "!" + partitionsColumnPrefix + st.Name[len(addPartitionsColumn("")):]
		case st.Name == StmtProbeFiles:
			s.Read, s.Into = ReadColumns, []string{filesColumnPrefix}
		case strings.HasPrefix(st.Name, addFilesColumn("")):
			s.If = "!" + filesColumnPrefix + st.Name[len(addFilesColumn("")):]
		case isSchemaCheck(st):
			s.Read = ReadSchema
		}
		setup.Steps = append(setup.Steps, s)
	}
	p.Programs = append(p.Programs, setup)

	var run, full *Program
	switch {
	case p.CDC != nil:
		run, full = l.cdcRun(), l.cdcFullRefresh() // see cdc.go
	case p.Strategy == FullRefresh:
		// A full_refresh pipeline's run is a full refresh: it never appends.
		run, full = l.fullRefresh(), l.fullRefresh()
		run.Mode = ModeRun
	case p.Strategy == SCD2Strategy:
		run, full = l.scd.programs(l)
	default:
		run, full = l.incremental(), l.fullRefresh()
	}
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
func isSchemaCheck(st *Statement) bool {
	pc, ok := st.Op.(ProbeColumns)
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
func (l *lowerer) program(m Mode, record string, lo LoBound, hi HiBound) *Program {
	pr := &Program{Mode: m, Setup: true, Lease: true, Record: record, Lo: lo, Hi: hi}
	if l.p.Watermark == nil {
		pr.Lo, pr.Hi = LoNone, HiNow // no watermark: everything up to now
	}
	pr.Steps = append(pr.Steps, Step{Stmt: StmtRecordStart})
	if m == ModeRun && (pr.Lo == LoWatermark || l.byFile()) {
		pr.Steps = append(pr.Steps, l.keptSteps()...)
	}
	pr.Steps = append(pr.Steps, Step{Stmt: StmtProbeSource, Read: ReadTypes})
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
func (l *lowerer) keptSteps() []Step {
	target := strings.ReplaceAll(strings.Join(l.p.Target.Parts, "."), "%", "%%")
	fail := "the target " + target + " holds no rows, but the run that last moved the watermark left rows in it (incrc_state.target_filled = %d): it was emptied (TRUNCATE, DELETE) or dropped and created again since, and a run from the watermark would leave out every row before it. Rebuild it from the source with incrc run --full-refresh, or move the watermark back with incrc state --rewind (to watermark.start to re-read everything)"
	if l.byFile() {
		fail = "the target " + target + " holds no rows, but the run that last loaded files left rows in it (incrc_state.target_filled = %d): it was emptied (TRUNCATE, DELETE) or dropped and created again since, and the bookmark (incrc_files) still lists the files it loaded, which a run would not load again. Load every file again with incrc run --full-refresh"
	}
	return []Step{
		{Stmt: StmtTargetHasRows, Read: ReadCount, Into: []string{RegTargetFound}},
		{Stmt: StmtCheckKept, If: "!" + RegTargetFound, Read: ReadCount, Fail: fail},
	}
}

// nullFail is the message of a run that meets rows whose watermark is NULL
// and has no quarantine for them.
func (l *lowerer) nullFail() string {
	return fmt.Sprintf("%%d source row(s) have a NULL %s, so no window reads them: fix the source, or quarantine them with quality: {on_invalid: quarantine}", l.p.Watermark.Name)
}

// nullStaged are the steps for the staged rows whose watermark is NULL:
// counted to fail the run, or quarantined; and kept from the write.
func (l *lowerer) nullStaged(guard string) (before, inTx []Step) {
	if l.p.Watermark == nil {
		return nil, nil
	}
	if l.nullMode() == "fail" {
		before = []Step{{Stmt: StmtCountNullWatermark, If: guard, Read: ReadCount, Fail: l.nullFail()}}
	} else {
		inTx = []Step{{Stmt: StmtQuarantineNullWM, Tx: true, If: guard, Read: ReadAffected, Into: []string{RegQuarantined}}}
		if l.dedupe() != nil {
			// Read from the raw rows, which counted them as ignored.
			inTx[0].Into = append(inTx[0].Into, "-"+RegIgnored)
		}
	}
	if l.dedupe() == nil {
		inTx = append(inTx, Step{Stmt: StmtDeleteNullWatermark, Tx: true, If: guard})
	}
	return before, inTx
}

// stageSteps create the session tables the rows are staged in.
func (l *lowerer) stageSteps(guard string) []Step {
	steps := []Step{{Stmt: StmtDropStage, If: guard}, {Stmt: StmtCreateStage, If: guard}}
	if l.dedupe() != nil {
		steps = append(steps, Step{Stmt: StmtDropRaw, If: guard}, Step{Stmt: StmtCreateRaw, If: guard})
	}
	return steps
}

func (l *lowerer) cleanup() []string {
	if l.dedupe() != nil {
		return []string{StmtDropStage, StmtDropRaw}
	}
	return []string{StmtDropStage}
}

// quality splits the staged rows: invalid ones are quarantined (and a
// merge retracts the key they would replace) or fail the program.
func (l *lowerer) quality(guard string, retract bool, failMsg string) []Step {
	if len(l.rules) == 0 {
		return nil
	}
	count := Step{Stmt: StmtCountInvalid, Tx: true, If: guard, Read: ReadCount, Into: []string{RegInvalid}}
	if l.mode == "fail" {
		count.Fail = failMsg
		return []Step{count}
	}
	count.Into = append(count.Into, RegQuarantined)
	steps := []Step{count, {Stmt: StmtQuarantine, Tx: true, If: RegInvalid}}
	if retract && l.p.Strategy == Merge {
		steps = append(steps, Step{Stmt: StmtRetractInvalid, Tx: true, If: RegInvalid, Read: ReadAffected, Into: []string{RegDeleted}})
	}
	return append(steps, Step{Stmt: StmtDeleteInvalid, Tx: true, If: RegInvalid})
}

const failInvalid = "%d staged row(s) break quality rules and on_invalid is fail (a NULL unique key counts): nothing written"

// finish is the end of every write transaction: the watermark advances,
// keeping whether the target holds a row (see keptSteps), the run is
// recorded.
func (l *lowerer) finish() []Step {
	return []Step{{Stmt: StmtTargetHasRows, Tx: true, Read: ReadCount, Into: []string{RegTargetFilled}},
		{Stmt: StmtAdvance, Tx: true, Read: ReadSwap}, {Stmt: StmtRecordFinish, Tx: true}}
}

// incremental is incrc run: the window [watermark - lookback, hi).
func (l *lowerer) incremental() *Program {
	p := l.p
	pr := l.program(ModeRun, "run", LoWatermark, HiNow)
	pr.Doc = "An incremental run: the window's rows, written by " + string(p.Strategy) + "."
	if p.Strategy == OverwritePartitions {
		if p.Watermark != nil && l.nullMode() == "fail" {
			pr.Steps = append(pr.Steps, Step{Stmt: StmtCountNullWMSource, Read: ReadCount, Fail: l.nullFail()})
		}
		// Rows read are the rows the run reads to write: each partition it
		// rewrites, whole, and the window's rows of the partitions it
		// leaves out (finalized: skipped; none: quarantined or failed).
		pr.Steps = append(pr.Steps, Step{Stmt: StmtTouchedPartitions, If: RegWindow, Read: ReadPartitions, Into: []string{RegRead}})
		if l.mode == "fail" {
			pr.Steps = append(pr.Steps, Step{Stmt: StmtCountUnpartitioned, If: RegUnpartitioned, Read: ReadCount,
				Fail: "%d row(s) of the window have a NULL " + p.Partition.Column + " and belong to no partition, and on_invalid is fail: nothing written"})
		}
		pr.Steps = append(pr.Steps, l.stageSteps(RegPartitions)...)
		if l.dedupe() != nil {
			// Every row of the partition counts as ignored until the
			// dedupe stages it: what is left are older versions of a key.
			pr.Steps = append(pr.Steps, Step{Stmt: StmtCountPartitionSource, Each: true, Read: ReadCount, Into: []string{RegRead, RegIgnored}},
				Step{Stmt: StmtStagePartition, Each: true, Read: ReadAffected, Into: []string{"-" + RegIgnored}})
		} else {
			pr.Steps = append(pr.Steps, Step{Stmt: StmtStagePartition, Each: true, Read: ReadAffected, Into: []string{RegRead}})
		}
		pr.Steps = append(pr.Steps, l.quality(RegPartitions, false, failInvalid)...)
		pr.Steps = append(pr.Steps,
			Step{Stmt: StmtCountStaged, Tx: true, If: RegPartitions, Read: ReadCount, Into: []string{RegInserted}},
			Step{Stmt: StmtCountPartition, Tx: true, Each: true, Read: ReadCount, Into: []string{RegDeleted}},
			Step{Stmt: StmtReplacePartition, Tx: true, Each: true})
		if l.mode == "quarantine" {
			pr.Steps = append(pr.Steps, Step{Stmt: StmtQuarantineUnpartited, Tx: true, If: RegUnpartitioned, Read: ReadAffected, Into: []string{RegQuarantined}})
		}
		if p.Watermark != nil && l.nullMode() == "quarantine" {
			pr.Steps = append(pr.Steps, Step{Stmt: StmtQuarantineNullWMSrc, Tx: true, Read: ReadAffected, Into: []string{RegRead, RegQuarantined}})
		}
	} else if l.direct() {
		// Nothing reads the rows between the read and the write: they go
		// into the target as they are read, in the write's transaction.
		pr.Steps = append(pr.Steps, Step{Stmt: StmtCopyWindow, Tx: true, If: RegWindow, Read: ReadAffected, Into: []string{RegRead, RegInserted}})
	} else {
		// With the direct merge, the source's catalog decides which of the
		// two runs: the staged steps below when it does not prove the key
		// unique (every later staged step is guarded by rows_read, which
		// only stage_window sets), the direct ones after them when it does.
		staged := RegWindow
		if l.directMerge() {
			staged = When(RegWindow, "!"+RegUnique)
			pr.Steps = append(pr.Steps, Step{Stmt: StmtSourceUnique, If: RegWindow, Read: ReadCount, Into: []string{RegUnique}})
			if l.nullMode() == "fail" {
				pr.Steps = append(pr.Steps, Step{Stmt: StmtCountNullWMSource, If: When(RegWindow, RegUnique), Read: ReadCount, Fail: l.nullFail()})
			}
		}
		pr.Steps = append(pr.Steps, l.stageSteps(staged)...)
		// With a dedupe every row read counts as ignored until a step says
		// what became of it: staged (the newest version of its key),
		// quarantined for its NULL watermark; what is left the dedupe
		// dropped, older versions in the window.
		read := Step{Stmt: StmtStageWindow, If: staged, Read: ReadAffected, Into: []string{RegRead}}
		if l.dedupe() != nil {
			read.Into = append(read.Into, RegIgnored)
		}
		pr.Steps = append(pr.Steps, read)
		before, inTx := l.nullStaged(RegRead)
		pr.Steps = append(pr.Steps, before...)
		if l.dedupe() != nil {
			pr.Steps = append(pr.Steps, Step{Stmt: StmtDedupeStage, If: RegRead, Read: ReadAffected, Into: []string{"-" + RegIgnored}})
		}
		pr.Steps = append(pr.Steps, Step{Stmt: StmtAnalyzeStage, If: RegRead})
		pr.Steps = append(pr.Steps, inTx...)
		if p.Statement(StmtCheckUnique) != nil {
			pr.Steps = append(pr.Steps, Step{Stmt: StmtCheckUnique, Tx: true, If: RegRead, Read: ReadRows, Into: []string{RegDuplicate},
				Fail: "source.unique: true, but the window holds several rows of key (" + strings.Join(p.Key, ", ") + ") %s: nothing written; fix the source, or remove source.unique so that runs keep the newest row of each key"})
		}
		if p.Statement(StmtIgnoreOlder) != nil {
			pr.Steps = append(pr.Steps, Step{Stmt: StmtIgnoreOlder, Tx: true, If: RegRead, Read: ReadAffected, Into: []string{RegIgnored}})
		}
		if p.Statement(StmtIgnoreKnown) != nil {
			pr.Steps = append(pr.Steps, Step{Stmt: StmtIgnoreKnown, Tx: true, If: RegRead, Read: ReadAffected, Into: []string{RegIgnored}})
		}
		pr.Steps = append(pr.Steps, l.quality(RegRead, true, failInvalid)...)
		pr.Steps = append(pr.Steps, Step{Stmt: StmtCountStaged, Tx: true, If: RegRead, Read: ReadCount, Into: []string{RegInserted}})
		write := Step{Stmt: StmtWrite, Tx: true, If: RegRead}
		if p.Strategy == Merge {
			// The merge counts what it updates: the rest it inserted.
			write.Read, write.Into = ReadCount, []string{RegUpdated, "-" + RegInserted}
		}
		pr.Steps = append(pr.Steps, write)
		if l.directMerge() {
			direct := When(RegWindow, RegUnique)
			if l.nullMode() == "quarantine" {
				pr.Steps = append(pr.Steps, Step{Stmt: StmtQuarantineNullWMSrc, Tx: true, If: direct, Read: ReadAffected, Into: []string{RegRead, RegQuarantined}})
			}
			tally := []string{RegRead, RegInserted, RegUpdated}
			if l.version() != "" {
				tally = append(tally, RegIgnored)
			}
			pr.Steps = append(pr.Steps, Step{Stmt: StmtWriteWindow, Tx: true, If: direct, Read: ReadCounts,
				Into: tally, Note: noteDirect})
		}
	}
	pr.Steps = append(pr.Steps, l.finish()...)
	if !l.direct() {
		pr.Cleanup = l.cleanup()
	}
	return pr
}

// directMerge: a merge's run may write its window straight from the source
// into the target, in one statement of the write transaction, when the
// source's catalog proves the unique key at run time (source_unique: a
// primary key or unique constraint on exactly the key, NOT NULL). There is
// then nothing to stage: no dedupe (one row per key), no quality rule to
// check (the key's implicit not_null is what the catalog proves, and any
// other rule keeps the staged path), and the rows whose watermark is NULL
// are counted or quarantined from the source, as the full refresh does.
// The source must be a table in the target's database (a catalog to read,
// a read inside the write transaction), the target keyed by its primary key.
// source.unique: true is not enough: it declares one row per key, not that
// the key is never NULL, so the catalog decides there too.
func (l *lowerer) directMerge() bool {
	p, src := l.p, l.p.Source
	return l.refreshes() && p.Strategy == Merge && p.Watermark != nil && len(p.Key) > 0 && !l.nullableKey() &&
		src.Query == "" && len(src.Lookups) == 0 && src.Files == nil && len(l.refreshRules(true)) == 0
}

// direct: an incremental run may copy the window's rows straight into the
// target inside its write transaction, without a staging table. Only when
// the rows come from outside the target (a copy step streams them either
// way) and nothing reads them staged: an append without quality rules,
// without a dedupe, and without a watermark column (whose NULL rows the
// staged flow counts or quarantines); not a snapshot, nor partitioned.
func (l *lowerer) direct() bool {
	p := l.p
	return p.From != nil && p.CDC == nil && l.scd == nil && p.Strategy == Append && p.Watermark == nil &&
		l.dedupe() == nil && len(l.rules) == 0 && !l.snapshot() && p.Partition == nil
}

// backfill is the program of one partition [plo, phi) of incrc backfill:
// rebuilt from the source in its own transaction with its completion
// marker, then checked against the source. The backfill itself holds the
// lease and records the run; this program runs once per partition.
func (l *lowerer) backfill() *Program {
	p := l.p
	// An append pipeline's next run appends what is above the watermark:
	// a backfill reading those rows too would write them twice. Merge and
	// overwrite rewrite idempotently, so they read everything committed.
	hi := HiNow
	if p.Strategy == Append {
		hi = HiSaved
	}
	pr := &Program{Mode: ModeBackfill, Lo: LoStart, Hi: hi,
		Doc: "One partition of a backfill: rebuilt whole from the source, marked done in the same transaction, then checked."}
	if p.Watermark == nil {
		pr.Lo, pr.Hi = LoNone, HiNone
	}
	pr.Steps = l.lookupSteps()
	pr.Steps = append(pr.Steps, Step{Stmt: StmtDropStage}, Step{Stmt: StmtCreateStage}, Step{Stmt: StmtStagePartition})
	pr.Steps = append(pr.Steps, l.quality("", false, "%d row(s) break quality rules and on_invalid is fail: partition left as it was")...)
	pr.Steps = append(pr.Steps,
		Step{Stmt: StmtCountStaged, Tx: true, Read: ReadCount, Into: []string{RegInserted, RegWritten}},
		Step{Stmt: StmtCountPartition, Tx: true, Read: ReadCount, Into: []string{RegDeleted}},
		Step{Stmt: StmtReplacePartition, Tx: true},
		Step{Stmt: StmtDeleteMarker, Tx: true},
		Step{Stmt: StmtInsertMarker, Tx: true},
		Step{Stmt: StmtCheckPartitionSrc, Read: ReadRows, Into: []string{RegSource}},
		Step{Stmt: StmtCheckPartitionTgt, Read: ReadRows, Into: []string{RegTarget}})
	pr.Cleanup = []string{StmtDropStage}
	return pr
}

// reconcileProgram compares source and target per reconcile.by value.
func (l *lowerer) reconcileProgram() *Program {
	pr := &Program{Mode: ModeReconcile, Lo: LoStart, Doc: "Source and target per " + l.p.ReconcileBy + " in [from, to); read-only."}
	if l.p.Watermark == nil {
		pr.Lo = LoNone
	}
	if l.spec.UniqueSource() {
		pr.Steps = append(pr.Steps, Step{Stmt: StmtVersionedKeys, Read: ReadCount, Into: []string{RegVersioned},
			Fail: "%d key(s) have several rows in the source, which the spec declares unique (source.unique: true): runs do not dedupe it, so the target holds an arbitrary row of each (or the write fails); remove source.unique, or fix the source"})
	}
	if l.dedupe() != nil {
		pr.Steps = append(pr.Steps,
			Step{Stmt: StmtVersionedKeys, Read: ReadCount, Into: []string{RegVersioned}},
			Step{Stmt: StmtReconcileSrcFlat, If: "!" + RegVersioned, Read: ReadRows, Into: []string{RegSource}},
			Step{Stmt: StmtReconcileSrc, If: RegVersioned, Read: ReadRows, Into: []string{RegSource}})
	} else {
		pr.Steps = append(pr.Steps, Step{Stmt: StmtReconcileSrc, Read: ReadRows, Into: []string{RegSource}})
	}
	pr.Steps = append(pr.Steps, Step{Stmt: StmtReconcileTgt, Read: ReadRows, Into: []string{RegTarget}})
	return pr
}

// preview is what incrc plan --target shows of the next run: its window
// and what it would read, found without changing anything.
func (l *lowerer) preview() *Program {
	pr := &Program{Mode: ModePreview, Lo: LoWatermark, Hi: HiNow, Doc: "What the next run would read; read-only."}
	if l.snapshot() {
		pr.Lo = LoStart
	}
	if l.p.Watermark == nil {
		pr.Lo = LoNone
	}
	if l.p.Strategy == OverwritePartitions {
		// The partitions it would rewrite, and the window's rows.
		pr.Steps = []Step{{Stmt: StmtTouchedPartitions, If: RegWindow, Read: ReadPartitions},
			{Stmt: StmtCountRead, If: RegWindow, Read: ReadCount, Into: []string{RegRead}}}
	} else {
		pr.Steps = []Step{{Stmt: StmtCountRead, If: RegWindow, Read: ReadCount, Into: []string{RegRead}}}
	}
	return pr
}

// rewind is incrc state --rewind: the watermark moved back to a time the
// user gives, under the lease and recorded, so the next run re-reads.
func (l *lowerer) rewind() *Program {
	return &Program{Mode: ModeRewind, Setup: true, Lease: true, Record: "rewind",
		Doc:   "Move the watermark back; the next run reads from there.",
		Steps: append([]Step{{Stmt: StmtRecordStart}}, l.finish()...)}
}
