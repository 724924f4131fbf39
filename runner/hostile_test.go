package runner

import (
	"strconv"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/compiler/sqllex"
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
				pwned := ir.Table{Parts: []string{"pwned"}}
				e.exec(e.render(ir.CreateTable{Table: pwned, Columns: []ir.Col{{Name: "id", Type: ir.Type{Kind: ir.Bigint}}}}), nil)
				t.Cleanup(func() { e.exec(e.render(ir.DropTable{Table: pwned}), nil) })
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

// hostileChecks look hostile and are valid: each must run on every engine
// and mean what it says, which the rows it quarantines prove.
var hostileChecks = []string{"amount >= - -1", "note <> '--'", "note <> 'a''b'", "note NOT IN ('/*', '*/', '#', ';')"}

// TestHostileButValid runs checks that look hostile, and a source query
// whose comments hold a ';' and whose literals hold comment openers and a
// line break, on every engine: each row lands where its values say, the
// quarantine names the first rule each invalid row breaks, and the table
// a comment names is still there.
func TestHostileButValid(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			yaml := hostileYAML(e.id, "quarantine", hostileChecks...)
			// Read through a query: its comment, with a ';' and a DROP in
			// it, is left out of every statement; its literals keep their
			// bytes, the line break too.
			src := e.sourceName("app_{id}.payments")
			query := "SELECT payment_id, amount, kind, note, updated_at -- ; DROP TABLE pwned\n" +
				"FROM " + src + " /* ; DROP TABLE pwned */\nWHERE note <> 'two\nlines' AND kind <> '-- test'"
			yaml = strings.Replace(yaml, "table: app_"+e.id+".payments", "query: "+strconv.Quote(query), 1)
			p := e.spec(yaml)
			pwned := ir.Table{Parts: []string{"pwned_" + e.id}}
			e.exec(e.render(ir.CreateTable{Table: pwned, Columns: []ir.Col{{Name: "id", Type: ir.Type{Kind: ir.Bigint}}}}), nil)
			t.Cleanup(func() { e.exec(e.render(ir.DropTable{Table: pwned}), nil) })
			e.createTable("app_{id}.payments", nullableCols(p.Columns))
			e.insert("app_{id}.payments", p.Columns,
				[]any{1, "5.00", "sale", "ok", "2026-01-01 09:00:00"},
				[]any{2, "0.50", "sale", "ok", "2026-01-01 09:00:00"},         // breaks amount >= - -1 (amount >= 1)
				[]any{3, "5.00", "sale", "--", "2026-01-01 09:00:00"},         // breaks note <> '--'
				[]any{4, "5.00", "sale", "a'b", "2026-01-01 09:00:00"},        // breaks note <> 'a''b'
				[]any{5, "5.00", "sale", "*/", "2026-01-01 09:00:00"},         // breaks the NOT IN
				[]any{6, "1.00", "sale", "-- no", "2026-01-01 09:00:00"},      // valid: 1 >= 1, and not '--'
				[]any{7, "5.00", "sale", "two\nlines", "2026-01-01 09:00:00"}, // left out by the query's literal
				[]any{8, "5.00", "-- test", "ok", "2026-01-01 09:00:00"},      // left out by the query's other literal
			)
			r := mustRun(t, e, p, Options{Until: until("2026-01-02")})
			checkCounts(t, "run", r, counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-02T00:00:00Z", Read: 6, Inserted: 2, Quarantined: 4})
			if diff := cmp.Diff([]string{line(1, "5.00", "ok"), line(6, "1.00", "-- no")}, e.rows("dw_{id}.payments_quarantine", []string{"payment_id", "amount", "note"})); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
			want := []string{
				line(2, "check: "+hostileChecks[0]),
				line(3, "check: "+hostileChecks[1]),
				line(4, "check: "+hostileChecks[2]),
				line(5, "check: "+hostileChecks[3]),
			}
			if diff := cmp.Diff(want, e.rows("dw_{id}.payments_quarantine_quarantine", []string{"payment_id", "incrc_reason"})); diff != "" {
				t.Errorf("quarantine (-want +got):\n%s", diff)
			}
			if _, err := e.tg.DB.ExecContext(e.ctx, "SELECT COUNT(*) FROM "+e.tg.Dialect.QuoteIdent(pwned.Parts[0])); err != nil {
				t.Errorf("the table a comment names is gone: %v", err)
			}
		})
	}
}

