package dialects

import (
	"fmt"
	"time"

	"github.com/incrc/incrc/compiler/ir"
)

// TimeSpeller is implemented by dialects that spell time values their own
// way. The defaults (CastTime, TimeText, CastTime again to convert) suit
// the engines with typed literals and CAST.
type TimeSpeller interface {
	// TimeValue writes expr (a parameter marker, a string literal, NULL)
	// as a value of type t, where nothing else says its type (a SELECT
	// list, a CASE): PostgreSQL types a bare marker there as text.
	TimeValue(w *Writer, expr func(), t ir.Type)
	// TimeText is the text of a string literal holding tm as a value of
	// type t, in the form TimeValue reads.
	TimeText(tm time.Time, t ir.Type) string
	// ConvertTime writes expr converted from a date to a timestamp or
	// back.
	ConvertTime(w *Writer, expr func(), from, to ir.Type)
}

// CastTime writes CAST(expr AS the engine's type).
func CastTime(w *Writer, expr func(), t ir.Type) {
	w.S("CAST(")
	expr()
	w.S(" AS ")
	w.Type(t)
	w.S(")")
}

// Cast writes CAST(expr AS typ), typ spelled by the dialect.
func Cast(w *Writer, expr func(), typ string) {
	w.S("CAST(")
	expr()
	w.S(" AS ", typ, ")")
}

// TimeText is a time's literal text: a date, a timestamp without a zone,
// or one in UTC with its offset, so a timestamptz literal means the same
// instant in every session time zone.
func TimeText(tm time.Time, t ir.Type) string {
	tm = tm.UTC()
	switch t.Kind {
	case ir.Date:
		return tm.Format("2006-01-02")
	case ir.TimestampTZ:
		return tm.Format("2006-01-02 15:04:05.999999") + "+00:00"
	}
	return tm.Format("2006-01-02 15:04:05.999999")
}

// TimeValue writes expr as a value of type t.
func (w *Writer) TimeValue(expr func(), t ir.Type) {
	if s, ok := w.d.(TimeSpeller); ok {
		s.TimeValue(w, expr, t)
		return
	}
	CastTime(w, expr, t)
}

// TimeLit writes a time the compiler validated (canonical, as
// compiler.ParseWatermark returns it) as a literal of type t. Its text is
// formatted here from the parsed time, never copied from a spec, and goes
// through String, so the lex-back knows it.
func (w *Writer) TimeLit(canonical string, t ir.Type) {
	tm, err := ir.ParseTime(canonical)
	if err != nil {
		w.Fail(err)
		w.S("NULL")
		return
	}
	text := TimeText(tm, t)
	if s, ok := w.d.(TimeSpeller); ok {
		text = s.TimeText(tm, t)
	}
	w.TimeValue(func() { w.String(text) }, t)
}

// ConvertTime writes expr of type from converted to type to (a date and a
// naive timestamp); the same type is left alone.
func (w *Writer) ConvertTime(expr func(), from, to ir.Type) {
	if from.Kind == to.Kind {
		expr()
		return
	}
	if s, ok := w.d.(TimeSpeller); ok {
		s.ConvertTime(w, expr, from, to)
		return
	}
	CastTime(w, expr, to)
}

// timeNull writes NULL as a value of type t.
func (w *Writer) timeNull(t ir.Type) { w.TimeValue(func() { w.S("NULL") }, t) }

// timeParam writes the parameter name as a value of type t.
func (w *Writer) timeParam(name string, t ir.Type) { w.TimeValue(func() { w.Param(name) }, t) }

// openValue is the valid_to of a current version: NULL, or the open end.
func openValue(w *Writer, v ir.Versioning) {
	if v.OpenEnd == "" {
		w.timeNull(v.Type)
		return
	}
	w.TimeLit(v.OpenEnd, v.Type)
}

// isOpen is true for a current version (valid_to NULL or the open end);
// isClosed for one that ended.
func isOpen(w *Writer, alias string, v ir.Versioning) {
	w.Col(alias, v.ValidTo)
	if v.OpenEnd == "" {
		w.S(" IS NULL")
		return
	}
	w.S(" = ")
	w.TimeLit(v.OpenEnd, v.Type)
}

func isClosed(w *Writer, alias string, v ir.Versioning) {
	w.Col(alias, v.ValidTo)
	if v.OpenEnd == "" {
		w.S(" IS NOT NULL")
		return
	}
	w.S(" < ")
	w.TimeLit(v.OpenEnd, v.Type)
}

// live adds "the version does not record a deletion" where there are such.
func live(w *Writer, alias string, v ir.Versioning) {
	if v.Deleted == "" {
		return
	}
	w.S(" AND ")
	w.Col(alias, v.Deleted)
	w.S(" = FALSE")
}

// ownStart writes a stored version's own start: its ValidFrom, or with
// scd2.open_start by time the OwnStart column where ValidFrom is the open
// start (the key's earliest version, stored there).
func ownStart(w *Writer, alias string, v ir.Versioning) {
	if v.FirstStart == "" || v.OwnStart == "" {
		w.Col(alias, v.ValidFrom)
		return
	}
	w.S("CASE WHEN ")
	w.Col(alias, v.ValidFrom)
	w.S(" = ")
	w.TimeLit(v.FirstStart, v.Type)
	w.S(" THEN ")
	w.Col(alias, v.OwnStart)
	w.S(" ELSE ")
	w.Col(alias, v.ValidFrom)
	w.S(" END")
}

