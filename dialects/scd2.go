package dialects

import (
	"strings"
	"time"

	"github.com/incrc/incrc/compiler"
)

// TimeSpeller is implemented by dialects that spell time values their own
// way. The defaults (CastTime, TimeText, CastTime again to convert) suit
// the engines with typed literals and CAST.
type TimeSpeller interface {
	// TimeValue spells expr (a parameter marker, a string literal, NULL)
	// as a value of type t, where nothing else says its type (a SELECT
	// list, a CASE): PostgreSQL types a bare marker there as text.
	TimeValue(w *Writer, expr string, t compiler.Type) string
	// TimeText is the text of a string literal holding tm as a value of
	// type t, in the form TimeValue reads.
	TimeText(tm time.Time, t compiler.Type) string
	// ConvertTime converts expr from a date to a timestamp or back.
	ConvertTime(w *Writer, expr string, from, to compiler.Type) string
}

// CastTime is CAST(expr AS the engine's type).
func CastTime(w *Writer, expr string, t compiler.Type) string {
	return "CAST(" + expr + " AS " + w.Type(t) + ")"
}

// TimeText is a time's literal text: a date, a timestamp without a zone,
// or one in UTC with its offset, so a timestamptz literal means the same
// instant in every session time zone.
func TimeText(tm time.Time, t compiler.Type) string {
	tm = tm.UTC()
	switch t.Kind {
	case compiler.Date:
		return tm.Format("2006-01-02")
	case compiler.TimestampTZ:
		return tm.Format("2006-01-02 15:04:05.999999") + "+00:00"
	}
	return tm.Format("2006-01-02 15:04:05.999999")
}

// TimeValue spells expr as a value of type t.
func (w *Writer) TimeValue(expr string, t compiler.Type) string {
	if s, ok := w.d.(TimeSpeller); ok {
		return s.TimeValue(w, expr, t)
	}
	return CastTime(w, expr, t)
}

// TimeLit spells a time the compiler validated (canonical, as
// compiler.ParseWatermark returns it) as a literal of type t. Its text is
// formatted here from the parsed time, never copied from a spec, and goes
// through String, so the lex-back knows it.
func (w *Writer) TimeLit(canonical string, t compiler.Type) string {
	tm, err := compiler.ParseTime(canonical)
	if err != nil {
		w.Fail(err)
		return "NULL"
	}
	text := TimeText(tm, t)
	if s, ok := w.d.(TimeSpeller); ok {
		text = s.TimeText(tm, t)
	}
	return w.TimeValue(w.String(text), t)
}

// ConvertTime converts expr of type from to type to (a date and a naive
// timestamp); the same type is left alone.
func (w *Writer) ConvertTime(expr string, from, to compiler.Type) string {
	if from.Kind == to.Kind {
		return expr
	}
	if s, ok := w.d.(TimeSpeller); ok {
		return s.ConvertTime(w, expr, from, to)
	}
	return CastTime(w, expr, to)
}

// openValue is the valid_to of a current version: NULL, or the open end.
func openValue(w *Writer, v compiler.Versioning) string {
	if v.OpenEnd == "" {
		return w.TimeValue("NULL", v.Type)
	}
	return w.TimeLit(v.OpenEnd, v.Type)
}

// isOpen is true for a current version (valid_to NULL or the open end);
// isClosed for one that ended.
func isOpen(w *Writer, alias string, v compiler.Versioning) string {
	if v.OpenEnd == "" {
		return w.Col(alias, v.ValidTo) + " IS NULL"
	}
	return w.Col(alias, v.ValidTo) + " = " + w.TimeLit(v.OpenEnd, v.Type)
}

func isClosed(w *Writer, alias string, v compiler.Versioning) string {
	if v.OpenEnd == "" {
		return w.Col(alias, v.ValidTo) + " IS NOT NULL"
	}
	return w.Col(alias, v.ValidTo) + " < " + w.TimeLit(v.OpenEnd, v.Type)
}

// live adds "the version does not record a deletion" where there are such.
func live(w *Writer, alias string, v compiler.Versioning) string {
	if v.Deleted == "" {
		return ""
	}
	return " AND " + w.Col(alias, v.Deleted) + " = FALSE"
}

