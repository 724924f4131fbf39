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
	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// Dialect is MariaDB / MySQL.
type Dialect struct{}

var (
	_ dialects.Dialect      = (*Dialect)(nil)
	_ dialects.OpRenderer   = (*Dialect)(nil)
	_ dialects.StringQuoter = (*Dialect)(nil)
)

func (*Dialect) Name() dialects.Name { return "mysql" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: true, TransactionalDDL: false, Executed: true, Heartbeat: true,
		Note: "MariaDB 10.11 / MySQL 8 (InnoDB): DDL commits implicitly, so it all runs before the write transaction."}
}

func (*Dialect) QuoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func (*Dialect) Placeholder(int) string { return "?" }

func (*Dialect) Lexer() *sqllex.Rules { return sqllex.MySQL }

// StringLit doubles quotes and backslashes: with or without
// NO_BACKSLASH_ESCAPES the literal ends where it should.
func (*Dialect) StringLit(s string) string { return dialects.DoubledString(s) }

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
				w.S("UPDATE ", w.Table(op.Target), " AS t\nJOIN ", w.Table(op.Stage), " AS s ON ", dialects.KeyMatch(w, op.Key, true), "\nSET ")
				for i, c := range dialects.NonKey(op.Columns, op.Key) {
					if i > 0 {
						w.S(",\n    ")
					}
					w.S(w.Col("t", c), " = ", w.Col("s", c))
				}
			})
			return true, nil
		}
		// VALUES(c) is the spelling MariaDB knows; MySQL 8 still accepts it.
		w.S("INSERT INTO ", w.Table(op.Target), " (", w.Idents("", op.Columns), ")\nSELECT ", w.Idents("", op.Columns),
			"\nFROM ", w.Table(op.Stage), "\nON DUPLICATE KEY UPDATE")
		set := dialects.NonKey(op.Columns, op.Key)
		if len(set) == 0 {
			set = op.Key[:1]
		}
		for i, c := range set {
			sep := ","
			if i == len(set)-1 {
				sep = ""
			}
			w.S("\n  ", w.Col("", c), " = VALUES(", w.Col("", c), ")", sep)
		}
		return true, nil
	}
	return false, nil
}

// TruncTime spells the start of a partition.
func (*Dialect) TruncTime(w *dialects.Writer, expr, granularity string, _ compiler.Type) string {
	switch granularity {
	case "hour":
		return "DATE_FORMAT(" + expr + ", " + w.String("%Y-%m-%d %H:00:00") + ")"
	case "month":
		return "DATE_FORMAT(" + expr + ", " + w.String("%Y-%m-01") + ")"
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
