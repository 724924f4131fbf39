// Package spark spells plans for Spark SQL 4.1 on Delta Lake (dialect
// "spark") or Apache Iceberg (dialect "spark_iceberg").
//
// The table format is a dialect, not a spec key: the spec says what the
// pipeline does, the dialect how one engine spells it, and the format
// changes the spelling (USING DELTA or USING iceberg, and the partition
// overwrite to come), so `--dialect spark_iceberg` selects it without a
// new key in every spec.
//
// Spark has no multi-statement transactions: every statement commits on
// its own (one atomic commit per table), so the write is idempotent and the
// watermark advance follows it. UPDATE, DELETE and MERGE need a table
// format that supports them, so every table incrc creates, the state
// tables and the staging table too, is a Delta or Iceberg table. Spark has
// no temporary tables that accept DELETE, so the stage is a real table in
// the current database that each run drops and creates again.
//
// A partition overwrite (replace_partition) is one atomic commit per
// partition. On Delta it is INSERT INTO t REPLACE WHERE <range> SELECT ...
// (Spark 3.4+ grammar, Delta Lake 2.4+ or Databricks 12.2+): it replaces
// exactly the rows of the range, also when the staged partition is empty,
// and fails if a staged row falls outside it. Not a dynamic-mode INSERT
// OVERWRITE: that replaces only the physical partitions the new rows land
// in, so a partition whose rows all moved away keeps its old rows, and it
// needs the table partitioned at the spec's granularity, which incrc does
// not assume. On Iceberg it is a MERGE ... ON FALSE ... WHEN NOT MATCHED BY
// SOURCE AND <range> THEN DELETE (Iceberg 1.3+ on Spark 3.4+); never an
// INSERT OVERWRITE, whose default static mode replaces the whole table.
// Partitions are replaced one statement each: the set of partitions of one
// run is not atomic, and a retry of the window rewrites every one whole.
//
// Partition starts are computed in the session time zone (Spark's
// date_trunc has no zone argument), as are the comparisons of a naive
// column with the bound window: the session must run in UTC
// (spark.sql.session.timeZone=UTC).
package spark