// lexerFacts are facts the lexer's rules state about an engine, each
// with a statement whose result depends on it, and the fact flipped.
var lexerFacts = []struct {
	engine, fact, sql string
	flip              func(r *sqllex.Rules)
}{
	{"", "--x is a comment, or minus minus x (MySQL)", "SELECT 10 --1\n", func(r *sqllex.Rules) { r.DashSpace = !r.DashSpace }},
	{"", "a lone carriage return ends a line comment", "SELECT 1 -- c\r+ 10\n", func(r *sqllex.Rules) { r.CRLineEnd = flipFact(r.CRLineEnd) }},
	{"", "block comments nest", "SELECT 1 /* /* */ + 10 -- */\n", func(r *sqllex.Rules) { r.Nested = flipFact(r.Nested) }},
	{"", "/*! ... */ is code (MySQL)", "SELECT 1 /*! + 10 */", func(r *sqllex.Rules) { r.Executable = !r.Executable }},
	{"mysql", "/*M! ... */ is code (MariaDB)", "SELECT 1 /*M! + 10 */", func(r *sqllex.Rules) { r.Executable = !r.Executable }},
	{"mysql", "# starts a comment", "SELECT 1 # c\n+ 10\n", func(r *sqllex.Rules) { r.Hash = !r.Hash }},
	{"postgres", "# is an operator", "SELECT 5 # 3", func(r *sqllex.Rules) { r.Hash = !r.Hash }},
	{"mysql", "a backslash escapes in '...'", "SELECT length('\\' -- ') + 10", func(r *sqllex.Rules) { r.Backslash = !r.Backslash }},
	{"postgres", "a backslash is itself in '...'", "SELECT length('\\') + length(' -- ') + 10", func(r *sqllex.Rules) { r.Backslash = !r.Backslash }},
	{"duckdb", "a backslash is itself in '...'", "SELECT length('\\') + length(' -- ') + 10", func(r *sqllex.Rules) { r.Backslash = !r.Backslash }},
	{"sqlite", "a backslash is itself in '...'", "SELECT length('\\') + length(' -- ') + 10", func(r *sqllex.Rules) { r.Backslash = !r.Backslash }},
	{"mysql", "\"...\" is a string with backslash escapes", "SELECT length(\"\\\" -- \") + 10", func(r *sqllex.Rules) { r.DoubleQuoted = !r.DoubleQuoted }},
	{"postgres", "E'...' has backslash escapes", "SELECT length(E'\\'' || ' -- ') + 10", func(r *sqllex.Rules) { r.EStrings = !r.EStrings }},
	{"duckdb", "E'...' has backslash escapes", "SELECT length(E'\\'' || ' -- ') + 10", func(r *sqllex.Rules) { r.EStrings = !r.EStrings }},
	{"postgres", "$tag$ quoting", "SELECT length($t$ -- $$ $t$) + 10", func(r *sqllex.Rules) { r.Dollar = sqllex.NoDollar }},
	{"duckdb", "$tag$ quoting", "SELECT length($t$ -- $$ $t$) + 10", func(r *sqllex.Rules) { r.Dollar = sqllex.NoDollar }},
	{"postgres", "$ continues a name", "SELECT length(a$$) -- $$\nFROM (SELECT 'xyz' AS a$$) AS t", func(r *sqllex.Rules) { r.DollarInNames = !r.DollarInNames }},
	{"duckdb", "$ continues a name", "SELECT length(a$$) -- $$\nFROM (SELECT 'xyz' AS a$$) AS t", func(r *sqllex.Rules) { r.DollarInNames = !r.DollarInNames }},
	{"mysql", "$ continues a name", "SELECT length(a$$) -- $$\nFROM (SELECT 'xyz' AS a$$) AS t", func(r *sqllex.Rules) { r.DollarInNames = !r.DollarInNames }},
	{"sqlite", "$ continues a name", "SELECT length(a$) -- $$\nFROM (SELECT 'xyz' AS a$) AS t", func(r *sqllex.Rules) { r.DollarInNames = !r.DollarInNames }},
	{"sqlite", "[...] is a quoted name", "SELECT length([a -- ]) FROM (SELECT 'xy' AS [a -- ]) AS t", func(r *sqllex.Rules) { r.Brackets = !r.Brackets }},
	{"sqlite", "an unclosed /* comments out the rest", "SELECT 1 /* + 10", func(r *sqllex.Rules) { r.OpenComment = !r.OpenComment }},
	{"mysql", "`...` is a quoted name", "SELECT length(`a -- `) FROM (SELECT 'xy' AS `a -- `) AS t", func(r *sqllex.Rules) { r.Backtick = sqllex.NoBacktick }},
	{"sqlite", "`...` is a quoted name", "SELECT length(`a -- `) FROM (SELECT 'xy' AS `a -- `) AS t", func(r *sqllex.Rules) { r.Backtick = sqllex.NoBacktick }},
}