// keyEq spells a.k = b.k AND ... for the versions' key.
func keyEq(w *Writer, a, b string, key []string) string {
	terms := make([]string, len(key))
	for i, k := range key {
		terms[i] = w.Col(a, k) + " = " + w.Col(b, k)
	}
	return strings.Join(terms, " AND ")
}

// same spells a.c ≡ b.c AND ... for cols, NULL equal to NULL; empty cols
// are the same.
func same(w *Writer, a, b string, cols []string) string {
	if len(cols) == 0 {
		return "1 = 1"
	}
	terms := make([]string, len(cols))
	for i, c := range cols {
		terms[i] = w.d.NullSafeEqual(w.Col(a, c), w.Col(b, c))
	}
	return strings.Join(terms, "\n    AND ")
}

// insertVersions begins an INSERT of whole versions and the extra column
// (kind or op) into a session table.
func insertVersions(w *Writer, into compiler.Table, v compiler.Versioning, extra string) {
	w.S("INSERT INTO ", w.Table(into), " (", w.Idents("", append(v.Stored(), extra)), ")\n")
}

// deletedValue is ", value" for the flag, when there is one.
func deletedValue(v compiler.Versioning, value string) string {
	if v.Deleted == "" {
		return ""
	}
	return ", " + value
}

func deletedCol(w *Writer, alias string, v compiler.Versioning) string {
	if v.Deleted == "" {
		return ""
	}
	return ", " + w.Col(alias, v.Deleted)
}

// fromAs spells a relation in a FROM clause under alias.
func fromAs(w *Writer, r compiler.Relation, alias string) string {
	from := From(w, r)
	if r.Derived() {
		return strings.TrimSuffix(from, " AS src") + " AS " + alias
	}
	return from + " AS " + alias
}

// renderVersions spells the SCD2 operations; false for any other.
func renderVersions(w *Writer, op compiler.Op) bool {
	switch op := op.(type) {
	case compiler.VersionCandidates:
		versionCandidates(w, op)
	case compiler.VersionHistory:
		v := op.Versioning
		insertVersions(w, op.Into, v, compiler.KindColumn)
		w.S("SELECT ", w.Idents("t", v.Stored()), ", 0\nFROM ", w.Table(v.Target), " AS t\nWHERE EXISTS (\n  SELECT 1 FROM ", w.Table(op.Stage),
			" AS s\n  WHERE ", keyEq(w, "s", "t", v.Key), "\n)")
	case compiler.ReopenVersions:
		reopenVersions(w, op)
	case compiler.TimelineChanges:
		timelineChanges(w, op)
	case compiler.ColumnChanges:
		columnChanges(w, op)
	case compiler.VanishedVersions:
		vanishedVersions(w, op)
	case compiler.ApplyVersions:
		applyVersions(w, op)
	case compiler.ResolveVersions:
		resolveVersions(w, op)
	case compiler.TombstoneHistory:
		v := op.Versioning
		cols := append(append([]string(nil), v.Key...), compiler.SequenceColumn, v.ValidFrom)
		w.S("INSERT INTO ", w.Table(op.Into), " (", w.Idents("", append(cols, compiler.KindColumn)), ")\nSELECT ", w.Idents("b", cols), ", ", compiler.KindHeldDelete,
			"\nFROM ", w.Table(op.Tombstones), " AS b\nWHERE EXISTS (\n  SELECT 1 FROM ", w.Table(op.Stage), " AS s\n  WHERE ", keyEq(w, "s", "b", v.Key), "\n)")
	case compiler.EventChanges:
		eventChanges(w, op)
	default:
		return false
	}
	return true
}

