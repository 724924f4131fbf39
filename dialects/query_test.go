package dialects_test

import (
	"testing"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// TestCheckQueryForEngines reads a valid spec's source query with engines' rules:
// what Portable accepts and an engine cannot read is refused for that
// engine, at its line and column in the spec.
func TestCheckQueryForEngines(t *testing.T) {
	const spec = `pipeline: p
source:
  query: |
    SELECT id, updated_at
    FROM ` + "`proj-1.app.t`" + `
    WHERE note <> 'two
    lines'
target:
  table: dw.t
columns:
  id: bigint
  updated_at: timestamp
strategy: append
watermark:
  column: updated_at
  start: 2026-01-01
`
	s, err := compiler.Parse("p.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	if ds := compiler.Validate(s); len(ds) > 0 {
		t.Fatalf("the spec must validate: %v", ds)
	}
	p, err := compiler.Lower(s)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		r    *sqllex.Rules
		want string
	}{
		{sqllex.MySQL, ""},
		{sqllex.Spark, ""},
		{sqllex.Postgres, `p.yaml:5:16: source.query, as postgres reads it: malformed number "1.app.t"`},
		{sqllex.SQLite, ""},
		{sqllex.DuckDB, "p.yaml:5:10: source.query, as duckdb reads it: unexpected character '`'"},
		{sqllex.Snowflake, "p.yaml:5:10: source.query, as snowflake reads it: unexpected character '`'"},
		{sqllex.BigQuery, "p.yaml:6:19: source.query, as bigquery reads it: unterminated string literal: bigquery ends a quoted string at the line end (use a triple-quoted string)"},
	}
	for _, tt := range tests {
		t.Run(tt.r.Name, func(t *testing.T) {
			got := ""
			if err := dialects.CheckQuery(p, tt.r); err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}
