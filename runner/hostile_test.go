package runner

import (
	"strconv"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler"
)

// attackCheck is the quality check of issue 8: the unary minus before a
// minus was spelled "--1", a comment on nine of the ten dialects, and the
// line break in the literal ended that comment, so the rest of the literal
// ran as statements of their own (DuckDB dropped the table, and the run
// exited 0).
const attackCheck = "amount >= - -1 OR kind = '\n0) OR 1=0; DROP TABLE IF EXISTS pwned; SELECT 0 --'"

// hostileSpec is a payments pipeline whose checks are {checks} (a YAML
// flow sequence) and whose invalid rows {mode}.
const hostileSpec = `
pipeline: hostile_{mode}_{id}
source:
  table: app_{id}.payments
target:
  table: dw_{id}.payments_{mode}
columns:
  payment_id: bigint
  amount: decimal(12,2)
  kind: text
  note: text
  updated_at: timestamp
strategy: merge
unique_key: [payment_id]
watermark:
  column: updated_at
  start: 2026-01-01
quality:
  checks: {checks}
  on_invalid: {mode}
`

// hostileYAML fills hostileSpec; checks are written as YAML double-quoted
// scalars, so that a line break in one reaches the spec as a line break.
func hostileYAML(id, mode string, checks ...string) string {
	quoted := make([]string, len(checks))
	for i, c := range checks {
		quoted[i] = strconv.Quote(c)
	}
	return strings.NewReplacer("{id}", id, "{mode}", mode, "{checks}", "["+strings.Join(quoted, ", ")+"]").Replace(hostileSpec)
}

// TestAttackRefused runs the attack of issue 8 end to end on every engine,
// with both quality modes: the spec must be refused at validation, at the
// literal's line break; and should it ever validate again, running it must
// not drop the table it names.
func TestAttackRefused(t *testing.T) {
	for _, eng := range engines() {
		for _, mode := range []string{"fail", "quarantine"} {
			t.Run(eng.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, eng)
				s, err := compiler.Parse("hostile.yaml", []byte(hostileYAML(e.id, mode, attackCheck)))
				if err != nil {
					t.Fatal(err)
				}
				if s.Quality == nil || len(s.Quality.Checks) != 1 || s.Quality.Checks[0].Value != attackCheck {
					t.Fatalf("the spec does not carry the attack verbatim: %+v", s.Quality)
				}
				diags := compiler.Validate(s)
				if len(diags) == 1 && strings.Contains(diags[0].Msg, `control character '\n' in a string literal`) {
					return
				}
				t.Errorf("the attack is not refused for its line break: %v", diags)
				if len(diags) > 0 {
					return
				}
				p, err := compiler.Lower(s)
				if err != nil {
					t.Fatal(err)
				}
				pwned := compiler.Table{Parts: []string{"pwned"}}
				e.exec(e.render(compiler.CreateTable{Table: pwned, Columns: []compiler.Col{{Name: "id", Type: compiler.Type{Kind: compiler.Bigint}}}}), nil)
				t.Cleanup(func() { e.exec(e.render(compiler.DropTable{Table: pwned}), nil) })
				e.createTable("app_{id}.payments", nullableCols(p.Columns))
				e.insert("app_{id}.payments", p.Columns, []any{1, "5.00", "sale", "x", "2026-01-01 09:00:00"})
				_, runErr := e.tg.Run(e.ctx, p, Options{Until: until("2026-01-02")})
				if _, err := e.tg.DB.ExecContext(e.ctx, "SELECT COUNT(*) FROM pwned"); err != nil {
					t.Errorf("the run (error: %v) dropped the table the attack names: %v", runErr, err)
				}
			})
		}
	}
}
