package compiler

import (
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// merging is strategy merge: the staged rows upserted by unique key, a
// newer version never replaced by an older one.
type merging struct {
	staging
	incremental
}

func (merging) validate(v *validator) {
	v.needsKey()
	v.needsWatermark()
}

func (merging) write(l *lowerer) {
	p := l.p
	cols := columnNames(p.Columns)
	v := l.version()
	doc, tally := "", "Returns the rows it read, inserted and updated."
	if v != "" {
		doc = " A matched row is updated only where the incoming " + v + " is newer or equal: an older version never replaces a newer one."
		tally = "Returns the rows it read, inserted, updated and ignored (older than the target's)."
		l.add(ir.StmtIgnoreOlder, ir.PhaseWrite, "Staged rows older than the target's version of their key ("+v+") are ignored: a late or re-delivered older version never replaces a newer one.",
			ir.RetractKeys{Target: p.Stage, Stage: p.Target, Key: p.Key, NullSafe: l.nullableKey(), Older: v})
	}
	if len(p.InsertOnly) > 0 {
		doc += " " + strings.Join(p.InsertOnly, ", ") + ": written when a key is inserted, never updated (merge." + l.mergeList() + ")."
	}
	l.add(ir.StmtWrite, ir.PhaseWrite, "Upsert the staged rows by unique key: a retry of the same window writes the same rows."+doc+" Returns the rows it updated (the rest it inserted).",
		ir.MergeRows{Target: p.Target, Stage: p.Stage, Key: p.Key, Columns: cols, NullSafe: l.nullableKey(), Count: true, Version: v, Keep: p.InsertOnly})
	if l.directMerge() {
		window, _ := l.windows()
		src := p.Source
		l.add(ir.StmtWriteWindow, ir.PhaseWrite, "Direct merge: upsert the source's rows in [lo, hi) by unique key, read in the write itself (the source enforces the key: no stage, no dedupe)."+doc+" "+tally,
			ir.MergeRows{Target: p.Target, Source: &src, Window: window, Key: p.Key, Columns: cols, Tally: true, Version: v, Keep: p.InsertOnly}, windowParams(window)...)
	}
	l.endWrite()
}

// upserts: the write is merge's upsert by key, which counts the rows it
// updates (the rest it inserted), and whose run retracts a key whose
// newest staged version is invalid, as a full refresh would drop it.
func (l *lowerer) upserts() bool { return l.p.Strategy == ir.Merge }

// primaryKey is the target's primary key: a merge's unique key, when no
// column of it is nullable (a primary key column cannot hold a NULL).
// Other strategies' targets have none here: cdc and scd2 declare theirs
// with their target.
func (l *lowerer) primaryKey() []string {
	if l.p.Strategy == ir.Merge && !l.nullableKey() {
		return l.p.Key
	}
	return nil
}

// version is the column that orders a merge's versions of a key, which
// its write compares with the target's: dedupe_by, or the watermark column.
// None without one, or when it is a key column, or nothing but the key is
// written.
func (l *lowerer) version() string {
	p := l.p
	if p.Strategy != ir.Merge || p.CDC != nil || len(p.Key) == 0 {
		return ""
	}
	v := l.spec.DedupeBy.Value
	if v == "" && p.Watermark != nil {
		v = p.Watermark.Name
	}
	if v == "" || contains(p.Key, v) {
		return ""
	}
	return v
}

// mergeList names the merge block's list, for a statement's comment.
func (l *lowerer) mergeList() string {
	if m := l.spec.MergeOpts; m != nil && len(m.UpdateColumns) > 0 {
		return "update_columns"
	}
	return "exclude_columns"
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
	return l.refreshes() && p.Strategy == ir.Merge && p.Watermark != nil && len(p.Key) > 0 && !l.nullableKey() &&
		src.Query == "" && len(src.Lookups) == 0 && src.Files == nil && len(l.refreshRules(true)) == 0
}