// keyEq spells a.k = b.k AND ... for the versions' key.
func keyEq(w *Writer, a, b string, key []string) {
	for i, k := range key {
		if i > 0 {
			w.S(" AND ")
		}
		w.Col(a, k)
		w.S(" = ")
		w.Col(b, k)
	}
}

// same spells a.c ≡ b.c AND ... for cols, NULL equal to NULL; empty cols
// are the same. indent starts each AND line after the first, so that they
// line up with the condition the caller opened.
func same(w *Writer, indent, a, b string, cols []string) {
	if len(cols) == 0 {
		w.S("1 = 1")
		return
	}
	for i, c := range cols {
		if i > 0 {
			w.S("\n", indent, "AND ")
		}
		w.d.NullSafeEqual(w, func() { w.Col(a, c) }, func() { w.Col(b, c) })
	}
}

// insertVersions begins an INSERT of whole versions and the extra column
// (kind or op) into a session table.
func insertVersions(w *Writer, into ir.Table, v ir.Versioning, extra string) {
	w.S("INSERT INTO ")
	w.Table(into)
	w.S(" (")
	w.Idents("", append(v.Stored(), extra))
	w.S(")\n")
}

// deletedValue is ", value" for the flag, when there is one.
func deletedValue(w *Writer, v ir.Versioning, value string) {
	if v.Deleted != "" {
		w.S(", ", value)
	}
}

func deletedCol(w *Writer, alias string, v ir.Versioning) {
	if v.Deleted != "" {
		w.S(", ")
		w.Col(alias, v.Deleted)
	}
}

// versionHistory puts onto the timeline the target's versions of the
// staged keys from the last one that starts at or before the key's
// earliest staged time on: a version whose next one starts at or before
// that time ends before every staged row, and no change reads it. LEAD
// finds each version's next start in one read of the target, and the
// staged keys come from one read of the stage, grouped (MySQL cannot open
// a temporary table twice in one statement). With scd2.open_start the
// key's earliest version comes too: the timeline tells from it which
// version is stored at the open start.
func versionHistory(w *Writer, op ir.VersionHistory) {
	v := op.Versioning
	first := v.FirstStart != "" && v.OwnStart != ""
	over := func() {
		w.S(" OVER (PARTITION BY ")
		w.Idents("t", v.Key)
		w.S(" ORDER BY ")
		w.Col("t", v.ValidFrom)
		w.S(")")
	}
	insertVersions(w, op.Into, v, ir.KindColumn)
	w.S("SELECT ")
	w.Idents("h", v.Stored())
	w.S(", 0\nFROM (\n  SELECT ")
	if first {
		// On the timeline every version is at its own start.
		w.Idents("t", v.Columns)
		w.S(", ")
		ownStart(w, "t", v)
		w.S(" AS ")
		w.Col("", v.ValidFrom)
		w.S(", ")
		w.Col("t", v.ValidTo)
		deletedCol(w, "t", v)
	} else {
		w.Idents("t", v.Stored())
	}
	w.S(", s.incrc_from,\n    LEAD(")
	w.Col("t", v.ValidFrom)
	w.S(")")
	over()
	w.S(" AS incrc_next")
	if first {
		w.S(",\n    LAG(")
		w.Col("t", v.ValidFrom)
		w.S(")")
		over()
		w.S(" AS incrc_prev")
	}
	w.S("\n  FROM ")
	w.Table(v.Target)
	w.S(" AS t\n  JOIN (\n    SELECT ")
	w.Idents("", v.Key)
	w.S(", MIN(")
	w.Col("", op.Time)
	w.S(") AS incrc_from\n    FROM ")
	w.Table(op.Stage)
	w.S("\n    GROUP BY ")
	w.Idents("", v.Key)
	w.S("\n  ) AS s ON ")
	keyEq(w, "s", "t", v.Key)
	w.S("\n) AS h\nWHERE h.incrc_next IS NULL OR h.incrc_next > h.incrc_from")
	if first {
		w.S(" OR h.incrc_prev IS NULL")
	}
}

func tombstoneHistory(w *Writer, op ir.TombstoneHistory) {
	v := op.Versioning
	cols := append(append([]string(nil), v.Key...), ir.SequenceColumn, v.ValidFrom)
	w.S("INSERT INTO ")
	w.Table(op.Into)
	w.S(" (")
	w.Idents("", append(cols, ir.KindColumn))
	w.S(")\nSELECT ")
	w.Idents("b", cols)
	w.S(", ", ir.KindHeldDelete, "\nFROM ")
	w.Table(op.Tombstones)
	w.S(" AS b\nWHERE EXISTS (\n  SELECT 1 FROM ")
	w.Table(op.Stage)
	w.S(" AS s\n  WHERE ")
	keyEq(w, "s", "b", v.Key)
	w.S("\n)")
}

