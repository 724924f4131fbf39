// Package postgres spells plans for PostgreSQL 15 or later (MERGE).
package postgres

import (
	"fmt"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
)

// Dialect is PostgreSQL.
type Dialect struct{}

var _ dialects.Dialect = (*Dialect)(nil)

func (*Dialect) Name() dialects.Name { return "postgres" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: true, TransactionalDDL: true, ReusesParams: true, Executed: true, Heartbeat: true,
		Note: "PostgreSQL 15 or later (MERGE)."}
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
		return fmt.Sprintf("NUMERIC(%d,%d)", t.Precision, t.Scale), nil
	case compiler.Double:
		return "DOUBLE PRECISION", nil
	case compiler.Boolean:
		return "BOOLEAN", nil
	case compiler.Text:
		return "TEXT", nil
	case compiler.Varchar:
		return fmt.Sprintf("VARCHAR(%d)", t.Length), nil
	case compiler.Date:
		return "DATE", nil
	case compiler.Timestamp:
		return "TIMESTAMP", nil
	case compiler.TimestampTZ:
		return "TIMESTAMPTZ", nil
	case compiler.JSON:
		return "JSONB", nil
	}
	return "", fmt.Errorf("postgres: no type for %s", t)
}

// TruncTime spells the start of a partition with date_trunc, in UTC: a
// date or timestamptz would otherwise be read in the session's time zone.
func (*Dialect) TruncTime(expr, granularity string, t compiler.Type) string {
	switch t.Kind {
	case compiler.Date:
		expr = "CAST(" + expr + " AS TIMESTAMP)"
	case compiler.TimestampTZ:
		expr = "(" + expr + " AT TIME ZONE 'UTC')"
	}
	return "date_trunc('" + granularity + "', " + expr + ")"
}
