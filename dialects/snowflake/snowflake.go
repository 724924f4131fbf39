// Package snowflake spells plans for Snowflake.
//
// Snowflake has multi-statement transactions (BEGIN .. COMMIT) for DML,
// but any DDL commits the open transaction, so setup and staging DDL run
// before it and the write, the run record and the
// advance commit together. The stage is a session temporary table: the
// runner pins one connection (one session) for a run.
//
// Identifiers are quoted in upper case: the same names as unquoted ones
// (Snowflake folds unquoted names to upper case), so users query dw.orders
// as they wrote it, and reserved words are still safe.
//
// MERGE fails when one target row matches several source rows (the
// default ERROR_ON_NONDETERMINISTIC_MERGE); the stage holds one row per
// key, so it cannot.
//
// A partition overwrite (replace_partition) is the shared DELETE FROM t
// WHERE <range> then INSERT ... SELECT from the stage, inside the run's
// BEGIN .. COMMIT with the advance: readers never see the partition empty.
// Never INSERT OVERWRITE, which truncates the whole table. Partition starts
// are DATE_TRUNC, which keeps its input's type; a TIMESTAMP_TZ is first
// converted to UTC, since it truncates in each value's own offset.
package snowflake

import (
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// Dialect is Snowflake.
type Dialect struct{}

var (
	_ dialects.Dialect      = (*Dialect)(nil)
	_ dialects.OpRenderer   = (*Dialect)(nil)
	_ dialects.TimeTruncer  = (*Dialect)(nil)
	_ dialects.IdentFolder  = (*Dialect)(nil)
	_ dialects.StringQuoter = (*Dialect)(nil)
	_ dialects.ParamTyper   = (*Dialect)(nil)
)

func (*Dialect) Name() dialects.Name { return "snowflake" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: true, DefaultSchema: "PUBLIC",
		Note: "Snowflake: DDL commits an open transaction, so it all runs before BEGIN; the stage is a session\n" +
			"temporary table. Names are quoted in upper case, as Snowflake folds unquoted names.\n" +
			"Window bounds are cast to the column's type (CAST(? AS TIMESTAMP_NTZ), TIMESTAMP_TZ): a driver binds NTZ and\n" +
			"shifts it by the session's zone. Run with the session time zone UTC (ALTER SESSION SET TIMEZONE = 'UTC')."}
}

func (*Dialect) QuoteIdent(s string) string {
	return `"` + strings.ReplaceAll(strings.ToUpper(s), `"`, `""`) + `"`
}

// FoldIdent is the name QuoteIdent quotes: upper case.
func (*Dialect) FoldIdent(s string) string { return strings.ToUpper(s) }

func (*Dialect) Lexer() *sqllex.Rules { return sqllex.Snowflake }

// StringLit doubles quotes and backslashes: Snowflake reads backslash
// escapes in '...'.
func (*Dialect) StringLit(s string) string { return dialects.DoubledString(s) }

func (*Dialect) Placeholder(int) string { return "?" }

func (*Dialect) NullSafeEqual(w *dialects.Writer, a, b func()) {
	w.Infix(a, " IS NOT DISTINCT FROM ", b)
}

func (*Dialect) BindTime(t time.Time, _ ir.TypeKind) any { return t.UTC() }

var types = dialects.TypeNames{
	ir.Smallint: "SMALLINT",
	ir.Integer:  "INTEGER",
	ir.Bigint:   "BIGINT",
	ir.Decimal:  "NUMBER(%d,%d)",
	ir.Double:   "DOUBLE",
	ir.Boolean:  "BOOLEAN",
	ir.Text:     "VARCHAR",
	ir.Varchar:  "VARCHAR(%d)",
	ir.Date:     "DATE",
	// Explicit: a bare TIMESTAMP follows TIMESTAMP_TYPE_MAPPING.
	ir.Timestamp:   "TIMESTAMP_NTZ",
	ir.TimestampTZ: "TIMESTAMP_TZ",
	ir.JSON:        "VARIANT",
}

func (*Dialect) ColumnType(t ir.Type) (string, error) { return types.Spell("snowflake", t) }

// TruncTime spells the start of a partition, in UTC.
func (*Dialect) TruncTime(w *dialects.Writer, expr func(), granularity string, t ir.Type) {
	w.S("DATE_TRUNC(")
	w.String(strings.ToUpper(granularity))
	w.S(", ")
	if t.Kind == ir.TimestampTZ {
		w.S("CONVERT_TIMEZONE(")
		w.String("UTC")
		w.S(", ")
		expr()
		w.S(")")
	} else {
		expr()
	}
	w.S(")")
}

func (d *Dialect) RenderOp(w *dialects.Writer, op ir.Op) (bool, error) {
	switch op := op.(type) {
	case ir.CreateTable:
		// The PRIMARY KEY is kept: Snowflake records it, does not enforce
		// it, and (NORELY by default) does not let the optimizer trust it.
		dialects.CreateTableStyled(w, op, dialects.TableStyle{Temporary: "CREATE TEMPORARY TABLE", PrimaryKey: true})
		return true, nil
	case ir.InsertValues:
		if len(op.IfAbsentKey) == 0 {
			return false, nil
		}
		dialects.InsertIfAbsentMerge(w, op)
		return true, nil
	}
	return false, nil
}

// TypedParam spells a time parameter's type in the SQL (dialects.ParamTyper).
func (*Dialect) TypedParam(w *dialects.Writer, marker func(), t ir.Type) {
	switch t.Kind {
	case ir.Timestamp:
		dialects.Cast(w, marker, "TIMESTAMP_NTZ")
	case ir.TimestampTZ:
		dialects.Cast(w, marker, "TIMESTAMP_TZ")
	case ir.Date:
		dialects.Cast(w, marker, "DATE")
	default:
		marker()
	}
}