// resolveVersions stages the new events of a change log: per key and
// time, the change with the greatest sequence, ranked in a subquery that
// reads the changes once (MySQL cannot open a temporary table twice in one
// statement), kept when the target's version and the tombstone at that key
// and time hold a smaller sequence or none.
func resolveVersions(w *Writer, op ir.ResolveVersions) {
	v := op.Versioning
	at := func(alias string) {
		keyEq(w, alias, "r", v.Key)
		w.S(" AND ")
		w.Col(alias, v.ValidFrom)
		w.S(" = ")
		w.Col("r", op.Time)
	}
	newer := func(alias string) {
		w.S("(")
		w.Col(alias, ir.SequenceColumn)
		w.S(" IS NULL OR ")
		w.Col("r", op.Sequence)
		w.S(" > ")
		w.Col(alias, ir.SequenceColumn)
		w.S(")")
	}
	insertVersions(w, op.Into, v, ir.KindColumn)
	w.S("SELECT ")
	for i, c := range v.Columns {
		if i > 0 {
			w.S(", ")
		}
		if c == ir.SequenceColumn {
			w.Col("r", op.Sequence)
		} else {
			w.Col("r", c)
		}
	}
	w.S(", ")
	w.Col("r", op.Time)
	w.S(", ")
	w.timeNull(v.Type)
	w.S(",\n  CASE WHEN (")
	Expr(w, "r", op.IsDelete)
	w.S(") THEN ", ir.KindNewDelete, " ELSE ", ir.KindNewVersion, " END\n")
	w.S("FROM (\n  SELECT ")
	w.Idents("", op.Columns)
	w.S(",\n    ROW_NUMBER() OVER (PARTITION BY ")
	w.Idents("", append(append([]string(nil), v.Key...), op.Time))
	w.S(" ORDER BY ")
	dedupeOrder(w, op.Order, nil)
	w.S(") AS incrc_rn\n  FROM ")
	w.Table(op.From)
	w.S("\n) AS r\n")
	w.S("LEFT JOIN ")
	w.Table(v.Target)
	w.S(" AS t ON ")
	at("t")
	w.S("\nLEFT JOIN ")
	w.Table(op.Tombstones)
	w.S(" AS b ON ")
	at("b")
	w.S("\n")
	w.S("WHERE r.incrc_rn = 1\n  AND ")
	newer("t")
	w.S("\n  AND ")
	newer("b")
}

// eventChanges lays each key's events out in order of time, a held event
// before the new one that replaces it, and reads for each the event before
// and after it. Every event keeps its time, so only three kinds of rows
// change: a new version (ending at the next event; a rewrite when it
// replaces a version held at its time), a new delete at the time of a held
// version (which goes), and a held version whose next event is a new one
// at a later time (ending there).
func eventChanges(w *Writer, op ir.EventChanges) {
	v := op.Versioning
	vf := func() { w.Col("x", v.ValidFrom) }
	kind := func() { w.Col("x", ir.KindColumn) }
	replaces := func() {
		w.S("x.incrc_prev_kind = ", ir.KindHeldVersion, " AND x.incrc_prev = ")
		vf()
	}
	insertVersions(w, op.Into, v, ir.OpColumn)
	w.S("SELECT ")
	w.Idents("x", v.Columns)
	w.S(", ")
	vf()
	w.S(",\n  CASE WHEN ")
	kind()
	w.S(" = ", ir.KindHeldVersion, " THEN x.incrc_next")
	if v.OpenEnd == "" {
		w.S(" ELSE x.incrc_next END,\n")
	} else {
		w.S(" ELSE COALESCE(x.incrc_next, ")
		w.TimeLit(v.OpenEnd, v.Type)
		w.S(") END,\n")
	}
	w.S("  CASE\n    WHEN ")
	kind()
	w.S(" = ", ir.KindNewDelete, " THEN ", ir.OpRemove, "\n")
	w.S("    WHEN ")
	kind()
	w.S(" = ", ir.KindHeldVersion, " THEN ", ir.OpClose, "\n")
	w.S("    WHEN ")
	replaces()
	w.S(" THEN ", ir.OpRewrite, "\n")
	w.S("    WHEN x.incrc_prev_kind IN (", ir.KindHeldVersion, ", ", ir.KindNewVersion, ") THEN ", ir.OpFollow, "\n")
	w.S("    ELSE ", ir.OpAdd, "\n  END\nFROM (\n")
	over := func() {
		w.S("OVER (PARTITION BY ")
		w.Idents("t", v.Key)
		w.S(" ORDER BY ")
		w.Col("t", v.ValidFrom)
		w.S(", ")
		w.Col("t", ir.KindColumn)
		w.S(")")
	}
	w.S("  SELECT ")
	w.Idents("t", append(v.Stored(), ir.KindColumn))
	w.S(",\n")
	for _, c := range [...]struct{ fn, col, as string }{
		{"LAG", v.ValidFrom, "incrc_prev,\n"},
		{"LAG", ir.KindColumn, "incrc_prev_kind,\n"},
		{"LEAD", v.ValidFrom, "incrc_next,\n"},
		{"LEAD", ir.KindColumn, "incrc_next_kind\n"},
	} {
		w.S("    ", c.fn, "(")
		w.Col("t", c.col)
		w.S(") ")
		over()
		w.S(" AS ", c.as)
	}
	w.S("  FROM ")
	w.Table(op.From)
	w.S(" AS t\n) AS x\n")
	w.S("WHERE ")
	kind()
	w.S(" = ", ir.KindNewVersion, "\n")
	w.S("   OR (")
	kind()
	w.S(" = ", ir.KindNewDelete, " AND ")
	replaces()
	w.S(")\n")
	w.S("   OR (")
	kind()
	w.S(" = ", ir.KindHeldVersion, " AND x.incrc_next_kind >= ", ir.KindNewVersion, " AND x.incrc_next > ")
	vf()
	w.S(")")
}

