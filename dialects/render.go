package dialects

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/incrc/incrc/compiler/ir"
	"github.com/incrc/incrc/compiler/sqllex"
)

// Rendered is one statement of a plan, spelled for one dialect.
type Rendered struct {
	*ir.Statement
	Parts []Part
}

// Render spells every statement of a plan. It fails, naming the dialect
// and the statement, when the dialect cannot spell one. A source query is
// read with the engine's own rules first: what they cannot classify or
// find unsafe is refused at its place in the spec (CheckQuery).
//
// A plan whose source is outside the target (p.From) spells the statements
// that run there (Statement.On) in the source's dialect, src, and reads
// the source query with its rules: it is written in that dialect.
//
// The plan spelled is ForTarget(d, p): a target that reads a files source
// itself runs those statements.
func Render(d Dialect, p *ir.Plan, src ...Dialect) ([]Rendered, error) {
	p = ForTarget(d, p)
	return render(new(Writer), d, p, src, paramTypes(p), true)
}

// render is Render with the plan's parameter types worked out already
// (paramTypes(p), which no one changes), in w's scratch space. Without shared, the statements
// every plan holds alike (the bookkeeping) are left out: a pipeline's
// compiled file does not hold them.
func render(w *Writer, d Dialect, p *ir.Plan, src []Dialect, types map[ir.ParamType]ir.Type, shared bool) ([]Rendered, error) {
	sd, err := sourceDialect(d, p, src)
	if err != nil {
		return nil, err
	}
	if err := CheckQuery(p, sd.Lexer()); err != nil {
		return nil, err
	}
	out := make([]Rendered, 0, len(p.Statements))
	for _, st := range p.Statements {
		if !shared && st.Shared() != nil {
			continue
		}
		on := d
		if st.On == ir.OnSource {
			on = sd
		}
		parts, err := w.render(on, st, types)
		if err != nil {
			return nil, fmt.Errorf("%s: pipeline %s: render %s: %w", on.Name(), p.Pipeline, st.Name, err)
		}
		// A statement with no parts stays: the dialect has nothing to do for
		// it, and the programs that name it still find it.
		out = append(out, Rendered{Statement: st, Parts: parts})
	}
	return out, nil
}

// sourceDialect is the dialect the source's statements are spelled in:
// the target's, unless the source is outside it.
func sourceDialect(d Dialect, p *ir.Plan, src []Dialect) (Dialect, error) {
	if p.From == nil {
		return d, nil
	}
	if len(src) == 0 || src[0] == nil {
		return nil, fmt.Errorf("pipeline %s: its source is outside the target (%s), and the source's dialect is not known: give source.dialect, or a connection whose URL says it", p.Pipeline, p.From.Describe())
	}
	if string(src[0].Name()) != p.From.Dialect && p.From.Dialect != "" {
		return nil, fmt.Errorf("pipeline %s: source.dialect is %s, and the source's connection is %s", p.Pipeline, p.From.Dialect, src[0].Name())
	}
	return src[0], nil
}

// RenderStatement spells one statement. No parts and no error means the
// dialect has nothing to do for it (SQLite has no schemas to create).
func RenderStatement(d Dialect, st *ir.Statement) ([]Part, error) {
	return renderStatement(d, st, nil)
}

// paramTypes are the column types a plan's typed parameters stand for: a
// watermark value (a timestamp, the run's time, without a watermark), a
// partition bound, a reconcile bound.
func paramTypes(p *ir.Plan) map[ir.ParamType]ir.Type {
	types := map[ir.ParamType]ir.Type{ir.PWatermark: {Kind: ir.Timestamp}}
	if p.Watermark != nil {
		types[ir.PWatermark] = p.Watermark.Type
	}
	if p.Partition != nil {
		types[ir.PPartition] = p.Partition.Type
	}
	for _, c := range p.Columns {
		if c.Name == p.ReconcileBy {
			types[ir.PBound] = c.Type
		}
	}
	return types
}

// renderStatement spells st for d; types are the plan's parameter types
// (nil for a lone statement).
func renderStatement(d Dialect, st *ir.Statement, types map[ir.ParamType]ir.Type) ([]Part, error) {
	return new(Writer).render(d, st, types)
}

// render is renderStatement with w, one statement after another: w keeps
// only its scratch space (the statement's bytes, the spellings of the
// names it quoted, the lex-back's tokens and tables) from one to the next. What it returns (the parts, their parameters and
// what they meant) is the statement's own.
func (w *Writer) render(d Dialect, st *ir.Statement, types map[ir.ParamType]ir.Type) ([]Part, error) {
	*w = Writer{d: d, declared: st.Params, types: types, cur: w.cur[:0], names: w.names, stmt: w.stmt, lex: w.lex}
	handled := false
	if m, ok := st.Op.(ir.MergeRows); ok && (m.Count || m.Tally) {
		if c, ok := d.(CountingMerger); !ok || !c.CountingMerge(w, m) {
			// The rows the merge will update, counted first, in a part of
			// their own; then the merge.
			RenderVia(w, ir.CountMatched{Stage: m.Stage, Source: m.Source, Window: m.Window, Target: m.Target, Key: m.Key, NullSafe: m.NullSafe, Tally: m.Tally, Version: m.Version})
			w.End()
			m.Count, m.Tally = false, false
			RenderVia(w, m)
		}
		handled = true
	}
	if r, ok := d.(OpRenderer); ok && !handled {
		var err error
		if handled, err = r.RenderOp(w, st.Op); err != nil {
			return nil, err
		}
	}
	if !handled {
		renderOp(w, st.Op)
	}
	w.End()
	if w.err != nil {
		return nil, w.err
	}
	return w.parts, nil
}

