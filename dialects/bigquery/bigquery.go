// Package bigquery spells plans for Google BigQuery (GoogleSQL).
//
// Every statement is its own implicit transaction; a multi-statement
// transaction needs a script or a session, which incrc's statement-by-
// statement runner does not assume, so the write is idempotent and the
// watermark advance follows it. Temporary tables need a script or session
// too ("Use of CREATE TEMPORARY TABLE requires a script or session"), so
// the stage is a real table in the default dataset that expires a day
// after each run creates it: a run that dies leaves nothing for long.
// Unqualified names (the state tables, the stage) resolve in the
// connection's default dataset, which the target must set.
//
// A partition overwrite (replace_partition) is one atomic statement per
// partition: MERGE INTO t USING (the staged rows of [plo, phi)) ON FALSE
// WHEN NOT MATCHED THEN INSERT WHEN NOT MATCHED BY SOURCE AND t.p >= plo
// AND t.p < phi THEN DELETE. A NULL partition value means "in no
// partition": the half-open range is never true for NULL, so such a row is
// neither staged nor deleted by any partition replace, the same rows the
// DELETE + INSERT of the other engines leave alone, and the runner refuses
// a NULL partition in touched_partitions rather than guess which to
// rewrite. Nothing of a replaced partition is left behind: its range
// predicate selects exactly the rows the partition holds.
//
// Partition starts keep the column's type: DATE_TRUNC for a DATE,
// DATETIME_TRUNC for a DATETIME (a naive timestamp), TIMESTAMP_TRUNC in UTC
// for a TIMESTAMP.
package bigquery

import (
	"fmt"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// Dialect is BigQuery.
type Dialect struct{}

var (
	_ dialects.Dialect      = (*Dialect)(nil)
	_ dialects.OpRenderer   = (*Dialect)(nil)
	_ dialects.StringQuoter = (*Dialect)(nil)
	_ dialects.TimeTruncer  = (*Dialect)(nil)
	_ dialects.NullsLaster  = (*Dialect)(nil)
	_ dialects.ParamTyper   = (*Dialect)(nil)
	_ dialects.JSONOrderer  = (*Dialect)(nil)
)

func (*Dialect) Name() dialects.Name { return "bigquery" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: false, SharedStage: true,
		Note: "BigQuery: each statement is atomic on its own. Staging is a real table in the default dataset\n" +
			"(temporary tables need a script or session) that expires one day after it is created.\n" +
			"Unqualified names resolve in the connection's default dataset: the target must set one.\nA full refresh (clear_target, insert_all) is two commits: readers can see the target empty between them.\n" +
			"With partitions, replace_partition is one atomic MERGE per partition, one partition after another.\n" +
			"Window bounds are cast to the column's type (CAST(? AS DATETIME), DATE, TIMESTAMP): the client sends a\n" +
			"TIMESTAMP, which does not coerce to DATETIME. Bind them as UTC: DATETIME has no zone.\n" +
			"A dedupe's tie-break orders a JSON column by TO_JSON_STRING: JSON has no order."}
}

// QuoteIdent quotes one part; BigQuery also accepts `proj.ds.t` whole,
// but part by part keeps every name's parts separate. A quoted name has
// the escapes of a string literal.
func (*Dialect) QuoteIdent(s string) string {
	return "`" + identEscapes.Replace(s) + "`"
}