// versionCandidates: the staged rows that are not already a version of
// the target with the same values.
func versionCandidates(w *Writer, op ir.VersionCandidates) {
	v := op.Versioning
	insertVersions(w, op.Into, v, ir.KindColumn)
	w.S("SELECT ")
	w.Idents("s", v.Columns)
	w.S(", ")
	w.Col("s", op.Time)
	w.S(", ")
	w.timeNull(v.Type)
	deletedValue(w, v, "FALSE")
	w.S(", 1\nFROM ")
	w.Table(op.Stage)
	w.S(" AS s\n")
	w.S("WHERE NOT EXISTS (\n  SELECT 1 FROM ")
	w.Table(v.Target)
	w.S(" AS t\n  WHERE ")
	keyEq(w, "t", "s", v.Key)
	w.S(" AND ")
	ownStart(w, "t", v)
	w.S(" = ")
	w.Col("s", op.Time)
	if len(op.Compare) > 0 {
		w.S("\n    AND ")
		same(w, "    ", "t", "s", op.Compare)
	}
	live(w, "t", v)
	w.S("\n)")
}

// reopenVersions: a staged key without a current version, whose newest
// row is older than the end of one of its closed versions, gets a
// candidate at hi.
func reopenVersions(w *Writer, op ir.ReopenVersions) {
	v := op.Versioning
	insertVersions(w, op.Into, v, ir.KindColumn)
	w.S("SELECT ")
	w.Idents("r", v.Columns)
	w.S(", ")
	w.timeParam(op.Hi, v.Type)
	w.S(", ")
	w.timeNull(v.Type)
	deletedValue(w, v, "FALSE")
	// The row stands for the reopen when the target holds it unchanged
	// (no candidate does).
	w.S(",\n  CASE WHEN EXISTS (\n    SELECT 1 FROM ")
	w.Table(v.Target)
	w.S(" AS h\n    WHERE ")
	keyEq(w, "h", "r", v.Key)
	w.S(" AND ")
	ownStart(w, "h", v)
	w.S(" = ")
	w.Col("r", op.Time)
	if len(op.Compare) > 0 {
		w.S("\n      AND ")
		same(w, "      ", "h", "r", op.Compare)
	}
	live(w, "h", v)
	w.S("\n  ) THEN ", ir.KindReopen, " ELSE ", ir.KindReopenAlso, " END\n")
	w.S("FROM (\n  SELECT ")
	w.Idents("", v.Columns)
	w.S(",\n    ROW_NUMBER() OVER (PARTITION BY ")
	w.Idents("", v.Key)
	w.S(" ORDER BY ")
	w.Col("", op.Time)
	w.S(" DESC) AS incrc_rn\n  FROM ")
	w.Table(op.Stage)
	w.S("\n) AS r\nWHERE incrc_rn = 1\n")
	w.S("  AND NOT EXISTS (\n    SELECT 1 FROM ")
	w.Table(v.Target)
	w.S(" AS t\n    WHERE ")
	keyEq(w, "t", "r", v.Key)
	w.S(" AND ")
	isOpen(w, "t", v)
	live(w, "t", v)
	w.S("\n  )\n")
	w.S("  AND EXISTS (\n    SELECT 1 FROM ")
	w.Table(v.Target)
	w.S(" AS t\n    WHERE ")
	keyEq(w, "t", "r", v.Key)
	w.S(" AND ")
	isClosed(w, "t", v)
	w.S(" AND ")
	w.Col("t", v.ValidTo)
	w.S(" > ")
	w.Col("r", op.Time)
	w.S("\n  )")
}