// renderOp is the shared spelling of every operation: standard SQL that
// most engines accept as written. It only dispatches: each operation has
// one function of its own, named after it, and a new operation adds a
// case here and its function.
func renderOp(w *Writer, op ir.Op) {
	switch op := op.(type) {
	case ir.CreateSchema:
		createSchema(w, op)
	case ir.CreateTable:
		CreateTable(w, op, "TEMPORARY")
	case ir.DropTable:
		dropTable(w, op)
	case ir.CreateIndex:
		// Nothing by default: an index is an optimization, and most
		// engines here have none (or prune by zone maps, as DuckDB does).
		// Engines that benefit spell it with CreateIndexIfNotExists.
	case ir.IndexExists:
		// Engines that create no index have every index they need.
		w.S("SELECT 1")
	case ir.SessionLock:
		// Nothing by default: an engine without session locks holds a
		// pipeline by its lease alone.
	case ir.AnalyzeTable:
		// Nothing by default: an optimization for planners that read
		// statistics (PostgreSQL spells it).
	case ir.Checkpoint:
		// Nothing by default: servers write their log on their own, and
		// closing a connection to one writes nothing (DuckDB spells it).
	case ir.InsertValues:
		insertValuesIfAbsent(w, op)
	case ir.Update:
		update(w, op)
	case ir.SelectRows:
		selectRows(w, op)
	case ir.StageRows:
		stageRows(w, op)
	case ir.ReadSource:
		Deduped(w, Selection{Source: op.Source, Columns: op.Columns, Window: op.Window, Where: op.Where, Dedupe: op.Dedupe, Range: op.Range, Narrow: true})
	case ir.DistinctPartitions:
		DistinctPartitions(w, op)
	case ir.RetractKeys:
		retractKeys(w, op)
	case ir.ReplacePartition:
		replacePartition(w, op)
	case ir.CountSource:
		countSource(w, op)
	case ir.ProbeColumns:
		probeColumns(w, op)
	case ir.AddColumn:
		addColumn(w, op)
	case ir.AlterColumnType:
		alterColumnType(w, op)
	case ir.DropColumn:
		dropColumn(w, op)
	case ir.ProfileColumns:
		profileColumns(w, op)
	case ir.SourceMax:
		sourceMax(w, op)
	case ir.HasRows:
		hasRows(w, op)
	case ir.CountRows:
		countRows(w, op)
	case ir.QuarantineRows:
		QuarantineRows(w, op)
	case ir.ReplaceAll:
		ReplaceAll(w, op, func() { RenderVia(w, ir.DeleteRows{Table: op.Target}) })
	case ir.SourceUnique:
		// The engine's catalog is not read here: the dedupe always runs.
		w.S("SELECT 0")
	case ir.DeleteRows:
		deleteRows(w, op)
	case ir.DuplicateKey:
		duplicateKey(w, op)
	case ir.VersionedKeys:
		versionedKeys(w, op)
	case ir.CountMatched:
		countMatched(w, op)
	case ir.InsertFrom:
		insertFrom(w, op)
	case ir.MergeRows:
		Merge(w, op)
	case ir.RankChanges:
		RankChanges(w, op)
	case ir.ResolveChanges:
		ResolveChanges(w, op)
	case ir.UpdateMatched:
		updateMatched(w, op)
	case ir.Aggregate:
		Aggregate(w, op)
	case ir.LookupOverlaps:
		lookupOverlaps(w, op)
	case ir.VersionCandidates:
		versionCandidates(w, op)
	case ir.VersionHistory:
		versionHistory(w, op)
	case ir.ReopenVersions:
		reopenVersions(w, op)
	case ir.TimelineChanges:
		timelineChanges(w, op)
	case ir.ColumnChanges:
		columnChanges(w, op)
	case ir.VanishedVersions:
		vanishedVersions(w, op)
	case ir.ApplyVersions:
		applyVersions(w, op)
	case ir.ResolveVersions:
		resolveVersions(w, op)
	case ir.TombstoneHistory:
		tombstoneHistory(w, op)
	case ir.EventChanges:
		eventChanges(w, op)
	case ir.MergeVersions:
		mergeVersions(w, op)
	case ir.NewTruncate:
		newTruncate(w, op)
	case ir.DeleteThrough:
		deleteThrough(w, op)
	default:
		w.Fail(Unsupported(w.d, fmt.Sprintf("operation %T", op)))
	}
}

// newTruncate reads the greatest sequence once, in a derived table, and
// compares it with the marks: the session table is named once, which
// MariaDB requires of a temporary table.
func newTruncate(w *Writer, op ir.NewTruncate) {
	w.S("INSERT INTO ")
	w.Table(op.Into)
	w.S(" (")
	w.Col("", ir.SequenceColumn)
	w.S(")\nSELECT ")
	w.Col("x", ir.SequenceColumn)
	w.S("\nFROM (\n  SELECT MAX(")
	w.Col("", op.Sequence)
	w.S(") AS ")
	w.Col("", ir.SequenceColumn)
	w.S("\n  FROM ")
	w.Table(op.From)
	w.S("\n  WHERE ")
	Expr(w, "", op.IsTruncate)
	w.S("\n) AS x\nWHERE ")
	w.Col("x", ir.SequenceColumn)
	w.S(" IS NOT NULL\n  AND NOT EXISTS (\n    SELECT 1 FROM ")
	w.Table(op.Marks)
	w.S(" AS m\n    WHERE ")
	w.Col("m", ir.SequenceColumn)
	w.S(" >= ")
	w.Col("x", ir.SequenceColumn)
	w.S("\n  )")
}

func deleteThrough(w *Writer, op ir.DeleteThrough) {
	w.S("DELETE FROM ")
	w.Table(op.Table)
	w.S("\nWHERE ")
	w.Col("", op.Column)
	w.S(" <= (SELECT MAX(")
	w.Col("", ir.SequenceColumn)
	w.S(") FROM ")
	w.Table(op.Bound)
	w.S(")")
}

// DeleteThroughMerge spells a DeleteThrough as a MERGE that deletes on
// match, for engines whose DELETE takes no subquery (Spark).
func DeleteThroughMerge(w *Writer, op ir.DeleteThrough) {
	w.S("MERGE INTO ")
	w.Table(op.Table)
	w.S(" AS t\nUSING (\n  SELECT MAX(")
	w.Col("", ir.SequenceColumn)
	w.S(") AS ")
	w.Col("", ir.SequenceColumn)
	w.S("\n  FROM ")
	w.Table(op.Bound)
	w.S("\n) AS b\nON ")
	w.Col("t", op.Column)
	w.S(" <= ")
	w.Col("b", ir.SequenceColumn)
	w.S("\nWHEN MATCHED THEN DELETE")
}

func createSchema(w *Writer, op ir.CreateSchema) {
	w.S("CREATE SCHEMA IF NOT EXISTS ")
	w.Table(ir.Table{Parts: op.Schema})
}

func dropTable(w *Writer, op ir.DropTable) {
	w.S("DROP TABLE IF EXISTS ")
	w.Table(op.Table)
}

func insertValuesIfAbsent(w *Writer, op ir.InsertValues) {
	InsertValues(w, op)
	if len(op.IfAbsentKey) > 0 {
		w.S("\nON CONFLICT (")
		w.Idents("", op.IfAbsentKey)
		w.S(") DO NOTHING")
	}
}

func update(w *Writer, op ir.Update) {
	w.S("UPDATE ")
	w.Table(op.Table)
	w.S("\nSET ")
	for i, a := range op.Set {
		if i > 0 {
			w.S(",\n    ")
		}
		// A column set twice takes the value it is set to last.
		v := a.Value
		for _, b := range op.Set[i+1:] {
			if b.Column == a.Column {
				v = b.Value
			}
		}
		w.Col("", a.Column)
		w.S(" = ")
		Expr(w, "", v)
	}
	if op.Where != nil {
		w.S("\nWHERE ")
		Expr(w, "", op.Where)
	}
}

func selectRows(w *Writer, op ir.SelectRows) {
	w.S("SELECT ")
	w.Idents("", op.Columns)
	w.S("\nFROM ")
	w.Table(op.Table)
	if op.Where != nil {
		w.S("\nWHERE ")
		Expr(w, "", op.Where)
	}
	OrderBy(w, op.OrderBy)
	if op.Limit > 0 {
		w.S("\nLIMIT ")
		w.Int(op.Limit)
	}
}

func stageRows(w *Writer, op ir.StageRows) {
	w.S("INSERT INTO ")
	w.Table(op.Into)
	w.S(" (")
	w.Idents("", op.Columns)
	w.S(")\n")
	Deduped(w, Selection{Source: op.Source, Columns: op.Columns, Window: op.Window, Where: op.Where, Dedupe: op.Dedupe, Range: op.Range, Narrow: true})
}

// retractKeys names the target by its own name, not an alias: not every
// engine's DELETE takes one (Trino, Redshift, MariaDB).
func retractKeys(w *Writer, op ir.RetractKeys) {
	target := ownName(w, op.Target)
	w.S("DELETE FROM ")
	w.Table(op.Target)
	w.S("\nWHERE EXISTS (\n  SELECT 1 FROM ")
	w.Table(op.Stage)
	w.S(" AS s\n  WHERE ")
	keyMatchOf(w, target, op.Key, op.NullSafe)
	if op.Where != nil {
		w.S("\n    AND (")
		Expr(w, "s", op.Where)
		w.S(")")
	}
	if op.Older != "" {
		w.S("\n    AND ")
		OlderOf(w, Alias("s"), target, op.Older)
	}
	w.S("\n)")
}

