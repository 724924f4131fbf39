package compiler

// A full refresh reads the source in its write transaction and makes the
// target exactly the rows it keeps: no stage, no second copy of the
// source, and (where the engine can) no rewrite of unchanged rows. The
// quarantine and the counts read the same rows the write keeps.

// RegUnique is 1 when the source enforces the unique key (source_unique):
// the full refresh then runs the statements without the dedupe.
const RegUnique = "unique"

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
func (l *lowerer) keep(dedupe bool) Keep {
	k := Keep{Columns: columnNames(l.p.Columns)}
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
func (l *lowerer) refreshRules(unique bool) []Rule {
	if !unique {
		return l.rules
	}
	var out []Rule
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
func validOf(rules []Rule) Expr {
	if len(rules) == 0 {
		return nil
	}
	return Unary{"NOT", Call{"coalesce", []Expr{anyOf(rules), Lit{"FALSE"}}}}
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
		l.add(StmtSourceUnique, PhaseStage, "Does the source enforce the unique key (a primary key or unique constraint on exactly its columns, all NOT NULL)? Then the dedupe changes nothing: the full refresh skips it, and a run merges its window straight from the source.",
			SourceUnique{Source: p.Source.Table, Key: p.Key})
	case l.checksUnique():
		l.add(StmtSourceUnique, PhaseStage, "Does the source enforce the unique key (a primary key or unique constraint on exactly its columns, all NOT NULL)? Then the dedupe changes nothing, and the full refresh skips it.",
			SourceUnique{Source: p.Source.Table, Key: p.Key})
	case l.directMerge():
		l.add(StmtSourceUnique, PhaseStage, "Does the source enforce the unique key (a primary key or unique constraint on exactly its columns, all NOT NULL)? Then a run merges its window straight from the source, without a stage.",
			SourceUnique{Source: p.Source.Table, Key: p.Key})
	}
	l.add(StmtCountSource, PhaseStage, "Full refresh: the source rows in [start, hi), with the rows whose watermark is NULL (rows read).",
		CountSource{Source: p.Source, Window: withNull(upTo)}, up...)
	if wm := p.Watermark; wm != nil && p.Strategy != OverwritePartitions {
		// (overwrite_partitions has them already, for its runs)
		l.nullWatermarkSource(wm.Name, cols)
	}
	variants := []struct {
		dedupe          bool
		count, quar, rp string
		doc             string
	}{{l.dedupe() != nil, StmtCountInvalidSource, StmtQuarantineSource, StmtReplaceTarget, ""}}
	if l.checksUnique() {
		variants = append(variants, struct {
			dedupe          bool
			count, quar, rp string
			doc             string
		}{false, StmtCountInvalidUnique, StmtQuarantineUnique, StmtReplaceUnique, " The source enforces the unique key: no dedupe."})
	}
	var key []string
	if p.Strategy == Merge && !l.nullableKey() {
		key = p.Key // the target's primary key
	}
	for i, v := range variants {
		k := l.keep(v.dedupe)
		rules := l.refreshRules(i > 0)
		if len(rules) > 0 {
			invalid := anyOf(rules)
			if l.mode == "quarantine" {
				l.add(v.quar, PhaseWrite, "Full refresh: the rows it keeps that break a quality rule go to quarantine, with the first rule they break."+v.doc,
					QuarantineRows{Into: p.Quarantine, From: p.Source, Window: upTo, Columns: cols, Rules: rules, Keep: &k}, append([]Param{pRunID}, up...)...)
			} else {
				l.add(v.count, PhaseStage, "Full refresh: the rows it keeps that break a quality rule (on_invalid: fail stops the run when there are any)."+v.doc,
					CountSource{Source: p.Source, Window: upTo, Where: invalid, Keep: &k}, up...)
			}
		}
		l.add(v.rp, PhaseWrite, "Full refresh: the target made exactly the valid rows of [start, hi), one per key, in the write transaction where the engine has one (what a concurrent reader sees, per engine: dialects/README.md)."+v.doc,
			ReplaceAll{Target: p.Target, Source: p.Source, Columns: cols, Window: upTo, Keep: k, Valid: validOf(rules), Key: key}, up...)
	}
	l.add(StmtCountTarget, PhaseWrite, "Full refresh: the target's rows, before (rows deleted) and after (rows inserted) its rewrite.",
		CountRows{Table: p.Target})
}

// fullRefresh is incrc run --full-refresh: the target rebuilt from every
// source row in [start, hi), in one transaction, without a stage.
func (l *lowerer) fullRefresh() *Program {
	p := l.p
	if !l.refreshes() {
		return l.stagedFullRefresh()
	}
	pr := l.program(ModeFullRefresh, "full_refresh", LoStart, HiNow)
	pr.Doc = "A full refresh: the target made exactly the source's valid rows, read in the write transaction."
	unique := l.checksUnique()
	// variant is a step of the plan's dedupe, and with the unique check
	// the same step without it: one runs, as the register says.
	variant := func(s Step, flat, note string) []Step {
		if !unique {
			return []Step{s}
		}
		a, b := s, s
		a.If, b.If = "!"+RegUnique, RegUnique
		b.Stmt, b.Note = flat, note
		if p.Statement(flat) == nil {
			return []Step{a} // the unique key leaves nothing to check
		}
		return []Step{a, b}
	}
	if unique {
		pr.Steps = append(pr.Steps, Step{Stmt: StmtSourceUnique, Read: ReadCount, Into: []string{RegUnique}})
	}
	// Every row read counts as ignored until a step says what became of
	// it (quarantined, written): what is left the dedupe dropped.
	pr.Steps = append(pr.Steps, Step{Stmt: StmtCountSource, Read: ReadCount, Into: []string{RegRead, RegIgnored}})
	if p.Watermark != nil && l.nullMode() == "fail" {
		pr.Steps = append(pr.Steps, Step{Stmt: StmtCountNullWMSource, Read: ReadCount, Fail: l.nullFail()})
	}
	if len(l.rules) > 0 && l.mode == "fail" {
		pr.Steps = append(pr.Steps, variant(Step{Stmt: StmtCountInvalidSource, Read: ReadCount, Fail: failInvalid}, StmtCountInvalidUnique, "")...)
	}
	if p.Watermark != nil && l.nullMode() == "quarantine" {
		pr.Steps = append(pr.Steps, Step{Stmt: StmtQuarantineNullWMSrc, Tx: true, Read: ReadAffected, Into: []string{RegQuarantined, "-" + RegIgnored}})
	}
	if len(l.rules) > 0 && l.mode == "quarantine" {
		pr.Steps = append(pr.Steps, variant(Step{Stmt: StmtQuarantineSource, Tx: true, Read: ReadAffected, Into: []string{RegQuarantined, "-" + RegIgnored}}, StmtQuarantineUnique, "")...)
	}
	pr.Steps = append(pr.Steps, Step{Stmt: StmtCountTarget, Tx: true, Read: ReadCount, Into: []string{RegDeleted}})
	pr.Steps = append(pr.Steps, variant(Step{Stmt: StmtReplaceTarget, Tx: true}, StmtReplaceUnique, noteUnique)...)
	pr.Steps = append(pr.Steps, Step{Stmt: StmtCountTarget, Tx: true, Read: ReadCount, Into: []string{RegInserted, "-" + RegIgnored}})
	pr.Steps = append(pr.Steps, l.finish()...)
	return pr
}

// stagedFullRefresh is the full refresh of a source outside the target:
// every source row in [start, hi) copied into the stage first, deduped and
// checked there, then the target made exactly the stage's rows, in one
// transaction, as refresh's replace does.
func (l *lowerer) stagedFullRefresh() *Program {
	pr := l.program(ModeFullRefresh, "full_refresh", LoStart, HiNow)
	pr.Doc = "A full refresh: the source staged, then the target made exactly the stage's rows, in one transaction."
	pr.Steps = append(pr.Steps, l.stageSteps("")...)
	all := Step{Stmt: StmtStageAll, Read: ReadAffected, Into: []string{RegRead}}
	if l.dedupe() != nil {
		all.Into = append(all.Into, RegIgnored) // as a run's stage_window
	}
	pr.Steps = append(pr.Steps, all)
	before, inTx := l.nullStaged("")
	pr.Steps = append(pr.Steps, before...)
	if l.dedupe() != nil {
		pr.Steps = append(pr.Steps, Step{Stmt: StmtDedupeStage, Read: ReadAffected, Into: []string{"-" + RegIgnored}})
	}
	pr.Steps = append(pr.Steps, inTx...)
	pr.Steps = append(pr.Steps, l.quality("", false, failInvalid)...)
	pr.Steps = append(pr.Steps,
		Step{Stmt: StmtCountStaged, Tx: true, Read: ReadCount, Into: []string{RegInserted}},
		Step{Stmt: StmtCountTarget, Tx: true, Read: ReadCount, Into: []string{RegDeleted}},
		Step{Stmt: StmtReplaceTarget, Tx: true})
	pr.Steps = append(pr.Steps, l.finish()...)
	pr.Cleanup = l.cleanup()
	return pr
}
