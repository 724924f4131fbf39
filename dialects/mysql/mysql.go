// Package mysql spells plans for MariaDB 10.11 and MySQL 8.
//
// Neither has MERGE: a merge is INSERT ... ON DUPLICATE KEY UPDATE (the
// target's primary key is the unique key), or a multi-table UPDATE then an
// INSERT when a key column may be NULL. DDL commits implicitly, so the
// runner runs all of it before the write transaction; temporary tables are
// the exception and are used for staging.
//
// A text column is LONGTEXT, which InnoDB cannot index whole: in a primary
// key it is a VARCHAR sized to InnoDB's key limit instead (see keyTypes).
package mysql

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// Dialect is MariaDB / MySQL.
type Dialect struct{}

var (
	_ dialects.Dialect       = (*Dialect)(nil)
	_ dialects.TableResolver = (*Dialect)(nil)
	_ dialects.OpRenderer    = (*Dialect)(nil)
	_ dialects.TimeTruncer   = (*Dialect)(nil)
	_ dialects.NullsLaster   = (*Dialect)(nil)
	_ dialects.SourceTyper   = (*Dialect)(nil)
	_ dialects.StringQuoter  = (*Dialect)(nil)
	_ dialects.TimeSpeller   = (*Dialect)(nil)
	_ dialects.ExactTexter   = (*Dialect)(nil)
)

func (*Dialect) Name() dialects.Name { return "mysql" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: true, Heartbeat: true,
		Note: "MariaDB 10.11 / MySQL 8 (InnoDB): DDL commits implicitly, so it all runs before the write transaction."}
}

// ResolveTable says which table t is: an unqualified name is in the
// connection's database, and names keep their case unless the server's
// lower_case_table_names folds them (Linux keeps it by default).
func (*Dialect) ResolveTable(t ir.Table) (string, []any) {
	schema := ""
	if s := t.Schema(); len(s) > 0 {
		schema = s[len(s)-1]
	}
	return "SELECT '', CASE WHEN @@lower_case_table_names = 0 THEN x.s ELSE LOWER(x.s) END, CASE WHEN @@lower_case_table_names = 0 THEN x.n ELSE LOWER(x.n) END\n" +
		"FROM (SELECT COALESCE(NULLIF(?, ''), DATABASE(), '') AS s, ? AS n) AS x", []any{schema, t.Name()}
}

func (*Dialect) QuoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func (*Dialect) Placeholder(int) string { return "?" }

func (*Dialect) Lexer() *sqllex.Rules { return sqllex.MySQL }

// StringLit doubles quotes and backslashes: with or without
// NO_BACKSLASH_ESCAPES the literal ends where it should.
func (*Dialect) StringLit(s string) string { return dialects.DoubledString(s) }

func (*Dialect) NullSafeEqual(w *dialects.Writer, a, b func()) { w.Infix(a, " <=> ", b) }

func (*Dialect) BindTime(t time.Time, _ ir.TypeKind) any { return t.UTC() }

var types = dialects.TypeNames{
	ir.Smallint: "SMALLINT",
	ir.Integer:  "INT",
	ir.Bigint:   "BIGINT",
	ir.Decimal:  "DECIMAL(%d,%d)",
	ir.Double:   "DOUBLE",
	ir.Boolean:  "BOOLEAN",
	ir.Text:     "LONGTEXT",
	ir.Varchar:  "VARCHAR(%d)",
	ir.Date:     "DATE",
	// DATETIME, not TIMESTAMP: no session time zone conversion, no 2038.
	ir.Timestamp:   "DATETIME(6)",
	ir.TimestampTZ: "DATETIME(6)",
	ir.JSON:        "JSON",
}

func (*Dialect) ColumnType(t ir.Type) (string, error) { return types.Spell("mysql", t) }

func (d *Dialect) RenderOp(w *dialects.Writer, op ir.Op) (bool, error) {
	switch op := op.(type) {
	case ir.SessionLock:
		sessionLock(w, op)
		return true, nil
	case ir.CreateTable:
		cols, err := keyTypes(op.Columns, op.PrimaryKey)
		if err != nil {
			return false, err
		}
		op.Columns = cols
		// The run log's index with the table: MySQL has no CREATE INDEX IF
		// NOT EXISTS (CreateIndex renders nothing here).
		dialects.CreateTableStyled(w, op, dialects.TableStyle{Temporary: "CREATE TEMPORARY TABLE", PrimaryKey: true, Indexes: true})
		return true, nil
	case ir.DropTable:
		dropTable(w, op)
		return true, nil
	case ir.AlterColumnType:
		alterColumnType(w, op)
		return true, nil
	case ir.InsertValues:
		insertValues(w, op)
		return true, nil
	case ir.ApplyVersions:
		dialects.ApplyVersionsInSteps(w, op, func() { updateCloses(w, op) })
		return true, nil
	case ir.UpdateMatched:
		updateMatched(w, op)
		return true, nil
	case ir.MergeRows:
		if op.NullSafe {
			mergeNullSafe(w, op)
		} else {
			upsert(w, op)
		}
		return true, nil
	}
	return false, nil
}

