// Package postgres spells plans for PostgreSQL 15 or later (MERGE).
package postgres

import (
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// Dialect is PostgreSQL.
type Dialect struct{}

var (
	_ dialects.Dialect        = (*Dialect)(nil)
	_ dialects.TableResolver  = (*Dialect)(nil)
	_ dialects.OpRenderer     = (*Dialect)(nil)
	_ dialects.TimeTruncer    = (*Dialect)(nil)
	_ dialects.SourceTyper    = (*Dialect)(nil)
	_ dialects.StringQuoter   = (*Dialect)(nil)
	_ dialects.CountingMerger = (*Dialect)(nil)
)

func (*Dialect) Name() dialects.Name { return "postgres" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: true, ReusesParams: true, Heartbeat: true, DefaultSchema: "public",
		Note: "PostgreSQL 15 or later (MERGE)."}
}

// ResolveTable asks the catalog which table t is: the one its name finds
// on the search_path (to_regclass reads the quoted name as the engine
// does), or, not there yet, where CREATE TABLE would put it.
func (d *Dialect) ResolveTable(t ir.Table) (string, []any) {
	quoted := make([]string, len(t.Parts))
	for i, p := range t.Parts {
		quoted[i] = d.QuoteIdent(p)
	}
	schema := ""
	if s := t.Schema(); len(s) > 0 {
		schema = s[len(s)-1]
	}
	return `SELECT current_database()::text, COALESCE(n.nspname::text, NULLIF($2::text, ''), current_schema()::text), COALESCE(c.relname::text, $3::text)
FROM (SELECT to_regclass($1::text) AS oid) AS r
LEFT JOIN pg_class AS c ON c.oid = r.oid
LEFT JOIN pg_namespace AS n ON n.oid = c.relnamespace`, []any{strings.Join(quoted, "."), schema, t.Name()}
}

func (*Dialect) QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (*Dialect) Placeholder(n int) string { return dialects.Dollar(n) }

func (*Dialect) Lexer() *sqllex.Rules { return sqllex.Postgres }

