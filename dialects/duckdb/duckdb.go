// Package duckdb spells plans for DuckDB (1.4 or later: MERGE INTO).
package duckdb

import (
	"fmt"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler"
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

func (*Dialect) NullSafeEqual(a, b string) string { return a + " IS NOT DISTINCT FROM " + b }

func (*Dialect) BindTime(t time.Time, _ compiler.TypeKind) any { return t.UTC() }

func (*Dialect) ColumnType(t compiler.Type) (string, error) {
	switch t.Kind {
	case compiler.Smallint:
		return "SMALLINT", nil
	case compiler.Integer:
		return "INTEGER", nil
	case compiler.Bigint:
		return "BIGINT", nil
	case compiler.Decimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale), nil
	case compiler.Double:
		return "DOUBLE", nil
	case compiler.Boolean:
		return "BOOLEAN", nil
	case compiler.Text:
		return "VARCHAR", nil
	case compiler.Varchar:
		return fmt.Sprintf("VARCHAR(%d)", t.Length), nil
	case compiler.Date:
		return "DATE", nil
	case compiler.Timestamp:
		return "TIMESTAMP", nil
	case compiler.TimestampTZ:
		return "TIMESTAMPTZ", nil
	case compiler.JSON:
		return "JSON", nil
	}
	return "", fmt.Errorf("duckdb: no type for %s", t)
}

// TruncTime spells the start of a partition with date_trunc.
func (*Dialect) TruncTime(expr, granularity string, _ compiler.Type) string {
	return "date_trunc('" + granularity + "', " + expr + ")"
}
