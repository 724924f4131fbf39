package dialects

import (
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// TableStyle says how an engine spells CREATE TABLE, for the engines whose
// tables differ from the standard one: no enforced keys, a table format
// clause, no session-scoped tables.
type TableStyle struct {
	// Temporary begins the staging table's CREATE ("CREATE TEMPORARY
	// TABLE"). Engines without temporary tables that take DML say "CREATE
	// TABLE": the stage is then a real table that the next run drops first.
	Temporary string
	// PrimaryKey keeps the key clause; engines that cannot declare one, or
	// whose optimizer trusts an unenforced one, leave it out.
	PrimaryKey bool
	// Indexes declares a table's CreateTable.Indexes in its CREATE TABLE
	// (INDEX name (columns)): engines that cannot create an index
	// idempotently afterwards.
	Indexes bool
	// Options follows the column list of every table ("USING DELTA");
	// StageOptions that of the staging table (an expiration).
	Options, StageOptions string
}

// CreateTableStyled spells CREATE TABLE in an engine's style.
func CreateTableStyled(w *Writer, op ir.CreateTable, st TableStyle) {
	if op.Temporary {
		w.S(st.Temporary, " ")
	} else {
		w.S("CREATE TABLE IF NOT EXISTS ")
	}
	w.Table(op.Table)
	w.S(" (\n")
	for i, c := range op.Columns {
		if i > 0 {
			w.S(",\n")
		}
		w.S("  ")
		w.Col("", c.Name)
		w.S(" ")
		w.Type(c.Type)
		if c.NotNull {
			w.S(" NOT NULL")
		}
	}
	if st.PrimaryKey && len(op.PrimaryKey) > 0 {
		w.S(",\n  PRIMARY KEY (")
		w.Idents("", op.PrimaryKey)
		w.S(")")
	}
	if st.Indexes {
		for _, ix := range op.Indexes {
			w.S(",\n  INDEX ")
			w.Col("", ix.Name)
			w.S(" (")
			w.Idents("", ix.Columns)
			w.S(")")
		}
	}
	w.S("\n)")
	opts := st.Options
	if op.Temporary && st.StageOptions != "" {
		opts = strings.TrimSpace(opts + "\n" + st.StageOptions)
	}
	if opts != "" {
		w.S("\n", opts)
	}
}

// InsertIfAbsentMerge spells "insert this row unless its key is there" as
// a MERGE from a one-row derived table, for engines with MERGE but without
// INSERT ... ON CONFLICT. The engine's MERGE decides atomically, where a
// separate existence check would race with another run's insert.
func InsertIfAbsentMerge(w *Writer, op ir.InsertValues) {
	w.S("MERGE INTO ")
	w.Table(op.Table)
	w.S(" AS t\nUSING (SELECT ")
	for i, c := range op.Columns {
		if i > 0 {
			w.S(", ")
		}
		Expr(w, "", op.Values[i])
		w.S(" AS ")
		w.Col("", c)
	}
	w.S(") AS s\nON ")
	keyMatch(w, "t", op.IfAbsentKey, false)
	w.S("\nWHEN NOT MATCHED THEN INSERT (")
	w.Idents("", op.Columns)
	w.S(")\n  VALUES (")
	w.Idents("s", op.Columns)
	w.S(")")
}

// MergeReplacePartition overwrites one partition of the target in one
// MERGE, for engines whose MERGE has WHEN NOT MATCHED BY SOURCE (BigQuery,
// Spark on Iceberg): ON FALSE matches nothing, so every staged row of the
// range is inserted and every target row of the range, matched by no
// source row, is deleted; the engine commits both or neither. Rows whose
// partition column is NULL fall in no range: they are never staged by a
// partition and never deleted by one. The insert names its columns rather
// than INSERT ROW / INSERT *, so a target whose columns are in another
// order is still written by name.
func MergeReplacePartition(w *Writer, op ir.ReplacePartition) {
	w.S("MERGE INTO ")
	w.Table(op.Target)
	w.S(" AS t\nUSING (\n  SELECT ")
	w.Idents("", op.Columns)
	w.S("\n  FROM ")
	w.Table(op.Stage)
	w.S("\n  WHERE ")
	WindowPred(w, "", op.Range)
	w.S("\n) AS s\nON FALSE\nWHEN NOT MATCHED THEN INSERT (")
	w.Idents("", op.Columns)
	w.S(")\n  VALUES (")
	w.Idents("s", op.Columns)
	w.S(")\nWHEN NOT MATCHED BY SOURCE AND ")
	WindowPred(w, "t", op.Range)
	w.S(" THEN DELETE")
}
