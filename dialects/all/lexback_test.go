package all_test

import (
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
)

// TestLexBackGolden lexes every statement of every golden spec, compiled
// for every dialect, back with the dialect's rules (Render already refuses
// one that does not read back; this says so out loud and checks the check
// had something to compare).
func TestLexBackGolden(t *testing.T) {
	for _, s := range goldenSpecs(t) {
		plan, err := compiler.Lower(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range all.Names() {
			d, _ := all.Lookup(name)
			t.Run(name+"/"+s.Pipeline.Value, func(t *testing.T) {
				rendered, err := dialects.Render(d, plan, sourceOf(t, plan))
				if err != nil {
					t.Fatal(err)
				}
				names, strs := 0, 0
				for _, r := range rendered {
					on := d
					if r.On == ir.OnSource {
						on = sourceOf(t, plan) // spelled for the source
					}
					for _, p := range r.Parts {
						if err := dialects.CheckPart(on, p); err != nil {
							t.Errorf("%s: %v", r.Name, err)
						}
						names += len(p.Meant.Names)
						strs += len(p.Meant.Strings)
					}
				}
				if names == 0 || strs == 0 {
					t.Errorf("the lex-back compared %d quoted names and %d literals: nothing to check", names, strs)
				}
			})
		}
	}
}

// TestCheckPartRefuses feeds the lex-back statements a renderer could get
// wrong: each must be refused, naming what is wrong.
func TestCheckPartRefuses(t *testing.T) {
	names := func(kv ...string) []dialects.Spelled {
		var m []dialects.Spelled
		for i := 0; i < len(kv); i += 2 {
			m = append(m, dialects.Spelled{Text: kv[i], Value: kv[i+1]})
		}
		return m
	}
	tests := []struct {
		name    string
		dialect string
		part    dialects.Part
		want    string
	}{
		{"comment", "postgres", dialects.Part{SQL: "SELECT 1 -- x"}, "a comment"},
		{"block comment", "sqlite", dialects.Part{SQL: "SELECT 1 /* x */"}, "a comment"},
		{"two statements", "duckdb", dialects.Part{SQL: "SELECT 1; SELECT 2"}, "more than one statement"},
		{"minus minus read as code", "mysql", dialects.Part{SQL: "SELECT 1 --1"}, `"--" outside a literal`},
		{"hash read as an operator", "postgres", dialects.Part{SQL: "SELECT 5 # 3"}, `"#" outside a literal`},
		{"a comment's end read as operators", "postgres", dialects.Part{SQL: "SELECT 4 */ 2"}, `"*/" outside a literal`},
		{"slash slash read as operators", "duckdb", dialects.Part{SQL: `SELECT "a" // 2`, Meant: dialects.Meant{Names: names(`"a"`, "a")}}, `"//" outside a literal`},
		{"the first opener in the list's order", "postgres", dialects.Part{SQL: "SELECT 4 # 2 */ 1"}, `"*/" outside a literal`},
		{"a doubled quote on bigquery", "bigquery", dialects.Part{SQL: "SELECT 'a''b'", Meant: dialects.Meant{Strings: names("'a''b'", "a'b")}}, "was not written as one"},
		{"a backslash on sqlite", "sqlite", dialects.Part{SQL: `SELECT 'a\'`, Meant: dialects.Meant{Strings: names(`'a\'`, `a'`)}}, "was not written as one"},
		{"a literal not written", "trino", dialects.Part{SQL: "SELECT 'x'"}, "was not written as one"},
		{"a literal written, not read", "trino", dialects.Part{SQL: "SELECT 1", Meant: dialects.Meant{Strings: names("'x'", "x")}}, "does not read back"},
		{"a name not written", "duckdb", dialects.Part{SQL: `SELECT "a"`}, "was not written as one"},
		{"a name read as another", "snowflake", dialects.Part{SQL: `SELECT "a"`, Meant: dialects.Meant{Names: names(`"a"`, "A")}}, "was not written as one"},
		{"a spelling listed twice means the last", "snowflake", dialects.Part{SQL: `SELECT "A"`, Meant: dialects.Meant{Names: names(`"A"`, "A", `"A"`, "a")}}, "was not written as one"},
		{"a number lost", "duckdb", dialects.Part{SQL: "SELECT 1", Meant: dialects.Meant{Numbers: []string{"5"}}}, "the number 5"},
		{"a marker too many", "mysql", dialects.Part{SQL: "SELECT ?, ?", Params: []string{"a"}}, "2 parameter markers for 1 parameters"},
		{"a marker missing", "postgres", dialects.Part{SQL: "SELECT $1", Params: []string{"a", "b"}}, "1 distinct markers for 2 parameters"},
		{"the query ends in a comment", "postgres", dialects.Part{SQL: "SELECT * FROM (SELECT 1 -- x\n) AS src", Meant: dialects.Meant{Queries: []dialects.Span{{Off: 15, End: 28}}}}, "a comment"},
		{"the query's literal runs out", "sqlite", dialects.Part{SQL: "SELECT * FROM (SELECT 'a) AS src WHERE x = 'b", Meant: dialects.Meant{Queries: []dialects.Span{{Off: 15, End: 24}}}}, "runs across the edge"},
		{"does not lex", "postgres", dialects.Part{SQL: "SELECT 'a"}, "do not read the statement"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := all.Lookup(tt.dialect)
			if err != nil {
				t.Fatal(err)
			}
			err = dialects.CheckPart(d, tt.part)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// TestEmbedQuery re-spells source queries: comments go, each line is
// indented, literals keep their bytes.
func TestEmbedQuery(t *testing.T) {
	tests := []struct {
		r         *sqllex.Rules
		src, want string
	}{
		{sqllex.Postgres, "SELECT a -- the a\nFROM t /* why */ WHERE b = 1", "SELECT a\n  FROM t WHERE b = 1"},
		{sqllex.Postgres, "SELECT a/**/b FROM t", "SELECT a b FROM t"},
		{sqllex.Postgres, "SELECT 'x\ny' AS s\n\nFROM t", "SELECT 'x\ny' AS s\n\n  FROM t"},
		{sqllex.Postgres, "SELECT a \r\n  FROM t", "SELECT a\n    FROM t"},
		{sqllex.MySQL, "SELECT a --1\nFROM t # c", "SELECT a --1\n  FROM t"},
		{sqllex.Postgres, "SELECT a FROM t -- last", "SELECT a FROM t"},
	}
	for _, tt := range tests {
		t.Run(tt.r.Name+"/"+tt.src, func(t *testing.T) {
			got, err := dialects.EmbedQuery(tt.r, tt.src, "  ")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// TestLiteralRules spells values no check can hold (quotes, backslashes,
// line ends, comment openers) with every dialect's literal rule: each must
// lex back as one literal holding the value, and what no rule can spell
// the same way on every setting of an engine (a NUL) must be refused.
func TestLiteralRules(t *testing.T) {
	values := []string{"it's", `a\`, `a\'b`, "a\nb", "a\r\nb", "tab\there", "-- x", "*/", "/*", "'''", "$$", "\"", "`", "é€😀", "?", "$1", ""}
	for _, name := range all.Names() {
		d, _ := all.Lookup(name)
		for _, v := range values {
			t.Run(name+"/"+v, func(t *testing.T) {
				st := &ir.Statement{Name: "t", Op: ir.CountRows{Table: ir.Table{Parts: []string{"t"}},
					Where: ir.Binary{Op: "=", L: ir.ColRef{Name: "c"}, R: ir.Str{Value: v}}}}
				parts, err := dialects.RenderStatement(d, st)
				if err != nil {
					t.Fatal(err)
				}
				if len(parts) != 1 || len(parts[0].Meant.Strings) != 1 {
					t.Fatalf("want one statement with one literal: %+v", parts)
				}
				for _, sp := range parts[0].Meant.Strings {
					if sp.Value != v || !strings.Contains(parts[0].SQL, sp.Text) {
						t.Errorf("literal %s for %q in %s", sp.Text, v, parts[0].SQL)
					}
				}
			})
		}
		t.Run(name+"/NUL", func(t *testing.T) {
			st := &ir.Statement{Name: "t", Op: ir.CountRows{Table: ir.Table{Parts: []string{"t"}},
				Where: ir.Binary{Op: "=", L: ir.ColRef{Name: "c"}, R: ir.Str{Value: "a\x00b"}}}}
			if _, err := dialects.RenderStatement(d, st); err == nil || !strings.Contains(err.Error(), "cannot spell") {
				t.Errorf("a NUL in a literal: %v", err)
			}
		})
	}
}
