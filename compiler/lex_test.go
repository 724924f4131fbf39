package compiler

import (
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/sqllex"
)

func TestLexSQL(t *testing.T) {
	tests := []struct {
		src  string
		want string // kind:text tokens, space separated
	}{
		{"a >= 1", "ident:a op:>= num:1"},
		{"x.y<>'it''s'", "ident:x punct:. ident:y op:<> str:it's"},
		{`"Quoted Name" = 1.5e-3`, "qident:Quoted Name op:= num:1.5e-3"},
		{"a -- comment\n+ b", "ident:a comment:-- comment op:+ ident:b"},
		{"a - -b", "ident:a op:- op:- ident:b"},
		{"a --", "ident:a comment:--"},
		{"a -- b\nc", "ident:a comment:-- b ident:c"},
		{"a # b\nc", "ident:a comment:# b ident:c"},
		{"a /* c */ b", "ident:a comment:/* c */ ident:b"},
		{"f(:p, $1, ?, @v)", "ident:f punct:( param::p punct:, param:$1 punct:, param:? punct:, param:@v punct:)"},
		{"a::int || b;", "ident:a op::: ident:int op:|| ident:b punct:;"},
		{"`tick`", "qident:tick"},
	}
	names := map[tokKind]string{tIdent: "ident", tQuotedIdent: "qident", tNumber: "num", tString: "str", tOp: "op", tPunct: "punct", tParam: "param", tComment: "comment"}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			toks, err := lexSQL(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if toks[len(toks)-1].kind != tEOF {
				t.Fatal("no EOF token")
			}
			var got []string
			for _, tok := range toks[:len(toks)-1] {
				got = append(got, names[tok.kind]+":"+tok.text)
			}
			if g := strings.Join(got, " "); g != tt.want {
				t.Errorf("got  %s\nwant %s", g, tt.want)
			}
		})
	}
}