// timelineChanges lays each key's versions and candidates out in order of
// start (a version before a candidate of the same start) and reads, for
// each row, the start before and after it and the latest end of the
// versions before it. A candidate ends at the next start, or earlier where
// the version it falls in ended; a version that a candidate starts inside
// ends at that candidate.
func timelineChanges(w *Writer, op ir.TimelineChanges) {
	v := op.Versioning
	vf := func() { w.Col("x", v.ValidFrom) }
	vt := func() { w.Col("x", v.ValidTo) }
	kind := func() { w.Col("x", ir.KindColumn) }
	first := v.FirstStart != "" && v.OwnStart != ""
	firstLit := func() { w.TimeLit(v.FirstStart, v.Type) }
	// inside: the next start on the timeline is a candidate's inside the
	// version (which then ends there).
	inside := func() {
		w.S("x.incrc_next_kind <> ", ir.KindHeld, " AND x.incrc_next > ")
		vf()
		w.S(" AND (")
		vt()
		w.S(" IS NULL OR x.incrc_next < ")
		vt()
		w.S(")")
	}
	// moved: with open_start, the key's earliest held version (stored at
	// open_start) that a candidate now precedes, whose start moves back
	// to its own.
	moved := func() {
		vf()
		w.S(" = x.incrc_first_held AND x.incrc_first < ")
		vf()
		w.S(" AND ")
		vf()
		w.S(" > ")
		firstLit()
	}
	insertVersions(w, op.Into, v, ir.OpColumn)
	w.S("SELECT ")
	w.Idents("x", v.Columns)
	w.S(", ")
	if first {
		// The key's earliest start on the timeline is stored at
		// scd2.open_start, when that is earlier.
		w.S("CASE WHEN ")
		vf()
		w.S(" = x.incrc_first AND ")
		vf()
		w.S(" > ")
		firstLit()
		w.S(" THEN ")
		firstLit()
		w.S(" ELSE ")
		vf()
		w.S(" END")
	} else {
		vf()
	}
	w.S(",\n  CASE\n")
	w.S("    WHEN ")
	kind()
	if first {
		// A held version either ends at a candidate inside it, or keeps
		// its end and moves its start (no longer the key's earliest).
		w.S(" = 0 AND ")
		inside()
		w.S(" THEN x.incrc_next\n    WHEN ")
		kind()
		w.S(" = 0 THEN ")
		vt()
		w.S("\n")
	} else {
		w.S(" = 0 THEN x.incrc_next\n")
	}
	w.S("    WHEN x.incrc_end > ")
	vf()
	w.S(" AND (x.incrc_next IS NULL OR x.incrc_end < x.incrc_next) THEN x.incrc_end\n")
	if v.OpenEnd == "" {
		w.S("    ELSE x.incrc_next\n")
	} else {
		w.S("    ELSE COALESCE(x.incrc_next, ")
		w.TimeLit(v.OpenEnd, v.Type)
		w.S(")\n")
	}
	w.S("  END")
	deletedCol(w, "x", v)
	w.S(",\n  CASE\n    WHEN ")
	if first {
		// The key's earliest held version, stored at open_start, that a
		// candidate now precedes moves to its own start: rewritten
		// whole, not closed in place (see moved below).
		kind()
		w.S(" = ", ir.KindHeld, " AND ")
		moved()
		w.S(" THEN ", ir.OpNoRow, "\n    WHEN ")
	}
	kind()
	w.S(" = ", ir.KindHeld, " THEN ", ir.OpClose, "\n    WHEN ")
	kind()
	w.S(" = ", ir.KindReopen, " THEN ", ir.OpAdd, "\n    WHEN ")
	kind()
	w.S(" = ", ir.KindReopenAlso, " THEN ", ir.OpNoRow, "\n    WHEN x.incrc_prev = ")
	vf()
	w.S(" THEN ", ir.OpRewrite, "\n    WHEN x.incrc_prev IS NULL THEN ", ir.OpAdd, "\n    ELSE ", ir.OpFollow, "\n  END\nFROM (\n")
	over := func() {
		w.S("OVER (PARTITION BY ")
		w.Idents("t", v.Key)
		w.S(" ORDER BY ")
		w.Col("t", v.ValidFrom)
		w.S(", ")
		w.Col("t", ir.KindColumn)
	}
	w.S("  SELECT ")
	w.Idents("t", append(v.Stored(), ir.KindColumn))
	w.S(",\n")
	for _, c := range [...]struct{ fn, col, as string }{
		{"LAG", v.ValidFrom, "incrc_prev,\n"},
		{"LEAD", v.ValidFrom, "incrc_next,\n"},
		{"LEAD", ir.KindColumn, "incrc_next_kind,\n"},
	} {
		w.S("    ", c.fn, "(")
		w.Col("t", c.col)
		w.S(") ")
		over()
		w.S(") AS ", c.as)
	}
	// held is a column of the target's versions, NULL for candidates.
	held := func(c string) {
		w.S("CASE WHEN ")
		w.Col("t", ir.KindColumn)
		w.S(" = 0 THEN ")
		w.Col("t", c)
		w.S(" END")
	}
	w.S("    MAX(")
	held(v.ValidTo)
	w.S(") ")
	over()
	w.S(" ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS incrc_end")
	if first {
		part := func() {
			w.S("OVER (PARTITION BY ")
			w.Idents("t", v.Key)
			w.S(")")
		}
		w.S(",\n    MIN(")
		w.Col("t", v.ValidFrom)
		w.S(") ")
		part()
		w.S(" AS incrc_first,\n    MIN(")
		held(v.ValidFrom)
		w.S(") ")
		part()
		w.S(" AS incrc_first_held")
	}
	w.S("\n")
	w.S("  FROM ")
	w.Table(op.From)
	w.S(" AS t\n) AS x\n")
	w.S("WHERE ")
	kind()
	w.S(" <> ", ir.KindHeld, "\n   OR (")
	inside()
	w.S(")")
	if first {
		// The key's earliest held version, stored at open_start, that a
		// candidate now precedes: at its own start again.
		w.S("\n   OR (")
		moved()
		// (unless a candidate at the same start rewrites it)
		w.S("\n       AND (x.incrc_next IS NULL OR x.incrc_next <> ")
		vf()
		w.S("))")
	}
}