// mergeNullSafe updates, then inserts: ON DUPLICATE KEY UPDATE matches
// by a unique index, which never matches a NULL key part.
func mergeNullSafe(w *dialects.Writer, op ir.MergeRows) {
	dialects.UpdateThenInsert(w, op, func() {
		w.S("UPDATE ")
		w.Table(op.Target)
		w.S(" AS t\nJOIN ")
		dialects.MergeInput(w, op)
		w.S(" AS s ON ")
		dialects.KeyMatch(w, op.Key, true)
		w.S("\nSET ")
		dialects.SetList(w, "t", op.Updated(), dialects.FromStage(w), ",\n    ")
		if op.Version != "" {
			w.S("\nWHERE ")
			dialects.Newer(w, "t", "s", op.Version)
		}
	})
}

// upsert spells VALUES(c), which MariaDB knows; MySQL 8 still accepts it.
func upsert(w *dialects.Writer, op ir.MergeRows) {
	w.S("INSERT INTO ")
	w.Table(op.Target)
	w.S(" (")
	w.Idents("", op.Columns)
	w.S(")\nSELECT ")
	w.Idents("", op.Columns)
	w.S("\nFROM ")
	dialects.MergeFrom(w, op)
	w.S("\nON DUPLICATE KEY UPDATE\n  ")
	set := op.Updated()
	if len(set) == 0 {
		set = op.Key[:1]
	}
	value := func(c string) {
		w.S("VALUES(")
		w.Col("", c)
		w.S(")")
	}
	if op.Version != "" && contains(set, op.Version) {
		// The assignments run left to right, each seeing the ones
		// before: the version, which the guard of every other reads,
		// is assigned last. The guard reads the row the target held.
		set = append(without(set, op.Version), op.Version)
		target, incoming := dialects.Named(op.Target), value
		value = func(c string) {
			w.S("IF((")
			w.ColOf(target, op.Version)
			w.S(" IS NULL OR ")
			incoming(op.Version)
			w.S(" >= ")
			w.ColOf(target, op.Version)
			w.S("), VALUES(")
			w.Col("", c)
			w.S("), ")
			w.ColOf(target, c)
			w.S(")")
		}
	}
	dialects.SetList(w, "", set, value, ",\n  ")
}

// sessionLock takes or releases a named lock of the connection. Names are
// the server's, not the database's, so the database is in the name
// (hashed: a name is at most 64 characters).
func sessionLock(w *dialects.Writer, op ir.SessionLock) {
	name := func() {
		w.S("CONCAT(")
		w.String("incrc:")
		w.S(", SHA1(CONCAT(COALESCE(DATABASE(), ")
		w.String("")
		w.S("), ")
		if op.Guards == "lease" {
			w.String(" lease ")
			w.S(", ")
			w.Param("pipeline")
		} else {
			w.String(" setup")
		}
		w.S(")))")
	}
	switch {
	case op.Release:
		w.Call("SELECT RELEASE_LOCK", name)
	case op.Guards == "lease":
		w.S("SELECT COALESCE(")
		w.Call("GET_LOCK", name, ", 0")
		w.S(", 0)")
	default:
		// A setup takes milliseconds: a minute without the lock is a
		// setup that hangs, and the run fails saying so.
		w.S("SELECT COALESCE(")
		w.Call("GET_LOCK", name, ", 60")
		w.S(", 0)")
	}
}

func dropTable(w *dialects.Writer, op ir.DropTable) {
	if op.Temporary {
		// TEMPORARY: a plain DROP TABLE would commit the open transaction.
		w.S("DROP TEMPORARY TABLE IF EXISTS ")
	} else {
		w.S("DROP TABLE IF EXISTS ")
	}
	w.Table(op.Table)
}

// alterColumnType uses MODIFY, which restates the whole column: its
// NULL-ness too.
func alterColumnType(w *dialects.Writer, op ir.AlterColumnType) {
	w.S("ALTER TABLE ")
	w.Table(op.Table)
	w.S(" MODIFY COLUMN ")
	w.Col("", op.Column.Name)
	w.S(" ")
	w.Type(op.Column.Type)
	if op.Column.NotNull {
		w.S(" NOT NULL")
	}
}

