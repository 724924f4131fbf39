// Package mysql spells plans for MariaDB 10.11 and MySQL 8.
//
// Neither has MERGE: a merge is INSERT ... ON DUPLICATE KEY UPDATE (the
// target's primary key is the unique key), or a multi-table UPDATE then an
// INSERT when a key column may be NULL. DDL commits implicitly, so the
// runner runs all of it before the write transaction; temporary tables are
// the exception and are used for staging.
package mysql

import (
	"strings"
	"time"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
)

// Dialect is MariaDB / MySQL.
type Dialect struct{}

var (
	_ dialects.Dialect     = (*Dialect)(nil)
	_ dialects.OpRenderer  = (*Dialect)(nil)
	_ dialects.TimeTruncer = (*Dialect)(nil)
	_ dialects.NullsLaster = (*Dialect)(nil)
	_ dialects.SourceTyper = (*Dialect)(nil)
)

func (*Dialect) Name() dialects.Name { return "mysql" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: true, Heartbeat: true,
		Note: "MariaDB 10.11 / MySQL 8 (InnoDB): DDL commits implicitly, so it all runs before the write transaction."}
}

func (*Dialect) QuoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func (*Dialect) Placeholder(int) string { return "?" }

func (*Dialect) NullSafeEqual(a, b string) string { return a + " <=> " + b }

func (*Dialect) BindTime(t time.Time, _ compiler.TypeKind) any { return t.UTC() }

var types = dialects.TypeNames{
	compiler.Smallint: "SMALLINT",
	compiler.Integer:  "INT",
	compiler.Bigint:   "BIGINT",
	compiler.Decimal:  "DECIMAL(%d,%d)",
	compiler.Double:   "DOUBLE",
	compiler.Boolean:  "BOOLEAN",
	compiler.Text:     "LONGTEXT",
	compiler.Varchar:  "VARCHAR(%d)",
	compiler.Date:     "DATE",
	// DATETIME, not TIMESTAMP: no session time zone conversion, no 2038.
	compiler.Timestamp:   "DATETIME(6)",
	compiler.TimestampTZ: "DATETIME(6)",
	compiler.JSON:        "JSON",
}

func (*Dialect) ColumnType(t compiler.Type) (string, error) { return types.Spell("mysql", t) }

func (d *Dialect) RenderOp(w *dialects.Writer, op compiler.Op) (bool, error) {
	switch op := op.(type) {
	case compiler.DropTable:
		if op.Temporary {
			// TEMPORARY: a plain DROP TABLE would commit the open transaction.
			w.S("DROP TEMPORARY TABLE IF EXISTS ", w.Table(op.Table))
		} else {
			w.S("DROP TABLE IF EXISTS ", w.Table(op.Table))
		}
		return true, nil
	case compiler.InsertValues:
		dialects.InsertValues(w, op)
		if len(op.IfAbsentKey) > 0 {
			k := w.Col("", op.IfAbsentKey[0])
			w.S("\nON DUPLICATE KEY UPDATE ", k, " = ", k)
		}
		return true, nil
	case compiler.MergeRows:
		if op.NullSafe {
			dialects.UpdateThenInsert(w, op, func() {
				w.S("UPDATE ", w.Table(op.Target), " AS t\nJOIN ", w.Table(op.Stage), " AS s ON ", dialects.KeyMatch(w, op.Key, true),
					"\nSET ", dialects.SetList(w, "t", dialects.NonKey(op.Columns, op.Key), dialects.FromStage(w), ",\n    "))
			})
			return true, nil
		}
		// VALUES(c) is the spelling MariaDB knows; MySQL 8 still accepts it.
		w.S("INSERT INTO ", w.Table(op.Target), " (", w.Idents("", op.Columns), ")\nSELECT ", w.Idents("", op.Columns),
			"\nFROM ", w.Table(op.Stage), "\nON DUPLICATE KEY UPDATE\n  ")
		set := dialects.NonKey(op.Columns, op.Key)
		if len(set) == 0 {
			set = op.Key[:1]
		}
		w.S(dialects.SetList(w, "", set, func(c string) string { return "VALUES(" + w.Col("", c) + ")" }, ",\n  "))
		return true, nil
	}
	return false, nil
}

// TruncTime spells the start of a partition.
func (*Dialect) TruncTime(expr, granularity string, _ compiler.Type) string {
	switch granularity {
	case "hour":
		return "DATE_FORMAT(" + expr + ", '%Y-%m-%d %H:00:00')"
	case "month":
		return "DATE_FORMAT(" + expr + ", '%Y-%m-01')"
	}
	return "DATE(" + expr + ")"
}

// NullsLast sorts NULLs after every value: "x IS NULL" is 0 for values and
// 1 for NULL, and MariaDB has no NULLS LAST.
func (*Dialect) NullsLast(expr string, desc bool) string {
	if desc {
		return expr + " IS NULL, " + expr + " DESC"
	}
	return expr + " IS NULL, " + expr
}

// SourceType reads go-sql-driver/mysql's type names. TINYINT is left
// unchecked: it is also how MariaDB and MySQL store a BOOLEAN, and the
// driver cannot tell them apart. The driver reports no string length, and
// every TEXT flavour (LONGTEXT, a MariaDB JSON) as TEXT. TIMESTAMP holds
// an instant, converted to the session's zone: a timestamptz.
func (*Dialect) SourceType(c dialects.ColumnInfo) (compiler.Type, bool) {
	switch strings.ToUpper(c.TypeName) {
	case "SMALLINT", "UNSIGNED TINYINT":
		return compiler.Type{Kind: compiler.Smallint}, true
	case "MEDIUMINT", "INT", "UNSIGNED SMALLINT", "UNSIGNED MEDIUMINT":
		return compiler.Type{Kind: compiler.Integer}, true
	case "BIGINT", "UNSIGNED INT":
		return compiler.Type{Kind: compiler.Bigint}, true
	case "UNSIGNED BIGINT":
		return compiler.Type{Kind: compiler.Decimal, Precision: 20}, true
	case "DECIMAL":
		if !c.HasDecimal {
			return compiler.Type{}, false
		}
		return compiler.Type{Kind: compiler.Decimal, Precision: int(c.Precision), Scale: int(c.Scale)}, true
	case "DOUBLE", "FLOAT":
		return compiler.Type{Kind: compiler.Double}, true
	case "VARCHAR", "CHAR":
		return compiler.Type{Kind: compiler.Varchar}, true
	case "TEXT":
		return compiler.Type{Kind: compiler.Text}, true
	case "JSON":
		return compiler.Type{Kind: compiler.JSON}, true
	case "DATE":
		return compiler.Type{Kind: compiler.Date}, true
	case "DATETIME":
		return compiler.Type{Kind: compiler.Timestamp}, true
	case "TIMESTAMP":
		return compiler.Type{Kind: compiler.TimestampTZ}, true
	}
	return compiler.Type{}, false
}