// columnChanges compares each staged row with its key's current version.
func columnChanges(w *Writer, op ir.ColumnChanges) {
	v := op.Versioning
	k0 := v.Key[0]
	insertVersions(w, op.Into, v, ir.OpColumn)
	switch op.Part {
	case "open":
		w.S("SELECT ")
		w.Idents("s", v.Columns)
		w.S(", ")
		if v.FirstStart != "" {
			// A key's first version starts at scd2.open_start (when
			// that is before hi); a later one at hi.
			w.S("CASE WHEN ")
			w.Col("o", k0)
			w.S(" IS NULL AND ")
			w.timeParam(op.Hi, v.Type)
			w.S(" > ")
			w.TimeLit(v.FirstStart, v.Type)
			w.S(" AND NOT EXISTS (\n    SELECT 1 FROM ")
			w.Table(v.Target)
			w.S(" AS f WHERE ")
			keyEq(w, "f", "s", v.Key)
			w.S("\n  ) THEN ")
			w.TimeLit(v.FirstStart, v.Type)
			w.S(" ELSE ")
			w.timeParam(op.Hi, v.Type)
			w.S(" END")
		} else {
			w.timeParam(op.Hi, v.Type)
		}
		w.S(", ")
		openValue(w, v)
		deletedValue(w, v, "FALSE")
		w.S(",\n  CASE WHEN ")
		w.Col("e", k0)
		w.S(" IS NOT NULL THEN ", ir.OpRewrite, " WHEN ")
		w.Col("o", k0)
		w.S(" IS NOT NULL THEN ", ir.OpFollow, " ELSE ", ir.OpAdd, " END\n")
		w.S("FROM ")
		w.Table(op.Stage)
		w.S(" AS s\nLEFT JOIN ")
		w.Table(v.Target)
		w.S(" AS o ON ")
		keyEq(w, "o", "s", v.Key)
		w.S(" AND ")
		isOpen(w, "o", v)
		live(w, "o", v)
		w.S("\n")
		w.S("LEFT JOIN ")
		w.Table(v.Target)
		w.S(" AS e ON ")
		keyEq(w, "e", "s", v.Key)
		w.S(" AND ")
		w.Col("e", v.ValidFrom)
		w.S(" = ")
		w.Param(op.Hi)
		w.S("\n")
		w.S("WHERE ")
		w.Col("o", k0)
		w.S(" IS NULL\n   OR NOT (")
		same(w, "    ", "s", "o", op.Tracked)
		w.S(")")
	case "close":
		w.S("SELECT ")
		w.Idents("o", v.Columns)
		w.S(", ")
		w.Col("o", v.ValidFrom)
		w.S(", ")
		w.timeParam(op.Hi, v.Type)
		deletedCol(w, "o", v)
		w.S(", ", ir.OpClose, "\n")
		w.S("FROM ")
		w.Table(v.Target)
		w.S(" AS o\nJOIN ")
		w.Table(op.Stage)
		w.S(" AS s ON ")
		keyEq(w, "s", "o", v.Key)
		w.S("\n")
		// Not the version that opened at hi (the new one rewrites it); one
		// that opened after hi gets an end before its start, and the run
		// fails on it (check_versions).
		w.S("WHERE ")
		isOpen(w, "o", v)
		w.S(" AND ")
		w.Col("o", v.ValidFrom)
		w.S(" <> ")
		w.Param(op.Hi)
		w.S("\n  AND (")
		if v.Deleted != "" {
			w.Col("o", v.Deleted)
			w.S(" = TRUE OR ")
		}
		w.S("NOT (")
		same(w, "    ", "s", "o", op.Tracked)
		w.S("))")
	case "update":
		w.S("SELECT ")
		w.Idents("s", v.Columns)
		w.S(", ")
		w.Col("o", v.ValidFrom)
		w.S(", ")
		w.Col("o", v.ValidTo)
		deletedCol(w, "o", v)
		w.S(", ", ir.OpRewrite, "\n")
		w.S("FROM ")
		w.Table(v.Target)
		w.S(" AS o\nJOIN ")
		w.Table(op.Stage)
		w.S(" AS s ON ")
		keyEq(w, "s", "o", v.Key)
		w.S("\n")
		w.S("WHERE ")
		isOpen(w, "o", v)
		live(w, "o", v)
		w.S("\n  AND ")
		same(w, "    ", "s", "o", op.Tracked)
		w.S("\n  AND NOT (")
		same(w, "    ", "s", "o", op.Other)
		w.S(")")
	default:
		w.Fail(Unsupported(w.d, "column changes part "+op.Part))
	}
}

