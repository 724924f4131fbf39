package runner

import (
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler/ir"
)

// TestProbeMissingColumn: a declared column the source lacks fails the run
// at probe_source, naming the column, before anything is written, on every
// engine. SQLite reads a double-quoted name that resolves to no column as a
// string literal of its own text (its legacy double-quoted-string rule):
// without turning that rule off, every row's key would be the text
// "customer_code" and the window's rows would collapse into one.
func TestProbeMissingColumn(t *testing.T) {
	const spec = `
pipeline: probe_{id}
source:
  table: app_{id}.customers
target:
  table: dw_{id}.customers
columns:
  customer_id: bigint
  customer_code: text
  updated_at: timestamp
strategy: merge
unique_key: [customer_code]
watermark:
  column: updated_at
  start: 2026-01-01
`
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := e.spec(spec)
			have := []ir.Col{p.Columns[0], p.Columns[2]} // no customer_code
			e.createTable("app_{id}.customers", have)
			for i := 1; i <= 7; i++ {
				e.insert("app_{id}.customers", have, []any{i, "2026-01-02 10:00:00"})
			}
			until := time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)
			res, err := e.tg.Run(e.ctx, p, Options{Until: &until})
			if err == nil {
				t.Fatalf("the run succeeded without the source's customer_code: %+v, target %v", res, e.rows("dw_{id}.customers", []string{"customer_id", "customer_code"}))
			}
			msg := strings.ToLower(err.Error())
			if !strings.Contains(msg, ir.StmtProbeSource) || !strings.Contains(msg, "customer_code") {
				t.Errorf("the failure does not name probe_source and the column: %v", err)
			}
			if res.RowsInserted != 0 || res.Status != "failed" {
				t.Errorf("a failed run wrote rows: %+v", res)
			}
		})
	}
}
