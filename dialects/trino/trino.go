// Package trino spells plans for Trino with a catalog whose connector
// supports MERGE, UPDATE and DELETE (Iceberg, Delta Lake).
//
// Trino writes in autocommit only: each statement commits on its own, so
// the write is idempotent and the watermark advance follows it. Trino has
// no temporary tables, so the stage is a real table in the session's
// schema that each run drops and creates again. Types are the ones the
// Iceberg and Delta Lake connectors accept: no SMALLINT, no bounded
// VARCHAR, no JSON column; and no key constraints at all.
//
// Partition overwrite (not compiled yet) is to be spelled DELETE FROM t
// WHERE <partitions> then INSERT: two commits, not atomic, so readers can
// see the partition empty between them and a retry of the same window
// repairs a half-done one; the compiled file must say so. (The Hive
// connector's insert_existing_partitions_behavior = 'OVERWRITE' session
// property replaces whole partitions in one INSERT, for Hive tables only.)
package trino

import (
	"fmt"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
)

// Dialect is Trino.
type Dialect struct{}

var (
	_ dialects.Dialect    = (*Dialect)(nil)
	_ dialects.OpRenderer = (*Dialect)(nil)
)

func (*Dialect) Name() dialects.Name { return "trino" }

func (*Dialect) Caps() dialects.Caps {
	return dialects.Caps{Transactions: false, TransactionalDDL: false,
		Note: "Trino (Iceberg or Delta Lake catalog): writes autocommit, one statement at a time.\n" +
			"Staging is a real table in the session's schema (Trino has no temporary tables), dropped and\n" +
			"created again by each run.\nA full refresh (clear_target, insert_all) is two commits: readers can see the target empty between them."}
}

func (*Dialect) QuoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// Placeholder is the marker EXECUTE ... USING binds, in order.
func (*Dialect) Placeholder(int) string { return "?" }

func (*Dialect) NullSafeEqual(a, b string) string { return a + " IS NOT DISTINCT FROM " + b }

func (*Dialect) BindTime(t time.Time, _ compiler.TypeKind) any { return t.UTC() }

func (*Dialect) ColumnType(t compiler.Type) (string, error) {
	switch t.Kind {
	case compiler.Smallint, compiler.Integer:
		// Iceberg has no 16-bit integer.
		return "INTEGER", nil
	case compiler.Bigint:
		return "BIGINT", nil
	case compiler.Decimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale), nil
	case compiler.Double:
		return "DOUBLE", nil
	case compiler.Boolean:
		return "BOOLEAN", nil
	case compiler.Text, compiler.Varchar, compiler.JSON:
		// Iceberg and Delta Lake store unbounded strings only.
		return "VARCHAR", nil
	case compiler.Date:
		return "DATE", nil
	case compiler.Timestamp:
		return "TIMESTAMP(6)", nil
	case compiler.TimestampTZ:
		return "TIMESTAMP(6) WITH TIME ZONE", nil
	}
	return "", fmt.Errorf("trino: no type for %s", t)
}

func (d *Dialect) RenderOp(w *dialects.Writer, op compiler.Op) (bool, error) {
	switch op := op.(type) {
	case compiler.CreateTable:
		dialects.CreateTableStyled(w, op, dialects.TableStyle{Temporary: "CREATE TABLE"})
		return true, nil
	case compiler.InsertValues:
		if len(op.IfAbsentKey) == 0 {
			return false, nil
		}
		dialects.InsertIfAbsentMerge(w, op)
		return true, nil
	}
	return false, nil
}