import (
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// Dialect is Spark SQL; Iceberg selects Apache Iceberg tables instead of
// Delta Lake ones.
type Dialect struct {
	Iceberg bool
	// Counted takes every count a run reads from parts of the statement
	// (the rows counted before and after a write, a compare-and-set read
	// back), as on Iceberg, also where Delta Lake's statement returns
	// num_affected_rows: a SQL script cannot read what a statement
	// returns, so the scripts (dialects/script) are spelled this way.
	Counted bool
}

var (
	_ dialects.Dialect        = (*Dialect)(nil)
	_ dialects.OpRenderer     = (*Dialect)(nil)
	_ dialects.StringQuoter   = (*Dialect)(nil)
	_ dialects.TimeTruncer    = (*Dialect)(nil)
	_ dialects.Literaler      = (*Dialect)(nil)
	_ dialects.ConflictTeller = (*Dialect)(nil)
)

// conflicts are the error classes of a lost commit: Delta Lake's
// Concurrent*Exception and their error conditions, Iceberg's
// CommitFailedException and the validation of concurrent files.
var conflicts = []string{
	"DELTA_CONCURRENT_", "ConcurrentAppendException", "ConcurrentDeleteReadException",
	"ConcurrentDeleteDeleteException", "ConcurrentTransactionException", "ConcurrentWriteException",
	"DELTA_METADATA_CHANGED", "CommitFailedException", "Found conflicting files",
}

// Conflict reports a lost commit (dialects.ConflictTeller).
func (*Dialect) Conflict(err error) bool {
	msg := err.Error()
	for _, c := range conflicts {
		if strings.Contains(msg, c) {
			return true
		}
	}
	return false
}

func (d *Dialect) Name() dialects.Name {
	if d.Iceberg {
		return "spark_iceberg"
	}
	return "spark"
}

func (d *Dialect) Caps() dialects.Caps {
	note := "Spark + Delta Lake (verified: Spark 4.1.4, ANSI mode, Delta Lake 4.3.1 over Spark Connect; Databricks Runtime 14.2+):\n" +
		"every table incrc creates is a Delta table; each statement commits on its own.\n" +
		"Staging is a real Delta table in the current database, dropped and created again by each run.\n" +
		"A full refresh (clear_target, insert_all) is two commits: readers can see the target empty between them.\n" +
		"With partitions, replace_partition is one INSERT INTO ... REPLACE WHERE commit per partition (Delta Lake 2.4+),\n" +
		"one partition after another; it inserts by position, so a target incrc did not create must have the spec's\n" +
		"column order. An INSERT whose count is read is counted before and after it (open-source Delta returns none).\n" +
		"Set spark.sql.session.timeZone=UTC (the runner sets it on each session): partition starts and windows are read in it."
	if d.Iceberg {
		note = "Spark + Apache Iceberg (verified: Spark 4.1.4, ANSI mode, Iceberg 1.11.0 over Spark Connect): needs the Iceberg\n" +
			"SQL extensions (spark.sql.extensions) for MERGE, UPDATE and DELETE; every table incrc creates is an Iceberg table;\n" +
			"each statement commits on its own. Staging is a real Iceberg table in the current namespace, dropped (PURGE) and\n" +
			"created again by each run. A full refresh (clear_target, insert_all) is two commits: readers can see the target\n" +
			"empty between them. With partitions, replace_partition is one MERGE commit per partition (WHEN NOT MATCHED BY\n" +
			"SOURCE), one partition after another; the MERGE reads the whole target, so use write.merge.mode=merge-on-read on\n" +
			"large tables. Iceberg's writes on Spark return no rows: a count that is read is taken before and after the write,\n" +
			"and the state row's compare-and-set is read back. Set spark.sql.session.timeZone=UTC (the runner sets it)."
	}
	return dialects.Caps{Transactions: false, SharedStage: true, Note: note}
}

func (*Dialect) QuoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// Placeholder is Spark's positional marker (Spark 3.5+, Databricks).
// Not the named :name form: the plan's parameters "from" and "to" are
// keywords, which Spark's grammar does not take after the colon.
func (*Dialect) Placeholder(int) string { return "?" }

func (*Dialect) Lexer() *sqllex.Rules { return sqllex.Spark }

func (*Dialect) StringLit(s string) string { return dialects.BackslashString(s) }

func (*Dialect) NullSafeEqual(w *dialects.Writer, a, b func()) { w.Infix(a, " <=> ", b) }

// BindTime keeps the column's kind with the time: Spark Connect's client
// binds nothing, so the runner spells the value as a literal of that type
// (Literal).
func (*Dialect) BindTime(t time.Time, kind ir.TypeKind) any {
	return dialects.Instant{T: t.UTC(), Kind: kind}
}

// literals are Spark SQL's: backslash escapes in strings, TIMESTAMP_NTZ
// for a naive timestamp, an explicit offset for TIMESTAMP (read in the
// session's zone otherwise), a double from its text (so NaN and the
// infinities are spelled like any other value).
var literals = dialects.LiteralStyle{
	Type:        func(t ir.Type) (string, error) { return types.Spell("spark", t) },
	String:      dialects.BackslashString,
	Date:        func(s string) string { return "DATE '" + s + "'" },
	Timestamp:   func(s string) string { return "TIMESTAMP_NTZ '" + s + "'" },
	TimestampTZ: func(s string) string { return "TIMESTAMP '" + s + "+00:00'" },
	Double:      func(s string) string { return "CAST('" + s + "' AS DOUBLE)" },
	Bytes:       func(s string) string { return "unhex('" + s + "')" },
}

// Literal spells a bound value as a Spark SQL literal (dialects.Literaler).
func (*Dialect) Literal(v any) (string, error) { return literals.Literal(v) }

var types = dialects.TypeNames{
	ir.Smallint: "SMALLINT",
	ir.Integer:  "INT",
	ir.Bigint:   "BIGINT",
	ir.Decimal:  "DECIMAL(%d,%d)",
	ir.Double:   "DOUBLE",
	ir.Boolean:  "BOOLEAN",
	// Iceberg has no bounded string, and Delta only checks the length on
	// write: STRING for both, so the two formats hold the same rows.
	ir.Text:    "STRING",
	ir.Varchar: "STRING",
	ir.JSON:    "STRING",
	ir.Date:    "DATE",
	// Naive, read as UTC: TIMESTAMP would shift it by the session time zone.
	ir.Timestamp:   "TIMESTAMP_NTZ",
	ir.TimestampTZ: "TIMESTAMP",
}

func (d *Dialect) ColumnType(t ir.Type) (string, error) { return types.Spell(d.Name(), t) }

func (d *Dialect) format() string {
	if d.Iceberg {
		return "USING iceberg"
	}
	return "USING DELTA"
}

// TruncTime spells the start of a partition. A date's month is trunc(),
// which stays a DATE. date_trunc takes and returns a session-zone
// TIMESTAMP: a naive column is cast back to TIMESTAMP_NTZ so the partition
// start has the column's type.
func (*Dialect) TruncTime(w *dialects.Writer, expr func(), granularity string, t ir.Type) {
	unit := strings.ToUpper(granularity)
	switch t.Kind {
	case ir.Date:
		w.S("trunc(")
		expr()
		w.S(", ")
		w.String(unit)
		w.S(")")
	case ir.Timestamp:
		w.S("CAST(date_trunc(")
		w.String(unit)
		w.S(", ")
		expr()
		w.S(") AS TIMESTAMP_NTZ)")
	default:
		w.S("date_trunc(")
		w.String(unit)
		w.S(", ")
		expr()
		w.S(")")
	}
}

func (d *Dialect) RenderOp(w *dialects.Writer, op ir.Op) (bool, error) {
	switch op := op.(type) {
	case ir.ReplacePartition:
		d.replacePartition(w, op)
	case ir.DropTable:
		d.dropTable(w, op)
	case ir.CreateTable:
		// No PRIMARY KEY: open-source Spark cannot declare one; the merge
		// and the staged dedupe keep the key unique.
		dialects.CreateTableStyled(w, op, dialects.TableStyle{Temporary: "CREATE TABLE", Options: d.format()})
	case ir.InsertValues:
		if len(op.IfAbsentKey) == 0 {
			return false, nil
		}
		dialects.InsertIfAbsentMerge(w, op)
	case ir.StageRows:
		// Open-source Spark's INSERT returns no count (Databricks' does):
		// the rows are counted before and after it, in the same statement.
		dialects.CountedWrite(w, op.Into, false, func() { dialects.Shared(w, op) })
	case ir.QuarantineRows:
		dialects.CountedWrite(w, op.Into, false, func() { dialects.Shared(w, op) })
	case ir.InsertFrom:
		dialects.CountedWrite(w, op.Into, false, func() { dialects.Shared(w, op) })
	case ir.ResolveChanges:
		dialects.CountedWrite(w, op.Into, false, func() { dialects.Shared(w, op) })
	case ir.NewTruncate:
		dialects.CountedWrite(w, op.Into, false, func() { dialects.Shared(w, op) })
	case ir.VersionCandidates:
		// A type-2 dimension's inserts whose count a run reads.
		dialects.CountedWrite(w, op.Into, false, func() { dialects.Shared(w, op) })
	case ir.ColumnChanges:
		dialects.CountedWrite(w, op.Into, false, func() { dialects.Shared(w, op) })
	case ir.VanishedVersions:
		dialects.CountedWrite(w, op.Into, false, func() { dialects.Shared(w, op) })
	case ir.DeleteThrough:
		d.deleteThrough(w, op)
	case ir.DeleteRows:
		return d.deleteRows(w, op), nil
	case ir.Update:
		return d.update(w, op), nil
	case ir.ApplyVersions:
		// Each statement commits alone here: one MERGE, so that no failure
		// between a DELETE and an INSERT loses versions.
		dialects.MergeVersions(w, op)
	case ir.RetractKeys:
		d.retractKeys(w, op)
	default:
		return false, nil
	}
	return true, nil
}

// counts: the statements read their own counts (Counted), which an
// Iceberg table's writes on Spark must.
func (d *Dialect) counts() bool { return d.Iceberg || d.Counted }

// replacePartition overwrites one partition: Delta's replaceWhere, or on
// Iceberg the shared MERGE.
//
// A script's (Counted) takes the MERGE on Delta too: Delta resolves a
// REPLACE WHERE predicate against the table alone, so a script's
// variables are unresolved there (UNRESOLVED_COLUMN), and EXECUTE
// IMMEDIATE leaves its parameters unbound in it (UNBOUND_SQL_PARAMETER),
// on Spark 4.1.4 with Delta Lake 4.3.1.
func (d *Dialect) replacePartition(w *dialects.Writer, op ir.ReplacePartition) {
	if d.counts() {
		dialects.MergeReplacePartition(w, op)
	} else {
		d.replaceWhere(w, op)
	}
}

func (d *Dialect) dropTable(w *dialects.Writer, op ir.DropTable) {
	w.S("DROP TABLE IF EXISTS ")
	w.Table(op.Table)
	if d.Iceberg {
		// Iceberg's DROP TABLE leaves the data files behind unless
		// PURGE: a stage dropped by every run would pile them up.
		w.S(" PURGE")
	}
}

// deleteThrough: Spark's DELETE takes no subquery.
func (d *Dialect) deleteThrough(w *dialects.Writer, op ir.DeleteThrough) {
	if d.counts() {
		dialects.CountedWrite(w, op.Table, true, func() { dialects.DeleteThroughMerge(w, op) })
	} else {
		dialects.DeleteThroughMerge(w, op)
	}
}

// deleteRows reports false where the shared DELETE serves: Delta's DELETE
// returns num_affected_rows.
func (d *Dialect) deleteRows(w *dialects.Writer, op ir.DeleteRows) bool {
	if !d.counts() {
		return false
	}
	// Iceberg's DELETE on Spark returns no rows.
	dialects.CountedWrite(w, op.Table, true, func() { dialects.Shared(w, op) })
	return true
}

// update reports false where the shared UPDATE serves.
func (d *Dialect) update(w *dialects.Writer, op ir.Update) bool {
	if !d.counts() || op.Table.Name() != ir.StateTable.Name() {
		return false
	}
	// Iceberg's UPDATE on Spark returns no rows: the state row's
	// compare-and-set is verified by reading the row back.
	dialects.ReadBackUpdate(w, op, func() { dialects.Shared(w, op) })
	return true
}

// retractKeys: Spark's DELETE takes no EXISTS subquery; a MERGE that
// deletes on match does the same, in one commit (the stage has one row a
// key).
func (d *Dialect) retractKeys(w *dialects.Writer, op ir.RetractKeys) {
	retract := func() {
		cols := op.Key
		if op.Older != "" {
			cols = append(append([]string(nil), op.Key...), op.Older)
		}
		w.S("MERGE INTO ")
		w.Table(op.Target)
		w.S(" AS t\nUSING (\n  SELECT ")
		w.Idents("s", cols)
		w.S("\n  FROM ")
		w.Table(op.Stage)
		w.S(" AS s")
		if op.Where != nil {
			w.S("\n  WHERE ")
			dialects.Expr(w, "s", op.Where)
		}
		w.S("\n) AS s\nON ")
		dialects.KeyMatch(w, op.Key, op.NullSafe)
		if op.Older != "" {
			w.S(" AND ")
			dialects.Older(w, "s", "t", op.Older)
		}
		w.S("\nWHEN MATCHED THEN DELETE")
	}
	if d.counts() {
		// Iceberg's MERGE on Spark returns no rows.
		dialects.CountedWrite(w, op.Target, true, retract)
	} else {
		retract()
	}
}

// replaceWhere overwrites one partition of a Delta table in one commit.
// The grammar takes no column list: the SELECT lists the columns in the
// spec's order, the order incrc creates the target in.
func (d *Dialect) replaceWhere(w *dialects.Writer, op ir.ReplacePartition) {
	w.S("INSERT INTO ")
	w.Table(op.Target)
	w.S(" REPLACE WHERE ")
	dialects.WindowPred(w, "", op.Range)
	w.S("\nSELECT ")
	w.Idents("", op.Columns)
	w.S("\nFROM ")
	w.Table(op.Stage)
	w.S("\nWHERE ")
	dialects.WindowPred(w, "", op.Range)
}
