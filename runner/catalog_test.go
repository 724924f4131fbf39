package runner

import (
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"
)

// TestDescribe: the catalog of every engine gives a table's columns with
// their portable types and its primary key in key order (incrc new
// --from-table).
func TestDescribe(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			typ := func(s string) ir.Type {
				tt, err := ir.ParseType(s)
				if err != nil {
					t.Fatal(err)
				}
				return tt
			}
			cols := []ir.Col{
				{Name: "id", Type: typ("bigint"), NotNull: true},
				{Name: "code", Type: typ("varchar(8)"), NotNull: true},
				{Name: "amount", Type: typ("decimal(12,2)")},
				{Name: "updated_at", Type: typ("timestamp")},
			}
			tb := e.table("app_{id}.items")
			e.exec(e.render(ir.CreateSchema{Schema: tb.Schema()}), nil)
			e.exec(e.render(ir.CreateTable{Table: tb, Columns: cols, PrimaryKey: []string{"code", "id"}}), nil)
			info, err := e.tg.Describe(e.ctx, tb)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"code", "id"}, info.Key); diff != "" {
				t.Errorf("key (-want +got):\n%s", diff)
			}
			var got []string
			for _, c := range info.Columns {
				got = append(got, c.Name+" "+c.Type.String())
			}
			want := []string{"id bigint", "code varchar(8)", "amount decimal(12,2)", "updated_at timestamp"}
			if eng.name == "duckdb" {
				want[1] = "code text" // DuckDB keeps no VARCHAR length
			}
			if eng.name == "mysql" {
				want[1] = "code text" // the driver reports no length either
			}
			if eng.name == "sqlite" {
				// SQLite keeps the type affinity it was declared with.
				want = []string{"id bigint", "code text", "amount ", "updated_at timestamp"}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("columns (-want +got):\n%s", diff)
			}
		})
	}
}