func insertValues(w *dialects.Writer, op ir.InsertValues) {
	dialects.InsertValues(w, op)
	if len(op.IfAbsentKey) > 0 {
		w.S("\nON DUPLICATE KEY UPDATE ")
		w.Col("", op.IfAbsentKey[0])
		w.S(" = ")
		w.Col("", op.IfAbsentKey[0])
	}
}

// updateCloses sets the valid_to of the closed versions: a multi-table
// UPDATE, MySQL's spelling of UPDATE ... FROM.
func updateCloses(w *dialects.Writer, op ir.ApplyVersions) {
	v := op.Versioning
	w.S("UPDATE ")
	w.Table(v.Target)
	w.S(" AS t\nJOIN ")
	w.Table(op.Changes)
	w.S(" AS s ON ")
	dialects.KeyMatch(w, append(append([]string(nil), v.Key...), v.ValidFrom), false)
	w.S("\nSET ")
	w.Col("t", v.ValidTo)
	w.S(" = ")
	w.Col("s", v.ValidTo)
	w.S("\nWHERE ")
	dialects.CloseChange(w)
}

// updateMatched is a multi-table UPDATE: MariaDB and MySQL have no MERGE.
func updateMatched(w *dialects.Writer, op ir.UpdateMatched) {
	w.S("UPDATE ")
	w.Table(op.Target)
	w.S(" AS t\nJOIN ")
	w.Table(op.Stage)
	w.S(" AS s ON ")
	dialects.KeyMatch(w, op.Key, false)
	w.S("\nSET ")
	dialects.Assignments(w, "t", op.Set, ",\n    ")
}

// TimeValue is the shared CAST, but for versions numbered by an integer
// sequence: CAST takes SIGNED here, not the column types.
func (*Dialect) TimeValue(w *dialects.Writer, expr func(), t ir.Type) {
	if t.IsInteger() {
		dialects.Cast(w, expr, "SIGNED")
		return
	}
	dialects.CastTime(w, expr, t)
}

// TimeText is naive for every kind: a timestamptz is a DATETIME(6) here,
// which holds UTC wall-clock time (the session reads and binds UTC) and
// takes no offset.
func (*Dialect) TimeText(tm time.Time, t ir.Type) string {
	if t.Kind == ir.TimestampTZ {
		t.Kind = ir.Timestamp
	}
	return dialects.TimeText(tm, t)
}

// ConvertTime is the shared CAST.
func (*Dialect) ConvertTime(w *dialects.Writer, expr func(), _, to ir.Type) {
	dialects.CastTime(w, expr, to)
}

// TruncTime spells the start of a partition.
func (*Dialect) TruncTime(w *dialects.Writer, expr func(), granularity string, _ ir.Type) {
	switch granularity {
	case "hour", "month":
		w.S("DATE_FORMAT(")
		expr()
		w.S(", ")
		if granularity == "hour" {
			w.String("%Y-%m-%d %H:00:00")
		} else {
			w.String("%Y-%m-01")
		}
		w.S(")")
	default:
		w.S("DATE(")
		expr()
		w.S(")")
	}
}

// ExactText compares text as bytes: the default collations fold case and
// pad trailing spaces, so 'U' would equal 'u'. CAST, not the BINARY
// operator, which MySQL 8 deprecates.
func (*Dialect) ExactText(w *dialects.Writer, expr func()) {
	w.S("CAST(")
	expr()
	w.S(" AS BINARY)")
}

// NullsLast sorts NULLs after every value: "x IS NULL" is 0 for values and
// 1 for NULL, and MariaDB has no NULLS LAST.
func (*Dialect) NullsLast(w *dialects.Writer, expr func(), desc bool) {
	expr()
	w.S(" IS NULL, ")
	expr()
	if desc {
		w.S(" DESC")
	}
}