// vanishedVersions finds the current versions whose key the source no
// longer carries.
func vanishedVersions(w *Writer, op ir.VanishedVersions) {
	v := op.Versioning
	insertVersions(w, op.Into, v, ir.OpColumn)
	if op.Mark {
		w.S("SELECT ")
		w.Idents("o", v.Columns)
		w.S(", ")
		w.timeParam(op.Hi, v.Type)
		w.S(", ")
		openValue(w, v)
		w.S(", TRUE, ", ir.OpNoRow, "\n")
	} else {
		w.S("SELECT ")
		w.Idents("o", v.Columns)
		w.S(", ")
		w.Col("o", v.ValidFrom)
		w.S(", ")
		w.timeParam(op.Hi, v.Type)
		deletedCol(w, "o", v)
		if v.Deleted != "" {
			w.S(", ", ir.OpClose, "\n")
		} else {
			w.S(",\n  CASE WHEN ")
			w.Col("o", v.ValidFrom)
			w.S(" = ")
			w.Param(op.Hi)
			w.S(" THEN ", ir.OpRemove, " ELSE ", ir.OpClose, " END\n")
		}
	}
	w.S("FROM ")
	w.Table(v.Target)
	w.S(" AS o\nWHERE ")
	isOpen(w, "o", v)
	live(w, "o", v)
	if !op.Mark && v.Deleted != "" {
		// new_record: a version that started at hi is rewritten by the
		// version that records the deletion, not closed.
		w.S(" AND ")
		w.Col("o", v.ValidFrom)
		w.S(" <> ")
		w.Param(op.Hi)
	}
	w.S("\n  AND NOT EXISTS (\n    SELECT 1 FROM ")
	w.Indent("    ", func() { FromAs(w, op.Source, "src") })
	w.S("\n    WHERE ")
	keyEq(w, "src", "o", v.Key)
	w.S("\n  )")
}

// applyVersions is ApplyVersions in three statements, in the run's write
// transaction: UPDATE ... FROM for the closes, then DELETE, then INSERT.
func applyVersions(w *Writer, op ir.ApplyVersions) {
	ApplyVersionsInSteps(w, op, func() { updateCloses(w, op) })
}

// ApplyVersionsInSteps updates the closes in place (closes, the engine's
// UPDATE of the target's valid_to from the changes whose op is OpClose),
// deletes the other versions of the target the changes name by key and
// start, then inserts the changes that are neither closes nor removals. A
// close is the common change (each new version ends the current one):
// updated, it writes one column where a delete and an insert would write
// the version twice. A follow is never at the start of a version the
// target holds (there it would rewrite it), so the DELETE looks for the
// rest alone: rewrites, removals, versions no row stands for, and adds,
// which take a key's earliest version's place at scd2.open_start.
func ApplyVersionsInSteps(w *Writer, op ir.ApplyVersions, closes func()) {
	v := op.Versioning
	closes()
	w.End()
	w.S("DELETE FROM ")
	w.Table(v.Target)
	w.S("\nWHERE EXISTS (\n  SELECT 1 FROM ")
	w.Table(op.Changes)
	w.S(" AS s\n  WHERE ")
	keyMatchOf(w, ownName(w, v.Target), versionKey(v), false)
	w.S(" AND ")
	w.Col("s", ir.OpColumn)
	w.S(" NOT IN (", ir.OpClose, ", ", ir.OpFollow, ")\n)")
	w.End()
	w.S("INSERT INTO ")
	w.Table(v.Target)
	w.S(" (")
	w.Idents("", v.Stored())
	w.S(")\nSELECT ")
	w.Idents("", v.Stored())
	w.S("\nFROM ")
	w.Table(op.Changes)
	w.S("\nWHERE ")
	w.Col("", ir.OpColumn)
	w.S(" NOT IN (", ir.OpRemove, ", ", ir.OpClose, ")")
}

// versionKey is what names a version: the key and its start.
func versionKey(v ir.Versioning) []string {
	return append(append([]string(nil), v.Key...), v.ValidFrom)
}

// updateCloses sets the valid_to of the closed versions, UPDATE ... FROM
// the changes (an UPDATE, not a MERGE: PostgreSQL plans this MERGE as a
// hash join over the whole target, the UPDATE as a probe of its primary
// key per change).
func updateCloses(w *Writer, op ir.ApplyVersions) {
	v := op.Versioning
	w.S("UPDATE ")
	w.Table(v.Target)
	w.S(" AS t\nSET ")
	w.Col("", v.ValidTo)
	w.S(" = ")
	w.Col("s", v.ValidTo)
	w.S("\nFROM ")
	w.Table(op.Changes)
	w.S(" AS s\nWHERE ")
	KeyMatch(w, versionKey(v), false)
	w.S(" AND ")
	CloseChange(w)
}

// CloseChange is the condition on a change s that it is a close.
func CloseChange(w *Writer) {
	w.Col("s", ir.OpColumn)
	w.S(" = ", ir.OpClose)
}