var identEscapes = strings.NewReplacer(`\`, `\\`, "`", "\\`")

func (*Dialect) Lexer() *sqllex.Rules { return sqllex.BigQuery }

// Placeholder is BigQuery's positional query parameter. Not the named
// @name form: the plan's parameters "from" and "to" are reserved words,
// which a named parameter cannot be without backquotes.
func (*Dialect) Placeholder(int) string { return "?" }

func (*Dialect) StringLit(s string) string { return dialects.BackslashString(s) }

func (*Dialect) NullSafeEqual(w *dialects.Writer, a, b func()) {
	w.Infix(a, " IS NOT DISTINCT FROM ", b)
}

func (*Dialect) BindTime(t time.Time, _ ir.TypeKind) any { return t.UTC() }

var types = dialects.TypeNames{
	ir.Smallint: "INT64",
	ir.Integer:  "INT64",
	ir.Bigint:   "INT64",
	ir.Double:   "FLOAT64",
	ir.Boolean:  "BOOL",
	ir.Text:     "STRING",
	ir.Varchar:  "STRING(%d)",
	ir.Date:     "DATE",
	// DATETIME is BigQuery's naive date and time; TIMESTAMP is an instant.
	ir.Timestamp:   "DATETIME",
	ir.TimestampTZ: "TIMESTAMP",
	ir.JSON:        "JSON",
}

func (*Dialect) ColumnType(t ir.Type) (string, error) {
	if t.Kind == ir.Decimal {
		// NUMERIC holds at most 9 digits of scale and 29 before the point.
		if t.Scale <= 9 && t.Precision-t.Scale <= 29 {
			return fmt.Sprintf("NUMERIC(%d,%d)", t.Precision, t.Scale), nil
		}
		return fmt.Sprintf("BIGNUMERIC(%d,%d)", t.Precision, t.Scale), nil
	}
	return types.Spell("bigquery", t)
}

// stageExpiry drops an abandoned stage on its own.
const stageExpiry = "OPTIONS (expiration_timestamp = TIMESTAMP_ADD(CURRENT_TIMESTAMP(), INTERVAL 1 DAY))"

// TruncTime spells the start of a partition with the truncation of the
// column's own type, so the start compares with the column without a cast.
func (*Dialect) TruncTime(w *dialects.Writer, expr func(), granularity string, t ir.Type) {
	unit := strings.ToUpper(granularity)
	switch t.Kind {
	case ir.Date:
		w.S("DATE_TRUNC(")
	case ir.TimestampTZ:
		w.S("TIMESTAMP_TRUNC(")
	default:
		w.S("DATETIME_TRUNC(")
	}
	expr()
	w.S(", ", unit)
	if t.Kind == ir.TimestampTZ {
		// Explicit, though UTC is the default: partitions are UTC hours,
		// days and months on every engine.
		w.S(", ")
		w.String("UTC")
	}
	w.S(")")
}

func (d *Dialect) RenderOp(w *dialects.Writer, op ir.Op) (bool, error) {
	switch op := op.(type) {
	case ir.ReplacePartition:
		dialects.MergeReplacePartition(w, op)
		return true, nil
	case ir.ApplyVersions:
		// Each statement is atomic alone: one MERGE, so that no failure
		// between a DELETE and an INSERT loses versions.
		dialects.MergeVersions(w, op)
		return true, nil
	case ir.CreateTable:
		// No PRIMARY KEY: BigQuery's is NOT ENFORCED and the optimizer
		// trusts it; the merge and the staged dedupe keep the key unique.
		dialects.CreateTableStyled(w, op, dialects.TableStyle{Temporary: "CREATE TABLE", StageOptions: stageExpiry})
		return true, nil
	case ir.InsertValues:
		if len(op.IfAbsentKey) == 0 {
			return false, nil
		}
		dialects.InsertIfAbsentMerge(w, op)
		return true, nil
	case ir.DeleteRows:
		// BigQuery's DELETE requires a WHERE clause.
		w.S("DELETE FROM ")
		w.Table(op.Table)
		w.S("\nWHERE ")
		if op.Where == nil {
			w.S("true")
		} else {
			dialects.Expr(w, "", op.Where)
		}
		return true, nil
	case ir.Update:
		if op.Where == nil {
			return true, dialects.Unsupported(d, "UPDATE without WHERE")
		}
	}
	return false, nil
}

// NullsLast relies on BigQuery's order, where NULL is the smallest value:
// a descending order already puts NULLs last, and its window ORDER BY
// takes no NULLS LAST.
func (*Dialect) NullsLast(w *dialects.Writer, expr func(), desc bool) {
	if desc {
		expr()
		w.S(" DESC")
		return
	}
	expr()
	w.S(" IS NULL, ")
	expr()
}

// TypedParam spells a time parameter's type in the SQL (dialects.ParamTyper).
func (*Dialect) TypedParam(w *dialects.Writer, marker func(), t ir.Type) {
	switch t.Kind {
	case ir.Timestamp:
		dialects.Cast(w, marker, "DATETIME")
	case ir.TimestampTZ:
		dialects.Cast(w, marker, "TIMESTAMP")
	case ir.Date:
		dialects.Cast(w, marker, "DATE")
	default:
		marker()
	}
}

// OrderJSON orders a json column by its text form: BigQuery's JSON type
// cannot be ordered (dialects.JSONOrderer).
func (*Dialect) OrderJSON(w *dialects.Writer, expr func()) { w.Call("TO_JSON_STRING", expr) }
