// Package spark spells plans for Spark SQL 3.5 on Delta Lake (dialect
// "spark") or Apache Iceberg (dialect "spark_iceberg").
//
// The table format is a dialect, not a spec key: the spec says what the
// pipeline does, the dialect how one engine spells it, and the format
// changes the spelling (USING DELTA or USING iceberg, and the partition
// overwrite to come), so `--dialect spark_iceberg` selects it without a
// new key in every spec.
//
// Spark has no multi-statement transactions: every statement commits on
// its own (one atomic commit per table), so the write is idempotent and the
// watermark advance follows it. UPDATE, DELETE and MERGE need a table
// format that supports them, so every table incrc creates, the state
// tables and the staging table too, is a Delta or Iceberg table. Spark has
// no temporary tables that accept DELETE, so the stage is a real table in
// the current database that each run drops and creates again.
//
// Partition overwrite (not compiled yet) is to be spelled, for Delta,
// INSERT INTO t REPLACE WHERE <partition predicate> SELECT ... (one atomic
// commit that replaces exactly the rows the predicate selects, and fails
// if a new row falls outside it); for Iceberg, a MERGE ... WHEN NOT
// MATCHED BY SOURCE AND <partition predicate> THEN DELETE, never a static
// INSERT OVERWRITE, which replaces the whole table.
package spark

import (
	"fmt"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
)

// Dialect is Spark SQL; Iceberg selects Apache Iceberg tables instead of
// Delta Lake ones.
type Dialect struct {
	Iceberg bool
}

var (
	_ dialects.Dialect      = (*Dialect)(nil)
	_ dialects.OpRenderer   = (*Dialect)(nil)
	_ dialects.StringQuoter = (*Dialect)(nil)
)

func (d *Dialect) Name() dialects.Name {
	if d.Iceberg {
		return "spark_iceberg"
	}
	return "spark"
}

func (d *Dialect) Caps() dialects.Caps {
	note := "Spark 3.5 + Delta Lake: every table incrc creates is a Delta table; each statement commits on its own.\n" +
		"Staging is a real Delta table in the current database, dropped and created again by each run.\nA full refresh (clear_target, insert_all) is two commits: readers can see the target empty between them."
	if d.Iceberg {
		note = "Spark 3.5 + Apache Iceberg: needs the Iceberg SQL extensions (spark.sql.extensions) for MERGE, UPDATE\n" +
			"and DELETE; every table incrc creates is an Iceberg table; each statement commits on its own.\n" +
			"Staging is a real Iceberg table in the current namespace, dropped and created again by each run.\nA full refresh (clear_target, insert_all) is two commits: readers can see the target empty between them."
	}
	return dialects.Caps{Transactions: false, TransactionalDDL: false, Note: note}
}

func (*Dialect) QuoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// Placeholder is Spark's positional marker (Spark 3.5+, Databricks).
// Not the named :name form: the plan's parameters "from" and "to" are
// keywords, which Spark's grammar does not take after the colon.
func (*Dialect) Placeholder(int) string { return "?" }

func (*Dialect) StringLit(s string) string { return dialects.BackslashString(s) }

func (*Dialect) NullSafeEqual(a, b string) string { return a + " <=> " + b }

func (*Dialect) BindTime(t time.Time, _ compiler.TypeKind) any { return t.UTC() }

func (d *Dialect) ColumnType(t compiler.Type) (string, error) {
	switch t.Kind {
	case compiler.Smallint:
		return "SMALLINT", nil
	case compiler.Integer:
		return "INT", nil
	case compiler.Bigint:
		return "BIGINT", nil
	case compiler.Decimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale), nil
	case compiler.Double:
		return "DOUBLE", nil
	case compiler.Boolean:
		return "BOOLEAN", nil
	case compiler.Text, compiler.Varchar, compiler.JSON:
		// Iceberg has no bounded string, and Delta only checks the length
		// on write: STRING for both, so the two formats hold the same rows.
		return "STRING", nil
	case compiler.Date:
		return "DATE", nil
	case compiler.Timestamp:
		// Naive, read as UTC: TIMESTAMP would shift it by the session time zone.
		return "TIMESTAMP_NTZ", nil
	case compiler.TimestampTZ:
		return "TIMESTAMP", nil
	}
	return "", fmt.Errorf("%s: no type for %s", d.Name(), t)
}

func (d *Dialect) format() string {
	if d.Iceberg {
		return "USING iceberg"
	}
	return "USING DELTA"
}

func (d *Dialect) RenderOp(w *dialects.Writer, op compiler.Op) (bool, error) {
	switch op := op.(type) {
	case compiler.CreateTable:
		// No PRIMARY KEY: open-source Spark cannot declare one; the merge
		// and the staged dedupe keep the key unique.
		dialects.CreateTableStyled(w, op, dialects.TableStyle{Temporary: "CREATE TABLE", Options: d.format()})
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