// resolveVersions stages the new events of a change log: per key and
// time, the change with the greatest sequence, ranked in a subquery that
// reads the changes once (MySQL cannot open a temporary table twice in one
// statement), kept when the target's version and the tombstone at that key
// and time hold a smaller sequence or none.
func resolveVersions(w *Writer, op compiler.ResolveVersions) {
	v := op.Versioning
	var sel []string
	for _, c := range v.Columns {
		if c == compiler.SequenceColumn {
			sel = append(sel, w.Col("r", op.Sequence))
		} else {
			sel = append(sel, w.Col("r", c))
		}
	}
	seq := w.Col("r", op.Sequence)
	at := func(alias string) string {
		return keyEq(w, alias, "r", v.Key) + " AND " + w.Col(alias, v.ValidFrom) + " = " + w.Col("r", op.Time)
	}
	newer := func(alias string) string {
		held := w.Col(alias, compiler.SequenceColumn)
		return "(" + held + " IS NULL OR " + seq + " > " + held + ")"
	}
	insertVersions(w, op.Into, v, compiler.KindColumn)
	w.S("SELECT ", strings.Join(sel, ", "), ", ", w.Col("r", op.Time), ", ", openNull(w, v),
		",\n  CASE WHEN (", Expr(w, "r", op.IsDelete), ") THEN ", compiler.KindNewDelete, " ELSE ", compiler.KindNewVersion, " END\n")
	w.S("FROM (\n  SELECT ", w.Idents("", op.Columns), ",\n    ROW_NUMBER() OVER (PARTITION BY ", w.Idents("", append(append([]string(nil), v.Key...), op.Time)),
		" ORDER BY ", dedupeOrder(w, op.Order, nil), ") AS incrc_rn\n  FROM ", w.Table(op.From), "\n) AS r\n")
	w.S("LEFT JOIN ", w.Table(v.Target), " AS t ON ", at("t"), "\nLEFT JOIN ", w.Table(op.Tombstones), " AS b ON ", at("b"), "\n")
	w.S("WHERE r.incrc_rn = 1\n  AND ", newer("t"), "\n  AND ", newer("b"))
}

// eventChanges lays each key's events out in order of time, a held event
// before the new one that replaces it, and reads for each the event before
// and after it. Every event keeps its time, so only three kinds of rows
// change: a new version (ending at the next event; a rewrite when it
// replaces a version held at its time), a new delete at the time of a held
// version (which goes), and a held version whose next event is a new one
// at a later time (ending there).
func eventChanges(w *Writer, op compiler.EventChanges) {
	v := op.Versioning
	vf := w.Col("x", v.ValidFrom)
	kind := w.Col("x", compiler.KindColumn)
	replaces := "x.incrc_prev_kind = " + compiler.KindHeldVersion + " AND x.incrc_prev = " + vf
	insertVersions(w, op.Into, v, compiler.OpColumn)
	w.S("SELECT ", w.Idents("x", v.Columns), ", ", vf, ",\n  CASE WHEN ", kind, " = ", compiler.KindHeldVersion, " THEN x.incrc_next")
	if v.OpenEnd == "" {
		w.S(" ELSE x.incrc_next END,\n")
	} else {
		w.S(" ELSE COALESCE(x.incrc_next, ", w.TimeLit(v.OpenEnd, v.Type), ") END,\n")
	}
	w.S("  CASE\n    WHEN ", kind, " = ", compiler.KindNewDelete, " THEN ", compiler.OpRemove, "\n")
	w.S("    WHEN ", kind, " = ", compiler.KindHeldVersion, " OR (", replaces, ") THEN ", compiler.OpRewrite, "\n")
	w.S("    ELSE ", compiler.OpAdd, "\n  END\nFROM (\n")
	over := "OVER (PARTITION BY " + w.Idents("t", v.Key) + " ORDER BY " + w.Col("t", v.ValidFrom) + ", " + w.Col("t", compiler.KindColumn) + ")"
	w.S("  SELECT ", w.Idents("t", append(v.Stored(), compiler.KindColumn)), ",\n")
	w.S("    LAG(", w.Col("t", v.ValidFrom), ") ", over, " AS incrc_prev,\n")
	w.S("    LAG(", w.Col("t", compiler.KindColumn), ") ", over, " AS incrc_prev_kind,\n")
	w.S("    LEAD(", w.Col("t", v.ValidFrom), ") ", over, " AS incrc_next,\n")
	w.S("    LEAD(", w.Col("t", compiler.KindColumn), ") ", over, " AS incrc_next_kind\n")
	w.S("  FROM ", w.Table(op.From), " AS t\n) AS x\n")
	w.S("WHERE ", kind, " = ", compiler.KindNewVersion, "\n")
	w.S("   OR (", kind, " = ", compiler.KindNewDelete, " AND ", replaces, ")\n")
	w.S("   OR (", kind, " = ", compiler.KindHeldVersion, " AND x.incrc_next_kind >= ", compiler.KindNewVersion, " AND x.incrc_next > ", vf, ")")
}

