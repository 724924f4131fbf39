// Package sqlite spells plans for SQLite 3.35 or later.
//
// SQLite has no MERGE: a merge is INSERT ... ON CONFLICT DO UPDATE, or an
// UPDATE ... FROM then an INSERT when a key column may be NULL. SQLite has
// no schemas either: a qualified name a.b is the table a_b, and "main" and
// "temp" qualify as usual. Dates and timestamps are TEXT in the one ISO
// form 'YYYY-MM-DD' / 'YYYY-MM-DD HH:MM:SS[.ffffff]', UTC, so that text
// order is time order.
package sqlite

import (
	"strings"
	"time"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// Dialect is SQLite.
type Dialect struct{}

var (
	_ dialects.Dialect     = (*Dialect)(nil)
	_ dialects.OpRenderer  = (*Dialect)(nil)
	_ dialects.TableNamer  = (*Dialect)(nil)
	_ dialects.TimeSpeller = (*Dialect)(nil)
	_ dialects.TimeTruncer = (*Dialect)(nil)
)

func (*Dialect) Name() dialects.Name { return "sqlite" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: true, FoldsNames: true, DefaultSchema: "main",
		Note: "SQLite has no schemas: a qualified name a.b is the table a_b. Times are ISO text in UTC."}
}

func (*Dialect) QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (*Dialect) Placeholder(int) string { return "?" }

func (*Dialect) Lexer() *sqllex.Rules { return sqllex.SQLite }

func (*Dialect) NullSafeEqual(w *dialects.Writer, a, b func()) { w.Infix(a, " IS ", b) }

func (*Dialect) BindTime(t time.Time, kind compiler.TypeKind) any {
	t = t.UTC()
	if kind == compiler.Date {
		return t.Format("2006-01-02")
	}
	if t.Nanosecond() == 0 {
		return t.Format("2006-01-02 15:04:05")
	}
	return t.Format("2006-01-02 15:04:05.000000")
}

// TableParts folds a schema into the table's name; main and temp stay.
func (d *Dialect) TableParts(t compiler.Table) []string {
	parts := t.Parts
	if len(parts) == 2 && (parts[0] == "main" || parts[0] == "temp") {
		return parts
	}
	return []string{strings.Join(parts, "_")}
}

// TableName spells TableParts quoted.
func (d *Dialect) TableName(t compiler.Table) string {
	parts := d.TableParts(t)
	for i, p := range parts {
		parts[i] = d.QuoteIdent(p)
	}
	return strings.Join(parts, ".")
}

// SQLite's names only choose a column's affinity; these keep dates and
// times as TEXT (see the package comment) and numbers as numbers.
var types = dialects.TypeNames{
	compiler.Smallint:    "INTEGER",
	compiler.Integer:     "INTEGER",
	compiler.Bigint:      "INTEGER",
	compiler.Decimal:     "NUMERIC",
	compiler.Double:      "REAL",
	compiler.Boolean:     "BOOLEAN",
	compiler.Text:        "TEXT",
	compiler.Varchar:     "TEXT",
	compiler.Date:        "DATE",
	compiler.Timestamp:   "TIMESTAMP",
	compiler.TimestampTZ: "TIMESTAMP",
	compiler.JSON:        "TEXT",
}

func (*Dialect) ColumnType(t compiler.Type) (string, error) { return types.Spell("sqlite", t) }

