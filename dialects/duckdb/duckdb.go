// Package duckdb spells plans for DuckDB (1.4 or later: MERGE INTO).
package duckdb

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// Dialect is DuckDB.
type Dialect struct{}

var (
	_ dialects.Dialect       = (*Dialect)(nil)
	_ dialects.TableResolver = (*Dialect)(nil)
	_ dialects.OpRenderer    = (*Dialect)(nil)
	_ dialects.TimeTruncer   = (*Dialect)(nil)
	_ dialects.SourceTyper   = (*Dialect)(nil)

	_ dialects.CountingMerger = (*Dialect)(nil)
)

// CountingMerge counts a merge from the target's size before and after
// it, in the write transaction: DuckDB keeps a table's row count, so
// COUNT(*) of the target reads that count, where the shared spelling's
// join of the window or stage with the target scans the target's key,
// which grows with the target. Every row merged is inserted
// or updated (one per key: the stage is deduped, or the source enforces
// the key), so the rows inserted are after minus before and the rest were
// updated. The reading parts (before and after the MERGE) add up.
func (*Dialect) CountingMerge(w *dialects.Writer, op ir.MergeRows) bool {
	cols := op.Key
	if op.Tally && op.Version != "" {
		cols = append(append([]string(nil), op.Key...), op.Version)
	}
	merged := func() {
		dialects.MergeSource(w, op.Stage, op.Source, op.Window, cols)
		w.S(" AS s")
	}
	targetCount := func() {
		w.S("(SELECT COUNT(*) FROM ")
		w.Table(op.Target)
		w.S(")")
	}
	if op.Tally && op.Version != "" {
		// The rows the version guard keeps from the update are matched
		// but neither inserted nor updated: counted by a join with the
		// target, the one read of it the size trick cannot avoid.
		// (merged, -before, merged + before - ignored, ignored), then
		// (0, after, -after, 0).
		// The probe is counted once, in a subquery both counts read.
		read := func() { w.Col("", ir.RegRead) }
		ignored := func() { w.Col("", ir.RegIgnored) }
		w.S("SELECT ")
		read()
		w.S(", -")
		targetCount()
		w.S(" AS ")
		w.Col("", ir.RegInserted)
		w.S(", ")
		read()
		w.S(" + ")
		targetCount()
		w.S(" - ")
		ignored()
		w.S(" AS ")
		w.Col("", ir.RegUpdated)
		w.S(", ")
		ignored()
		w.S("\nFROM (\n  SELECT COUNT(*) AS ")
		read()
		w.S(", COUNT(*) FILTER (WHERE EXISTS (SELECT 1 FROM ")
		w.Table(op.Target)
		w.S(" AS t WHERE ")
		dialects.KeyMatch(w, op.Key, false)
		w.S(" AND ")
		dialects.Older(w, "t", "s", op.Version)
		w.S(")) AS ")
		ignored()
		w.S("\n  FROM ")
		w.Indent("  ", merged)
		w.S("\n) AS incrc_counts")
	} else if op.Tally {
		// (merged, -before, merged + before), then (0, after, -after).
		w.S("SELECT COUNT(*) AS ")
		w.Col("", ir.RegRead)
		w.S(", -")
		targetCount()
		w.S(" AS ")
		w.Col("", ir.RegInserted)
		w.S(", COUNT(*) + ")
		targetCount()
		w.S(" AS ")
		w.Col("", ir.RegUpdated)
		w.S("\nFROM ")
		merged()
	} else {
		// The rows updated: merged + before, then -after.
		w.S("SELECT COUNT(*) + ")
		targetCount()
		w.S("\nFROM ")
		merged()
	}
	w.EndReading()
	tally := op.Tally
	op.Count, op.Tally = false, false
	dialects.RenderVia(w, op)
	w.End()
	// Each part quotes its own names: the lex-back reads a part against
	// what its Writer calls spelled.
	if tally {
		w.S("SELECT 0 AS ")
		w.Col("", ir.RegRead)
		w.S(", COUNT(*) AS ")
		w.Col("", ir.RegInserted)
		w.S(", -COUNT(*) AS ")
		w.Col("", ir.RegUpdated)
		if op.Version != "" {
			w.S(", 0 AS ")
			w.Col("", ir.RegIgnored)
		}
	} else {
		w.S("SELECT -COUNT(*)")
	}
	w.S("\nFROM ")
	w.Table(op.Target)
	w.EndReading()
	return true
}