// versionCandidates: the staged rows that are not already a version of
// the target with the same values.
func versionCandidates(w *Writer, op compiler.VersionCandidates) {
	v := op.Versioning
	insertVersions(w, op.Into, v, compiler.KindColumn)
	w.S("SELECT ", w.Idents("s", v.Columns), ", ", w.Col("s", op.Time), ", ", openNull(w, v), deletedValue(v, "FALSE"), ", 1\nFROM ", w.Table(op.Stage), " AS s\n")
	w.S("WHERE NOT EXISTS (\n  SELECT 1 FROM ", w.Table(v.Target), " AS t\n  WHERE ", keyEq(w, "t", "s", v.Key), " AND ", w.Col("t", v.ValidFrom), " = ", w.Col("s", op.Time))
	if len(op.Compare) > 0 {
		w.S("\n    AND ", same(w, "t", "s", op.Compare))
	}
	w.S(live(w, "t", v), "\n)")
}

// openNull is a typed NULL for a candidate's valid_to: the timeline
// computes the real one.
func openNull(w *Writer, v compiler.Versioning) string { return w.TimeValue("NULL", v.Type) }

// reopenVersions: a staged key without a current version, whose newest
// row is older than the end of one of its closed versions, gets a
// candidate at hi.
func reopenVersions(w *Writer, op compiler.ReopenVersions) {
	v := op.Versioning
	insertVersions(w, op.Into, v, compiler.KindColumn)
	w.S("SELECT ", w.Idents("r", v.Columns), ", ", w.TimeValue(w.Param(op.Hi), v.Type), ", ", openNull(w, v), deletedValue(v, "FALSE"), ", 1\n")
	w.S("FROM (\n  SELECT ", w.Idents("", v.Columns), ",\n    ROW_NUMBER() OVER (PARTITION BY ", w.Idents("", v.Key), " ORDER BY ", w.Col("", op.Time),
		" DESC) AS incrc_rn\n  FROM ", w.Table(op.Stage), "\n) AS r\nWHERE incrc_rn = 1\n")
	w.S("  AND NOT EXISTS (\n    SELECT 1 FROM ", w.Table(v.Target), " AS t\n    WHERE ", keyEq(w, "t", "r", v.Key), " AND ", isOpen(w, "t", v), live(w, "t", v), "\n  )\n")
	w.S("  AND EXISTS (\n    SELECT 1 FROM ", w.Table(v.Target), " AS t\n    WHERE ", keyEq(w, "t", "r", v.Key), " AND ", isClosed(w, "t", v),
		" AND ", w.Col("t", v.ValidTo), " > ", w.Col("r", op.Time), "\n  )")
}

// timelineChanges lays each key's versions and candidates out in order of
// start (a version before a candidate of the same start) and reads, for
// each row, the start before and after it and the latest end of the
// versions before it. A candidate ends at the next start, or earlier where
// the version it falls in ended; a version that a candidate starts inside
// ends at that candidate.
func timelineChanges(w *Writer, op compiler.TimelineChanges) {
	v := op.Versioning
	vf, vt := w.Col("x", v.ValidFrom), w.Col("x", v.ValidTo)
	kind := w.Col("x", compiler.KindColumn)
	insertVersions(w, op.Into, v, compiler.OpColumn)
	w.S("SELECT ", w.Idents("x", v.Columns), ", ", vf, ",\n  CASE\n")
	w.S("    WHEN ", kind, " = 0 THEN x.incrc_next\n")
	w.S("    WHEN x.incrc_end > ", vf, " AND (x.incrc_next IS NULL OR x.incrc_end < x.incrc_next) THEN x.incrc_end\n")
	if v.OpenEnd == "" {
		w.S("    ELSE x.incrc_next\n")
	} else {
		w.S("    ELSE COALESCE(x.incrc_next, ", w.TimeLit(v.OpenEnd, v.Type), ")\n")
	}
	w.S("  END", deletedCol(w, "x", v), ",\n  CASE WHEN ", kind, " = 0 OR x.incrc_prev = ", vf, " THEN ", compiler.OpRewrite, " ELSE ", compiler.OpAdd, " END\nFROM (\n")
	over := "OVER (PARTITION BY " + w.Idents("t", v.Key) + " ORDER BY " + w.Col("t", v.ValidFrom) + ", " + w.Col("t", compiler.KindColumn)
	w.S("  SELECT ", w.Idents("t", append(v.Stored(), compiler.KindColumn)), ",\n")
	w.S("    LAG(", w.Col("t", v.ValidFrom), ") ", over, ") AS incrc_prev,\n")
	w.S("    LEAD(", w.Col("t", v.ValidFrom), ") ", over, ") AS incrc_next,\n")
	w.S("    LEAD(", w.Col("t", compiler.KindColumn), ") ", over, ") AS incrc_next_kind,\n")
	w.S("    MAX(CASE WHEN ", w.Col("t", compiler.KindColumn), " = 0 THEN ", w.Col("t", v.ValidTo), " END) ", over, " ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS incrc_end\n")
	w.S("  FROM ", w.Table(op.From), " AS t\n) AS x\n")
	w.S("WHERE ", kind, " = 1\n   OR (x.incrc_next_kind = 1 AND x.incrc_next > ", vf, " AND (", vt, " IS NULL OR x.incrc_next < ", vt, "))")
}

