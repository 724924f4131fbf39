package compiler

import "github.com/incrc/incrc/compiler/ir"

// A full refresh reads the source in its write transaction and makes the
// target exactly the rows it keeps: no stage, no second copy of the
// source, and (where the engine can) no rewrite of unchanged rows. The
// quarantine and the counts read the same rows the write keeps.

// noteUnique is what the run log's note says when a full refresh skipped
// the dedupe because the source's catalog proves it changes nothing.
const noteUnique = "dedupe skipped: the source enforces the unique key"

// noteDirect is what the run log's note says when a merge's run wrote its
// window straight from the source (directMerge).
const noteDirect = "stage skipped: the source enforces the unique key, the window was merged straight from it"

// refreshes: the strategies whose full refresh is refresh's program (scd2
// and cdc rebuild their own way), when the source is in the target: a
// source outside it cannot be read in the target's write transaction, and
// is staged first (stagedFullRefresh).
func (l *lowerer) refreshes() bool { return l.rebuildsPlain() && l.p.From == nil }

// rebuildsPlain: the strategy's full refresh makes the target exactly the
// source's valid rows, one per key (not scd2's history, not cdc's replay).
func (l *lowerer) rebuildsPlain() bool { return l.scd == nil && l.p.CDC == nil }

// checksUnique: the source is a table whose catalog a run can read, and
// the pipeline has a dedupe that a unique key would make a no-op.
func (l *lowerer) checksUnique() bool {
	src := l.p.Source
	return l.dedupe() != nil && src.Query == "" && len(src.Lookups) == 0
}

// keep is what a full refresh keeps of the source: rows whose watermark
// is not NULL (those are quarantined or fail the run), one per key.
func (l *lowerer) keep(dedupe bool) ir.Keep {
	k := ir.Keep{Columns: columnNames(l.p.Columns)}
	if wm := l.p.Watermark; wm != nil {
		k.Where = l.hasWM()
	}
	if dedupe {
		k.Dedupe = l.dedupe()
	}
	return k
}

// refreshRules are the rules a full refresh checks: with unique (the
// source's catalog proved the key unique and NOT NULL) a key column's
// not_null rule cannot break, and is left out.
func (l *lowerer) refreshRules(unique bool) []ir.Rule {
	if !unique {
		return l.rules
	}
	var out []ir.Rule
	for _, r := range l.rules {
		keyNotNull := false
		for _, k := range l.p.Key {
			keyNotNull = keyNotNull || r.Reason == "not_null("+k+")"
		}
		if !keyNotNull {
			out = append(out, r)
		}
	}
	return out
}

// validOf is valid() for a set of rules.
func validOf(rules []ir.Rule) ir.Expr {
	if len(rules) == 0 {
		return nil
	}
	return ir.Unary{Op: "NOT", X: ir.Call{Fn: "coalesce", Args: []ir.Expr{anyOf(rules), ir.Lit{Text: "FALSE"}}}}
}

