package dialects_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
)

// nameSpec is a merge from {source} into {target}; {extra} adds keys.
func nameSpec(pipeline, source, target, extra string) string {
	return fmt.Sprintf(`pipeline: %s
source: {table: %s}
target: {table: %s}
columns: {id: bigint, updated_at: timestamp}
strategy: merge
unique_key: [id]
watermark: {column: updated_at, start: 2026-01-01, lag: 5m}
%s`, pipeline, source, target, extra)
}

func cdcSpec(pipeline, source, target string) string {
	return fmt.Sprintf(`pipeline: %s
source: {table: %s}
target: {table: %s}
columns: {id: bigint, op: text, lsn: bigint, ingested_at: timestamp}
strategy: cdc
unique_key: [id]
watermark: {column: ingested_at, start: 2026-01-01, lag: 5m}
cdc: {op: op, sequence: lsn}
`, pipeline, source, target)
}

func specsOf(t *testing.T, yamls ...string) []*compiler.Spec {
	t.Helper()
	var specs []*compiler.Spec
	for i, y := range yamls {
		s, err := compiler.Parse(fmt.Sprintf("s%d.yaml", i+1), []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		if d := compiler.Validate(s); len(d) > 0 {
			t.Fatal(d.Err())
		}
		specs = append(specs, s)
	}
	if d := compiler.CheckProject(specs); len(d) > 0 {
		t.Fatal(d.Err())
	}
	return specs
}

// TestCheckNames: two spellings of one table are found as each dialect
// compiled resolves them (issue 22, items 1-3), and only there.
func TestCheckNames(t *testing.T) {
	for _, c := range []struct {
		name     string
		dialects string
		specs    []string
		errs     []string // each a part of one error, in order
		warnings []string
	}{
		{name: "duckdb main is the default schema", dialects: "duckdb",
			specs: []string{nameSpec("a", "src", "main.src", "")},
			errs:  []string{`s1.yaml:2:17: source.table "src" and target.table "main.src" are one table on duckdb (main is the default schema of duckdb): a pipeline writes somewhere else than it reads`}},
		{name: "duckdb main, other dialects", dialects: "mysql,postgres,sqlite",
			specs: []string{nameSpec("a", "src", "main.src", "")},
			errs:  []string{`are one table on sqlite (main is the default schema of sqlite)`}},
		{name: "postgres public", dialects: "postgres",
			specs: []string{nameSpec("a", "public.src", "src", "")},
			errs:  []string{`source.table "public.src" and target.table "src" are one table on postgres (public is the default schema of postgres)`}},
		{name: "postgres PUBLIC is another schema", dialects: "postgres",
			specs:    []string{nameSpec("a", "PUBLIC.src", "src", "")},
			warnings: nil},
		{name: "mysql: only the connection knows its database", dialects: "mysql",
			specs: []string{nameSpec("a", "src", "wh.src", "")}},
		{name: "sqlite flattens schemas", dialects: "duckdb,sqlite",
			specs: []string{nameSpec("a", "app.x", "x.a_b", ""), nameSpec("b", "app.y", "x_a.b", "")},
			errs:  []string{`s2.yaml:3:17: target.table "x_a.b" and target.table "x.a_b" of pipeline "a" (s1.yaml:3:17) are one table on sqlite (sqlite has no schemas: x.a_b and x_a.b are both the table x_a_b): two pipelines must not write one table`}},
		{name: "sqlite reads a.b as its source a_b", dialects: "sqlite",
			specs: []string{nameSpec("a", "dw.orders", "dw_orders", "")},
			errs:  []string{`source.table "dw.orders" and target.table "dw_orders" are one table on sqlite`}},
		{name: "incrc's own table on sqlite", dialects: "duckdb,sqlite",
			specs: []string{nameSpec("a", "app.x", "incrc.state", "")},
			errs:  []string{`s1.yaml:3:17: target.table "incrc.state" is the table incrc_state on sqlite, which has no schemas and joins a.b into a_b: names starting with incrc_ are reserved`}},
		{name: "another pipeline's quarantine", dialects: "postgres",
			specs: []string{nameSpec("a", "app.x", "dw.orders", "quality: {not_null: [updated_at]}\n"), nameSpec("b", "app.y", "dw.orders_quarantine", "")},
			errs:  []string{`s2.yaml:3:17: target.table "dw.orders_quarantine" and the quarantine table "dw.orders_quarantine" of pipeline "a" (s1.yaml:3:17) are one table on postgres: two pipelines must not write one table`}},
		{name: "another pipeline's tombstones", dialects: "duckdb",
			specs: []string{cdcSpec("a", "app.log", "dw.customers"), nameSpec("b", "app.y", "DW.Customers_Tombstones", "")},
			errs:  []string{`s2.yaml:3:17: target.table "DW.Customers_Tombstones" and the tombstones table "dw.customers_tombstones" of pipeline "a" (s1.yaml:3:17) are one table on duckdb (duckdb compares names without case)`}},
		{name: "reading another pipeline's target is an upstream", dialects: "duckdb,postgres,sqlite",
			specs: []string{nameSpec("a", "app.x", "dw.a", ""), nameSpec("b", "main.dw_a", "dw.b", "")}},
		{name: "case: dialects disagree", dialects: "duckdb,postgres",
			specs: []string{nameSpec("a", "app.x", "HX.DST", ""), nameSpec("b", "hx.dst", "dw.b", "")},
			errs:  []string{`s2.yaml:2:17: HX.DST (s1.yaml:3:17) and hx.dst (s2.yaml:2:17) differ only in case: they are one table on duckdb and two on postgres, and this project compiles for both; spell them alike`}},
		{name: "case: two tables everywhere compiled", dialects: "postgres,mysql",
			specs:    []string{nameSpec("a", "app.x", "HX.DST", ""), nameSpec("b", "hx.dst", "dw.b", "")},
			warnings: []string{`s2.yaml:2:17: warning: HX.DST (s1.yaml:3:17) and hx.dst (s2.yaml:2:17) differ only in case: they are two tables on postgres, mysql, where a quoted name keeps its case; if they mean one table, spell them alike [name-case]`}},
		{name: "case: one table everywhere compiled", dialects: "duckdb,sqlite",
			specs: []string{nameSpec("a", "app.x", "HX.DST", ""), nameSpec("b", "hx.dst", "dw.b", "")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds, err := all.Parse(c.dialects)
			if err != nil {
				t.Fatal(err)
			}
			var uses []ir.TableUse
			for _, s := range specsOf(t, c.specs...) {
				uses = append(uses, s.Tables()...)
			}
			errs, warnings := dialects.CheckNames(ds, uses)
			check := func(what string, got []dialects.NameProblem, want []string) {
				t.Helper()
				if len(got) != len(want) {
					t.Fatalf("%s: got %d, want %d:\n%v", what, len(got), len(want), got)
				}
				for i, w := range want {
					// As incrc reports it (cmd/incrc's checkNames).
					d := compiler.Diagnostic{Pos: got[i].Pos, Msg: got[i].Msg, Code: got[i].Code, Warning: got[i].Code != ""}
					if !strings.Contains(d.String(), w) {
						t.Errorf("%s %d:\n got %s\nwant %s", what, i, d, w)
					}
				}
			}
			check("errors", errs, c.errs)
			check("warnings", warnings, c.warnings)
		})
	}
}

// TestTableKey: the keys of the executed engines, spelled.
func TestTableKey(t *testing.T) {
	for _, c := range []struct{ dialect, name, key string }{
		{"duckdb", "Main.SRC", "src"},
		{"duckdb", "wh.main.src", "wh.main.src"},
		{"sqlite", "a.b", "a_b"},
		{"sqlite", "main.B", "b"},
		{"sqlite", "temp.b", "temp.b"},
		{"postgres", "public.Src", "Src"},
		{"postgres", "PUBLIC.src", "PUBLIC.src"},
		{"mysql", "wh.Src", "wh.Src"},
		{"snowflake", "public.src", "SRC"},
	} {
		d, err := all.Lookup(c.dialect)
		if err != nil {
			t.Fatal(err)
		}
		if got := dialects.TableKey(d, ir.Table{Parts: strings.Split(c.name, ".")}); got != c.key {
			t.Errorf("%s: TableKey(%s) = %s, want %s", c.dialect, c.name, got, c.key)
		}
	}
}