// flipFact turns Yes into No and No into Yes.
func flipFact(f sqllex.Fact) sqllex.Fact {
	return map[sqllex.Fact]sqllex.Fact{sqllex.Yes: sqllex.No, sqllex.No: sqllex.Yes}[f]
}

// TestLexerAgreesWithEngine checks each fact of the lexer's rules against
// the real engine. The statement without what the rules call comments
// (their tokens joined) must give the engine's result for the statement
// itself; with the fact flipped, the rules must either refuse the
// statement or turn it into one whose result differs, which shows the
// statement tests the fact.
func TestLexerAgreesWithEngine(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			rules := e.tg.Dialect.Lexer()
			scalar := func(sql string) (string, error) {
				var v any
				err := e.tg.DB.QueryRowContext(e.ctx, sql).Scan(&v)
				return Canon(v), err
			}
			tested := 0
			for _, f := range lexerFacts {
				if f.engine != "" && f.engine != eng.name {
					continue
				}
				tested++
				want, err := scalar(f.sql)
				if err != nil {
					t.Errorf("%s: %q does not run: %v", f.fact, f.sql, err)
					continue
				}
				if got, err := respelled(rules, f.sql, scalar); err != nil || got != want {
					t.Errorf("%s: %q is %s on the engine; as the rules read it, %s (%v)", f.fact, f.sql, want, got, err)
				}
				flipped := *rules
				f.flip(&flipped)
				if got, err := respelled(&flipped, f.sql, scalar); err == nil && got == want {
					t.Errorf("%s: %q reads the same with the fact flipped: the statement does not test it", f.fact, f.sql)
				}
			}
			if tested < 5 {
				t.Errorf("only %d facts checked on %s", tested, eng.name)
			}
		})
	}
}

// respelled runs sql as the rules read it: its tokens, without comments,
// each separated by the blanks between them in sql, by a space where the
// rules skipped something else (the markers of an executable comment),
// and two operators always by a space (- -1, not --1).
func respelled(r *sqllex.Rules, sql string, scalar func(string) (string, error)) (string, error) {
	toks, err := sqllex.LexExact(r, sql)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	prev := 0
	for i, tok := range toks {
		switch gap := sql[prev:tok.Off]; {
		case strings.TrimSpace(gap) != "", gap == "" && i > 0 && tok.Kind == sqllex.Op && toks[i-1].Kind == sqllex.Op:
			b.WriteString(" ")
		default:
			b.WriteString(gap)
		}
		if tok.Kind != sqllex.Comment {
			b.WriteString(tok.Text)
		} else {
			b.WriteString(" ")
		}
		prev = tok.End()
	}
	return scalar(b.String())
}