func replacePartition(w *Writer, op ir.ReplacePartition) {
	w.S("DELETE FROM ")
	w.Table(op.Target)
	w.S("\nWHERE ")
	WindowPred(w, "", op.Range)
	w.End()
	w.S("INSERT INTO ")
	w.Table(op.Target)
	w.S(" (")
	w.Idents("", op.Columns)
	w.S(")\nSELECT ")
	w.Idents("", op.Columns)
	w.S("\nFROM ")
	w.Table(op.Stage)
	w.S("\nWHERE ")
	WindowPred(w, "", op.Range)
}

func countSource(w *Writer, op ir.CountSource) {
	if op.Keep != nil && op.Keep.Dedupe != nil {
		w.S("SELECT COUNT(*)\nFROM ")
		kept(w, op.Source, nil, op.Window, *op.Keep)
		if op.Where != nil {
			w.S("\nWHERE ")
			Expr(w, "", op.Where)
		}
		return
	}
	w.S("SELECT COUNT(*)\nFROM ")
	From(w, op.Source)
	t := terms{w: w, first: "\nWHERE ", sep: "\n  AND "}
	if windowed(op.Window) {
		t.next()
		WindowPred(w, "", op.Window)
	}
	if windowed(op.Range) {
		t.next()
		WindowPred(w, "", op.Range)
	}
	if op.Keep != nil && op.Keep.Where != nil {
		t.next()
		Expr(w, "", op.Keep.Where)
	}
	if op.Where != nil {
		t.next()
		Expr(w, "", op.Where)
	}
}

func probeColumns(w *Writer, op ir.ProbeColumns) {
	w.S("SELECT ")
	if len(op.Columns) > 0 {
		w.Idents("", op.Columns)
	} else {
		w.S("*")
	}
	// A predicate no row passes: the engine plans the read, types the
	// columns, and reads nothing.
	w.S("\nFROM ")
	From(w, op.Source)
	w.S("\nWHERE 1 = 0")
}

func addColumn(w *Writer, op ir.AddColumn) {
	w.S("ALTER TABLE ")
	w.Table(op.Table)
	w.S(" ADD COLUMN ")
	w.Col("", op.Column.Name)
	w.S(" ")
	w.Type(op.Column.Type)
}

func alterColumnType(w *Writer, op ir.AlterColumnType) {
	w.S("ALTER TABLE ")
	w.Table(op.Table)
	w.S(" ALTER COLUMN ")
	w.Col("", op.Column.Name)
	w.S(" TYPE ")
	w.Type(op.Column.Type)
}

func dropColumn(w *Writer, op ir.DropColumn) {
	w.S("ALTER TABLE ")
	w.Table(op.Table)
	w.S(" DROP COLUMN ")
	w.Col("", op.Column)
}

func profileColumns(w *Writer, op ir.ProfileColumns) {
	w.S("SELECT COUNT(*) AS incrc_rows")
	for i, c := range op.Columns {
		w.S(",\n  COUNT(")
		w.Col("", c)
		w.S(") AS n")
		w.Int(i)
	}
	for i, c := range op.Min {
		w.S(",\n  MIN(")
		w.Col("", c)
		w.S(") AS min")
		w.Int(i)
	}
	w.S("\nFROM ")
	From(w, op.Source)
}

func sourceMax(w *Writer, op ir.SourceMax) {
	w.S("SELECT MAX(")
	w.Col("", op.Column)
	w.S(")\nFROM ")
	From(w, op.Source)
}

func hasRows(w *Writer, op ir.HasRows) {
	w.S("SELECT CASE WHEN EXISTS (SELECT 1 FROM ")
	w.Table(op.Table)
	w.S(") THEN 1 ELSE 0 END")
}

func countRows(w *Writer, op ir.CountRows) {
	w.S("SELECT COUNT(*)\nFROM ")
	w.Table(op.Table)
	if op.Where != nil {
		w.S("\nWHERE ")
		Expr(w, "", op.Where)
	}
}

func deleteRows(w *Writer, op ir.DeleteRows) {
	w.S("DELETE FROM ")
	w.Table(op.Table)
	if op.Where != nil {
		w.S("\nWHERE ")
		Expr(w, "", op.Where)
	}
}

func duplicateKey(w *Writer, op ir.DuplicateKey) {
	w.S("SELECT ")
	w.Idents("", op.Key)
	w.S(", COUNT(*)\nFROM ")
	w.Table(op.Table)
	w.S("\nGROUP BY ")
	w.Idents("", op.Key)
	w.S("\nHAVING COUNT(*) > 1\nORDER BY ")
	w.Idents("", op.Key)
	w.S("\nLIMIT 1")
}

func versionedKeys(w *Writer, op ir.VersionedKeys) {
	w.S("SELECT COUNT(*)\nFROM (\n  SELECT ")
	w.Idents("", op.Key)
	w.S("\n  FROM ")
	mark := len(w.cur)
	From(w, op.Source)
	w.indentSince(mark, "  ")
	if windowed(op.Window) {
		w.S("\n  WHERE ")
		WindowPred(w, "", op.Window)
	}
	w.S("\n  GROUP BY ")
	w.Idents("", op.Key)
	w.S("\n  HAVING COUNT(*) > 1\n) AS incrc_versions")
}

func countMatched(w *Writer, op ir.CountMatched) {
	if op.Tally {
		// The target is keyed by Key: a row matches at most one.
		k := op.Key[0]
		w.S("SELECT COUNT(*) AS ")
		w.Col("", ir.RegRead)
		w.S(", COUNT(*) - COUNT(")
		w.Col("t", k)
		w.S(") AS ")
		w.Col("", ir.RegInserted)
		if op.Version != "" {
			w.S(", COUNT(")
			w.Col("t", k)
			w.S(") - COUNT(CASE WHEN ")
			Older(w, "t", "s", op.Version)
			w.S(" THEN 1 END) AS ")
			w.Col("", ir.RegUpdated)
			w.S(", COUNT(CASE WHEN ")
			Older(w, "t", "s", op.Version)
			w.S(" THEN 1 END) AS ")
			w.Col("", ir.RegIgnored)
		} else {
			w.S(", COUNT(")
			w.Col("t", k)
			w.S(") AS ")
			w.Col("", ir.RegUpdated)
		}
		w.S("\nFROM ")
		MergeSource(w, op.Stage, op.Source, op.Window, matchedCols(op))
		w.S(" AS s\nLEFT JOIN ")
		w.Table(op.Target)
		w.S(" AS t ON ")
		keyMatch(w, "t", op.Key, op.NullSafe)
		return
	}
	w.S("SELECT COUNT(*)\nFROM ")
	MergeSource(w, op.Stage, op.Source, op.Window, matchedCols(op))
	w.S(" AS s\nWHERE EXISTS (\n  SELECT 1 FROM ")
	w.Table(op.Target)
	w.S(" AS t\n  WHERE ")
	keyMatch(w, "t", op.Key, op.NullSafe)
	if op.Version != "" {
		w.S("\n    AND ")
		Newer(w, "t", "s", op.Version)
	}
	w.S("\n)")
}

func insertFrom(w *Writer, op ir.InsertFrom) {
	w.S("INSERT INTO ")
	w.Table(op.Into)
	w.S(" (")
	w.Idents("", op.Columns)
	w.S(")\nSELECT ")
	w.Idents("", op.Columns)
	w.S("\nFROM ")
	w.Table(op.From)
}

func updateMatched(w *Writer, op ir.UpdateMatched) {
	w.S("MERGE INTO ")
	w.Table(op.Target)
	w.S(" AS t\nUSING ")
	w.Table(op.Stage)
	w.S(" AS s\nON ")
	keyMatch(w, "t", op.Key, false)
	w.S("\nWHEN MATCHED THEN UPDATE SET\n  ")
	Assignments(w, "", op.Set, ",\n  ")
}

