package runner

import (
	"errors"
	"strings"
	"testing"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"
)

const evolveSpec = `
pipeline: evolve_{id}
source: { table: app_{id}.orders }
target: { table: dw_{id}.orders }
columns:
  order_id: bigint
  amount: AMOUNT
  note: NOTE
  qty: QTY
  updated_at: timestamp
EXTRA
strategy: merge
unique_key: [order_id]
watermark: { column: updated_at, start: 2026-01-01 }
quality: { checks: ["amount >= 0"] }
`

func evolveVersion(amount, note, extra string) string {
	// qty widens from integer to bigint with amount.
	qty := "integer"
	if amount != "decimal(12,2)" {
		qty = "bigint"
	}
	return strings.NewReplacer("AMOUNT", `"`+amount+`"`, "NOTE", `"`+note+`"`, "QTY", qty, "EXTRA", extra).Replace(evolveSpec)
}

// TestSchemaEvolution: across real runs, a spec that adds a column (the run
// adds it to the target and the quarantine, old rows NULL), then widens
// one (widened in place, rows kept), then narrows one (refused with the
// DDL, nothing written, until incrc migrate applies it).
func TestSchemaEvolution(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			v1 := e.spec(evolveVersion("decimal(12,2)", "varchar(20)", ""))
			// The source as v2 reads it; v3 widens it as it widens its own.
			src := e.spec(evolveVersion("decimal(12,2)", "varchar(20)", "  currency: text"))
			e.createTable("app_{id}.orders", src.Columns)
			e.insert("app_{id}.orders", src.Columns,
				[]any{int64(1), "10.50", "first", int64(1), "2026-01-02 09:00:00", "EUR"},
				[]any{int64(2), "-1.00", "bad", int64(2), "2026-01-02 10:00:00", "EUR"})
			res := mustRun(t, e, v1, Options{Until: until("2026-01-03")})
			if len(res.Schema) != 0 {
				t.Errorf("first run changed the schema: %v", res.Schema)
			}

			// v2 adds currency: the run adds it to both tables, says so, and
			// the rows written before have NULL there.
			v2 := e.spec(evolveVersion("decimal(12,2)", "varchar(20)", "  currency: text"))
			e.insert("app_{id}.orders", src.Columns, []any{int64(3), "30.00", "third", int64(3), "2026-01-03 09:00:00", "USD"})
			res = mustRun(t, e, v2, Options{Until: until("2026-01-04")})
			var kinds []string
			for _, c := range res.Schema {
				kinds = append(kinds, c.Kind+" "+c.Table+"."+c.Column)
			}
			want := []string{"add dw_" + e.id + ".orders.currency", "add dw_" + e.id + ".orders_quarantine.currency"}
			if diff := cmp.Diff(want, kinds); diff != "" {
				t.Errorf("v2's schema changes (-want +got):\n%s", diff)
			}
			if !strings.Contains(res.Note, "columns added") || !strings.Contains(res.Note, "a backfill or a full refresh fills them") {
				t.Errorf("v2's note: %q", res.Note)
			}
			if diff := cmp.Diff([]string{line(1, "10.50", nil), line(3, "30.00", "USD")}, e.rows("dw_{id}.orders", []string{"order_id", "amount", "currency"})); diff != "" {
				t.Errorf("after v2 (-want +got):\n%s", diff)
			}
			// A full refresh with the new column works, and fills it.
			mustRun(t, e, v2, Options{Until: until("2026-01-04"), FullRefresh: true})
			if diff := cmp.Diff([]string{line(1, "10.50", "EUR"), line(3, "30.00", "USD")}, e.rows("dw_{id}.orders", []string{"order_id", "amount", "currency"})); diff != "" {
				t.Errorf("after v2's full refresh (-want +got):\n%s", diff)
			}

			// v3 widens amount and note: widened in place where the engine
			// has types (SQLite keeps none: nothing to do), rows kept.
			v3 := e.spec(evolveVersion("decimal(14,2)", "varchar(40)", "  currency: text"))
			if eng.name != "sqlite" {
				for _, c := range v3.Columns[1:4] {
					e.exec(e.render(ir.AlterColumnType{Table: e.table("app_{id}.orders"), Column: c}), nil)
				}
			}
			// A fresh pool: PostgreSQL's driver keeps the fixture's INSERT
			// prepared with the parameter types from before the ALTER.
			tg, err := Open(e.ctx, all.Lookup, e.url, "")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { tg.Close() })
			e.tg = tg
			e.insert("app_{id}.orders", src.Columns, []any{int64(4), "12345678901.25", "a note longer than twenty", int64(5000000000), "2026-01-04 09:00:00", "USD"})
			res = mustRun(t, e, v3, Options{Until: until("2026-01-05")})
			kinds = nil
			for _, c := range res.Schema {
				kinds = append(kinds, c.Kind+" "+c.Column+" "+c.From+" -> "+c.To)
			}
			switch eng.name {
			case "sqlite":
				if len(kinds) != 0 {
					t.Errorf("v3 on SQLite: %v, want nothing (no types)", kinds)
				}
			default:
				for _, w := range []string{"widen amount decimal(12,2) -> decimal(14,2)", "widen qty integer -> bigint", "widen note varchar(20) -> varchar(40)"} {
					if !contains(kinds, w) && !(w[6:10] == "note" && eng.name == "duckdb") {
						t.Errorf("v3's changes: %v, want %s (DuckDB keeps no varchar length: nothing to widen)", kinds, w)
					}
				}
			}
			if diff := cmp.Diff([]string{line(1, "10.50", 1), line(3, "30.00", 3), line(4, "12345678901.25", 5000000000)}, e.rows("dw_{id}.orders", []string{"order_id", "amount", "qty"})); diff != "" {
				t.Errorf("after v3 (-want +got):\n%s", diff)
			}

			// v4 narrows amount: refused before anything is written, with the
			// DDL and the command; incrc migrate --dry-run lists it, migrate
			// applies it, and the run goes on.
			v4 := e.spec(evolveVersion("decimal(13,2)", "varchar(40)", "  currency: text"))
			if eng.name == "sqlite" {
				// No types to narrow: drop a column instead.
				v4 = e.spec(strings.Replace(evolveVersion("decimal(13,2)", "varchar(40)", ""), "quality: { checks: [\"amount >= 0\"] }", "", 1))
			}
			e.insert("app_{id}.orders", src.Columns, []any{int64(5), "5.00", "fifth", int64(5), "2026-01-05 09:00:00", "USD"})
			_, err = e.tg.Run(e.ctx, v4, Options{Until: until("2026-01-06")})
			var se *SchemaError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), "incrc migrate "+v4.Pipeline) || !strings.Contains(err.Error(), "ALTER TABLE") {
				t.Fatalf("v4: %v, want a SchemaError with the DDL and the command", err)
			}
			if got := e.rows("dw_{id}.orders", []string{"order_id"}); len(got) != 3 {
				t.Errorf("v4's refused run wrote: %v", got)
			}
			pending, err := e.tg.Migrate(e.ctx, v4, MigrateOptions{DryRun: true})
			if err != nil || len(pending) == 0 {
				t.Fatalf("migrate --dry-run: %v, %v", pending, err)
			}
			for _, c := range pending {
				if c.Automatic() || len(c.DDL) == 0 {
					t.Errorf("pending: %+v, want a change a run does not make, with its DDL", c)
				}
			}
			// Applying holds the lease: a run that holds it keeps migrate out.
			lease := []ir.Col{{Name: "lease_owner", Type: ir.Type{Kind: ir.Text}}, {Name: "lease_expires_at", Type: ir.Type{Kind: ir.Text}}}
			e.update("incrc_state", lease, "pipeline", v4.Pipeline, map[string]any{"lease_owner": "ghost:1:dead", "lease_expires_at": "2999-01-01T00:00:00.000000Z"})
			var locked *LockedError
			if _, err := e.tg.Migrate(e.ctx, v4, MigrateOptions{}); !errors.As(err, &locked) {
				t.Errorf("migrate while another holds the lease: %v, want a LockedError", err)
			}
			if again, _ := e.tg.Migrate(e.ctx, v4, MigrateOptions{DryRun: true}); len(again) != len(pending) {
				t.Errorf("a refused migrate changed the tables: %v pending, want %d", again, len(pending))
			}
			e.update("incrc_state", lease, "pipeline", v4.Pipeline, map[string]any{"lease_owner": nil, "lease_expires_at": nil})
			applied, err := e.tg.Migrate(e.ctx, v4, MigrateOptions{})
			if err != nil || len(applied) != len(pending) {
				t.Fatalf("migrate: %v, %v; want %d changes", applied, err, len(pending))
			}
			if again, err := e.tg.Migrate(e.ctx, v4, MigrateOptions{DryRun: true}); err != nil || len(again) != 0 {
				t.Errorf("after migrate, still pending: %v, %v", again, err)
			}
			if eng.name != "sqlite" {
				// The source narrows too: the declared type must hold it.
				e.exec(e.render(ir.AlterColumnType{Table: e.table("app_{id}.orders"), Column: v4.Columns[1]}), nil)
			}
			res = mustRun(t, e, v4, Options{Until: until("2026-01-06")})
			if res.RowsInserted != 1 {
				t.Errorf("the run after migrate: %+v", res)
			}
		})
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