// SourceType reads go-sql-driver/mysql's type names. TINYINT is left
// unchecked: it is also how MariaDB and MySQL store a BOOLEAN, and the
// driver cannot tell them apart. The driver reports no string length, and
// every TEXT flavour (LONGTEXT, a MariaDB JSON) as TEXT. TIMESTAMP holds
// an instant, converted to the session's zone: a timestamptz.
func (*Dialect) SourceType(c dialects.ColumnInfo) (ir.Type, bool) {
	switch strings.ToUpper(c.TypeName) {
	case "SMALLINT", "UNSIGNED TINYINT":
		return ir.Type{Kind: ir.Smallint}, true
	case "MEDIUMINT", "INT", "UNSIGNED SMALLINT", "UNSIGNED MEDIUMINT":
		return ir.Type{Kind: ir.Integer}, true
	case "BIGINT", "UNSIGNED INT":
		return ir.Type{Kind: ir.Bigint}, true
	case "UNSIGNED BIGINT":
		return ir.Type{Kind: ir.Decimal, Precision: 20}, true
	case "DECIMAL":
		if !c.HasDecimal {
			return ir.Type{}, false
		}
		return ir.Type{Kind: ir.Decimal, Precision: int(c.Precision), Scale: int(c.Scale)}, true
	case "DOUBLE", "FLOAT":
		return ir.Type{Kind: ir.Double}, true
	case "VARCHAR", "CHAR":
		return ir.Type{Kind: ir.Varchar}, true
	case "TEXT":
		return ir.Type{Kind: ir.Text}, true
	case "JSON":
		return ir.Type{Kind: ir.JSON}, true
	case "DATE":
		return ir.Type{Kind: ir.Date}, true
	case "DATETIME":
		return ir.Type{Kind: ir.Timestamp}, true
	case "TIMESTAMP":
		return ir.Type{Kind: ir.TimestampTZ}, true
	}
	return ir.Type{}, false
}

// InnoDB's limits on a key, with the DYNAMIC (or COMPRESSED) rows that
// MariaDB 10.2+ and MySQL 5.7+ create by default: the columns of one index
// share 3072 bytes, and a VARCHAR counts its declared length times the
// character set's widest character, 4 bytes in utf8mb4. Counting 4 bytes a
// character holds for any character set a target may use.
const (
	maxKeyBytes  = 3072
	bytesPerChar = 4
)

// keyTypes returns columns with every text column of the primary key
// spelled VARCHAR(n) rather than LONGTEXT (which no key can hold): the text
// columns share equally what the other key columns leave of maxKeyBytes.
// A longer value then fails the write (strict sql_mode, which the runner
// sets) instead of being cut, which could merge two keys into one. A key
// that cannot fit at all is an error here, naming its columns, rather than
// "Specified key was too long" at setup.
func keyTypes(cols []ir.Col, key []string) ([]ir.Col, error) {
	if len(key) == 0 {
		return cols, nil
	}
	fixed, texts := 0, 0
	var sized []string
	for _, c := range cols {
		if !slices.Contains(key, c.Name) {
			continue
		}
		if c.Type.Kind == ir.Text {
			texts++
			continue
		}
		n := keyBytes(c.Type)
		fixed += n
		sized = append(sized, fmt.Sprintf("%s %s: %d bytes", c.Name, c.Type, n))
	}
	if fixed > maxKeyBytes {
		return nil, fmt.Errorf("the unique key needs up to %d bytes (%s), more than the %d bytes InnoDB can index in one key (a varchar counts %d bytes a character in utf8mb4): shorten its varchar columns",
			fixed, strings.Join(sized, ", "), maxKeyBytes, bytesPerChar)
	}
	if texts == 0 {
		return cols, nil
	}
	n := (maxKeyBytes - fixed) / bytesPerChar / texts
	if n < 1 {
		return nil, fmt.Errorf("the unique key's text columns get no room: the other key columns take %d of the %d bytes InnoDB can index in one key (%s)",
			fixed, maxKeyBytes, strings.Join(sized, ", "))
	}
	out := append([]ir.Col(nil), cols...)
	for i, c := range out {
		if c.Type.Kind == ir.Text && slices.Contains(key, c.Name) {
			out[i].Type = ir.Type{Kind: ir.Varchar, Length: n}
		}
	}
	return out, nil
}

// keyBytes is what a key column of type t counts against maxKeyBytes, as
// MariaDB 10.11 counts it (measured: a latin1 VARCHAR beside the column in
// one key, lengthened until the key was refused).
func keyBytes(t ir.Type) int {
	switch t.Kind {
	case ir.Boolean:
		return 1
	case ir.Smallint:
		return 2
	case ir.Date:
		return 3
	case ir.Integer:
		return 4
	case ir.Bigint, ir.Double, ir.Timestamp, ir.TimestampTZ:
		return 8 // DATETIME(6): 5 bytes and 3 of fraction
	case ir.Decimal:
		return decimalBytes(t.Precision-t.Scale) + decimalBytes(t.Scale)
	case ir.Varchar:
		return t.Length * bytesPerChar
	}
	// Text is sized by keyTypes; JSON is never a key (the compiler refuses it).
	return 0
}

// decimalBytes is the storage of n decimal digits: 4 bytes per 9 digits,
// and 1 to 4 bytes for the digits left over.
func decimalBytes(n int) int {
	return n/9*4 + [9]int{0, 1, 1, 2, 2, 3, 3, 4, 4}[n%9]
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// without is list less s.
func without(list []string, s string) []string {
	var out []string
	for _, x := range list {
		if x != s {
			out = append(out, x)
		}
	}
	return out
}
