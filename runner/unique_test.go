package runner

import (
	"strings"
	"testing"
	"time"
)

// TestSourceUniqueNotUnique: source.unique: true on a source that holds a
// key twice fails the run on every engine, naming the key and a duplicated
// value, and writes nothing: without the check DuckDB and PostgreSQL failed
// on the merge's second match while MariaDB and SQLite kept an arbitrary
// row of the two and reported it inserted.
func TestSourceUniqueNotUnique(t *testing.T) {
	const spec = `
pipeline: uniq_{id}
source:
  table: app_{id}.customers
  unique: true
target:
  table: dw_{id}.customers
columns:
  customer_id: bigint
  name: text
  updated_at: timestamp
strategy: merge
unique_key: [customer_id]
watermark:
  column: updated_at
  start: 2026-01-01
`
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := e.spec(spec)
			e.createTable("app_{id}.customers", p.Columns)
			for i := 1; i <= 6; i++ {
				e.insert("app_{id}.customers", p.Columns, []any{i, "c", "2026-01-02 10:00:00"})
			}
			e.insert("app_{id}.customers", p.Columns, []any{4, "c again", "2026-01-02 11:00:00"})
			until := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
			res, err := e.tg.Run(e.ctx, p, Options{Until: &until})
			if err == nil {
				t.Fatalf("the run succeeded: %+v, target %v", res, e.rows("dw_{id}.customers", []string{"customer_id", "name"}))
			}
			if !strings.Contains(err.Error(), "key (customer_id) customer_id=4 (2 rows)") {
				t.Errorf("the failure does not name the key and its value: %v", err)
			}
			if got := e.rows("dw_{id}.customers", []string{"customer_id"}); len(got) != 0 || res.RowsInserted != 0 {
				t.Errorf("a failed run wrote rows: %v, %+v", got, res)
			}
		})
	}
}