// columnChanges compares each staged row with its key's current version.
func columnChanges(w *Writer, op compiler.ColumnChanges) {
	v := op.Versioning
	k0 := v.Key[0]
	insertVersions(w, op.Into, v, compiler.OpColumn)
	switch op.Part {
	case "open":
		w.S("SELECT ", w.Idents("s", v.Columns), ", ", w.TimeValue(w.Param(op.Hi), v.Type), ", ", openValue(w, v), deletedValue(v, "FALSE"),
			",\n  CASE WHEN ", w.Col("e", k0), " IS NULL THEN ", compiler.OpAdd, " ELSE ", compiler.OpRewrite, " END\n")
		w.S("FROM ", w.Table(op.Stage), " AS s\nLEFT JOIN ", w.Table(v.Target), " AS o ON ", keyEq(w, "o", "s", v.Key), " AND ", isOpen(w, "o", v), live(w, "o", v), "\n")
		w.S("LEFT JOIN ", w.Table(v.Target), " AS e ON ", keyEq(w, "e", "s", v.Key), " AND ", w.Col("e", v.ValidFrom), " = ", w.Param(op.Hi), "\n")
		w.S("WHERE ", w.Col("o", k0), " IS NULL\n   OR NOT (", same(w, "s", "o", op.Tracked), ")")
	case "close":
		w.S("SELECT ", w.Idents("o", v.Columns), ", ", w.Col("o", v.ValidFrom), ", ", w.TimeValue(w.Param(op.Hi), v.Type), deletedCol(w, "o", v), ", ", compiler.OpRewrite, "\n")
		w.S("FROM ", w.Table(v.Target), " AS o\nJOIN ", w.Table(op.Stage), " AS s ON ", keyEq(w, "s", "o", v.Key), "\n")
		// Not the version that opened at hi (the new one rewrites it); one
		// that opened after hi gets an end before its start, and the run
		// fails on it (check_versions).
		w.S("WHERE ", isOpen(w, "o", v), " AND ", w.Col("o", v.ValidFrom), " <> ", w.Param(op.Hi), "\n  AND (")
		if v.Deleted != "" {
			w.S(w.Col("o", v.Deleted), " = TRUE OR ")
		}
		w.S("NOT (", same(w, "s", "o", op.Tracked), "))")
	case "update":
		w.S("SELECT ", w.Idents("s", v.Columns), ", ", w.Col("o", v.ValidFrom), ", ", w.Col("o", v.ValidTo), deletedCol(w, "o", v), ", ", compiler.OpRewrite, "\n")
		w.S("FROM ", w.Table(v.Target), " AS o\nJOIN ", w.Table(op.Stage), " AS s ON ", keyEq(w, "s", "o", v.Key), "\n")
		w.S("WHERE ", isOpen(w, "o", v), live(w, "o", v), "\n  AND ", same(w, "s", "o", op.Tracked), "\n  AND NOT (", same(w, "s", "o", op.Other), ")")
	default:
		w.Fail(Unsupported(w.d, "column changes part "+op.Part))
	}
}