// refresh adds the statements of the full refresh program.
func (l *lowerer) refresh() {
	if !l.refreshes() {
		return
	}
	p := l.p
	cols := columnNames(p.Columns)
	_, upTo := l.windows()
	up := windowParams(upTo)
	switch {
	case l.checksUnique() && l.directMerge():
		l.add(ir.StmtSourceUnique, ir.PhaseStage, "Does the source enforce the unique key (a primary key or unique constraint on exactly its columns, all NOT NULL)? Then the dedupe changes nothing: the full refresh skips it, and a run merges its window straight from the source.",
			ir.SourceUnique{Source: p.Source.Table, Key: p.Key})
	case l.checksUnique():
		l.add(ir.StmtSourceUnique, ir.PhaseStage, "Does the source enforce the unique key (a primary key or unique constraint on exactly its columns, all NOT NULL)? Then the dedupe changes nothing, and the full refresh skips it.",
			ir.SourceUnique{Source: p.Source.Table, Key: p.Key})
	case l.directMerge():
		l.add(ir.StmtSourceUnique, ir.PhaseStage, "Does the source enforce the unique key (a primary key or unique constraint on exactly its columns, all NOT NULL)? Then a run merges its window straight from the source, without a stage.",
			ir.SourceUnique{Source: p.Source.Table, Key: p.Key})
	}
	l.add(ir.StmtCountSource, ir.PhaseStage, "Full refresh: the source rows in [start, hi), with the rows whose watermark is NULL (rows read).",
		ir.CountSource{Source: p.Source, Window: withNull(upTo)}, up...)
	if wm := p.Watermark; wm != nil && !l.rewritesPartitions() {
		// (overwrite_partitions has them already, for its runs)
		l.nullWatermarkSource(wm.Name, cols)
	}
	variants := []struct {
		dedupe          bool
		count, quar, rp string
		doc             string
	}{{l.dedupe() != nil, ir.StmtCountInvalidSource, ir.StmtQuarantineSource, ir.StmtReplaceTarget, ""}}
	if l.checksUnique() {
		variants = append(variants, struct {
			dedupe          bool
			count, quar, rp string
			doc             string
		}{false, ir.StmtCountInvalidUnique, ir.StmtQuarantineUnique, ir.StmtReplaceUnique, " The source enforces the unique key: no dedupe."})
	}
	key := l.primaryKey()
	for i, v := range variants {
		k := l.keep(v.dedupe)
		rules := l.refreshRules(i > 0)
		if len(rules) > 0 {
			invalid := anyOf(rules)
			if l.mode == "quarantine" {
				l.add(v.quar, ir.PhaseWrite, "Full refresh: the rows it keeps that break a quality rule go to quarantine, with the first rule they break."+v.doc,
					ir.QuarantineRows{Into: p.Quarantine, From: p.Source, Window: upTo, Columns: cols, Rules: rules, Keep: &k}, append([]ir.Param{pRunID}, up...)...)
			} else {
				l.add(v.count, ir.PhaseStage, "Full refresh: the rows it keeps that break a quality rule (on_invalid: fail stops the run when there are any)."+v.doc,
					ir.CountSource{Source: p.Source, Window: upTo, Where: invalid, Keep: &k}, up...)
			}
		}
		l.add(v.rp, ir.PhaseWrite, "Full refresh: the target made exactly the valid rows of [start, hi), one per key, in the write transaction where the engine has one (what a concurrent reader sees, per engine: dialects/README.md)."+v.doc,
			ir.ReplaceAll{Target: p.Target, Source: p.Source, Columns: cols, Window: upTo, Keep: k, Valid: validOf(rules), Key: key}, up...)
	}
	l.add(ir.StmtCountTarget, ir.PhaseWrite, "Full refresh: the target's rows, before (rows deleted) and after (rows inserted) its rewrite.",
		ir.CountRows{Table: p.Target})
}