func (d *Dialect) RenderOp(w *dialects.Writer, op compiler.Op) (bool, error) {
	switch op := op.(type) {
	case compiler.CreateSchema:
		return true, nil // no schemas: see TableName
	case compiler.CreateIndex:
		dialects.CreateIndexIfNotExists(w, op)
		return true, nil
	case compiler.IndexExists:
		w.S("SELECT COUNT(*)\nFROM ")
		if parts := op.Table.Parts; len(parts) > 1 {
			w.Table(compiler.Table{Parts: []string{parts[len(parts)-2], "sqlite_master"}})
		} else {
			w.S("sqlite_master")
		}
		w.S("\nWHERE type = ")
		w.String("index")
		w.S(" AND tbl_name = ")
		w.String(op.Table.Parts[len(op.Table.Parts)-1])
		w.S(" AND name = ")
		w.String(op.Name)
		return true, nil
	case compiler.CreateTable:
		dialects.CreateTable(w, op, "TEMP")
		return true, nil
	case compiler.AlterColumnType:
		// A column keeps any value whatever its declared type: there is
		// nothing to widen, and no ALTER COLUMN to do it with.
		return false, dialects.Unsupported(d, "changing a column's type (SQLite keeps no column types)")
	case compiler.UpdateMatched:
		// SQLite has no MERGE: UPDATE ... FROM (3.33+).
		w.S("UPDATE ")
		w.Table(op.Target)
		w.S(" AS t\nSET ")
		dialects.Assignments(w, "", op.Set, ",\n    ")
		w.S("\nFROM ")
		w.Table(op.Stage)
		w.S(" AS s\nWHERE ")
		dialects.KeyMatch(w, op.Key, false)
		return true, nil
	case compiler.MergeRows:
		if op.NullSafe {
			dialects.UpdateThenInsert(w, op, func() {
				w.S("UPDATE ")
				w.Table(op.Target)
				w.S(" AS t\nSET ")
				dialects.SetList(w, "", op.Updated(), dialects.FromStage(w), ",\n    ")
				w.S("\nFROM ")
				dialects.MergeInput(w, op)
				w.S(" AS s\nWHERE ")
				dialects.KeyMatch(w, op.Key, true)
				if op.Version != "" {
					w.S(" AND ")
					dialects.Newer(w, "t", "s", op.Version)
				}
			})
			return true, nil
		}
		// WHERE true: without it SQLite's parser reads ON CONFLICT as a join constraint.
		w.S("INSERT INTO ")
		w.Table(op.Target)
		w.S(" (")
		w.Idents("", op.Columns)
		w.S(")\nSELECT ")
		w.Idents("", op.Columns)
		w.S("\nFROM ")
		dialects.MergeFrom(w, op)
		w.S("\nWHERE true\nON CONFLICT (")
		w.Idents("", op.Key)
		w.S(") DO ")
		set := op.Updated()
		if len(set) == 0 {
			w.S("NOTHING")
			return true, nil
		}
		w.S("UPDATE SET\n  ")
		dialects.SetList(w, "", set, func(c string) { w.Col("excluded", c) }, ",\n  ")
		if op.Version != "" {
			// The target's row is named by the table's own name here.
			w.S("\n  WHERE ")
			dialects.NewerOf(w, dialects.Named(op.Target), dialects.Alias("excluded"), op.Version)
		}
		return true, nil
	}
	return false, nil
}

// TruncTime spells the start of a partition in SQLite's ISO text form.
func (*Dialect) TruncTime(w *dialects.Writer, expr func(), granularity string, _ compiler.Type) {
	switch granularity {
	case "hour":
		w.S("strftime(")
		w.String("%Y-%m-%d %H:00:00")
		w.S(", ")
	case "month":
		w.S("strftime(")
		w.String("%Y-%m-01")
		w.S(", ")
	default:
		w.S("date(")
	}
	expr()
	w.S(")")
}

// TimeValue leaves a time as it is: SQLite keeps times as ISO text, and a
// CAST to DATE or TIMESTAMP would read that text as a number.
func (*Dialect) TimeValue(_ *dialects.Writer, expr func(), _ compiler.Type) { expr() }

// TimeText is the ISO text BindTime binds, so that a literal compares with
// stored values as text.
func (d *Dialect) TimeText(tm time.Time, t compiler.Type) string {
	return d.BindTime(tm, t.Kind).(string)
}

// ConvertTime turns a date into the timestamp of its midnight, or a
// timestamp into its day, in the ISO text form.
func (*Dialect) ConvertTime(w *dialects.Writer, expr func(), _, to compiler.Type) {
	if to.Kind == compiler.Date {
		w.S("date(")
	} else {
		w.S("datetime(")
	}
	expr()
	w.S(")")
}