// ownName qualifies the columns of a DELETE's target by its own name,
// not an alias, which not every engine's DELETE takes (Trino, Redshift,
// MariaDB): its last part, unless the engine names tables its own way
// (TableNamer).
func ownName(w *Writer, t ir.Table) Qual {
	if _, ok := w.d.(TableNamer); ok {
		return Named(t)
	}
	return Named(ir.Table{Parts: []string{t.Name()}})
}

// CreateTable spells CREATE TABLE; temp is the engine's word for a
// session-scoped table (TEMPORARY, TEMP). A temporary table is dropped
// first by the plan, so it is created unconditionally.
func CreateTable(w *Writer, op ir.CreateTable, temp string) {
	CreateTableStyled(w, op, TableStyle{Temporary: "CREATE " + temp + " TABLE", PrimaryKey: true})
}

// CreateIndexIfNotExists spells CREATE INDEX IF NOT EXISTS. The index
// lives in the table's schema, where its name must be unique.
func CreateIndexIfNotExists(w *Writer, op ir.CreateIndex) {
	w.S("CREATE INDEX IF NOT EXISTS ")
	w.Col("", op.Name)
	w.S(" ON ")
	w.Table(op.Table)
	w.S(" (")
	w.Idents("", op.Columns)
	w.S(")")
}

// InsertValues spells INSERT INTO t (cols) VALUES (...).
func InsertValues(w *Writer, op ir.InsertValues) {
	w.S("INSERT INTO ")
	w.Table(op.Table)
	w.S(" (")
	w.Idents("", op.Columns)
	w.S(")\nVALUES (")
	for i, v := range op.Values {
		if i > 0 {
			w.S(", ")
		}
		Expr(w, "", v)
	}
	w.S(")")
}

// OrderBy appends an ORDER BY clause.
func OrderBy(w *Writer, order []ir.Order) {
	if len(order) == 0 {
		return
	}
	w.S("\nORDER BY ")
	for i, o := range order {
		if i > 0 {
			w.S(", ")
		}
		w.Col("", o.Column)
		if o.Desc {
			w.S(" DESC")
		}
	}
}

// fileScan spells the read of a files source: DuckDB's reader of the
// format over the glob (or the list of paths bound to a parameter), with
// key=value folders as columns. Only DuckDB reads files: incrc reads them
// with its embedded one, whatever the target.
func fileScan(w *Writer, f *ir.FileScan) {
	if w.d.Name() != "duckdb" {
		w.Fail(fmt.Errorf("%s: files are read by the embedded DuckDB, never by the target: a files source's statements are spelled for duckdb", w.d.Name()))
		return
	}
	switch f.Format {
	case "csv":
		w.S("read_csv(")
	case "json":
		w.S("read_json(")
	default:
		w.S("read_parquet(")
	}
	if f.Param != "" {
		w.Param(f.Param)
	} else {
		w.String(f.Glob)
	}
	w.S(", hive_partitioning = true, union_by_name = true")
	if f.Format == "csv" {
		w.S(", header = true")
		if len(f.Types) > 0 {
			// By name, not columns = (by position): files may order their
			// columns differently and hold more than are declared.
			w.S(", types = {")
			for i, c := range f.Types {
				if i > 0 {
					w.S(", ")
				}
				t, err := w.d.ColumnType(c.Type)
				if err != nil {
					w.Fail(err)
					return
				}
				w.String(c.Name)
				w.S(": ")
				w.String(t)
			}
			w.S("}")
		}
	}
	w.S(") AS src")
}

// Selection is what Deduped reads: the columns of a source in a window,
// one row per key when Dedupe is set.
type Selection struct {
	Source  ir.Relation
	Columns []string
	Window  ir.Window
	// Where, when set, is more of what a row must pass to be read, before
	// the dedupe.
	Where  ir.Expr
	Dedupe *ir.Dedupe
	// Range, when set, is a range on a column that the kept row must fall
	// in; it applies after the dedupe (a key whose newest version left the
	// range is not in it).
	Range ir.Window
	// Narrow: the ranking reads only keys that have some version in the
	// range: the same rows, without ranking the whole source for one
	// partition (a wide range is cheaper without the semi-join).
	Narrow bool
	// Also, when set, is a predicate ANDed outside the dedupe (after the
	// window, so parameter markers stay in text order).
	Also ir.Expr
}

// Deduped spells SELECT cols FROM source WHERE window, keeping one row per
// key with ROW_NUMBER(), the spelling every engine has.
func Deduped(w *Writer, sel Selection) {
	d := sel.Dedupe
	more := func(t *terms) {
		if sel.Also != nil {
			t.next()
			Expr(w, "", sel.Also)
		}
		if sel.Range.Column != "" {
			t.next()
			WindowPred(w, "", sel.Range)
		}
	}
	if d == nil {
		w.S("SELECT ")
		w.Idents("", sel.Columns)
		w.S("\nFROM ")
		From(w, sel.Source)
		t := terms{w: w, first: "\nWHERE ", sep: "\n  AND "}
		if windowed(sel.Window) {
			t.next()
			WindowPred(w, "", sel.Window)
		}
		if sel.Where != nil {
			t.next()
			Expr(w, "", sel.Where)
		}
		more(&t)
		return
	}
	w.S("SELECT ")
	w.Idents("", sel.Columns)
	w.S("\nFROM (\n  SELECT ")
	w.Idents("", sel.Columns)
	w.S(",\n    ROW_NUMBER() OVER (PARTITION BY ")
	w.Idents("", d.Key)
	if len(d.OrderBy) > 0 {
		w.S(" ORDER BY ")
		dedupeOrder(w, d.OrderBy, d.JSON)
	}
	w.S(") AS incrc_rn\n  FROM ")
	mark := len(w.cur)
	From(w, sel.Source)
	if !sel.Source.Derived() {
		w.S(" AS src")
	}
	w.indentSince(mark, "  ")
	t := terms{w: w, first: "\n  WHERE ", sep: "\n    AND "}
	if windowed(sel.Window) {
		t.next()
		WindowPred(w, "", sel.Window)
	}
	if sel.Where != nil {
		t.next()
		Expr(w, "", sel.Where)
	}
	if sel.Narrow && sel.Range.Column != "" {
		t.next()
		keysIn(w, sel.Source, sel.Window, d, sel.Range)
	}
	w.S("\n) AS ranked\nWHERE incrc_rn = 1")
	more(&terms{w: w, sep: "\n  AND ", n: 1})
}

// keysIn spells EXISTS (a version of src's key in the window and the
// range): the semi-join that restricts a dedupe to the keys it can keep.
// A nullable key matches NULL-safely, so a NULL key part is never lost;
// others match with =, which every engine can serve from an index.
func keysIn(w *Writer, src ir.Relation, win ir.Window, d *ir.Dedupe, rng ir.Window) {
	w.S("EXISTS (\n      SELECT 1 FROM ")
	mark := len(w.cur)
	FromAs(w, src, "incrc_k")
	w.indentSince(mark, "      ")
	t := terms{w: w, first: "\n      WHERE ", sep: "\n        AND "}
	for _, k := range d.Key {
		t.next()
		if d.NullSafe {
			w.d.NullSafeEqual(w, func() { w.Col("incrc_k", k) }, func() { w.Col("src", k) })
		} else {
			w.Col("incrc_k", k)
			w.S(" = ")
			w.Col("src", k)
		}
	}
	if windowed(win) {
		t.next()
		WindowPred(w, "incrc_k", win)
	}
	t.next()
	WindowPred(w, "incrc_k", rng)
	w.S("\n    )")
}

