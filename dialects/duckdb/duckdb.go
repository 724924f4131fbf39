// Package duckdb spells plans for DuckDB (1.4 or later: MERGE INTO).
package duckdb

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// Dialect is DuckDB.
type Dialect struct{}

var (
	_ dialects.Dialect     = (*Dialect)(nil)
	_ dialects.TimeTruncer = (*Dialect)(nil)
	_ dialects.SourceTyper = (*Dialect)(nil)
)

func (*Dialect) Name() dialects.Name { return "duckdb" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: true, ReusesParams: true, GroupState: true,
		Note: "DuckDB allows one writing process per database file."}
}

func (*Dialect) QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

func (*Dialect) Placeholder(n int) string { return fmt.Sprintf("$%d", n) }

// Lexer: DuckDB reads no backslash escapes in '...', so the standard
// literal (StringLit) is its own.
func (*Dialect) Lexer() *sqllex.Rules { return sqllex.DuckDB }

func (*Dialect) NullSafeEqual(a, b string) string { return a + " IS NOT DISTINCT FROM " + b }

func (*Dialect) BindTime(t time.Time, _ compiler.TypeKind) any { return t.UTC() }

var types = dialects.TypeNames{
	compiler.Smallint:    "SMALLINT",
	compiler.Integer:     "INTEGER",
	compiler.Bigint:      "BIGINT",
	compiler.Decimal:     "DECIMAL(%d,%d)",
	compiler.Double:      "DOUBLE",
	compiler.Boolean:     "BOOLEAN",
	compiler.Text:        "VARCHAR",
	compiler.Varchar:     "VARCHAR(%d)",
	compiler.Date:        "DATE",
	compiler.Timestamp:   "TIMESTAMP",
	compiler.TimestampTZ: "TIMESTAMPTZ",
	compiler.JSON:        "JSON",
}

func (*Dialect) ColumnType(t compiler.Type) (string, error) { return types.Spell("duckdb", t) }

// TruncTime spells the start of a partition with date_trunc.
func (*Dialect) TruncTime(w *dialects.Writer, expr, granularity string, _ compiler.Type) string {
	return "date_trunc(" + w.String(granularity) + ", " + expr + ")"
}

var decimalRe = regexp.MustCompile(`^DECIMAL\((\d+),(\d+)\)$`)

// SourceType reads DuckDB's type names, as its driver reports them: a
// decimal with its precision and scale in the name; VARCHAR without a
// length, since DuckDB keeps none (nor enforces one).
func (*Dialect) SourceType(c dialects.ColumnInfo) (compiler.Type, bool) {
	name := strings.ToUpper(c.TypeName)
	if m := decimalRe.FindStringSubmatch(name); m != nil {
		p, _ := strconv.Atoi(m[1])
		s, _ := strconv.Atoi(m[2])
		return compiler.Type{Kind: compiler.Decimal, Precision: p, Scale: s}, true
	}
	switch name {
	case "TINYINT", "SMALLINT", "UTINYINT":
		return compiler.Type{Kind: compiler.Smallint}, true
	case "INTEGER", "USMALLINT":
		return compiler.Type{Kind: compiler.Integer}, true
	case "BIGINT", "UINTEGER":
		return compiler.Type{Kind: compiler.Bigint}, true
	case "UBIGINT":
		return compiler.Type{Kind: compiler.Decimal, Precision: 20}, true
	case "HUGEINT", "UHUGEINT":
		return compiler.Type{Kind: compiler.Decimal, Precision: 39}, true
	case "DOUBLE", "FLOAT":
		return compiler.Type{Kind: compiler.Double}, true
	case "BOOLEAN":
		return compiler.Type{Kind: compiler.Boolean}, true
	case "VARCHAR":
		return compiler.Type{Kind: compiler.Varchar}, true
	case "DATE":
		return compiler.Type{Kind: compiler.Date}, true
	case "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS":
		return compiler.Type{Kind: compiler.Timestamp}, true
	case "TIMESTAMPTZ", "TIMESTAMP WITH TIME ZONE":
		return compiler.Type{Kind: compiler.TimestampTZ}, true
	case "JSON":
		return compiler.Type{Kind: compiler.JSON}, true
	}
	return compiler.Type{}, false
}