func (*Dialect) Name() dialects.Name { return "duckdb" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: true, ReusesParams: true, GroupState: true, FoldsNames: true, DefaultSchema: "main",
		Note: "DuckDB allows one writing process per database file."}
}

// ResolveTable says which table t is: DuckDB compares names without case,
// reads an unqualified name in the current database and schema, and a.b
// as the schema a of the current database when there is one, else as the
// database a (its schema main).
func (*Dialect) ResolveTable(t ir.Table) (string, []any) {
	p := t.Parts
	switch len(p) {
	case 1:
		return `SELECT lower(current_database()), lower(current_schema()), lower($1)`, []any{p[0]}
	case 2:
		return `SELECT lower(CASE WHEN s.found OR NOT d.found THEN current_database() ELSE $1 END),
  lower(CASE WHEN s.found OR NOT d.found THEN $1 ELSE 'main' END), lower($2)
FROM (SELECT count(*) > 0 AS found FROM duckdb_schemas() WHERE database_name = current_database() AND lower(schema_name) = lower($1)) AS s,
  (SELECT count(*) > 0 AS found FROM duckdb_databases() WHERE lower(database_name) = lower($1)) AS d`, []any{p[0], p[1]}
	}
	return `SELECT lower($1), lower($2), lower($3)`, []any{p[len(p)-3], p[len(p)-2], p[len(p)-1]}
}

func (*Dialect) QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (*Dialect) Placeholder(n int) string { return dialects.Dollar(n) }

// Lexer: DuckDB reads no backslash escapes in '...', so the standard
// literal (StringLit) is its own.
func (*Dialect) Lexer() *sqllex.Rules { return sqllex.DuckDB }

func (*Dialect) NullSafeEqual(w *dialects.Writer, a, b func()) {
	w.Infix(a, " IS NOT DISTINCT FROM ", b)
}

func (*Dialect) BindTime(t time.Time, _ ir.TypeKind) any { return t.UTC() }

var types = dialects.TypeNames{
	ir.Smallint:    "SMALLINT",
	ir.Integer:     "INTEGER",
	ir.Bigint:      "BIGINT",
	ir.Decimal:     "DECIMAL(%d,%d)",
	ir.Double:      "DOUBLE",
	ir.Boolean:     "BOOLEAN",
	ir.Text:        "VARCHAR",
	ir.Varchar:     "VARCHAR(%d)",
	ir.Date:        "DATE",
	ir.Timestamp:   "TIMESTAMP",
	ir.TimestampTZ: "TIMESTAMPTZ",
	ir.JSON:        "JSON",
}

func (*Dialect) ColumnType(t ir.Type) (string, error) { return types.Spell("duckdb", t) }

// TruncTime spells the start of a partition with date_trunc.
func (*Dialect) TruncTime(w *dialects.Writer, expr func(), granularity string, _ ir.Type) {
	w.S("date_trunc(")
	w.String(granularity)
	w.S(", ")
	expr()
	w.S(")")
}

var decimalRe = regexp.MustCompile(`^DECIMAL\((\d+),(\d+)\)$`)

// SourceType reads DuckDB's type names, as its driver reports them: a
// decimal with its precision and scale in the name; VARCHAR without a
// length, since DuckDB keeps none (nor enforces one).
func (*Dialect) SourceType(c dialects.ColumnInfo) (ir.Type, bool) {
	name := strings.ToUpper(c.TypeName)
	if m := decimalRe.FindStringSubmatch(name); m != nil {
		p, _ := strconv.Atoi(m[1])
		s, _ := strconv.Atoi(m[2])
		return ir.Type{Kind: ir.Decimal, Precision: p, Scale: s}, true
	}
	switch name {
	case "TINYINT", "SMALLINT", "UTINYINT":
		return ir.Type{Kind: ir.Smallint}, true
	case "INTEGER", "USMALLINT":
		return ir.Type{Kind: ir.Integer}, true
	case "BIGINT", "UINTEGER":
		return ir.Type{Kind: ir.Bigint}, true
	case "UBIGINT":
		return ir.Type{Kind: ir.Decimal, Precision: 20}, true
	case "HUGEINT", "UHUGEINT":
		return ir.Type{Kind: ir.Decimal, Precision: 39}, true
	case "DOUBLE", "FLOAT":
		return ir.Type{Kind: ir.Double}, true
	case "BOOLEAN":
		return ir.Type{Kind: ir.Boolean}, true
	case "VARCHAR":
		return ir.Type{Kind: ir.Varchar}, true
	case "DATE":
		return ir.Type{Kind: ir.Date}, true
	case "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS":
		return ir.Type{Kind: ir.Timestamp}, true
	case "TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE":
		return ir.Type{Kind: ir.TimestampTZ}, true
	case "JSON":
		return ir.Type{Kind: ir.JSON}, true
	}
	return ir.Type{}, false
}