// QuarantineRows spells the copy of invalid rows into quarantine.
func QuarantineRows(w *Writer, op ir.QuarantineRows) {
	w.S("INSERT INTO ")
	w.Table(op.Into)
	w.S(" (")
	w.Col("", "incrc_run_id")
	w.S(", ")
	w.Col("", "incrc_reason")
	w.S(", ")
	w.Idents("", op.Columns)
	w.S(")\nSELECT ")
	w.Param("run_id")
	w.S(",\n  CASE")
	for _, r := range op.Rules {
		w.S("\n    WHEN ")
		Expr(w, "", r.Invalid)
		w.S(" THEN ")
		w.String(r.Reason)
	}
	w.S("\n  END,\n  ")
	w.Idents("", op.Columns)
	w.S("\nFROM ")
	t := terms{w: w, first: "\nWHERE ", sep: "\n  AND "}
	if op.Keep != nil && op.Keep.Dedupe != nil {
		kept(w, op.From, op.Columns, op.Window, *op.Keep)
	} else {
		From(w, op.From)
		if windowed(op.Window) {
			t.next()
			WindowPred(w, "", op.Window)
		}
		if op.Keep != nil && op.Keep.Where != nil {
			t.next()
			Expr(w, "", op.Keep.Where)
		}
	}
	open, close := "", ""
	if t.n > 0 {
		w.S("\n  AND ")
		if len(op.Rules) > 1 {
			open, close = "(", ")"
		}
	} else {
		w.S("\nWHERE ")
	}
	// Each rule is spelled again rather than its text reused: a marker
	// written twice is bound twice, in the order of the text.
	w.S(open)
	for i, r := range op.Rules {
		if i > 0 {
			w.S("\n   OR ")
		}
		Expr(w, "", r.Invalid)
	}
	w.S(close)
}

// KeptRows spells SELECT cols of the rows a full refresh keeps that pass
// valid (nil: all): what it writes.
func KeptRows(w *Writer, op ir.ReplaceAll) {
	Deduped(w, Selection{Source: op.Source, Columns: op.Columns, Window: op.Window, Where: op.Keep.Where, Dedupe: op.Keep.Dedupe, Also: op.Valid})
}

// ReplaceAll spells a full refresh's rewrite as clear (the engine's way
// of emptying the target, in the write transaction), then one INSERT ...
// SELECT of the rows kept.
func ReplaceAll(w *Writer, op ir.ReplaceAll, clear func()) {
	clear()
	w.End()
	w.S("INSERT INTO ")
	w.Table(op.Target)
	w.S(" (")
	w.Idents("", op.Columns)
	w.S(")\n")
	KeptRows(w, op)
}

// MergeAll spells a full refresh's rewrite of a target keyed by op.Key as
// one MERGE from the rows kept: a row that differs is updated, a new key
// inserted, a key the source no longer holds deleted, and an unchanged
// row left alone.
func MergeAll(w *Writer, op ir.ReplaceAll) {
	w.S("MERGE INTO ")
	w.Table(op.Target)
	w.S(" AS t\nUSING (\n")
	mark := len(w.cur)
	KeptRows(w, op)
	w.indentLines(mark, "  ")
	w.S("\n) AS s\nON ")
	keyMatch(w, "t", op.Key, false)
	if set := NonKey(op.Columns, op.Key); len(set) > 0 {
		w.S("\nWHEN MATCHED AND NOT (")
		for i, c := range set {
			if i > 0 {
				w.S(" AND ")
			}
			w.d.NullSafeEqual(w, func() { w.Col("t", c) }, func() { w.Col("s", c) })
		}
		w.S(") THEN UPDATE SET\n  ")
		SetList(w, "", set, FromStage(w), ",\n  ")
	}
	w.S("\nWHEN NOT MATCHED THEN INSERT (")
	w.Idents("", op.Columns)
	w.S(")\n  VALUES (")
	w.Idents("s", op.Columns)
	w.S(")\nWHEN NOT MATCHED BY SOURCE THEN DELETE")
}

// RenderVia spells an operation the way the dialect does: its own
// spelling when it has one, the shared one otherwise.
func RenderVia(w *Writer, op ir.Op) {
	if r, ok := w.d.(OpRenderer); ok {
		handled, err := r.RenderOp(w, op)
		if err != nil {
			w.Fail(err)
			return
		}
		if handled {
			return
		}
	}
	renderOp(w, op)
}

// KeyMatch spells t.k = s.k AND ... for the target t and the stage s.
func KeyMatch(w *Writer, key []string, nullSafe bool) { keyMatch(w, "t", key, nullSafe) }

