// Package redshift spells plans for Amazon Redshift, through a PostgreSQL
// wire driver ($1 markers).
//
// Redshift has transactions around DML and most DDL (not TRUNCATE, which
// incrc never uses: a full refresh DELETEs), so the write, the run record
// and the advance commit together. Its MERGE reads a table, not a query
// (so the stage is a session temporary table), takes no alias for the
// target, one WHEN MATCHED and one WHEN NOT MATCHED clause without AND
// conditions, and a match condition of equalities: a key that may be NULL
// is merged as an UPDATE ... FROM then an INSERT of the rest instead.
//
// A partition overwrite (replace_partition) is the shared DELETE FROM t
// WHERE <range> then INSERT ... SELECT from the stage, in the write
// transaction with the advance (never TRUNCATE, which commits). Partition
// starts are DATE_TRUNC, which returns a TIMESTAMP: a DATE is cast to one
// first, and a TIMESTAMPTZ is read in UTC (AT TIME ZONE gives the naive
// UTC time), whatever the session's time zone.
package redshift

import (
	"fmt"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// Dialect is Redshift.
type Dialect struct{}

var (
	_ dialects.Dialect      = (*Dialect)(nil)
	_ dialects.OpRenderer   = (*Dialect)(nil)
	_ dialects.TimeTruncer  = (*Dialect)(nil)
	_ dialects.StringQuoter = (*Dialect)(nil)
)

func (*Dialect) Name() dialects.Name { return "redshift" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: true, ReusesParams: true, FoldsNames: true, DefaultSchema: "public",
		Note: "Redshift: the stage is a session temporary table (MERGE reads a table). Serializable isolation:\n" +
			"a concurrent writer to the same table can abort a run (error 1023); the run is then retried whole."}
}

func (*Dialect) QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (*Dialect) Placeholder(n int) string { return dialects.Dollar(n) }

func (*Dialect) Lexer() *sqllex.Rules { return sqllex.Redshift }

// StringLit doubles quotes and backslashes: Redshift reads backslash
// escapes in '...' (its QUOTE_LITERAL doubles them).
func (*Dialect) StringLit(s string) string { return dialects.DoubledString(s) }

// NullSafeEqual is spelled out: Redshift's MERGE and joins take it in
// this form on every release.
func (*Dialect) NullSafeEqual(w *dialects.Writer, a, b func()) {
	w.S("(")
	w.Infix(a, " = ", b)
	w.S(" OR (")
	a()
	w.S(" IS NULL AND ")
	b()
	w.S(" IS NULL))")
}

func (*Dialect) BindTime(t time.Time, _ compiler.TypeKind) any { return t.UTC() }

var types = dialects.TypeNames{
	compiler.Smallint: "SMALLINT",
	compiler.Integer:  "INTEGER",
	compiler.Bigint:   "BIGINT",
	compiler.Decimal:  "DECIMAL(%d,%d)",
	compiler.Double:   "DOUBLE PRECISION",
	compiler.Boolean:  "BOOLEAN",
	// Redshift's TEXT is VARCHAR(256): too short for text.
	compiler.Text:        "VARCHAR(65535)",
	compiler.JSON:        "VARCHAR(65535)",
	compiler.Date:        "DATE",
	compiler.Timestamp:   "TIMESTAMP",
	compiler.TimestampTZ: "TIMESTAMPTZ",
}

func (*Dialect) ColumnType(t compiler.Type) (string, error) {
	if t.Kind == compiler.Varchar {
		// Redshift counts VARCHAR lengths in bytes; UTF-8 takes up to 4 a
		// character.
		return fmt.Sprintf("VARCHAR(%d)", min(4*t.Length, 65535)), nil
	}
	return types.Spell("redshift", t)
}

// TruncTime spells the start of a partition, in UTC.
func (*Dialect) TruncTime(w *dialects.Writer, expr func(), granularity string, t compiler.Type) {
	w.S("DATE_TRUNC(")
	w.String(granularity)
	w.S(", ")
	switch t.Kind {
	case compiler.Date:
		w.S("CAST(")
		expr()
		w.S(" AS TIMESTAMP)")
	case compiler.TimestampTZ:
		w.S("(")
		expr()
		w.S(" AT TIME ZONE ")
		w.String("UTC")
		w.S(")")
	default:
		expr()
	}
	w.S(")")
}