// RenderOp spells a full refresh's rewrite of a keyed target as one MERGE
// that leaves unchanged rows alone and deletes what the source no longer
// holds (1.4 or later: WHEN NOT MATCHED BY SOURCE), rather than deleting
// every row and inserting them again; reads the catalog for a source's
// unique key; and creates a log table (the run log) without its primary
// key: DuckDB appends a row of a table without an index as a row group of
// its own, where it appends one of an indexed table to the last row group
// and rewrites that whole group, every column, at the next checkpoint,
// which the close of every run is (with the key, every run's close grew
// with the run log). Its run_id stays NOT NULL, and a run makes its own,
// random one. It spells the checkpoint after a run's commit: the close
// would otherwise write the log into the file after the run recorded its
// duration.
func (*Dialect) RenderOp(w *dialects.Writer, op ir.Op) (bool, error) {
	switch op := op.(type) {
	case ir.CreateTable:
		if !op.Log || op.Temporary {
			return false, nil
		}
		dialects.CreateTableStyled(w, op, dialects.TableStyle{})
		return true, nil
	case ir.ReplaceAll:
		if len(op.Key) == 0 {
			return false, nil
		}
		dialects.MergeAll(w, op)
		return true, nil
	case ir.SourceUnique:
		sourceUnique(w, op)
		return true, nil
	case ir.Checkpoint:
		w.S("CHECKPOINT")
		return true, nil
	case ir.ApplyVersions:
		// One MERGE: one pass over the target where an UPDATE, a DELETE
		// and an INSERT make three, and a close updates valid_to alone
		// where a DELETE would leave a deletion for the checkpoint.
		dialects.MergeVersions(w, op)
		return true, nil
	}
	return false, nil
}

// sourceUnique is 1 when a primary key or unique constraint is on exactly
// the key's columns and each of them has a NOT NULL constraint (DuckDB
// lists one per column, a primary key's too), else 0. One pass over
// duckdb_constraints(): asking duckdb_columns() for the nullability as
// well made every run slower, the first catalog function a connection
// calls being slow. Only bool_or and list_has_all: the same test with
// list_sort on both sides and a COUNT(DISTINCT) of the NOT NULL columns
// was slower. A constraint's columns are distinct, as are the key's: as
// many of them, all among the key's, are exactly the key's.
func sourceUnique(w *dialects.Writer, op ir.SourceUnique) {
	parts := op.Source.Parts
	w.S("SELECT CASE WHEN bool_or(c.constraint_type IN (")
	w.String("PRIMARY KEY")
	w.S(", ")
	w.String("UNIQUE")
	w.S(") AND len(c.constraint_column_names) = ")
	w.Int(len(op.Key))
	w.S(" AND list_has_all(c.constraint_column_names, [")
	for i, k := range op.Key {
		if i > 0 {
			w.S(", ")
		}
		w.String(k)
	}
	w.S("]))")
	for _, k := range op.Key {
		w.S("\n  AND bool_or(c.constraint_type = ")
		w.String("NOT NULL")
		w.S(" AND c.constraint_column_names[1] = ")
		w.String(k)
		w.S(")")
	}
	w.S(" THEN 1 ELSE 0 END\nFROM duckdb_constraints() AS c\nWHERE c.database_name = ")
	if len(parts) > 2 {
		w.String(parts[len(parts)-3])
	} else {
		w.S("current_database()")
	}
	w.S("\n  AND c.schema_name = ")
	if len(parts) > 1 {
		w.String(parts[len(parts)-2])
	} else {
		w.S("current_schema()")
	}
	w.S("\n  AND c.table_name = ")
	w.String(parts[len(parts)-1])
}
