// Package trino spells plans for Trino with a catalog whose connector
// supports MERGE, UPDATE and DELETE (Iceberg, Delta Lake).
//
// Trino writes in autocommit only: each statement commits on its own, so
// the write is idempotent and the watermark advance follows it. Trino has
// no temporary tables, so the stage is a real table in the session's
// schema that each run drops and creates again. Types are the ones the
// Iceberg and Delta Lake connectors accept: no SMALLINT, no bounded
// VARCHAR, no JSON column; and no key constraints at all.
//
// A partition overwrite (replace_partition) is the shared DELETE FROM t
// WHERE <range> then INSERT ... SELECT from the stage: two commits, not
// atomic, so readers can see the partition empty between them, and a run
// that dies between them leaves it empty until a retry of the same window,
// which rewrites the partition whole (the watermark has not moved). The
// compiled file's header says so. (The Hive connector's
// insert_existing_partitions_behavior = 'OVERWRITE' replaces whole physical
// partitions in one INSERT, for Hive tables only, and leaves a partition
// whose rows all moved away untouched: not used.) Partition starts are
// date_trunc, which keeps its input's type; a timestamp with time zone is
// first moved to UTC, since it truncates in the value's own zone.
package trino

import (
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// Dialect is Trino.
type Dialect struct{}

var (
	_ dialects.Dialect        = (*Dialect)(nil)
	_ dialects.OpRenderer     = (*Dialect)(nil)
	_ dialects.TimeTruncer    = (*Dialect)(nil)
	_ dialects.ParamTyper     = (*Dialect)(nil)
	_ dialects.Literaler      = (*Dialect)(nil)
	_ dialects.ConflictTeller = (*Dialect)(nil)
)

// Conflict reports a lost Iceberg commit (dialects.ConflictTeller).
func (*Dialect) Conflict(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "ICEBERG_COMMIT_ERROR") || strings.Contains(msg, "CommitFailedException")
}

func (*Dialect) Name() dialects.Name { return "trino" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: false, SharedStage: true,
		Note: "Trino (Iceberg or Delta Lake catalog; verified: Trino 476 with Iceberg): writes autocommit, one statement at a time.\n" +
			"Staging is a real table in the session's schema (Trino has no temporary tables), dropped and\n" +
			"created again by each run.\nA full refresh (clear_target, insert_all) is two commits: readers can see the target empty between them.\n" +
			"With partitions, replace_partition is NOT atomic: DELETE then INSERT, two commits. Readers can see the\n" +
			"partition empty between them, and a run that fails between them leaves it so until the same window\n" +
			"is retried (the watermark has not moved), which rewrites the partition whole.\n" +
			"Window bounds are cast to the column's type (CAST(? AS TIMESTAMP(6))); the runner spells every value as a typed\n" +
			"literal and runs its session in UTC (a job of its own must SET TIME ZONE 'UTC'). On a Delta Lake catalog a timestamptz\n" +
			"column is created as timestamp(3) with time zone, the only zoned type it takes: declare timestamptz only\n" +
			"where milliseconds suffice there (Iceberg keeps microseconds)."}
}

func (*Dialect) QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Placeholder is the marker EXECUTE ... USING binds, in order.
func (*Dialect) Placeholder(int) string { return "?" }

// Lexer: Trino reads no backslash escapes in '...', so the standard
// literal (StringLit) is its own.
func (*Dialect) Lexer() *sqllex.Rules { return sqllex.Trino }

func (*Dialect) NullSafeEqual(w *dialects.Writer, a, b func()) {
	w.Infix(a, " IS NOT DISTINCT FROM ", b)
}

// BindTime keeps the column's kind with the time: the runner spells the
// value as a literal of that type (Literal) rather than let the client
// send every time as a timestamp with time zone.
func (*Dialect) BindTime(t time.Time, kind ir.TypeKind) any {
	return dialects.Instant{T: t.UTC(), Kind: kind}
}

// literals are Trino's: the standard string literal (no escapes), typed
// date and timestamp literals, a double from its text (the client refuses
// a float64 argument).
var literals = dialects.LiteralStyle{
	Type:        func(t ir.Type) (string, error) { return types.Spell("trino", t) },
	String:      dialects.StringLit,
	Date:        func(s string) string { return "DATE '" + s + "'" },
	Timestamp:   func(s string) string { return "TIMESTAMP '" + s + "'" },
	TimestampTZ: func(s string) string { return "TIMESTAMP '" + s + " UTC'" },
	Double:      func(s string) string { return "CAST('" + s + "' AS DOUBLE)" },
	Bytes:       func(s string) string { return "from_hex('" + s + "')" },
}

// Literal spells a bound value as a Trino literal (dialects.Literaler).
func (*Dialect) Literal(v any) (string, error) { return literals.Literal(v) }

var types = dialects.TypeNames{
	// Iceberg has no 16-bit integer.
	ir.Smallint: "INTEGER",
	ir.Integer:  "INTEGER",
	ir.Bigint:   "BIGINT",
	ir.Decimal:  "DECIMAL(%d,%d)",
	ir.Double:   "DOUBLE",
	ir.Boolean:  "BOOLEAN",
	// Iceberg and Delta Lake store unbounded strings only.
	ir.Text:        "VARCHAR",
	ir.Varchar:     "VARCHAR",
	ir.JSON:        "VARCHAR",
	ir.Date:        "DATE",
	ir.Timestamp:   "TIMESTAMP(6)",
	ir.TimestampTZ: "TIMESTAMP(6) WITH TIME ZONE",
}

func (*Dialect) ColumnType(t ir.Type) (string, error) { return types.Spell("trino", t) }

// TruncTime spells the start of a partition, in UTC.
func (*Dialect) TruncTime(w *dialects.Writer, expr func(), granularity string, t ir.Type) {
	w.S("date_trunc(")
	w.String(granularity)
	w.S(", ")
	expr()
	if t.Kind == ir.TimestampTZ {
		w.S(" AT TIME ZONE ")
		w.String("UTC")
	}
	w.S(")")
}

func (d *Dialect) RenderOp(w *dialects.Writer, op ir.Op) (bool, error) {
	switch op := op.(type) {
	case ir.CreateTable:
		dialects.CreateTableStyled(w, op, dialects.TableStyle{Temporary: "CREATE TABLE"})
		return true, nil
	case ir.ApplyVersions:
		// Writes autocommit: one MERGE, so that no failure between a
		// DELETE and an INSERT loses versions.
		dialects.MergeVersions(w, op)
		return true, nil
	case ir.InsertValues:
		if len(op.IfAbsentKey) == 0 {
			return false, nil
		}
		dialects.InsertIfAbsentMerge(w, op)
		return true, nil
	case ir.DeleteRows:
		if op.Where != nil {
			return false, nil
		}
		// A DELETE of the whole table is a metadata operation on Iceberg
		// that reports no count (its "rows" is NULL, on Trino 476): the
		// rows are counted before and after it, in the same statement.
		dialects.CountedWrite(w, op.Table, true, func() { dialects.Shared(w, op) })
		return true, nil
	}
	return false, nil
}

// TypedParam spells a time parameter's type in the SQL (dialects.ParamTyper).
func (*Dialect) TypedParam(w *dialects.Writer, marker func(), t ir.Type) {
	switch t.Kind {
	case ir.Timestamp:
		dialects.Cast(w, marker, "TIMESTAMP(6)")
	case ir.TimestampTZ:
		dialects.Cast(w, marker, "TIMESTAMP(6) WITH TIME ZONE")
	case ir.Date:
		dialects.Cast(w, marker, "DATE")
	default:
		marker()
	}
}