// MergeVersions applies the changes in one MERGE, for engines where each
// statement commits on its own: a failure leaves the target as it was, and
// the next run computes the same changes again. The changes hold one row
// per key and start, so no target row matches two. A close sets valid_to
// alone.
func MergeVersions(w *Writer, op ir.ApplyVersions) {
	v := op.Versioning
	key := versionKey(v)
	w.S("MERGE INTO ")
	w.Table(v.Target)
	w.S(" AS t\nUSING ")
	w.Table(op.Changes)
	w.S(" AS s\nON ")
	KeyMatch(w, key, false)
	w.S("\nWHEN MATCHED AND ")
	w.Col("s", ir.OpColumn)
	w.S(" = ", ir.OpRemove, " THEN DELETE")
	w.S("\nWHEN MATCHED AND ")
	CloseChange(w)
	w.S(" THEN UPDATE SET ")
	w.Col("", v.ValidTo)
	w.S(" = ")
	w.Col("s", v.ValidTo)
	w.S("\nWHEN MATCHED THEN UPDATE SET\n  ")
	SetList(w, "", NonKey(v.Stored(), key), FromStage(w), ",\n  ")
	w.S("\nWHEN NOT MATCHED AND ")
	w.Col("s", ir.OpColumn)
	w.S(" <> ", ir.OpRemove, " THEN INSERT (")
	w.Idents("", v.Stored())
	w.S(")\n  VALUES (")
	w.Idents("s", v.Stored())
	w.S(")")
}

// openStart writes a merged version's start: the island's first start,
// or for the key's first island (1: the SUM of the islands counts from
// it) scd2.open_start when that is earlier.
func openStart(w *Writer, op ir.MergeVersions) {
	if op.OpenStart == "" {
		w.S("z.incrc_from")
		return
	}
	lit := func() {
		if op.Type.IsInteger() {
			w.Number(op.OpenStart)
			return
		}
		w.TimeLit(op.OpenStart, op.Type)
	}
	w.S("CASE WHEN z.incrc_island = 1 AND z.incrc_from > ")
	lit()
	w.S(" THEN ")
	lit()
	w.S(" ELSE z.incrc_from END")
}

// mergeVersions merges a key's consecutive events whose tracked columns
// are equal (see compiler.MergeVersions): an island starts where the
// previous event of the key does not end at this one's start (a delete
// between them, or none before) or a tracked column differs; each island
// is one version with its first start and its last event's image and end.
// The previous values are read in a derived table of their own, so the
// comparison that follows is a plain one on every engine.
func mergeVersions(w *Writer, op ir.MergeVersions) {
	v := op.Versioning
	stored := v.Stored()
	over := func(alias string, order bool) {
		w.S("OVER (PARTITION BY ")
		w.Idents(alias, v.Key)
		w.S(" ORDER BY ")
		w.Col(alias, v.ValidFrom)
		if order {
			w.S(" ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW")
		}
		w.S(")")
	}
	w.S("INSERT INTO ")
	w.Table(op.Into)
	w.S(" (")
	w.Idents("", stored)
	w.S(")\nSELECT ")
	for i, c := range stored {
		if i > 0 {
			w.S(", ")
		}
		if c == v.ValidFrom {
			openStart(w, op)
			continue
		}
		w.Col("z", c)
	}
	w.S("\nFROM (\n  SELECT ")
	w.Idents("y", stored)
	w.S(",\n    MIN(")
	w.Col("y", v.ValidFrom)
	w.S(") OVER (PARTITION BY ")
	w.Idents("y", v.Key)
	w.S(", y.incrc_island) AS incrc_from,")
	if op.OpenStart != "" {
		w.S("\n    y.incrc_island,")
	}
	w.S("\n    ROW_NUMBER() OVER (PARTITION BY ")
	w.Idents("y", v.Key)
	w.S(", y.incrc_island ORDER BY ")
	w.Col("y", v.ValidFrom)
	w.S(" DESC) AS incrc_last\n  FROM (\n    SELECT ")
	w.Idents("x", stored)
	if len(op.Tracked) == 0 {
		// Nothing to compare: every event is an island of its own.
		w.S(",\n      SUM(1) ")
	} else {
		w.S(",\n      SUM(CASE WHEN x.incrc_prev_to = ")
		w.Col("x", v.ValidFrom)
		for i, c := range op.Tracked {
			w.S(" AND ")
			prev := fmt.Sprintf("incrc_prev_%d", i)
			w.d.NullSafeEqual(w, func() { w.S("x.", prev) }, func() { w.Col("x", c) })
		}
		w.S(" THEN 0 ELSE 1 END) ")
	}
	over("x", true)
	w.S(" AS incrc_island\n    FROM (\n      SELECT ")
	w.Idents("e", stored)
	w.S(",\n        LAG(")
	w.Col("e", v.ValidTo)
	w.S(") ")
	over("e", false)
	w.S(" AS incrc_prev_to")
	for i, c := range op.Tracked {
		w.S(",\n        LAG(")
		w.Col("e", c)
		w.S(") ")
		over("e", false)
		w.S(fmt.Sprintf(" AS incrc_prev_%d", i))
	}
	w.S("\n      FROM ")
	w.Table(v.Target)
	w.S(" AS e\n      WHERE EXISTS (\n        SELECT 1 FROM ")
	w.Table(op.Keys)
	w.S(" AS k\n        WHERE ")
	for i, k := range v.Key {
		if i > 0 {
			w.S(" AND ")
		}
		w.Col("k", k)
		w.S(" = ")
		w.Col("e", k)
	}
	w.S("\n      )\n    ) AS x\n  ) AS y\n) AS z\nWHERE z.incrc_last = 1")
}