// StringLit spells a value holding a backslash as an escape string,
// E'...' with the backslashes doubled: standard_conforming_strings decides
// what a backslash in '...' means, and in E'...' it means the same either
// way. Other values are standard literals.
func (*Dialect) StringLit(s string) string {
	if strings.Contains(s, `\`) {
		return "E" + dialects.DoubledString(s)
	}
	return dialects.StringLit(s)
}

func (*Dialect) NullSafeEqual(w *dialects.Writer, a, b func()) {
	w.Infix(a, " IS NOT DISTINCT FROM ", b)
}

func (*Dialect) BindTime(t time.Time, _ ir.TypeKind) any { return t.UTC() }

var types = dialects.TypeNames{
	ir.Smallint:    "SMALLINT",
	ir.Integer:     "INTEGER",
	ir.Bigint:      "BIGINT",
	ir.Decimal:     "NUMERIC(%d,%d)",
	ir.Double:      "DOUBLE PRECISION",
	ir.Boolean:     "BOOLEAN",
	ir.Text:        "TEXT",
	ir.Varchar:     "VARCHAR(%d)",
	ir.Date:        "DATE",
	ir.Timestamp:   "TIMESTAMP",
	ir.TimestampTZ: "TIMESTAMPTZ",
	ir.JSON:        "JSONB",
}

func (*Dialect) ColumnType(t ir.Type) (string, error) { return types.Spell("postgres", t) }

// TruncTime spells the start of a partition with date_trunc, in UTC: a
// date or timestamptz would otherwise be read in the session's time zone.
func (*Dialect) TruncTime(w *dialects.Writer, expr func(), granularity string, t ir.Type) {
	w.S("date_trunc(")
	w.String(granularity)
	w.S(", ")
	switch t.Kind {
	case ir.Date:
		w.S("CAST(")
		expr()
		w.S(" AS TIMESTAMP)")
	case ir.TimestampTZ:
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

// RenderOp creates the indexes the plan asks for: a partition's DELETE and
// check then read only that partition of the target.
//
// A full refresh empties the target with TRUNCATE, in the write
// transaction: no dead row per old one, and an INSERT into an empty heap
// and indexes. The table stays the same object (grants, indexes, views
// over it keep working); readers wait on its lock until the commit and
// then see the new rows, never an empty table.
func (*Dialect) RenderOp(w *dialects.Writer, op ir.Op) (bool, error) {
	switch op := op.(type) {
	case ir.CreateIndex:
		dialects.CreateIndexIfNotExists(w, op)
		return true, nil
	case ir.IndexExists:
		indexExists(w, op)
		return true, nil
	case ir.SessionLock:
		sessionLock(w, op)
		return true, nil
	case ir.ReplaceAll:
		replaceAll(w, op)
		return true, nil
	case ir.SourceUnique:
		sourceUnique(w, op)
		return true, nil
	case ir.MergeRows:
		if op.NullSafe {
			return false, nil // no unique index can serve a nullable key: MERGE
		}
		// An upsert probes the target's primary key once per staged row,
		// whatever the planner thinks of the stage; a MERGE is a join,
		// which it may plan as a hash of the whole target.
		upsert(w, op)
		return true, nil
	case ir.CountMatched:
		if op.NullSafe || op.Tally {
			return false, nil
		}
		countMatched(w, op)
		return true, nil
	case ir.AnalyzeTable:
		analyzeTable(w, op)
		return true, nil
	}
	return false, nil
}

// countMatched probes with LIMIT 1 in a lateral subquery: a probe of the
// target's key per staged row, never a scan of the whole target.
func countMatched(w *dialects.Writer, op ir.CountMatched) {
	cols := op.Key
	if op.Version != "" {
		cols = append(append([]string(nil), op.Key...), op.Version)
	}
	w.S("SELECT COUNT(*)\nFROM ")
	dialects.MergeSource(w, op.Stage, op.Source, op.Window, cols)
	w.S(" AS s\nCROSS JOIN LATERAL (\n  SELECT 1 FROM ")
	w.Table(op.Target)
	w.S(" AS t\n  WHERE ")
	dialects.KeyMatch(w, op.Key, false)
	if op.Version != "" {
		w.S(" AND ")
		dialects.Newer(w, "t", "s", op.Version)
	}
	w.S("\n  LIMIT 1\n) AS m")
}

// indexExists looks in its table's schema: the first of the search
// path's, for an unqualified table, as CREATE TABLE put it.
func indexExists(w *dialects.Writer, op ir.IndexExists) {
	w.S("SELECT COUNT(*)\nFROM pg_indexes\nWHERE schemaname = ")
	if parts := op.Table.Parts; len(parts) > 1 {
		w.String(parts[len(parts)-2])
	} else {
		w.S("current_schema()")
	}
	w.S(" AND tablename = ")
	w.String(op.Table.Parts[len(op.Table.Parts)-1])
	w.S(" AND indexname = ")
	w.String(op.Name)
}

// sessionLock takes or releases an advisory lock of the session, keyed
// by a 64-bit hash of its name: advisory locks are per database, as
// incrc_state is.
func sessionLock(w *dialects.Writer, op ir.SessionLock) {
	key := func() {
		w.S("hashtextextended(")
		if op.Guards == "lease" {
			w.String("incrc lease ")
			w.S(" || ")
			w.Param("pipeline")
		} else {
			w.String("incrc setup")
		}
		w.S(", 0)")
	}
	switch {
	case op.Release:
		w.Call("SELECT pg_advisory_unlock", key)
	case op.Guards == "lease":
		w.S("SELECT CASE WHEN ")
		w.Call("pg_try_advisory_lock", key)
		w.S(" THEN 1 ELSE 0 END")
	default:
		w.S("SELECT COUNT(*)\nFROM (SELECT ")
		w.Call("pg_advisory_lock", key)
		w.S(") AS l")
	}
}

func replaceAll(w *dialects.Writer, op ir.ReplaceAll) {
	dialects.ReplaceAll(w, op, func() {
		w.S("TRUNCATE ")
		w.Table(op.Target)
	})
}

// analyzeTable: autovacuum never analyzes a temporary table, and without
// statistics the planner guesses its size and hashes the whole target to
// join a few thousand staged rows.
// The key's statistics and the row count are what those joins are
// planned on; the other columns' would cost time and the plan does not
// read them.
func analyzeTable(w *dialects.Writer, op ir.AnalyzeTable) {
	w.S("ANALYZE ")
	w.Table(op.Table)
	if len(op.Columns) > 0 {
		w.S(" (")
		w.Idents("", op.Columns)
		w.S(")")
	}
}

// sourceUnique counts the unique indexes (a primary key's, a unique
// constraint's) on exactly the key's columns, without a predicate, an
// expression or included columns, every column NOT NULL.
func sourceUnique(w *dialects.Writer, op ir.SourceUnique) {
	parts := op.Source.Parts
	w.S("SELECT COUNT(*)\nFROM pg_catalog.pg_index AS i\nWHERE i.indrelid IN (\n    SELECT c.oid FROM pg_catalog.pg_class AS c JOIN pg_catalog.pg_namespace AS n ON n.oid = c.relnamespace\n    WHERE c.relname = ")
	w.String(parts[len(parts)-1])
	w.S(" AND ")
	if len(parts) > 1 {
		w.S("n.nspname = ")
		w.String(parts[len(parts)-2])
	} else {
		w.S("pg_catalog.pg_table_is_visible(c.oid)") // an unqualified name: the one the search path finds
	}
	w.S("\n  )")
	w.Printf("\n  AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL\n  AND i.indnatts = %d AND i.indnkeyatts = %d", len(op.Key), len(op.Key))
	w.S("\n  AND (\n    SELECT COUNT(*) FROM pg_catalog.pg_attribute AS a\n    WHERE a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey) AND a.attnotnull\n      AND a.attname IN (")
	for i, k := range op.Key {
		if i > 0 {
			w.S(", ")
		}
		w.String(k)
	}
	w.S(")\n  ) = ")
	w.Int(len(op.Key))
}

// SourceType reads pgx's type names (the catalog's short names) with the
// precision, scale and length of the column's type modifier. A numeric
// without one is unbounded: pgx reports it as precision 65535.
func (*Dialect) SourceType(c dialects.ColumnInfo) (ir.Type, bool) {
	switch strings.ToUpper(c.TypeName) {
	case "INT2":
		return ir.Type{Kind: ir.Smallint}, true
	case "INT4":
		return ir.Type{Kind: ir.Integer}, true
	case "INT8":
		return ir.Type{Kind: ir.Bigint}, true
	case "NUMERIC":
		if !c.HasDecimal || c.Precision > 1000 {
			return ir.Type{Kind: ir.Decimal}, true // unbounded
		}
		return ir.Type{Kind: ir.Decimal, Precision: int(c.Precision), Scale: int(c.Scale)}, true
	case "FLOAT4", "FLOAT8":
		return ir.Type{Kind: ir.Double}, true
	case "BOOL":
		return ir.Type{Kind: ir.Boolean}, true
	case "TEXT":
		return ir.Type{Kind: ir.Text}, true
	case "VARCHAR", "BPCHAR":
		if !c.HasLength || c.Length > 1<<20 {
			return ir.Type{Kind: ir.Text}, true // varchar without a length is unbounded
		}
		return ir.Type{Kind: ir.Varchar, Length: int(c.Length)}, true
	case "DATE":
		return ir.Type{Kind: ir.Date}, true
	case "TIMESTAMP":
		return ir.Type{Kind: ir.Timestamp}, true
	case "TIMESTAMPTZ":
		return ir.Type{Kind: ir.TimestampTZ}, true
	case "JSON", "JSONB":
		return ir.Type{Kind: ir.JSON}, true
	}
	return ir.Type{}, false
}

// upsert spells a merge of a target keyed by its primary key as INSERT ...
// ON CONFLICT DO UPDATE: a probe of the key per staged row, whatever the
// planner thinks of the stage (a MERGE is a join, which it may plan as a
// hash of the whole target). The rows come in key order, so the probes and
// updates walk the target's index and heap in order, not at random (a
// window read by its watermark's index comes in watermark order, and the
// same upsert unsorted took markedly longer).
func upsert(w *dialects.Writer, op ir.MergeRows) {
	w.S("INSERT INTO ")
	w.Table(op.Target)
	w.S(" AS t (")
	w.Idents("", op.Columns)
	w.S(")\nSELECT ")
	w.Idents("", op.Columns)
	w.S("\nFROM ")
	dialects.MergeFrom(w, op)
	w.S("\nORDER BY ")
	w.Idents("", op.Key)
	w.S("\nON CONFLICT (")
	w.Idents("", op.Key)
	w.S(") DO ")
	set := op.Updated()
	if len(set) == 0 {
		w.S("NOTHING")
		return
	}
	w.S("UPDATE SET\n  ")
	dialects.SetList(w, "", set, func(c string) { w.Col("EXCLUDED", c) }, ",\n  ")
	if op.Version != "" {
		w.S("\n  WHERE ")
		dialects.Newer(w, "t", "EXCLUDED", op.Version)
	}
}

// CountingMerge counts the rows the upsert updated in the upsert itself:
// a row it inserted has no xmax, one it updated has the transaction's.
// No second read of the target; with Tally, nor of the source: the one
// statement reads, writes and counts the same rows.
func (*Dialect) CountingMerge(w *dialects.Writer, op ir.MergeRows) bool {
	if op.NullSafe || len(op.Updated()) == 0 {
		return false // MERGE, or DO NOTHING, which returns no row for a key it kept
	}
	returning := func() {
		w.S("\n  RETURNING ")
		w.Col("t", "xmax")
		w.S(" = 0 AS incrc_inserted\n)\n")
	}
	if op.Tally && op.Version != "" {
		// The rows the guard keeps from the update are in no RETURNING:
		// the window is read once, into a CTE that the upsert and the
		// count of rows read both read.
		read := ir.Table{Parts: []string{"incrc_read"}}
		w.S("WITH ")
		w.Table(read)
		w.S(" AS ")
		dialects.MergeSource(w, op.Stage, op.Source, op.Window, op.Columns)
		w.S(", incrc_written AS (\n  ")
		from := op
		from.Source, from.Stage = nil, read
		w.Indent("  ", func() { upsert(w, from) })
		returning()
		n := func() {
			w.S("(SELECT COUNT(*) FROM ")
			w.Table(read)
			w.S(")")
		}
		w.S("SELECT ")
		n()
		w.S(" AS ")
		w.Col("", ir.RegRead)
		w.S(", COUNT(*) FILTER (WHERE incrc_inserted) AS ")
		w.Col("", ir.RegInserted)
		w.S(", COUNT(*) FILTER (WHERE NOT incrc_inserted) AS ")
		w.Col("", ir.RegUpdated)
		w.S(", ")
		n()
		w.S(" - COUNT(*) AS ")
		w.Col("", ir.RegIgnored)
		w.S("\nFROM incrc_written")
		return true
	}
	w.S("WITH incrc_written AS (\n  ")
	w.Indent("  ", func() { upsert(w, op) })
	returning()
	if op.Tally {
		w.S("SELECT COUNT(*) AS ")
		w.Col("", ir.RegRead)
		w.S(", COUNT(*) FILTER (WHERE incrc_inserted) AS ")
		w.Col("", ir.RegInserted)
		w.S(", COUNT(*) FILTER (WHERE NOT incrc_inserted) AS ")
		w.Col("", ir.RegUpdated)
		w.S("\nFROM incrc_written")
		return true
	}
	w.S("SELECT COUNT(*)\nFROM incrc_written\nWHERE NOT incrc_inserted")
	return true
}