func TestCheckQuery(t *testing.T) {
	tests := []struct {
		name  string
		query string
		want  []string // parts of each problem, in order; none for a good query
		off   []int
	}{
		{name: "plain", query: "SELECT * FROM app.orders WHERE status <> 'void'"},
		{name: "with", query: "WITH x AS (SELECT 1 AS id) SELECT id FROM x"},
		{name: "half-open filter", query: "SELECT * FROM t WHERE updated_at >= '2026-01-01' AND updated_at < '2026-02-01'"},
		{name: "comment", query: "SELECT * FROM t -- the orders\nWHERE a = 1"},
		{name: "other column <=", query: "SELECT * FROM t WHERE amount <= 10"},
		{name: "semicolon", query: "SELECT 1; DROP TABLE t", want: []string{"must be one statement"}, off: []int{8}},
		{name: "trailing semicolon", query: "SELECT 1;", want: []string{"must be one statement"}, off: []int{8}},
		{name: "not a select", query: "DELETE FROM t", want: []string{"must be a SELECT"}, off: []int{0}},
		{name: "empty", query: "", want: []string{"must be a SELECT"}, off: []int{0}},
		{name: "between", query: "SELECT * FROM t WHERE updated_at BETWEEN 'a' AND 'b'", want: []string{"with BETWEEN"}, off: []int{33}},
		{name: "qualified between", query: `SELECT * FROM t WHERE t."UPDATED_AT" BETWEEN 'a' AND 'b'`, want: []string{"with BETWEEN"}, off: []int{37}},
		{name: "inclusive upper", query: "SELECT * FROM t WHERE updated_at <= 'b'", want: []string{"inclusive upper bound"}, off: []int{33}},
		{name: "reversed", query: "SELECT * FROM t WHERE 'b' >= updated_at", want: []string{"inclusive upper bound"}, off: []int{26}},
		{name: "parameter", query: "SELECT * FROM t WHERE updated_at > :lo", want: []string{"bind parameters (:lo)"}, off: []int{35}},
		{name: "mysql minus minus", query: "SELECT a --x; DROP TABLE t", want: []string{"'--' directly followed by 'x'"}, off: []int{9}},
		{name: "carriage return ends a comment on postgres", query: "SELECT a -- x\r; DROP TABLE t", want: []string{"a carriage return alone ends a comment"}, off: []int{13}},
		{name: "spark continues a comment", query: "SELECT a -- x \\\nFROM t WHERE tenant = 5", want: []string{"a backslash at the end of a comment line"}, off: []int{14}},
		{name: "nested comment", query: "SELECT a /* /* */ , secret */ FROM t", want: []string{"a comment inside a comment"}, off: []int{12}},
		{name: "hash comment", query: "SELECT a # x\nFROM t", want: []string{"'#' starts a comment on MySQL"}, off: []int{9}},
		{name: "optimizer hint", query: "SELECT /*+ x */ a FROM t", want: []string{"optimizer hints"}, off: []int{7}},
		{name: "mariadb executable comment", query: "SELECT 1 /*M! , 2 */", want: []string{"MySQL executes"}, off: []int{9}},
		{name: "dollar quoting", query: "SELECT $$a$$", want: []string{"'$' starts a dollar-quoted string"}, off: []int{7}},
		{name: "sqlite brackets", query: "SELECT [']; DROP TABLE t; --']", want: []string{"SQLite reads [...] as a quoted name"}, off: []int{8}},
		{name: "closes the wrapper", query: "SELECT * FROM t) AS src, (SELECT 1", want: []string{"')' closes a parenthesis", "'(' is never closed"}, off: []int{15, 25}},
		{name: "comment at the end", query: "SELECT * FROM t -- last"},
		{name: "semicolon in a comment", query: "SELECT a -- ; not code\nFROM t"},
		{name: "semicolon in a string", query: "SELECT ';' AS s"},
		{name: "mysql executable comment", query: "SELECT 1 /*! ; DROP TABLE t */", want: []string{"MySQL executes"}, off: []int{9}},
		{name: "backtick name", query: "SELECT `a b` FROM `proj-1.ds.t`"},
		{name: "array subscript", query: "SELECT a[1] FROM t"},
		{name: "backslash escape", query: `SELECT 'a\'; DROP TABLE t; -- '`, want: []string{"backslash"}, off: []int{9}},
		{name: "backslash in a quoted name", query: `SELECT "a\" " ; DROP TABLE t; -- "`, want: []string{"in a quoted identifier"}, off: []int{9}},
		{name: "unterminated string", query: "SELECT 'a", want: []string{"unterminated string"}, off: []int{7}},
		{name: "unterminated comment", query: "SELECT 1 /* a", want: []string{"unterminated /* comment"}, off: []int{9}},
		{name: "positional parameter", query: "SELECT * FROM t WHERE id > $1", want: []string{"bind parameters ($1)"}, off: []int{27}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := checkQuery(tt.query, "updated_at")
			if len(got) != len(tt.want) {
				t.Fatalf("got %d problems %v, want %d", len(got), got, len(tt.want))
			}
			for i, p := range got {
				if !strings.Contains(p.Msg, tt.want[i]) {
					t.Errorf("problem %q does not say %q", p.Msg, tt.want[i])
				}
				if p.Off != tt.off[i] {
					t.Errorf("problem %q at offset %d, want %d", p.Msg, p.Off, tt.off[i])
				}
			}
		})
	}
	if got := checkQuery("SELECT * FROM t WHERE updated_at <= 'b'", ""); len(got) != 0 {
		t.Errorf("without a watermark nothing is a watermark filter: %v", got)
	}
}

// TestQueryEngineFunctions: a source query calling a function only some
// engines have reads for those engines only, at the call; a name that is
// not called, or a function of a schema, is not one.
func TestQueryEngineFunctions(t *testing.T) {
	tests := []struct {
		query string
		ok    []string // engines that read it; the others refuse it at off
		off   int
	}{
		{"SELECT id FROM read_csv('x.csv')", []string{"duckdb"}, 15},
		{"SELECT i FROM generate_series(1, 3) AS g(i)", []string{"postgres", "duckdb"}, 14},
		{"SELECT STR_TO_DATE(d, '%Y') AS d FROM t", []string{"mysql"}, 7},
		{"SELECT read_csv FROM t", []string{"postgres", "duckdb", "mysql", "sqlite"}, 0},
		{"SELECT id FROM app.read_csv(1)", []string{"postgres", "duckdb", "mysql", "sqlite"}, 0},
	}
	for _, tt := range tests {
		for _, r := range []*sqllex.Rules{sqllex.Postgres, sqllex.DuckDB, sqllex.MySQL, sqllex.SQLite} {
			problems := sqllex.QueryProblems(r, tt.query, "")
			if contains(tt.ok, r.Name) {
				if len(problems) > 0 {
					t.Errorf("%s as %s: %v", tt.query, r.Name, problems[0])
				}
				continue
			}
			if len(problems) != 1 || problems[0].Off != tt.off || !strings.Contains(problems[0].Msg, "a function of") {
				t.Errorf("%s as %s: %v, want one problem at %d", tt.query, r.Name, problems, tt.off)
			}
		}
		if ps := checkQuery(tt.query, ""); len(ps) > 0 {
			t.Errorf("%s: validation (no engine yet) refuses it: %v", tt.query, ps[0])
		}
	}
}