// vanishedVersions finds the current versions whose key the source no
// longer carries.
func vanishedVersions(w *Writer, op compiler.VanishedVersions) {
	v := op.Versioning
	insertVersions(w, op.Into, v, compiler.OpColumn)
	if op.Mark {
		w.S("SELECT ", w.Idents("o", v.Columns), ", ", w.TimeValue(w.Param(op.Hi), v.Type), ", ", openValue(w, v), ", TRUE,\n  CASE WHEN ",
			w.Col("o", v.ValidFrom), " = ", w.Param(op.Hi), " THEN ", compiler.OpRewrite, " ELSE ", compiler.OpAdd, " END\n")
	} else {
		w.S("SELECT ", w.Idents("o", v.Columns), ", ", w.Col("o", v.ValidFrom), ", ", w.TimeValue(w.Param(op.Hi), v.Type), deletedCol(w, "o", v))
		if v.Deleted != "" {
			w.S(", ", compiler.OpRewrite, "\n")
		} else {
			w.S(",\n  CASE WHEN ", w.Col("o", v.ValidFrom), " = ", w.Param(op.Hi), " THEN ", compiler.OpRemove, " ELSE ", compiler.OpRewrite, " END\n")
		}
	}
	w.S("FROM ", w.Table(v.Target), " AS o\nWHERE ", isOpen(w, "o", v), live(w, "o", v))
	if !op.Mark && v.Deleted != "" {
		// new_record: a version that started at hi is rewritten by the
		// version that records the deletion, not closed.
		w.S(" AND ", w.Col("o", v.ValidFrom), " <> ", w.Param(op.Hi))
	}
	w.S("\n  AND NOT EXISTS (\n    SELECT 1 FROM ", strings.ReplaceAll(fromAs(w, op.Source, "src"), "\n", "\n    "), "\n    WHERE ", keyEq(w, "src", "o", v.Key), "\n  )")
}

// applyVersions deletes the target's versions the changes name by key and
// start, then inserts the changes that are not removals: two statements,
// in the run's write transaction.
func applyVersions(w *Writer, op compiler.ApplyVersions) {
	v := op.Versioning
	key := append(append([]string(nil), v.Key...), v.ValidFrom)
	// The target is named by its own name in the subquery: not every
	// engine's DELETE takes an alias (Trino, Redshift, MariaDB).
	var target string
	if _, ok := w.d.(TableNamer); ok {
		target = w.Table(v.Target)
	} else {
		target = w.Col("", v.Target.Name())
	}
	w.S("DELETE FROM ", w.Table(v.Target), "\nWHERE EXISTS (\n  SELECT 1 FROM ", w.Table(op.Changes), " AS s\n  WHERE ", keyMatch(w, target, key, false), "\n)")
	w.End()
	w.S("INSERT INTO ", w.Table(v.Target), " (", w.Idents("", v.Stored()), ")\nSELECT ", w.Idents("", v.Stored()), "\nFROM ", w.Table(op.Changes),
		"\nWHERE ", w.Col("", compiler.OpColumn), " <> ", compiler.OpRemove)
}

// MergeVersions applies the changes in one MERGE, for engines where each
// statement commits on its own: a failure leaves the target as it was, and
// the next run computes the same changes again. The changes hold one row
// per key and start, so no target row matches two.
func MergeVersions(w *Writer, op compiler.ApplyVersions) {
	v := op.Versioning
	key := append(append([]string(nil), v.Key...), v.ValidFrom)
	op3 := w.Col("s", compiler.OpColumn) + " = " + compiler.OpRemove
	w.S("MERGE INTO ", w.Table(v.Target), " AS t\nUSING ", w.Table(op.Changes), " AS s\nON ", KeyMatch(w, key, false),
		"\nWHEN MATCHED AND ", op3, " THEN DELETE",
		"\nWHEN MATCHED THEN UPDATE SET\n  ", SetList(w, "", NonKey(v.Stored(), key), FromStage(w), ",\n  "),
		"\nWHEN NOT MATCHED AND ", w.Col("s", compiler.OpColumn), " <> ", compiler.OpRemove, " THEN INSERT (", w.Idents("", v.Stored()), ")\n  VALUES (", w.Idents("s", v.Stored()), ")")
}