// fullRefresh is incrc run --full-refresh: the target rebuilt from every
// source row in [start, hi), in one transaction, without a stage.
func (l *lowerer) fullRefresh() *ir.Program {
	p := l.p
	if !l.refreshes() {
		return l.stagedFullRefresh()
	}
	pr := l.program(ir.ModeFullRefresh, "full_refresh", ir.LoStart, ir.HiNow)
	pr.Doc = "A full refresh: the target made exactly the source's valid rows, read in the write transaction."
	unique := l.checksUnique()
	// variant is a step of the plan's dedupe, and with the unique check
	// the same step without it: one runs, as the register says.
	variant := func(s ir.Step, flat, note string) []ir.Step {
		if !unique {
			return []ir.Step{s}
		}
		a, b := s, s
		a.If, b.If = "!"+ir.RegUnique, ir.RegUnique
		b.Stmt, b.Note = flat, note
		if p.Statement(flat) == nil {
			return []ir.Step{a} // the unique key leaves nothing to check
		}
		return []ir.Step{a, b}
	}
	if unique {
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtSourceUnique, Read: ir.ReadCount, Into: []string{ir.RegUnique}})
	}
	// Every row read counts as ignored until a step says what became of
	// it (quarantined, written): what is left the dedupe dropped.
	pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtCountSource, Read: ir.ReadCount, Into: []string{ir.RegRead, ir.RegIgnored}})
	if p.Watermark != nil && l.nullMode() == "fail" {
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtCountNullWMSource, Read: ir.ReadCount, Fail: l.nullFail()})
	}
	if len(l.rules) > 0 && l.mode == "fail" {
		pr.Steps = append(pr.Steps, variant(ir.Step{Stmt: ir.StmtCountInvalidSource, Read: ir.ReadCount, Fail: failInvalid}, ir.StmtCountInvalidUnique, "")...)
	}
	if p.Watermark != nil && l.nullMode() == "quarantine" {
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtQuarantineNullWMSrc, Tx: true, Read: ir.ReadAffected, Into: []string{ir.RegQuarantined, "-" + ir.RegIgnored}})
	}
	if len(l.rules) > 0 && l.mode == "quarantine" {
		pr.Steps = append(pr.Steps, variant(ir.Step{Stmt: ir.StmtQuarantineSource, Tx: true, Read: ir.ReadAffected, Into: []string{ir.RegQuarantined, "-" + ir.RegIgnored}}, ir.StmtQuarantineUnique, "")...)
	}
	pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtCountTarget, Tx: true, Read: ir.ReadCount, Into: []string{ir.RegDeleted}})
	pr.Steps = append(pr.Steps, variant(ir.Step{Stmt: ir.StmtReplaceTarget, Tx: true}, ir.StmtReplaceUnique, noteUnique)...)
	pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtCountTarget, Tx: true, Read: ir.ReadCount, Into: []string{ir.RegInserted, "-" + ir.RegIgnored}})
	pr.Steps = append(pr.Steps, l.finish()...)
	return pr
}

// stagedFullRefresh is the full refresh of a source outside the target:
// every source row in [start, hi) copied into the stage first, deduped and
// checked there, then the target made exactly the stage's rows, in one
// transaction, as refresh's replace does.
func (l *lowerer) stagedFullRefresh() *ir.Program {
	pr := l.program(ir.ModeFullRefresh, "full_refresh", ir.LoStart, ir.HiNow)
	pr.Doc = "A full refresh: the source staged, then the target made exactly the stage's rows, in one transaction."
	pr.Steps = append(pr.Steps, l.stageSteps("")...)
	all := ir.Step{Stmt: ir.StmtStageAll, Read: ir.ReadAffected, Into: []string{ir.RegRead}}
	if l.dedupe() != nil {
		all.Into = append(all.Into, ir.RegIgnored) // as a run's stage_window
	}
	pr.Steps = append(pr.Steps, all)
	before, inTx := l.nullStaged("")
	pr.Steps = append(pr.Steps, before...)
	if l.dedupe() != nil {
		pr.Steps = append(pr.Steps, ir.Step{Stmt: ir.StmtDedupeStage, Read: ir.ReadAffected, Into: []string{"-" + ir.RegIgnored}})
	}
	pr.Steps = append(pr.Steps, inTx...)
	pr.Steps = append(pr.Steps, l.quality("", false, failInvalid)...)
	pr.Steps = append(pr.Steps,
		ir.Step{Stmt: ir.StmtCountStaged, Tx: true, Read: ir.ReadCount, Into: []string{ir.RegInserted}},
		ir.Step{Stmt: ir.StmtCountTarget, Tx: true, Read: ir.ReadCount, Into: []string{ir.RegDeleted}},
		ir.Step{Stmt: ir.StmtReplaceTarget, Tx: true})
	pr.Steps = append(pr.Steps, l.finish()...)
	pr.Cleanup = l.cleanup()
	return pr
}
