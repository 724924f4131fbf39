// Package duckdb spells plans for DuckDB (1.4 or later: MERGE INTO).
package duckdb

import (
	"fmt"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// Dialect is DuckDB.
type Dialect struct{}

var _ dialects.Dialect = (*Dialect)(nil)

func (*Dialect) Name() dialects.Name { return "duckdb" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: true, TransactionalDDL: true, ReusesParams: true, Executed: true,
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