func (d *Dialect) RenderOp(w *dialects.Writer, op compiler.Op) (bool, error) {
	switch op := op.(type) {
	case compiler.CreateTable:
		// The PRIMARY KEY is informational (the planner trusts it): the
		// merge and the staged dedupe keep it true.
		dialects.CreateTableStyled(w, op, dialects.TableStyle{Temporary: "CREATE TEMPORARY TABLE", PrimaryKey: true})
		return true, nil
	case compiler.InsertValues:
		if len(op.IfAbsentKey) == 0 {
			return false, nil
		}
		// MERGE cannot read a one-row query here, so: INSERT ... SELECT
		// ... WHERE NOT EXISTS. Under Redshift's serializable isolation two
		// runs racing to insert the same row cannot both commit.
		// Each value is cast: a marker used twice ($1 in the SELECT list
		// and in the NOT EXISTS) has no type the server can deduce from an
		// untyped select list ("could not determine data type of parameter
		// $1"). The values are the state table's text columns.
		for _, k := range op.IfAbsentKey {
			if indexOf(op.Columns, k) < 0 {
				return true, fmt.Errorf("redshift: insert if absent: key %q is not an inserted column", k)
			}
		}
		value := func(i int) {
			w.S("CAST(")
			dialects.Expr(w, "", op.Values[i])
			w.S(" AS VARCHAR(65535))")
		}
		w.S("INSERT INTO ")
		w.Table(op.Table)
		w.S(" (")
		w.Idents("", op.Columns)
		w.S(")\nSELECT ")
		for i := range op.Values {
			if i > 0 {
				w.S(", ")
			}
			value(i)
		}
		w.S("\nWHERE NOT EXISTS (\n  SELECT 1 FROM ")
		w.Table(op.Table)
		w.S("\n  WHERE ")
		for i, k := range op.IfAbsentKey {
			if i > 0 {
				w.S(" AND ")
			}
			w.Col("", k)
			w.S(" = ")
			value(indexOf(op.Columns, k))
		}
		w.S("\n)")
		return true, nil
	case compiler.MergeRows:
		d.merge(w, op)
		return true, nil
	case compiler.UpdateMatched:
		// Redshift's MERGE needs a WHEN NOT MATCHED clause: UPDATE ... FROM.
		w.S("UPDATE ")
		w.Table(op.Target)
		w.S(" AS t\nSET ")
		dialects.Assignments(w, "", op.Set, ",\n    ")
		w.S("\nFROM ")
		w.Table(op.Stage)
		w.S(" AS s\nWHERE ")
		dialects.KeyMatch(w, op.Key, false)
		return true, nil
	}
	return false, nil
}

func (d *Dialect) merge(w *dialects.Writer, op compiler.MergeRows) {
	set := op.Updated()
	if op.NullSafe || op.Source != nil || op.Version != "" {
		// MERGE's match condition is equalities only: NULL keys would
		// never match and be inserted again on every run. It reads a
		// table, not a query: a source's window is merged in two steps.
		// And its one WHEN MATCHED takes no condition: the version guard
		// is the UPDATE's.
		dialects.UpdateThenInsert(w, op, func() {
			w.S("UPDATE ")
			w.Table(op.Target)
			w.S(" AS t\nSET ")
			dialects.SetList(w, "", set, dialects.FromStage(w), ",\n    ")
			w.S("\nFROM ")
			dialects.MergeInput(w, op)
			w.S(" AS s\nWHERE ")
			dialects.KeyMatch(w, op.Key, op.NullSafe)
			if op.Version != "" {
				w.S(" AND ")
				dialects.Newer(w, "t", "s", op.Version)
			}
		})
		return
	}
	// The target takes no alias: its columns are qualified by its name.
	target := dialects.Named(op.Target)
	if len(set) == 0 {
		// Both clauses are required: a key-only table sets the key to itself.
		set = op.Key
	}
	w.S("MERGE INTO ")
	w.Table(op.Target)
	w.S("\nUSING ")
	dialects.MergeInput(w, op)
	w.S(" AS s\nON ")
	for i, k := range op.Key {
		if i > 0 {
			w.S(" AND ")
		}
		w.ColOf(target, k)
		w.S(" = ")
		w.Col("s", k)
	}
	w.S("\nWHEN MATCHED THEN UPDATE SET\n  ")
	dialects.SetList(w, "", set, dialects.FromStage(w), ",\n  ")
	w.S("\nWHEN NOT MATCHED THEN INSERT (")
	w.Idents("", op.Columns)
	w.S(")\n  VALUES (")
	w.Idents("s", op.Columns)
	w.S(")")
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}
