package compiler

import (
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// SCD2 from a change log (strategy scd2 with a cdc block): every change of
// a key is an event at its commit time (cdc.at). An insert's or update's
// image is a version starting there; a delete ends the version before it
// there and leaves a gap until the key's next version. Per key and commit
// time one change counts: the one with the greatest cdc.sequence (the last
// change of a transaction, or of a second when the log's clock counts
// seconds). A version ends where the key's next event starts.
//
// Without cdc.at the sequence is the time: each change is an event at its
// own sequence value, and valid_from and valid_to hold sequence values
// (Databricks' __START_AT and __END_AT), typed as the sequence. The
// current version's end is NULL: a sentinel would be a number every
// sequence type holds and no real sequence reaches, which no engine has,
// and a NULL end is what Databricks writes. Everything below holds with
// "time" read as "sequence".
//
// The target holds the versions, each with the sequence of its change
// (SequenceColumn); <target>_tombstones holds every delete (the key, its
// time in the valid_from column, its sequence), also the ones that end no
// version yet: a change that arrives later with an earlier commit time
// must still end where a delete after it is. So the target and the
// tombstones together hold exactly one event per key and time, and what
// they hold is a function of the set of valid changes read so far, never
// of the order they arrived in: a run equals a replay of the whole log.
//
// A run stages the window's valid changes that beat the event the target
// or the tombstones hold at their key and time (the new events), lays them
// out on a timeline with every event held for their keys, and reads the
// changes off it (the scd2 changes table, applied by ApplyVersions):
//
//   - a new version ends at the next event of its key (or is open); it is
//     added, or rewrites a version held at the same time (a correction);
//   - a new delete removes a version held at the same time;
//   - a held version whose next event is a new one at a later time ends
//     there now (closed by a delete, split by a late version).
//
// No event ever moves in time, so no other version changes. Then the
// tombstones at the new events' times go (before the versions are
// applied) and the new deletes come (after): on engines where each
// statement commits alone, a run that fails between them leaves every
// unapplied change newer than what is held, and its retry applies it.

// With scd2.tracked, the versions above are kept in <target>_events, and
// the target holds them merged: consecutive versions of a key (one ending
// where the next starts, no delete between them) whose tracked columns are
// equal (NULL equal to NULL) are one version, from the first one's start
// to the last one's end, with the last one's image. So a change only in
// untracked columns updates the version it falls in instead of opening
// one. The rule is a function of the events alone, whatever order they
// arrive in, and each run rebuilds the target's versions of the keys its
// window holds from the events of those keys: a late change in an
// untracked column updates the version it falls in, a late change in a
// tracked one splits it, as a replay does. The events are what the
// target would hold without tracked: the run's counts are theirs.

// eventsSuffix names the events beside a target with tracked columns; it
// is no longer than tombstonesSuffix, whose length check covers it.
const eventsSuffix = "_events"

// keepsEvents reports whether a change log's versions are kept in
// <target>_events besides the target: with tracked columns or
// open_start, the target differs from them.
func keepsEvents(s *Spec) bool {
	return fromChanges(s) && s.SCD2 != nil && (len(s.SCD2.Tracked) > 0 || s.SCD2.OpenStart.Value != "")
}

// fromChanges reports whether a spec keeps versions from a change log.
func fromChanges(s *Spec) bool {
	return s.CDC != nil && s.Strategy.Value == string(ir.SCD2Strategy)
}

// scd2Block is a spec's scd2 block; with a change log the block is
// optional (it only names the validity columns and the open end), and an
// absent one reads as empty, placed at the strategy.
func scd2Block(s *Spec) *SCD2 {
	if s.SCD2 != nil || s.Strategy.Value != string(ir.SCD2Strategy) {
		return s.SCD2
	}
	return &SCD2{Pos: s.Strategy.Pos}
}

// changeColumns are the columns of the versions of a change log: the
// declared ones but the excluded ones, then the change's sequence.
func changeColumns(s *Spec, p *ir.Plan) []ir.Col {
	excluded := values(s.CDC.Exclude)
	var cols []ir.Col
	for _, c := range p.Columns {
		if !contains(excluded, c.Name) {
			cols = append(cols, c)
		}
	}
	seq := s.Column(s.CDC.Sequence.Value)
	return append(cols, ir.Col{Name: ir.SequenceColumn, Type: seq.Type, NotNull: true})
}

// tombstones are the deletes of a change log's versions: the key, the
// delete's time (in the target's valid_from column) and sequence.
func (x *scd2Lowering) tombstoneColumns(p *ir.Plan) []ir.Col {
	var cols []ir.Col
	for _, c := range x.cols {
		if contains(p.Key, c.Name) {
			cols = append(cols, c)
		}
	}
	cols = append(cols, ir.Col{Name: x.v.ValidFrom, Type: x.v.Type, NotNull: true})
	for _, c := range x.cols {
		if c.Name == ir.SequenceColumn {
			cols = append(cols, c)
		}
	}
	return cols
}

// cdcSetup creates the tombstones beside the target.
func (x *scd2Lowering) cdcSetup(l *lowerer) {
	l.add(ir.StmtCreateTombstones, ir.PhaseSetup, "Every delete of the change log: the key, its time ("+x.v.ValidFrom+") and sequence. A delete ends the version before it, also one that arrives later.",
		ir.CreateTable{Table: x.tombstones, Columns: x.tombstoneColumns(l.p), PrimaryKey: append(append([]string(nil), l.p.Key...), x.v.ValidFrom)})
	if x.events.Parts != nil {
		ct := x.createTarget(l.p)
		ct.Table = x.events
		l.add(ir.StmtCreateEvents, ir.PhaseSetup, "Every change as a version, valid until the next event of its key: "+x.eventsDoc()+".", ct)
	}
}

// eventsDoc says how the target differs from its events.
func (x *scd2Lowering) eventsDoc() string {
	var parts []string
	if len(x.tracked) > 0 {
		parts = append(parts, "the target merges those whose tracked columns ("+strings.Join(x.tracked, ", ")+") do not change")
	}
	if x.openStart != "" {
		parts = append(parts, "each key's earliest version starts at scd2.open_start in the target")
	}
	return strings.Join(parts, ", and ")
}

// mergeDoc says how MergeVersions writes the target from the events.
func (x *scd2Lowering) mergeDoc() string {
	var parts []string
	if len(x.tracked) > 0 {
		parts = append(parts, "merged: consecutive versions whose tracked columns ("+strings.Join(x.tracked, ", ")+") are equal are one, from the first's "+x.v.ValidFrom+" to the last's "+x.v.ValidTo+", with the last's image")
	} else {
		parts = append(parts, "as the target holds them: every event its own version")
	}
	if x.openStart != "" {
		parts = append(parts, "each key's earliest version from scd2.open_start "+x.openStartText()+" (or its own "+x.v.ValidFrom+", when earlier)")
	}
	return strings.Join(parts, "; ")
}

// openStartText is scd2.open_start as the compiled file's comments print it.
func (x *scd2Lowering) openStartText() string {
	if x.v.Type.IsInteger() {
		return x.openStart
	}
	return timeText(x.openStart, x.v.Type)
}

// versionTime is what an error says a change log's versions start at:
// cdc.at, or without it the sequence, with the way to version by commit
// time.
func versionTime(s *Spec) string {
	if s.CDC == nil || s.CDC.At.Set() {
		return "cdc.at"
	}
	return fmt.Sprintf("cdc.sequence %q (there is no cdc.at: the versions are numbered by the sequence alone; add cdc.at to version by commit time)", s.CDC.Sequence.Value)
}

// scd2OpenStart checks scd2.open_start: a value of the validity's type (a
// time, or from a change log an integer sequence), before open_end; by
// time not after watermark.start, where the versions read start.
func (v *validator) scd2OpenStart(c *SCD2) {
	s := v.s
	if !c.OpenStart.Set() {
		return
	}
	if !fromChanges(s) {
		v.scd2RowsOpenStart(c)
		return
	}
	t := scd2ValidType(s)
	if !t.IsTime() && !t.IsInteger() {
		v.errf(c.OpenStart.Pos, "scd2.open_start: the versions are numbered by cdc.sequence %q, a %s: open_start takes a time, or an integer for an integer sequence; remove it, or add cdc.at to version by commit time", s.CDC.Sequence.Value, t)
		return
	}
	start, err := ir.ParseWatermark(t, c.OpenStart.Value)
	switch {
	case err != nil && t.IsInteger():
		v.errf(c.OpenStart.Pos, "scd2.open_start %s: the versions are numbered by cdc.sequence %q, a %s, so they start at an integer such as 0 (or add cdc.at to version by commit time)", quote(c.OpenStart.Value), s.CDC.Sequence.Value, t)
		return
	case err != nil:
		v.errf(c.OpenStart.Pos, "scd2.open_start: %v (a time such as 1970-01-01)", err)
		return
	}
	if c.OpenEnd.Value == "" || !t.IsTime() {
		return
	}
	if end, err := ir.ParseWatermark(t, c.OpenEnd.Value); err == nil {
		st, _ := ir.ParseTime(start)
		et, _ := ir.ParseTime(end)
		if !st.Before(et) {
			v.errf(c.OpenStart.Pos, "scd2.open_start %s is not before scd2.open_end %s: a key's earliest version would end before it starts", c.OpenStart.Value, c.OpenEnd.Value)
		}
	}
}

// scd2RowsOpenStart checks scd2.open_start for a table of rows (by time,
// by columns).
func (v *validator) scd2RowsOpenStart(c *SCD2) {
	s := v.s
	t := scd2ValidType(s)
	start, err := ir.ParseWatermark(t, c.OpenStart.Value)
	if err != nil {
		v.errf(c.OpenStart.Pos, "scd2.open_start: %v (a time such as 1970-01-01)", err)
		return
	}
	st, _ := ir.ParseTime(start)
	if c.OpenEnd.Value != "" {
		if end, err := ir.ParseWatermark(t, c.OpenEnd.Value); err == nil {
			if et, _ := ir.ParseTime(end); !st.Before(et) {
				v.errf(c.OpenStart.Pos, "scd2.open_start %s is not before scd2.open_end %s: a key's earliest version would end before it starts", c.OpenStart.Value, c.OpenEnd.Value)
				return
			}
		}
	}
	// By time every version read starts at its watermark value, at or
	// after watermark.start: an open_start after it would end a key's
	// earliest version before it starts, or start it later than the row.
	if c.By.Value == "time" && s.Watermark != nil && s.Watermark.Start.Value != "" {
		if ws, err := ir.ParseWatermark(t, s.Watermark.Start.Value); err == nil {
			if wt, err := ir.ParseTime(ws); err == nil && st.After(wt) {
				v.errf(c.OpenStart.Pos, "scd2.open_start %s is after watermark.start %s: by time every version starts at its %s, at or after the start, and open_start moves a key's earliest version earlier, never later; set open_start at or before %s", c.OpenStart.Value, s.Watermark.Start.Value, s.Watermark.Column.Value, s.Watermark.Start.Value)
			}
		}
	}
}

// scd2TrackedChanges checks scd2.tracked with a change log: columns of the
// versions' image that can be compared.
func (v *validator) scd2TrackedChanges(c *SCD2) {
	s := v.s
	seen := map[string]bool{}
	for _, t := range c.Tracked {
		col := s.Column(t.Value)
		switch {
		case col == nil:
			// scd2 reported it
		case seen[t.Value]:
			v.errf(t.Pos, "scd2.tracked lists %q twice: keep one", t.Value)
		case contains(s.Key(), t.Value):
			v.errf(t.Pos, "scd2.tracked names %q, a unique_key column: a key's versions all hold it; remove it", t.Value)
		case contains(values(s.CDC.Exclude), t.Value):
			v.errf(t.Pos, "scd2.tracked names %q, which cdc.exclude leaves out of the versions: keep it, or track another column", t.Value)
		case t.Value == s.CDC.Sequence.Value || t.Value == s.CDC.At.Value || t.Value == s.CDC.Op.Value:
			v.errf(t.Pos, "scd2.tracked names %q, which every change changes (cdc.op, cdc.sequence or cdc.at): a version per change is the default without tracked; remove it", t.Value)
		case col.Type.Kind == ir.JSON:
			v.errf(t.Pos, "scd2.tracked column %q is json, which not every engine compares: track the columns inside it as their own columns", t.Value)
		}
		seen[t.Value] = true
	}
}

// cdcStatements adds the statements of the runs and full refreshes of an
// scd2 target fed by a change log.
func (x *scd2Lowering) cdcStatements(l *lowerer) {
	p, s := l.p, l.spec
	c := s.CDC
	l.readSource()
	l.add(ir.StmtDropStage, ir.PhaseStage, "Staging is session-scoped; a retry in the same session starts clean.",
		ir.DropTable{Table: p.Stage, Temporary: true})
	l.add(ir.StmtCreateStage, ir.PhaseStage, "The new events: per key and "+x.time+", the change that beats what the target and the tombstones hold there, shaped as the timeline.",
		ir.CreateTable{Table: p.Stage, Columns: x.sessionColumns(p, ir.KindColumn), Temporary: true})
	l.add(ir.StmtDropRaw, ir.PhaseStage, "The window's changes as read.",
		ir.DropTable{Table: p.Raw, Temporary: true})
	l.add(ir.StmtCreateRaw, ir.PhaseStage, "The window's changes as read.",
		ir.CreateTable{Table: p.Raw, Columns: session(p.Columns), Temporary: true})
	l.add(ir.StmtDropVersions, ir.PhaseStage, "The timeline: the new events and every event the target and the tombstones hold for their keys.",
		ir.DropTable{Table: x.timeline, Temporary: true})
	l.add(ir.StmtCreateVersions, ir.PhaseStage, "The timeline: the new events and every event the target and the tombstones hold for their keys.",
		ir.CreateTable{Table: x.timeline, Columns: x.sessionColumns(p, ir.KindColumn), Temporary: true})
	l.add(ir.StmtDropChanges, ir.PhaseStage, "The changes: whole versions to add, rewrite or remove, each with its op (1, 2, 3).",
		ir.DropTable{Table: x.changes, Temporary: true})
	l.add(ir.StmtCreateChanges, ir.PhaseStage, "The changes: whole versions to add, rewrite or remove, each with its op (1, 2, 3).",
		ir.CreateTable{Table: x.changes, Columns: x.sessionColumns(p, ir.OpColumn), Temporary: true})
	l.readChanges()

	_, _, del := OpCodes(c)
	seq := c.Sequence.Value
	// Changes of one key at one time are ordered by the sequence; ties by
	// the other columns (json left out, which BigQuery cannot order by),
	// so the change kept does not depend on the engine's scan order.
	order := []ir.Order{{Column: seq, Desc: true}}
	for _, col := range p.Columns {
		if col.Name != seq && col.Name != x.time && !contains(p.Key, col.Name) && col.Type.Kind != ir.JSON {
			order = append(order, ir.Order{Column: col.Name, Desc: true})
		}
	}
	l.add(ir.StmtResolveVersions, ir.PhaseWrite, "Per key and "+x.time+", the change with the greatest "+seq+", when the target's version and the tombstone at that key and time hold none as great: a new version (an insert's or update's image) or a new delete ("+strings.Join(del, ", ")+").",
		ir.ResolveVersions{Versioning: x.v, Into: p.Stage, From: p.Raw, Tombstones: x.tombstones, Columns: columnNames(p.Columns),
			Time: x.time, Sequence: seq, Order: order, IsDelete: opIn(s, del)})
	l.add(ir.StmtCountStaged, ir.PhaseWrite, "The new events; the other valid changes are ignored (already applied, or beaten by a greater sequence at the same time).",
		ir.CountRows{Table: p.Stage})
	l.add(ir.StmtVersionCandidates, ir.PhaseWrite, "The new events, onto the timeline.",
		ir.InsertFrom{Into: x.timeline, From: p.Stage, Columns: append(x.v.Stored(), ir.KindColumn)})
	l.add(ir.StmtVersionHistory, ir.PhaseWrite, "The target's versions of the new events' keys that a new event can change, onto the timeline: from the last one starting at or before the key's earliest new event on.",
		ir.VersionHistory{Versioning: x.v, Into: x.timeline, Stage: p.Stage, Time: x.v.ValidFrom})
	l.add(ir.StmtTimelineTombstones, ir.PhaseWrite, "The tombstones of the new events' keys, onto the timeline.",
		ir.TombstoneHistory{Versioning: x.v, Into: x.timeline, Stage: p.Stage, Tombstones: x.tombstones})
	l.add(ir.StmtTimelineChanges, ir.PhaseWrite, "Each new version ends at the next event of its key; a new delete removes the version held at its time; a held version followed by a new event ends there.",
		ir.EventChanges{Versioning: x.v, Into: x.changes, From: x.timeline})
	op := col(ir.OpColumn)
	l.add(ir.StmtCheckVersions, ir.PhaseWrite, "A version that would end before it starts: a change at or after scd2.open_end.",
		ir.CountRows{Table: x.changes, Where: and(ir.Binary{Op: "<>", L: op, R: ir.Lit{Text: ir.OpRemove}}, ir.Binary{Op: "<=", L: col(x.v.ValidTo), R: col(x.v.ValidFrom)})})
	l.add(ir.StmtCountAdded, ir.PhaseWrite, "New versions that follow no version of their key (its first, or after a delete): inserted.", ir.CountRows{Table: x.changes, Where: eq(op, ir.Lit{Text: ir.OpAdd})})
	l.add(ir.StmtCountRewritten, ir.PhaseWrite, "New versions that follow a version of their key, ending it, or correct one at the same time: updated.",
		ir.CountRows{Table: x.changes, Where: or(eq(op, ir.Lit{Text: ir.OpFollow}), eq(op, ir.Lit{Text: ir.OpRewrite}))})
	l.add(ir.StmtCountRemoved, ir.PhaseWrite, "New deletes: each ends its key's version, removes the one at its own time, or waits as a tombstone (deleted).",
		ir.CountRows{Table: p.Stage, Where: eq(col(ir.KindColumn), ir.Lit{Text: ir.KindNewDelete})})
	key := append(append([]string(nil), p.Key...), x.v.ValidFrom)
	l.add(ir.StmtRetractTombstones, ir.PhaseWrite, "The tombstones at the new events' key and time go, before the versions are applied: a new event replaces them.",
		ir.RetractKeys{Target: x.tombstones, Stage: p.Stage, Key: key})
	l.add(ir.StmtApplyVersions, ir.PhaseWrite, x.applyDoc(), ir.ApplyVersions{Versioning: x.v, Changes: x.changes})
	tomb := columnNames(x.tombstoneColumns(p))
	l.add(ir.StmtWriteTombstones, ir.PhaseWrite, "Each new delete is a tombstone, written after the versions it ends.",
		ir.StageRows{Into: x.tombstones, Source: ir.Relation{Table: p.Stage}, Columns: tomb, Where: eq(col(ir.KindColumn), ir.Lit{Text: ir.KindNewDelete})})
	l.add(ir.StmtClearTarget, ir.PhaseWrite, "Full refresh: empty the target (DELETE, in the transaction: readers never see it empty).",
		ir.DeleteRows{Table: p.Target})
	l.add(ir.StmtClearTombstones, ir.PhaseWrite, "Full refresh: empty the tombstones; the replay writes them again.",
		ir.DeleteRows{Table: x.tombstones})
	if x.events.Parts != nil {
		l.add(ir.StmtClearEvents, ir.PhaseWrite, "Full refresh: empty the events; the replay writes them again.",
			ir.DeleteRows{Table: x.events})
		l.add(ir.StmtMarkRebuilding, ir.PhaseWrite, "Before the merged versions are rebuilt: the state's target_filled is 2 until the advance sets it again. Where each statement commits alone, a run that stops between retract_merged and merge_versions can leave the target empty; the next run, which rebuilds the same keys, then is not refused as for an emptied target (check_target_kept asks for 1).",
			ir.Update{Table: ir.StateTable, Set: []ir.Assign{{Column: "target_filled", Value: ir.Lit{Text: ir.FilledRebuilding}}},
				Where: and(colEq("pipeline", pPipeline), colEq("lease_owner", pOwner))}, pPipeline, pOwner)
		l.add(ir.StmtRetractMerged, ir.PhaseWrite, "The target's versions of the keys the window's changes hold go: they are merged again from the keys' events (also after a retry, on engines where each statement commits alone).",
			ir.RetractKeys{Target: p.Target, Stage: p.Raw, Key: p.Key})
		l.add(ir.StmtMergeVersions, ir.PhaseWrite, "The events of those keys, "+x.mergeDoc()+".",
			ir.MergeVersions{Versioning: x.v, Into: p.Target, Keys: p.Raw, Tracked: x.tracked, OpenStart: x.openStart})
	}
	l.advanceAndRecord()
}

const scd2CDCFailInvalid = "%d change(s) break a rule (a NULL watermark, key, sequence or commit time, an unknown op code, or a quality rule of an insert's or update's image), and on_invalid is fail or there is no quality section to quarantine them: nothing written"

// cdcSessionSteps create the session tables, under guard.
func (x *scd2Lowering) cdcSessionSteps(guard string) []ir.Step {
	return []ir.Step{
		{Stmt: ir.StmtDropStage, If: guard}, {Stmt: ir.StmtCreateStage, If: guard},
		{Stmt: ir.StmtDropRaw, If: guard}, {Stmt: ir.StmtCreateRaw, If: guard},
		{Stmt: ir.StmtDropVersions, If: guard}, {Stmt: ir.StmtCreateVersions, If: guard},
		{Stmt: ir.StmtDropChanges, If: guard}, {Stmt: ir.StmtCreateChanges, If: guard},
	}
}

// cdcWriteSteps find the new events and apply them. held: the target and
// the tombstones may hold events (a run, not a full refresh).
func (x *scd2Lowering) cdcWriteSteps(held bool) []ir.Step {
	steps := []ir.Step{
		{Stmt: ir.StmtResolveVersions, Tx: true, If: ir.RegChanges},
		{Stmt: ir.StmtCountStaged, Tx: true, If: ir.RegChanges, Read: ir.ReadCount, Into: []string{ir.RegNew, "-" + ir.RegIgnored}},
		{Stmt: ir.StmtVersionCandidates, Tx: true, If: ir.RegNew},
	}
	if held {
		steps = append(steps,
			ir.Step{Stmt: ir.StmtVersionHistory, Tx: true, If: ir.RegNew},
			ir.Step{Stmt: ir.StmtTimelineTombstones, Tx: true, If: ir.RegNew})
	}
	steps = append(steps,
		ir.Step{Stmt: ir.StmtTimelineChanges, Tx: true, If: ir.RegNew},
		ir.Step{Stmt: ir.StmtCheckVersions, Tx: true, If: ir.RegNew, Read: ir.ReadCount, Fail: x.checkVersionsFail()},
		ir.Step{Stmt: ir.StmtCountAdded, Tx: true, If: ir.RegNew, Read: ir.ReadCount, Into: []string{ir.RegInserted}},
		ir.Step{Stmt: ir.StmtCountRewritten, Tx: true, If: ir.RegNew, Read: ir.ReadCount, Into: []string{ir.RegUpdated}},
		ir.Step{Stmt: ir.StmtCountRemoved, Tx: true, If: ir.RegNew, Read: ir.ReadCount, Into: []string{ir.RegDeleted}})
	if held {
		steps = append(steps, ir.Step{Stmt: ir.StmtRetractTombstones, Tx: true, If: ir.RegNew})
	}
	steps = append(steps,
		ir.Step{Stmt: ir.StmtApplyVersions, Tx: true, If: ir.RegNew},
		ir.Step{Stmt: ir.StmtWriteTombstones, Tx: true, If: ir.RegNew})
	if x.events.Parts != nil {
		if held {
			steps = append(steps, ir.Step{Stmt: ir.StmtMarkRebuilding, Tx: true, If: ir.RegChanges})
		}
		steps = append(steps,
			ir.Step{Stmt: ir.StmtRetractMerged, Tx: true, If: ir.RegChanges},
			ir.Step{Stmt: ir.StmtMergeVersions, Tx: true, If: ir.RegChanges})
	}
	return steps
}

// cdcPrograms are the run and full refresh of an scd2 target fed by a
// change log. A full refresh needs no --force: the log holds the history.
func (x *scd2Lowering) cdcPrograms(l *lowerer) (run, full *ir.Program) {
	cleanup := []string{ir.StmtDropStage, ir.StmtDropRaw, ir.StmtDropVersions, ir.StmtDropChanges}
	run = l.program(ir.ModeRun, "run", ir.LoWatermark, ir.HiNow)
	run.Doc = "An incremental run: the window's changes, each a version from its " + x.time + " (a delete ends the version before it), applied where they beat what the target holds."
	run.Steps = append(run.Steps, x.cdcSessionSteps(ir.RegWindow)...)
	run.Steps = append(run.Steps, ir.Step{Stmt: ir.StmtStageWindow, If: ir.RegWindow, Read: ir.ReadAffected, Into: []string{ir.RegRead}})
	run.Steps = append(run.Steps, l.cdcCheck(ir.RegRead, scd2CDCFailInvalid)...)
	run.Steps = append(run.Steps, x.cdcWriteSteps(true)...)
	run.Steps = append(run.Steps, l.finish()...)
	run.Cleanup = cleanup

	full = l.program(ir.ModeFullRefresh, "full_refresh", ir.LoStart, ir.HiNow)
	full.Doc = "A full refresh: the target and the tombstones emptied and rebuilt by replaying the whole change log, in one transaction."
	full.Steps = append(full.Steps, x.cdcSessionSteps("")...)
	full.Steps = append(full.Steps, ir.Step{Stmt: ir.StmtStageAll, Read: ir.ReadAffected, Into: []string{ir.RegRead}})
	full.Steps = append(full.Steps, l.cdcCheck("", scd2CDCFailInvalid)...)
	full.Steps = append(full.Steps, ir.Step{Stmt: ir.StmtClearTarget, Tx: true}, ir.Step{Stmt: ir.StmtClearTombstones, Tx: true})
	if x.events.Parts != nil {
		full.Steps = append(full.Steps, ir.Step{Stmt: ir.StmtClearEvents, Tx: true})
	}
	full.Steps = append(full.Steps, x.cdcWriteSteps(false)...)
	full.Steps = append(full.Steps, l.finish()...)
	full.Cleanup = cleanup
	return run, full
}