// NonKey returns the columns that are not part of the key.
func NonKey(cols, key []string) []string {
	var out []string
	for _, c := range cols {
		if !containsStr(key, c) {
			out = append(out, c)
		}
	}
	return out
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Merge spells a standard MERGE of the stage into the target.
func Merge(w *Writer, op ir.MergeRows) {
	w.S("MERGE INTO ")
	w.Table(op.Target)
	w.S(" AS t\nUSING ")
	MergeInput(w, op)
	w.S(" AS s\nON ")
	keyMatch(w, "t", op.Key, op.NullSafe)
	if set := op.Updated(); len(set) > 0 {
		w.S("\nWHEN MATCHED ")
		if op.Version != "" {
			w.S("AND ")
			Newer(w, "t", "s", op.Version)
			w.S(" ")
		}
		w.S("THEN UPDATE SET\n  ")
		SetList(w, "", set, FromStage(w), ",\n  ")
	}
	w.S("\nWHEN NOT MATCHED THEN INSERT (")
	w.Idents("", op.Columns)
	w.S(")\n  VALUES (")
	w.Idents("s", op.Columns)
	w.S(")")
}

// matchedCols are the columns a CountMatched reads of what the merge
// reads: the key, and the version its guard compares.
func matchedCols(op ir.CountMatched) []string {
	if op.Version == "" {
		return op.Key
	}
	return append(append([]string(nil), op.Key...), op.Version)
}

// Newer spells a merge's version guard: the incoming row (alias in) is
// applied to the target's (alias t) where its version is newer or equal,
// NULL being the oldest version.
func Newer(w *Writer, t, in, version string) { NewerOf(w, Alias(t), Alias(in), version) }

// NewerOf is Newer for columns qualified otherwise than by an alias.
func NewerOf(w *Writer, t, in Qual, version string) {
	w.S("(")
	w.ColOf(t, version)
	w.S(" IS NULL OR ")
	w.ColOf(in, version)
	w.S(" >= ")
	w.ColOf(t, version)
	w.S(")")
}

// Older is Newer's negation: the target's version (alias t) is newer than
// the incoming row's (alias in).
func Older(w *Writer, t, in, version string) { OlderOf(w, Alias(t), Alias(in), version) }

// OlderOf is Older for columns qualified otherwise than by an alias.
func OlderOf(w *Writer, t, in Qual, version string) {
	w.S("(")
	w.ColOf(t, version)
	w.S(" IS NOT NULL AND (")
	w.ColOf(in, version)
	w.S(" IS NULL OR ")
	w.ColOf(in, version)
	w.S(" < ")
	w.ColOf(t, version)
	w.S("))")
}

// UpdateThenInsert spells a merge as two statements, for engines without
// MERGE when the key may be NULL (so no unique index can catch conflicts):
// update the matched rows, then insert the rest. updateFrom spells the
// first; the second is shared.
func UpdateThenInsert(w *Writer, op ir.MergeRows, updateFrom func()) {
	if len(op.Updated()) > 0 {
		updateFrom()
		w.End()
	}
	w.S("INSERT INTO ")
	w.Table(op.Target)
	w.S(" (")
	w.Idents("", op.Columns)
	w.S(")\nSELECT ")
	w.Idents("s", op.Columns)
	w.S("\nFROM ")
	MergeInput(w, op)
	w.S(" AS s\nWHERE NOT EXISTS (\n  SELECT 1 FROM ")
	w.Table(op.Target)
	w.S(" AS t\n  WHERE ")
	keyMatch(w, "t", op.Key, op.NullSafe)
	w.S("\n)")
}

// Aggregate spells one side of a reconciliation: per By value (or per
// partition) in a range, count and the measures.
func Aggregate(w *Writer, op ir.Aggregate) {
	key := func() { w.Col("", op.By) }
	if op.Partition != nil {
		by := key
		key = func() { Trunc(w, by, *op.Partition) }
	}
	w.S("SELECT ")
	key()
	w.S(" AS incrc_key")
	for i, m := range op.Measures {
		w.S(", ")
		switch {
		case m.Fn == "count" && m.Column == "":
			w.S("COUNT(*)")
		default:
			w.S(strings.ToUpper(m.Fn), "(")
			w.Col("", m.Column)
			w.S(")")
		}
		w.S(" AS m")
		w.Int(i)
	}
	rng := op.Range
	if rng.Column == "" {
		rng = ir.Window{Column: op.By, Lo: "from", Hi: "to"}
	}
	w.S("\nFROM ")
	if op.Dedupe == nil && op.Valid == nil && op.Window.Column == "" {
		From(w, op.Source)
		w.S("\nWHERE ")
		WindowPred(w, "", rng)
	} else {
		w.S("(\n")
		mark := len(w.cur)
		Deduped(w, Selection{Source: op.Source, Columns: allColumns(op), Window: op.Window, Dedupe: op.Dedupe, Range: rng, Narrow: op.Range.Column != "",
			Also: op.Valid})
		w.indentLines(mark, "  ")
		w.S("\n) AS r")
	}
	w.S("\nGROUP BY ")
	key()
	w.S("\nORDER BY ")
	key()
}

// Trunc writes the start of the partition a date or timestamp value (expr)
// falls in. A day partition of a date column is the value itself;
// everything else needs the dialect's TimeTruncer.
func Trunc(w *Writer, expr func(), p ir.Partitioning) {
	if p.Zone != "" {
		// Partitions in a time zone: the engine cuts rows into UTC hours,
		// and the runner finds each hour's day or month in the zone, so
		// that no engine needs its time-zone tables (SQLite has none,
		// MariaDB's are empty until loaded, DuckDB's need ICU).
		p.Granularity, p.Zone = "hour", ""
	}
	if p.Granularity == "day" && p.Type.Kind == ir.Date {
		expr()
		return
	}
	if t, ok := w.d.(TimeTruncer); ok {
		t.TruncTime(w, expr, p.Granularity, p.Type)
		return
	}
	w.Fail(Unsupported(w.d, p.Granularity+" partitions of a "+p.Type.String()+" column"))
	expr()
}

// DistinctPartitions spells the partitions the window's rows fall in, with
// the number of rows in each.
func DistinctPartitions(w *Writer, op ir.DistinctPartitions) {
	key := func() { Trunc(w, func() { w.Col("", op.Partition.Column) }, op.Partition) }
	w.S("SELECT ")
	key()
	w.S(" AS incrc_partition, COUNT(*) AS incrc_rows\nFROM ")
	From(w, op.Source)
	if windowed(op.Window) {
		w.S("\nWHERE ")
		WindowPred(w, "", op.Window)
	}
	w.S("\nGROUP BY ")
	key()
	w.S("\nORDER BY incrc_partition")
}

// allColumns lists what the deduped source side must carry: the key, the
// version order, the group, the measures and the quality rules' columns.
func allColumns(op ir.Aggregate) []string {
	var cols []string
	add := func(c string) {
		if c != "" && !containsStr(cols, c) {
			cols = append(cols, c)
		}
	}
	add(op.By)
	if op.Dedupe != nil {
		for _, k := range op.Dedupe.Key {
			add(k)
		}
		for _, o := range op.Dedupe.OrderBy {
			add(o.Column)
		}
	}
	for _, m := range op.Measures {
		add(m.Column)
	}
	if op.Valid != nil {
		for _, c := range ir.Columns(op.Valid) {
			add(c)
		}
	}
	return cols
}

// RankChanges spells the one ranking of a window's changes: ranked per
// key (and, for a soft delete's images, per kind too), newest first, in a
// subquery that reads the changes once (MariaDB cannot open a temporary
// table twice in one statement); joined once to the target and the
// tombstones, whose sequences it keeps beside the change; and kept when no
// row or tombstone of its key holds a sequence as new. Plain joins and
// comparisons: every engine spells them alike.
func RankChanges(w *Writer, op ir.RankChanges) {
	w.S("INSERT INTO ")
	w.Table(op.Into)
	w.S(" (")
	w.Idents("", op.Columns)
	w.S(", ")
	w.Col("", ir.TargetSequenceColumn)
	w.S(", ")
	w.Col("", ir.TombstoneSequenceColumn)
	if op.Soft {
		w.S(", ")
		w.Col("", ir.TombstoneAtColumn)
	}
	w.S(")\nSELECT ")
	w.Idents("r", op.Columns)
	w.S(", ")
	w.Col("t", ir.SequenceColumn)
	w.S(", ")
	w.Col("b", ir.SequenceColumn)
	if op.Soft {
		w.S(", ")
		w.Col("b", ir.DeletedAtColumn)
	}
	w.S("\nFROM (\n  SELECT ")
	w.Idents("", op.Columns)
	rank := func(name string, byKind bool) {
		w.S(",\n    ROW_NUMBER() OVER (PARTITION BY ")
		w.Idents("", op.Key)
		if byKind {
			w.S(", (")
			Expr(w, "", op.IsDelete)
			w.S(")")
		}
		w.S(" ORDER BY ")
		dedupeOrder(w, op.Order, nil)
		w.S(") AS ", name)
	}
	rank("incrc_rn", false)
	if op.Soft {
		rank("incrc_kind_rn", true)
	}
	w.S("\n  FROM ")
	w.Table(op.From)
	w.S("\n) AS r")
	join := func(alias string) {
		for i, k := range op.Key {
			if i > 0 {
				w.S(" AND ")
			}
			w.Col(alias, k)
			w.S(" = ")
			w.Col("r", k)
		}
	}
	w.S("\nLEFT JOIN ")
	w.Table(op.Target)
	w.S(" AS t ON ")
	join("t")
	w.S("\nLEFT JOIN ")
	w.Table(op.Tombstones)
	w.S(" AS b ON ")
	join("b")
	newer := func(alias string) {
		w.S("(")
		w.Col(alias, ir.SequenceColumn)
		w.S(" IS NULL OR ")
		w.Col("r", op.Sequence)
		w.S(" > ")
		w.Col(alias, ir.SequenceColumn)
		w.S(")")
	}
	isDelete := func() {
		w.S("(")
		Expr(w, "r", op.IsDelete)
		w.S(")")
	}
	if !op.Soft {
		// Whatever its kind, the newest change applies only when newer
		// than the target's row and the tombstone.
		w.S("\nWHERE r.incrc_rn = 1\n  AND ")
		newer("t")
		w.S("\n  AND ")
		newer("b")
		return
	}
	// A soft delete's image is the key's newest insert or update, also
	// under a newer delete (whose tombstone marks it rather than stops
	// it); a delete is the key's newest change.
	w.S("\nWHERE ")
	newer("t")
	w.S("\n  AND ((NOT ")
	isDelete()
	w.S(" AND r.incrc_kind_rn = 1)\n    OR (")
	isDelete()
	w.S(" AND r.incrc_rn = 1 AND ")
	newer("b")
	w.S("))")
}

// ResolveChanges spells the changes of one kind that RankChanges kept:
// one INSERT ... SELECT from the ranked changes, which reads no other
// table. An image older than a soft delete's tombstone takes its mark.
func ResolveChanges(w *Writer, op ir.ResolveChanges) {
	newerThanBook := func() {
		w.Col("", ir.TombstoneSequenceColumn)
		w.S(" > ")
		w.Col("", op.Sequence)
	}
	w.S("INSERT INTO ")
	w.Table(op.Into)
	w.S(" (")
	if op.Deletes {
		w.Idents("", op.Key)
		w.S(", ")
		w.Col("", ir.SequenceColumn)
		if op.At != "" {
			w.S(", ")
			w.Col("", ir.DeletedAtColumn)
		}
	} else {
		w.Idents("", op.Image)
		w.S(", ")
		w.Col("", ir.SequenceColumn)
		if op.Flag != "" {
			w.S(", ")
			w.Col("", op.Flag)
			w.S(", ")
			w.Col("", op.FlagAt)
		}
	}
	w.S(")\nSELECT ")
	if op.Deletes {
		w.Idents("", op.Key)
		w.S(", ")
		w.Col("", op.Sequence)
		if op.At != "" {
			w.S(", ")
			w.Col("", op.At)
		}
	} else {
		w.Idents("", op.Image)
		w.S(", ")
		w.Col("", op.Sequence)
		if op.Flag != "" {
			w.S(", CASE WHEN ")
			newerThanBook()
			w.S(" THEN TRUE ELSE FALSE END, CASE WHEN ")
			newerThanBook()
			w.S(" THEN ")
			w.Col("", ir.TombstoneAtColumn)
			w.S(" END")
		}
	}
	w.S("\nFROM ")
	w.Table(op.From)
	w.S("\nWHERE ")
	if !op.Deletes {
		w.S("NOT ")
	}
	w.S("(")
	Expr(w, "", op.IsDelete)
	w.S(")")
}

// CopyInsert spells the INSERT a copy step sends to an engine without a
// bulk path of its own (MariaDB/MySQL, SQLite): rows tuples of one marker
// per column, bound row after row. It is lexed back as every statement.
func CopyInsert(d Dialect, t ir.Table, cols []string, rows int) (Part, error) {
	params := make([]ir.Param, 0, rows*len(cols))
	for r := 0; r < rows; r++ {
		for i := range cols {
			params = append(params, ir.Param{Name: fmt.Sprintf("r%d_%d", r, i), Type: ir.PText})
		}
	}
	w := &Writer{d: d, declared: params}
	w.S("INSERT INTO ")
	w.Table(t)
	w.S(" (")
	w.Idents("", cols)
	w.S(")\nVALUES ")
	k := 0
	for r := 0; r < rows; r++ {
		if r > 0 {
			w.S(",\n  ")
		}
		w.S("(")
		for i := range cols {
			if i > 0 {
				w.S(", ")
			}
			w.Param(params[k].Name)
			k++
		}
		w.S(")")
	}
	w.End()
	if w.err != nil {
		return Part{}, w.err
	}
	if len(w.parts) != 1 {
		return Part{}, fmt.Errorf("%s: a copy's INSERT is one statement, got %d", d.Name(), len(w.parts))
	}
	return w.parts[0], nil
}

// dedupeOrder writes a dedupe's order, where the json columns are ordered
// by their text form on an engine that cannot order json (JSONOrderer).
func dedupeOrder(w *Writer, order []ir.Order, json []string) {
	j, jsonOrderer := w.d.(JSONOrderer)
	n, nullsLaster := w.d.(NullsLaster)
	for i, o := range order {
		if i > 0 {
			w.S(", ")
		}
		if !jsonOrderer && !nullsLaster {
			w.Col("", o.Column)
		} else {
			col := func() { w.Col("", o.Column) }
			if jsonOrderer && containsStr(json, o.Column) {
				plain := col
				col = func() { j.OrderJSON(w, plain) }
			}
			if nullsLaster {
				n.NullsLast(w, col, o.Desc)
				continue
			}
			col()
		}
		if o.Desc {
			w.S(" DESC")
		}
		w.S(" NULLS LAST")
	}
}

// From spells a relation in a FROM clause: a table, or the source query
// wrapped as a derived table named src. The query itself is embedded when
// the statement ends, as the engine reads it (see EmbedQuery).
func From(w *Writer, r ir.Relation) {
	switch {
	case len(r.Lookups) > 0:
		lookupFrom(w, r)
	case r.Query != "":
		w.S("(\n  ")
		w.Query(r.Query)
		w.S("\n) AS src")
	case r.Files != nil:
		fileScan(w, r.Files)
	default:
		w.Table(r.Table)
	}
}

// FromAs appends the relation r named alias: a derived table is renamed
// from src.
func FromAs(w *Writer, r ir.Relation, alias string) {
	mark := len(w.cur)
	From(w, r)
	if r.Derived() && bytes.HasSuffix(w.cur[mark:], []byte(" AS src")) {
		w.cur = w.cur[:len(w.cur)-len(" AS src")]
	}
	w.S(" AS ", alias)
}

// Indent writes what f writes with every line end it writes followed by
// prefix: the lines after the first are indented in place.
func (w *Writer) Indent(prefix string, f func()) {
	mark := len(w.cur)
	f()
	w.indentSince(mark, prefix)
}

// indentSince puts prefix after every line end written since mark: it
// indents what was written there (the lines after the first) in place.
func (w *Writer) indentSince(mark int, prefix string) {
	n := bytes.Count(w.cur[mark:], []byte{'\n'})
	if n == 0 || prefix == "" {
		return
	}
	end := len(w.cur)
	w.cur = slices.Grow(w.cur, n*len(prefix))[:end+n*len(prefix)]
	// From the end back, each byte moves by the prefixes before it.
	j := len(w.cur)
	for i := end - 1; i >= mark; i-- {
		c := w.cur[i]
		if c == '\n' {
			j -= len(prefix)
			copy(w.cur[j:], prefix)
		}
		j--
		w.cur[j] = c
	}
}

// indentLines prefixes every non-empty line written since mark, the
// first included.
func (w *Writer) indentLines(mark int, prefix string) {
	// The lines that get a prefix are those that start at mark or after a
	// line end and hold something.
	starts := 0
	for i := mark; i < len(w.cur); i++ {
		if (i == mark || w.cur[i-1] == '\n') && w.cur[i] != '\n' {
			starts++
		}
	}
	if starts == 0 || prefix == "" {
		return
	}
	end := len(w.cur)
	w.cur = slices.Grow(w.cur, starts*len(prefix))[:end+starts*len(prefix)]
	j := len(w.cur)
	for i := end - 1; i >= mark; i-- {
		c := w.cur[i]
		j--
		w.cur[j] = c
		if (i == mark || w.cur[i-1] == '\n') && c != '\n' {
			j -= len(prefix)
			copy(w.cur[j:], prefix)
		}
	}
}

// windowed says whether a window is bounded on some side: whether
// WindowPred spells anything.
func windowed(win ir.Window) bool { return win.Lo != "" || win.Hi != "" }

// terms writes a list of predicates: first before the first, sep between
// the others.
type terms struct {
	w          *Writer
	first, sep string
	n          int
}

// next starts a term.
func (t *terms) next() {
	if t.n == 0 {
		t.w.S(t.first)
	} else {
		t.w.S(t.sep)
	}
	t.n++
}

// WindowPred spells the half-open window col >= :lo AND col < :hi, or
// nothing when the window is open on both sides.
func WindowPred(w *Writer, alias string, win ir.Window) {
	if !windowed(win) {
		return
	}
	if win.Tie != "" {
		tiedWindowPred(w, alias, win)
		return
	}
	both := win.Lo != "" && win.Hi != ""
	if win.OrNull {
		w.S("(")
		if both {
			w.S("(")
		}
	}
	if win.Lo != "" {
		w.Col(alias, win.Column)
		w.S(" >= ")
		w.Param(win.Lo)
	}
	if win.Hi != "" {
		if both {
			w.S(" AND ")
		}
		w.Col(alias, win.Column)
		w.S(" < ")
		w.Param(win.Hi)
	}
	if win.OrNull {
		if both {
			w.S(")")
		}
		w.S(" OR ")
		w.Col(alias, win.Column)
		w.S(" IS NULL)")
	}
}

// kept spells the rows a full refresh keeps of a source's window as a
// derived table, incrc_rows: the window's rows that pass keep.Where, one
// per key by keep.Dedupe. cols are the columns it selects (nil: all the
// columns of keep).
func kept(w *Writer, src ir.Relation, cols []string, win ir.Window, keep ir.Keep) {
	if cols == nil {
		cols = keep.Columns
	}
	w.S("(\n")
	in := len(w.cur)
	Deduped(w, Selection{Source: src, Columns: cols, Window: win, Where: keep.Where, Dedupe: keep.Dedupe})
	w.indentLines(in, "  ")
	w.S("\n) AS incrc_rows")
}

// keyMatch spells target.k = s.k AND ... for the stage s.
func keyMatch(w *Writer, target string, key []string, nullSafe bool) {
	keyMatchOf(w, Alias(target), key, nullSafe)
}

// keyMatchOf is keyMatch with the target qualified by q.
func keyMatchOf(w *Writer, q Qual, key []string, nullSafe bool) {
	for i, k := range key {
		if i > 0 {
			w.S(" AND ")
		}
		if nullSafe {
			w.d.NullSafeEqual(w, func() { w.ColOf(q, k) }, func() { w.Col("s", k) })
		} else {
			w.ColOf(q, k)
			w.S(" = ")
			w.Col("s", k)
		}
	}
}

// MergeSource is what a merge (or its count) reads, to be aliased by the
// caller: the stage, or with src the source's rows in the window, as a
// subquery of the columns cols.
func MergeSource(w *Writer, stage ir.Table, src *ir.Relation, win ir.Window, cols []string) {
	if src == nil {
		w.Table(stage)
		return
	}
	w.S("(\n  ")
	in := len(w.cur)
	Deduped(w, Selection{Source: *src, Columns: cols, Window: win})
	w.indentSince(in, "  ")
	w.S("\n)")
}

// MergeInput is what a merge reads (see MergeSource): the stage, or the
// source's window.
func MergeInput(w *Writer, op ir.MergeRows) {
	MergeSource(w, op.Stage, op.Source, op.Window, op.Columns)
}

// MergeFrom is MergeInput for a FROM clause that takes no alias of its
// own: a subquery of the source's window is named s.
func MergeFrom(w *Writer, op ir.MergeRows) {
	MergeInput(w, op)
	if op.Source != nil {
		w.S(" AS s")
	}
}

// FromStage writes the value of a column in an update from the stage:
// s.col.
func FromStage(w *Writer) func(string) {
	return func(c string) { w.Col("s", c) }
}

// SetList spells the assignments of an UPDATE's SET or of a merge's
// update clause, alias.col = value(col) for each column, joined by sep:
// the one loop every engine's spelling of an update shares. value writes
// the value of a column.
func SetList(w *Writer, alias string, cols []string, value func(col string), sep string) {
	for i, c := range cols {
		if i > 0 {
			w.S(sep)
		}
		w.Col(alias, c)
		w.S(" = ")
		value(c)
	}
}

// Assignments spells an UpdateMatched's SET list: alias.col = value, each
// value an expression of the stage row s.
func Assignments(w *Writer, alias string, set []ir.Assign, sep string) {
	for i, a := range set {
		if i > 0 {
			w.S(sep)
		}
		w.Col(alias, a.Column)
		w.S(" = ")
		Expr(w, "s", a.Value)
	}
}

// tiedWindowPred spells a window with a tiebreak: the row-value comparison
// (col, tie) >= (lo, lo_id) AND (col, tie) < (hi, hi_id), expanded (not
// every engine compares row values, nor plans them on an index), or the
// rows whose col is NULL by tie alone, lo_id <= tie < hi_id.
func tiedWindowPred(w *Writer, alias string, win ir.Window) {
	c := func() { w.Col(alias, win.Column) }
	t := func() { w.Col(alias, win.Tie) }
	w.S("((")
	if win.Lo != "" {
		if win.LooseLo || win.LoID == "" {
			c()
			w.S(" >= ")
			w.Param(win.Lo)
		} else {
			w.S("(")
			c()
			w.S(" > ")
			w.Param(win.Lo)
			w.S(" OR (")
			c()
			w.S(" = ")
			w.Param(win.Lo)
			w.S(" AND ")
			t()
			w.S(" >= ")
			w.Param(win.LoID)
			w.S("))")
		}
	}
	if win.Hi != "" {
		if win.Lo != "" {
			w.S(" AND ")
		}
		if win.HiID == "" {
			c()
			w.S(" < ")
			w.Param(win.Hi)
		} else {
			w.S("(")
			c()
			w.S(" < ")
			w.Param(win.Hi)
			w.S(" OR (")
			c()
			w.S(" = ")
			w.Param(win.Hi)
			w.S(" AND ")
			t()
			w.S(" < ")
			w.Param(win.HiID)
			w.S("))")
		}
	}
	w.S(") OR (")
	c()
	w.S(" IS NULL")
	if win.LoID != "" {
		w.S(" AND ")
		t()
		w.S(" >= ")
		w.Param(win.LoID)
	}
	if win.HiID != "" {
		w.S(" AND ")
		t()
		w.S(" < ")
		w.Param(win.HiID)
	}
	if win.LoID == "" && win.HiID == "" {
		w.S(" AND ")
		t()
		w.S(" IS NOT NULL")
	}
	w.S(")")
	if win.OrNull {
		w.S(" OR (")
		c()
		w.S(" IS NULL AND ")
		t()
		w.S(" IS NULL)")
	}
	w.S(")")
}

// CheckQuery reads a plan's source query with an engine's rules, as
// rendering for that engine must: validation read it with the Portable
// rules, and this reading refuses what only that engine reads differently
// or what its rules cannot classify. The error names each problem at its
// place in the spec, path:line:col: message, one a line in the spec's
// order (at no place for a plan built without a spec), as a *QueryError.
func CheckQuery(p *ir.Plan, r *sqllex.Rules) error {
	q := p.Source.Query
	if q == "" {
		return nil
	}
	wm := ""
	if p.Watermark != nil {
		wm = p.Watermark.Name
	}
	s := p.SourceQuery
	// Lowering trims the query: offsets in it start after the leading
	// space.
	lead := max(strings.Index(s.Value, q), 0)
	type problem struct {
		at  ir.Pos
		msg string
	}
	var ps []problem
	for _, pr := range sqllex.QueryProblems(r, q, wm) {
		ps = append(ps, problem{s.At(lead + pr.Off), "source.query, as " + r.Name + " reads it: " + pr.Msg})
	}
	if len(ps) == 0 {
		return nil
	}
	slices.SortStableFunc(ps, func(a, b problem) int { return a.at.Compare(b.at) })
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.at.String() + ": " + p.msg
	}
	return &QueryError{strings.Join(lines, "\n")}
}

// QueryError is CheckQuery's error: every line of it is at its place in
// the spec already, so a caller adds no position of its own.
type QueryError struct{ msg string }

func (e *QueryError) Error() string { return e.msg }
