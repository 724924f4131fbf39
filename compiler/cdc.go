package compiler

import (
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// A cdc pipeline reads a change log: one row per change, with an op code,
// a sequence that orders the changes of one key, and the row's image after
// the change. What the target holds after any run is a function of the set
// of valid changes read so far, never of the order in which they arrived,
// so that an incremental target equals a full replay of the log:
//
//   - per key, the newest change (by sequence) wins: an insert or an
//     update writes its image, a delete removes the row (hard) or marks it
//     (soft: the row keeps the newest image and a flag and the time);
//   - the target keeps each row's sequence (SequenceColumn), and
//     <target>_tombstones the sequence of each key whose newest change is a
//     delete: a change not newer than what they hold is ignored, so a late
//     update cannot bring a deleted key back, and a rerun is a no-op;
//   - a truncate (cdc.ops.truncate) empties the target at its point of
//     the sequence, for every key: the target's rows and the tombstones
//     not newer than it go, and <target>_truncated keeps its sequence, so
//     a change not newer than the newest truncate is ignored, in the run
//     the truncate arrives in and in every later one. A truncate that
//     arrives late (its sequence below rows already applied) removes what
//     is older than it and leaves what is newer: what a replay leaves;
//   - a change that breaks a rule (a NULL key or sequence, an unknown op
//     code, an insert's or update's image that breaks a quality rule) is
//     quarantined and not applied: the key's newest valid change wins;
//   - every change read is counted once: inserted, updated, deleted (the
//     winners applied), quarantined, or ignored (superseded by a newer
//     change of its key).

// Default names of a soft delete's mark.
const (
	DefaultSoftFlag = "deleted"
	DefaultSoftAt   = "deleted_at"
)

const (
	tombstonesSuffix = "_tombstones"
	deletesPrefix    = "incrc_deletes_"
	rankedPrefix     = "incrc_ranked_"
	// truncatedSuffix is no longer than tombstonesSuffix, so the
	// tombstones' length check covers it.
	truncatedSuffix = "_truncated"
	truncatePrefix  = "incrc_truncate_"
)

// TruncateCodes returns the op codes of truncates: none unless the spec
// lists them.
func TruncateCodes(c *CDC) []string {
	if c.Ops == nil {
		return nil
	}
	return values(c.Ops.Truncate)
}

// DebeziumOps are the default op codes: Debezium's create, read (a
// snapshot row), update and delete.
var DebeziumOps = struct{ Insert, Update, Delete []string }{[]string{"c", "r"}, []string{"u"}, []string{"d"}}

// SoftDeleteNames returns the names of a soft delete's flag and time.
func SoftDeleteNames(c *CDC) (flag, at string) {
	flag, at = DefaultSoftFlag, DefaultSoftAt
	if sd := c.SoftDelete; sd != nil {
		if sd.Flag.Value != "" {
			flag = sd.Flag.Value
		}
		if sd.At.Value != "" {
			at = sd.At.Value
		}
	}
	return flag, at
}

// OpCodes returns the op codes of each kind: the spec's, or Debezium's.
func OpCodes(c *CDC) (insert, update, del []string) {
	if c.Ops == nil {
		return DebeziumOps.Insert, DebeziumOps.Update, DebeziumOps.Delete
	}
	return values(c.Ops.Insert), values(c.Ops.Update), values(c.Ops.Delete)
}

// opIn is "op IN (codes)": the codes are literals of the op column's type,
// spelled by each dialect from the tree. With no codes it is FALSE.
func opIn(s *Spec, codes []string) ir.Expr {
	if len(codes) == 0 {
		return ir.Lit{Text: "FALSE"}
	}
	op := s.Column(s.CDC.Op.Value)
	list := make([]ir.Expr, len(codes))
	for i, code := range codes {
		if op.Type.IsInteger() {
			n, _ := ir.CanonicalNumber(code) // Validate checked it
			list[i] = ir.Lit{Text: n}
		} else {
			list[i] = ir.Str{Value: code}
		}
	}
	var x ir.Expr = col(op.Name.Value)
	if !op.Type.IsInteger() {
		x = ir.Exact{X: x}
	}
	return ir.In{X: x, List: list}
}

// cdcRules are the rules a change must pass to be applied. A NULL
// watermark (the staging read takes those changes along: no window holds
// them), key or sequence, or an op code of no kind, breaks one whatever
// the change; the quality section's rules check the image of inserts and
// updates only: a delete has no image, and is never quarantined for one.
func cdcRules(s *Spec, cols []ir.Col) ([]ir.Rule, string) {
	c := s.CDC
	var rules []ir.Rule
	seen := map[string]bool{}
	if wm := s.Watermark; wm != nil {
		rules = append(rules, ir.Rule{Reason: "not_null(" + wm.Column.Value + "): the watermark, so no window reads the row", Invalid: ir.IsNull{X: col(wm.Column.Value)}})
		seen[wm.Column.Value] = true
	}
	notNull := func(name, why string, guard ir.Expr) {
		if seen[name] {
			return
		}
		seen[name] = true
		var invalid ir.Expr = ir.IsNull{X: col(name)}
		if guard != nil {
			invalid = and(guard, invalid)
		}
		rules = append(rules, ir.Rule{Reason: "not_null(" + name + ")" + why, Invalid: invalid})
	}
	trunc := TruncateCodes(c)
	var keyed ir.Expr // a truncate has no key
	if len(trunc) > 0 {
		keyed = ir.Unary{Op: "NOT", X: opIn(s, trunc)}
	}
	for _, k := range s.Key() {
		notNull(k, "", keyed)
	}
	notNull(c.Sequence.Value, ": cdc.sequence, which orders a key's changes", nil)
	if fromChanges(s) && c.At.Set() {
		// A change's commit time is where its version starts, or where its
		// delete ends one: a change without one has no place in time.
		notNull(c.At.Value, ": cdc.at, the time the change takes effect", nil)
	}
	ins, upd, del := OpCodes(c)
	all := append(append(append(append([]string(nil), ins...), upd...), del...), trunc...)
	unknown := opIn(s, all)
	if in, ok := unknown.(ir.In); ok {
		in.Not = true
		unknown = in
	}
	rules = append(rules, ir.Rule{
		Reason:  "cdc.op: not a known op code (" + opKinds(ins, upd, del, trunc) + ")",
		Invalid: or(ir.IsNull{X: col(c.Op.Value)}, unknown),
	})
	image := opIn(s, append(append([]string(nil), ins...), upd...))
	mode := "fail"
	if q := s.Quality; q != nil {
		if q.OnInvalid.Value != "fail" {
			mode = "quarantine"
		}
		for _, n := range q.NotNull {
			notNull(n.Value, "", image)
		}
		for _, chk := range q.Checks {
			e, err := ParseExpr(chk.Value, s.ColumnNames())
			if err != nil {
				continue // Validate reported it
			}
			rules = append(rules, ir.Rule{Reason: "check: " + chk.Value, Invalid: and(image, ir.Unary{Op: "NOT", X: e})})
		}
	}
	return rules, mode
}

// opKinds lists the op codes for a message: "insert: c, r; update: u; delete: d".
func opKinds(ins, upd, del, trunc []string) string {
	var parts []string
	for _, k := range []struct {
		name  string
		codes []string
	}{{"insert", ins}, {"update", upd}, {"delete", del}, {"truncate", trunc}} {
		if len(k.codes) > 0 {
			parts = append(parts, k.name+": "+strings.Join(k.codes, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// cdcPlan fills the plan's CDC part: the target's columns and the tables
// besides it.
func (l *lowerer) cdcPlan() {
	p, s := l.p, l.spec
	c := s.CDC
	excluded := values(c.Exclude)
	var cols []ir.Col
	for _, col := range p.Columns {
		if !contains(excluded, col.Name) {
			cols = append(cols, col)
		}
	}
	seq := s.Column(c.Sequence.Value)
	cols = append(cols, ir.Col{Name: ir.SequenceColumn, Type: seq.Type, NotNull: true})
	t := p.Target
	a := &ir.CDCApplying{
		Tombstones: ir.Table{Parts: append(append([]string(nil), t.Schema()...), t.Name()+tombstonesSuffix)},
		Deletes:    ir.Table{Parts: []string{deletesPrefix + p.Pipeline}},
		Ranked:     ir.Table{Parts: []string{rankedPrefix + p.Pipeline}},
	}
	if c.Deletes.Value == "soft" {
		a.Soft = true
		a.SoftFlag, a.SoftAt = SoftDeleteNames(c)
		at := s.Column(c.At.Value)
		cols = append(cols, ir.Col{Name: a.SoftFlag, Type: ir.Type{Kind: ir.Boolean}, NotNull: true}, ir.Col{Name: a.SoftAt, Type: at.Type})
	}
	a.TargetColumns = cols
	if len(TruncateCodes(c)) > 0 {
		a.Truncated = ir.Table{Parts: append(append([]string(nil), t.Schema()...), t.Name()+truncatedSuffix)}
		a.Truncate = ir.Table{Parts: []string{truncatePrefix + p.Pipeline}}
	}
	p.CDC = a
}

// truncateColumns are the columns of the truncate marks: the sequence.
func (l *lowerer) truncateColumns() []ir.Col {
	seq := l.spec.Column(l.spec.CDC.Sequence.Value)
	return []ir.Col{{Name: ir.SequenceColumn, Type: seq.Type, NotNull: true}}
}

// tombstoneColumns are the tombstones' columns (and the deletes'
// session table's): the key, the delete's sequence and commit time.
func (l *lowerer) tombstoneColumns() []ir.Col {
	p, c := l.p, l.spec.CDC
	var cols []ir.Col
	for _, k := range p.Key {
		for _, col := range p.Columns {
			if col.Name == k {
				cols = append(cols, col)
			}
		}
	}
	seq := l.spec.Column(c.Sequence.Value)
	cols = append(cols, ir.Col{Name: ir.SequenceColumn, Type: seq.Type, NotNull: true})
	if c.At.Value != "" {
		cols = append(cols, ir.Col{Name: ir.DeletedAtColumn, Type: l.spec.Column(c.At.Value).Type})
	}
	return cols
}

// rankedColumns are the ranked changes' columns: the change log's, then
// the sequences the target and the tombstone held for the key, and with
// soft deletes the tombstone's time, the mark of an image older than it.
func (l *lowerer) rankedColumns() []ir.Col {
	p, s := l.p, l.spec
	seq := s.Column(s.CDC.Sequence.Value).Type
	cols := append(session(p.Columns), ir.Col{Name: ir.TargetSequenceColumn, Type: seq}, ir.Col{Name: ir.TombstoneSequenceColumn, Type: seq})
	if p.CDC.Soft {
		cols = append(cols, ir.Col{Name: ir.TombstoneAtColumn, Type: s.Column(s.CDC.At.Value).Type})
	}
	return cols
}

// cdcSetup creates the tombstones beside the target.
func (l *lowerer) cdcSetup() {
	l.add(ir.StmtCreateTombstones, ir.PhaseSetup, "Per key whose newest change is a delete, that change's sequence: a late change older than it cannot bring the key back.",
		ir.CreateTable{Table: l.p.CDC.Tombstones, Columns: l.tombstoneColumns(), PrimaryKey: l.p.Key})
	if a := l.p.CDC; a.Truncated.Parts != nil {
		l.add(ir.StmtCreateTruncated, ir.PhaseSetup, "The sequence of the newest truncate applied: a change not newer than it is ignored, also one that arrives later.",
			ir.CreateTable{Table: a.Truncated, Columns: l.truncateColumns()})
	}
}

// session drops the NOT NULL of columns: session tables hold what the
// rules have not checked yet.
func session(cols []ir.Col) []ir.Col {
	out := make([]ir.Col, len(cols))
	for i, c := range cols {
		out[i] = ir.Col{Name: c.Name, Type: c.Type}
	}
	return out
}

// cdcStatements adds the statements of a cdc pipeline's runs and full
// refreshes: the changes are read into raw and checked there, ranked once
// into what is newer than what the target holds (joined to the target and
// the tombstones once), then split into the inserts and updates (stage,
// shaped as the target) and the deletes (shaped as the tombstones), and
// written.
func (l *lowerer) cdcStatements() {
	p, s, a := l.p, l.spec, l.p.CDC
	c := s.CDC
	cols := columnNames(p.Columns)
	l.readSource()
	tomb := l.tombstoneColumns()
	l.add(ir.StmtDropStage, ir.PhaseStage, "Staging is session-scoped; a retry in the same session starts clean.",
		ir.DropTable{Table: p.Stage, Temporary: true})
	l.add(ir.StmtCreateStage, ir.PhaseStage, "The inserts and updates to write, shaped as the target.",
		ir.CreateTable{Table: p.Stage, Columns: session(a.TargetColumns), Temporary: true})
	l.add(ir.StmtDropRaw, ir.PhaseStage, "The window's changes as read.",
		ir.DropTable{Table: p.Raw, Temporary: true})
	l.add(ir.StmtCreateRaw, ir.PhaseStage, "The window's changes as read.",
		ir.CreateTable{Table: p.Raw, Columns: session(p.Columns), Temporary: true})
	l.add(ir.StmtDropDeletes, ir.PhaseStage, "The deletes to apply, shaped as the tombstones.",
		ir.DropTable{Table: a.Deletes, Temporary: true})
	l.add(ir.StmtCreateDeletes, ir.PhaseStage, "The deletes to apply, shaped as the tombstones.",
		ir.CreateTable{Table: a.Deletes, Columns: session(tomb), Temporary: true})
	l.add(ir.StmtDropRanked, ir.PhaseStage, "The changes to apply, ranked once, with what the target and the tombstones hold for their keys.",
		ir.DropTable{Table: a.Ranked, Temporary: true})
	l.add(ir.StmtCreateRanked, ir.PhaseStage, "The changes to apply, ranked once, with what the target and the tombstones hold for their keys.",
		ir.CreateTable{Table: a.Ranked, Columns: l.rankedColumns(), Temporary: true})
	l.readChanges()
	l.truncateStatements()

	ins, upd, del := OpCodes(c)
	seq := c.Sequence.Value
	order := []ir.Order{{Column: seq, Desc: true}}
	// Ties on the sequence are broken by the other columns, so the change
	// kept does not depend on the engine's scan order; json columns are
	// left out, which BigQuery cannot order by.
	for _, c := range p.Columns {
		if c.Name != seq && !contains(p.Key, c.Name) && c.Type.Kind != ir.JSON {
			order = append(order, ir.Order{Column: c.Name, Desc: true})
		}
	}
	isDelete := opIn(s, del)
	doc := "Per key, the newest change when it is newer than the target's row and tombstone, with the sequences they hold: what the run applies, ranked and joined to the target once."
	if a.Soft {
		doc = "Per key, the newest change, and the newest insert or update when a delete is newer, when newer than the target's row (a delete also than the tombstone), with the sequences and the tombstone's time they hold: what the run applies, ranked and joined to the target once."
	}
	l.add(ir.StmtRankChanges, ir.PhaseWrite, doc,
		ir.RankChanges{Into: a.Ranked, From: p.Raw, Target: p.Target, Tombstones: a.Tombstones, Columns: cols, Key: p.Key,
			Sequence: seq, Order: order, IsDelete: isDelete, Soft: a.Soft})

	upserts := ir.ResolveChanges{Into: p.Stage, From: a.Ranked, Key: p.Key, Sequence: seq, IsDelete: isDelete}
	for _, col := range a.TargetColumns {
		if contains(cols, col.Name) {
			upserts.Image = append(upserts.Image, col.Name)
		}
	}
	doc = "The inserts and updates (" + strings.Join(append(append([]string(nil), ins...), upd...), ", ") + ") ranked to apply: their image, to write."
	if a.Soft {
		upserts.Flag, upserts.FlagAt = a.SoftFlag, a.SoftAt
		doc = "The inserts and updates (" + strings.Join(append(append([]string(nil), ins...), upd...), ", ") + ") ranked to apply: their image, to write, marked deleted when a newer delete has left a tombstone."
	}
	l.add(ir.StmtResolveUpserts, ir.PhaseWrite, doc, upserts)
	deletes := ir.ResolveChanges{Into: a.Deletes, From: a.Ranked, Key: p.Key, Sequence: seq, IsDelete: isDelete, Deletes: true, At: c.At.Value}
	l.add(ir.StmtResolveDeletes, ir.PhaseWrite, "The deletes ("+strings.Join(del, ", ")+") ranked to apply.", deletes)
	l.add(ir.StmtCountStaged, ir.PhaseWrite, "Inserts and updates to write.", ir.CountRows{Table: p.Stage})
	l.add(ir.StmtCountMatched, ir.PhaseWrite, "Of those, the ones whose key the target holds (updated; the rest are inserted), as the ranking found it.",
		ir.CountRows{Table: a.Ranked, Where: and(ir.Unary{Op: "NOT", X: isDelete}, ir.IsNull{X: col(ir.TargetSequenceColumn), Not: true})})
	l.add(ir.StmtCountDeletes, ir.PhaseWrite, "Deletes to apply.", ir.CountRows{Table: a.Deletes})

	retract := ir.RetractKeys{Target: a.Tombstones, Stage: p.Stage, Key: p.Key}
	doc = "A key written by a newer insert or update has no tombstone."
	if a.Soft {
		retract.Where = ir.Unary{Op: "NOT", X: col(a.SoftFlag)}
		doc = "A key written by an insert or update newer than its tombstone has none."
	}
	l.add(ir.StmtRetractTombstones, ir.PhaseWrite, doc, retract)
	l.add(ir.StmtWrite, ir.PhaseWrite, "Upsert the inserts and updates by unique key, with their sequence.",
		ir.MergeRows{Target: p.Target, Stage: p.Stage, Key: p.Key, Columns: columnNames(a.TargetColumns)})
	if a.Soft {
		l.add(ir.StmtApplyDeletes, ir.PhaseWrite, "Soft deletes mark the key's row, which keeps its newest image: "+a.SoftFlag+" and "+a.SoftAt+".",
			ir.UpdateMatched{Target: p.Target, Stage: a.Deletes, Key: p.Key,
				Set: []ir.Assign{{Column: a.SoftFlag, Value: ir.Lit{Text: "TRUE"}}, {Column: a.SoftAt, Value: col(ir.DeletedAtColumn)}}})
	} else {
		l.add(ir.StmtApplyDeletes, ir.PhaseWrite, "Hard deletes remove the key's row.",
			ir.RetractKeys{Target: p.Target, Stage: a.Deletes, Key: p.Key})
	}
	l.add(ir.StmtWriteTombstones, ir.PhaseWrite, "Each applied delete leaves (or replaces) its key's tombstone.",
		ir.MergeRows{Target: a.Tombstones, Stage: a.Deletes, Key: p.Key, Columns: columnNames(tomb)})
	l.add(ir.StmtClearTarget, ir.PhaseWrite, "Full refresh: empty the target (DELETE, in the transaction: readers never see it empty).",
		ir.DeleteRows{Table: p.Target})
	l.add(ir.StmtClearTombstones, ir.PhaseWrite, "Full refresh: empty the tombstones; the replay writes them again.",
		ir.DeleteRows{Table: a.Tombstones})
	l.advanceAndRecord()
}

// truncateStatements add the statements of a change log's truncates: the
// newest one read, when it is newer than the one applied, empties the
// target and the tombstones up to its sequence and replaces the mark; then
// every change not newer than the mark (the new one or an earlier run's)
// is dropped from what the run applies, ignored, and so are the truncates.
func (l *lowerer) truncateStatements() {
	p, s, a := l.p, l.spec, l.p.CDC
	if a.Truncated.Parts == nil {
		return
	}
	c := s.CDC
	seq := c.Sequence.Value
	isTrunc := opIn(s, TruncateCodes(c))
	codes := strings.Join(TruncateCodes(c), ", ")
	l.add(ir.StmtDropTruncate, ir.PhaseStage, "The truncate a run applies.",
		ir.DropTable{Table: a.Truncate, Temporary: true})
	l.add(ir.StmtCreateTruncate, ir.PhaseStage, "The truncate a run applies.",
		ir.CreateTable{Table: a.Truncate, Columns: session(l.truncateColumns()), Temporary: true})
	l.add(ir.StmtResolveTruncate, ir.PhaseWrite, "The truncate ("+codes+") with the greatest "+seq+", when it is newer than the one applied: the others are ignored.",
		ir.NewTruncate{Into: a.Truncate, From: p.Raw, Marks: a.Truncated, Sequence: seq, IsTruncate: isTrunc})
	l.add(ir.StmtCountTruncate, ir.PhaseWrite, "The truncate to apply (0 or 1): counted as a delete.",
		ir.CountRows{Table: a.Truncate})
	l.add(ir.StmtTruncateTarget, ir.PhaseWrite, "The truncate empties the target up to its sequence: a row written by a newer change stays, as in a replay of the log.",
		ir.DeleteThrough{Table: p.Target, Column: ir.SequenceColumn, Bound: a.Truncate})
	l.add(ir.StmtTruncateTombstones, ir.PhaseWrite, "And the tombstones up to its sequence: the truncate stops those older changes now.",
		ir.DeleteThrough{Table: a.Tombstones, Column: ir.SequenceColumn, Bound: a.Truncate})
	l.add(ir.StmtClearTruncated, ir.PhaseWrite, "The mark is replaced, after the rows it empties are gone.",
		ir.DeleteRows{Table: a.Truncated})
	l.add(ir.StmtWriteTruncated, ir.PhaseWrite, "The mark is replaced, after the rows it empties are gone.",
		ir.InsertFrom{Into: a.Truncated, From: a.Truncate, Columns: []string{ir.SequenceColumn}})
	l.add(ir.StmtDropTruncates, ir.PhaseWrite, "Truncates are applied (or ignored) by now: none is an insert or update.",
		ir.DeleteRows{Table: p.Raw, Where: isTrunc})
	l.add(ir.StmtDropTruncated, ir.PhaseWrite, "Changes not newer than the newest truncate are ignored: it emptied the target after them.",
		ir.DeleteThrough{Table: p.Raw, Column: seq, Bound: a.Truncated})
}

// truncateSteps apply a truncate and drop what it makes stale, between the
// check of the changes read and their resolution.
func (l *lowerer) truncateSteps() []ir.Step {
	if l.p.CDC.Truncated.Parts == nil {
		return nil
	}
	return []ir.Step{
		{Stmt: ir.StmtResolveTruncate, Tx: true, If: ir.RegChanges},
		{Stmt: ir.StmtCountTruncate, Tx: true, If: ir.RegChanges, Read: ir.ReadCount, Into: []string{ir.RegTruncate, ir.RegDeleted, "-" + ir.RegIgnored}},
		{Stmt: ir.StmtTruncateTarget, Tx: true, If: ir.RegTruncate},
		{Stmt: ir.StmtTruncateTombstones, Tx: true, If: ir.RegTruncate},
		{Stmt: ir.StmtClearTruncated, Tx: true, If: ir.RegTruncate},
		{Stmt: ir.StmtWriteTruncated, Tx: true, If: ir.RegTruncate},
		{Stmt: ir.StmtDropTruncates, Tx: true, If: ir.RegChanges},
		{Stmt: ir.StmtDropTruncated, Tx: true, If: ir.RegChanges},
	}
}

// readChanges adds the read of a change log's window (or, for a full
// refresh, of the whole log) into raw, and the split of what was read: the
// changes that break a rule are quarantined (or fail the run) and never
// applied; the valid ones are counted.
func (l *lowerer) readChanges() {
	p := l.p
	cols := columnNames(p.Columns)
	window, upTo := l.windows()
	l.add(ir.StmtStageWindow, ir.PhaseStage, "The changes of the half-open window [lo, hi) of the change log, read once, with the ones whose watermark is NULL.",
		ir.StageRows{Into: p.Raw, Source: p.Source, Columns: cols, Window: withNull(window)}, windowParams(window)...)
	l.add(ir.StmtStageAll, ir.PhaseStage, "Full refresh: every change in [start, hi), replayed, with the ones whose watermark is NULL.",
		ir.StageRows{Into: p.Raw, Source: p.Source, Columns: cols, Window: withNull(upTo)}, windowParams(upTo)...)

	invalid := anyOf(l.rules)
	if l.mode == "quarantine" {
		doc := "Changes that break a rule go to quarantine, with the first rule they break: a NULL watermark, key or sequence, an unknown op code, an insert's or update's image that breaks a quality rule (a delete has no image to check)."
		if l.scd != nil {
			doc = "Changes that break a rule go to quarantine, with the first rule they break: a NULL watermark, key, sequence or commit time, an unknown op code, an insert's or update's image that breaks a quality rule (a delete has no image to check)."
		}
		l.add(ir.StmtQuarantine, ir.PhaseWrite, doc,
			ir.QuarantineRows{Into: p.Quarantine, From: ir.Relation{Table: p.Raw}, Columns: cols, Rules: l.rules}, pRunID)
	}
	l.add(ir.StmtCountInvalid, ir.PhaseWrite, "Changes that break a rule (on_invalid: fail, or no quality section, stops the run when there are any).",
		ir.CountRows{Table: p.Raw, Where: invalid})
	l.add(ir.StmtDeleteInvalid, ir.PhaseWrite, "Invalid changes are never applied: the key's newest valid change wins.",
		ir.DeleteRows{Table: p.Raw, Where: invalid})
	l.add(ir.StmtCountChanges, ir.PhaseWrite, "The valid changes read: each is applied or ignored.",
		ir.CountRows{Table: p.Raw})
}

const cdcFailInvalid = "%d change(s) break a rule (a NULL watermark, key or sequence, an unknown op code, or a quality rule of an insert's or update's image), and on_invalid is fail or there is no quality section to quarantine them: nothing written"

// cdcStage creates the session tables and reads the changes into raw.
func (l *lowerer) cdcStage(guard, read string) []ir.Step {
	steps := []ir.Step{
		{Stmt: ir.StmtDropStage, If: guard}, {Stmt: ir.StmtCreateStage, If: guard},
		{Stmt: ir.StmtDropRaw, If: guard}, {Stmt: ir.StmtCreateRaw, If: guard},
		{Stmt: ir.StmtDropDeletes, If: guard}, {Stmt: ir.StmtCreateDeletes, If: guard},
		{Stmt: ir.StmtDropRanked, If: guard}, {Stmt: ir.StmtCreateRanked, If: guard},
	}
	if l.p.CDC.Truncate.Parts != nil {
		steps = append(steps, ir.Step{Stmt: ir.StmtDropTruncate, If: guard}, ir.Step{Stmt: ir.StmtCreateTruncate, If: guard})
	}
	return append(steps, ir.Step{Stmt: read, If: guard, Read: ir.ReadAffected, Into: []string{ir.RegRead}})
}

// cdcCleanup drops the session tables.
func (l *lowerer) cdcCleanup() []string {
	out := []string{ir.StmtDropStage, ir.StmtDropRaw, ir.StmtDropDeletes, ir.StmtDropRanked}
	if l.p.CDC.Truncate.Parts != nil {
		out = append(out, ir.StmtDropTruncate)
	}
	return out
}

// cdcCheck splits the changes read: invalid ones are quarantined or fail
// the program; the valid ones are counted as ignored until applied.
func (l *lowerer) cdcCheck(guard, failMsg string) []ir.Step {
	steps := l.quality(guard, false, failMsg)
	return append(steps, ir.Step{Stmt: ir.StmtCountChanges, Tx: true, If: guard, Read: ir.ReadCount, Into: []string{ir.RegChanges, ir.RegIgnored}})
}

// cdcResolve ranks what is newer than the target and stages it by kind;
// the counts take it out of the ignored changes, into what it will do.
func (l *lowerer) cdcResolve(matched bool) []ir.Step {
	steps := []ir.Step{
		{Stmt: ir.StmtRankChanges, Tx: true, If: ir.RegChanges},
		{Stmt: ir.StmtResolveUpserts, Tx: true, If: ir.RegChanges},
		{Stmt: ir.StmtResolveDeletes, Tx: true, If: ir.RegChanges},
		{Stmt: ir.StmtCountStaged, Tx: true, If: ir.RegChanges, Read: ir.ReadCount, Into: []string{ir.RegUpserts, ir.RegInserted, "-" + ir.RegIgnored}},
	}
	if matched {
		steps = append(steps, ir.Step{Stmt: ir.StmtCountMatched, Tx: true, If: ir.RegUpserts, Read: ir.ReadCount, Into: []string{ir.RegUpdated, "-" + ir.RegInserted}})
	}
	return append(steps, ir.Step{Stmt: ir.StmtCountDeletes, Tx: true, If: ir.RegChanges, Read: ir.ReadCount, Into: []string{ir.RegDeleted, "-" + ir.RegIgnored}})
}

// cdcWrite writes what was resolved. The order matters where statements
// commit one by one (Spark, BigQuery, Trino): a tombstone is written last,
// after the delete it records is applied, and removed first, before the
// insert or update that supersedes it, so a run that fails between two of
// them leaves every unapplied change newer than what the target and the
// tombstones hold, and its retry (the watermark has not moved) applies it.
// With soft deletes a key may have both an image and a newer delete: the
// mark follows the image, and the tombstone the image supersedes (the
// pre-run one) is removed before the delete's is written.
func (l *lowerer) cdcWrite(retract bool) []ir.Step {
	var steps []ir.Step
	if retract {
		steps = append(steps, ir.Step{Stmt: ir.StmtRetractTombstones, Tx: true, If: ir.RegUpserts})
	}
	return append(steps,
		ir.Step{Stmt: ir.StmtWrite, Tx: true, If: ir.RegUpserts},
		ir.Step{Stmt: ir.StmtApplyDeletes, Tx: true, If: ir.RegDeleted},
		ir.Step{Stmt: ir.StmtWriteTombstones, Tx: true, If: ir.RegDeleted})
}

// applyingChanges is strategy cdc: a change log's newest change of each
// key applied to the target, deletes kept as tombstones.
type applyingChanges struct{}

func (applyingChanges) validate(v *validator) {
	v.needsKey()
	v.needsWatermark()
	if v.s.CDC == nil && !v.reported("cdc") {
		v.errf(v.s.Strategy.Pos, "strategy cdc needs cdc: {op: COLUMN, sequence: COLUMN}")
	}
}

func (applyingChanges) prepare(l *lowerer) { l.cdcPlan() }

func (applyingChanges) createTarget(l *lowerer) {
	p := l.p
	l.add(ir.StmtCreateTarget, ir.PhaseSetup, "The target: the row image of the declared columns but the excluded ones, and the sequence of the change applied.",
		ir.CreateTable{Table: p.Target, Columns: p.CDC.TargetColumns, PrimaryKey: p.Key})
}

func (applyingChanges) besideTarget(l *lowerer) { l.cdcSetup() }

// stage adds every statement of the change log's apply: the resolve reads
// the raw changes the stage holds, and the order they are listed in is
// the order a reviewer reads them.
func (applyingChanges) stage(l *lowerer) { l.cdcStatements() }

func (applyingChanges) write(*lowerer) {}

func (applyingChanges) programs(l *lowerer) (run, full *ir.Program) {
	return l.cdcRun(), l.cdcFullRefresh()
}

// cdcRun is incrc run of a cdc pipeline: the window's changes applied.
func (l *lowerer) cdcRun() *ir.Program {
	pr := l.program(ir.ModeRun, "run", ir.LoWatermark, ir.HiNow)
	pr.Doc = "An incremental run: the window's changes, the newest of each key applied when it is newer than what the target holds."
	pr.Steps = append(pr.Steps, l.cdcStage(ir.RegWindow, ir.StmtStageWindow)...)
	pr.Steps = append(pr.Steps, l.cdcCheck(ir.RegRead, cdcFailInvalid)...)
	pr.Steps = append(pr.Steps, l.truncateSteps()...)
	pr.Steps = append(pr.Steps, l.cdcResolve(true)...)
	pr.Steps = append(pr.Steps, l.cdcWrite(true)...)
	pr.Steps = append(pr.Steps, l.finish()...)
	pr.Cleanup = l.cdcCleanup()
	return pr
}

// cdcFullRefresh is incrc run --full-refresh of a cdc pipeline: the target
// and the tombstones emptied, and the whole change log in [start, hi)
// replayed, in one transaction. It counts changes as a run does: the rows
// it clears are not deletes of the log.
func (l *lowerer) cdcFullRefresh() *ir.Program {
	pr := l.program(ir.ModeFullRefresh, "full_refresh", ir.LoStart, ir.HiNow)
	pr.Doc = "A full refresh: the target and the tombstones emptied and rebuilt by replaying the whole change log, in one transaction."
	pr.Steps = append(pr.Steps, l.cdcStage("", ir.StmtStageAll)...)
	pr.Steps = append(pr.Steps, l.cdcCheck("", cdcFailInvalid)...)
	pr.Steps = append(pr.Steps,
		ir.Step{Stmt: ir.StmtClearTarget, Tx: true},
		ir.Step{Stmt: ir.StmtClearTombstones, Tx: true})
	if l.p.CDC.Truncated.Parts != nil {
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtClearTruncated, Tx: true})
	}
	pr.Steps = append(pr.Steps, l.truncateSteps()...)
	pr.Steps = append(pr.Steps, l.cdcResolve(false)...)
	pr.Steps = append(pr.Steps, l.cdcWrite(false)...)
	pr.Steps = append(pr.Steps, l.finish()...)
	pr.Cleanup = l.cdcCleanup()
	return pr
}
