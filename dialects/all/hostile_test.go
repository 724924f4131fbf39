package all_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
	"github.com/incrc/incrc/dialects/script"
)

// hostileTemplate is the spec every hostile case is written into: the
// case's check (or amount >= 0) and its source query (or a table).
const hostileTemplate = `pipeline: hostile
source:
  {source}
target:
  table: dw.hostile
columns:
  id: bigint
  amount: decimal(12,2)
  note: text
  updated_at: timestamp
strategy: merge
unique_key: [id]
watermark:
  column: updated_at
  start: 2026-01-01
quality:
  checks: [{check}]
`

// hostileSpec writes a case's check and query as YAML double-quoted
// scalars (line breaks and control characters reach the spec as such).
func hostileSpec(check, query string) string {
	source := "table: app.payments"
	if query != "" {
		source = "query: " + strconv.Quote(query)
	}
	if check == "" {
		check = "amount >= 0"
	}
	return strings.NewReplacer("{source}", source, "{check}", strconv.Quote(check)).Replace(hostileTemplate)
}

const q = "SELECT id, amount, note, updated_at FROM app.payments"

// hostileCases are what attackers and honest users write where spec text
// meets SQL, and what must happen to each. The table grows with every
// finding. A case names its check (line 17 of the spec) or its source
// query (line 3), the dialect it is compiled for ("" for every dialect),
// and exactly one outcome:
//
//   - invalid: validation refuses the spec with this message, at this
//     position;
//   - refused: validation accepts it, and compiling for the dialect refuses
//     it with this message, at this position;
//   - otherwise it compiles, the compiled file holds spelled and does not
//     hold absent, and every statement lexes back clean (Render checks).
var hostileCases = []struct {
	name, check, query, dialect string
	invalid, refused            string
	spelled, absent             string
}{
	// Issue 8, verbatim.
	{name: "the attack", check: "amount >= - -1 OR kind = '\n0) OR 1=0; DROP TABLE IF EXISTS pwned; SELECT 0 --'",
		invalid: `hostile.yaml:17:12: quality check "amount >= - -1 OR kind = '\n0) OR 1=0; DROP TABLE IF EXISTS p"...: control character '\n' in a string literal`},
	{name: "minus minus", check: "amount >= - -1", spelled: `"amount" >= -(-1)`},
	{name: "minus minus on mysql", check: "amount >= - -1", dialect: "mysql", spelled: "`amount` >= -(-1)"},
	{name: "minus of a minus of a column", check: "-amount - -amount = 0", dialect: "bigquery", spelled: "-`amount` - -`amount` = 0"},
	{name: "minus of an expression", check: "-(amount + 1) < 0", spelled: `-("amount" + 1) < 0`},
	{name: "double dash without a space", check: "amount >= --1",
		invalid: `hostile.yaml:17:23: quality check "amount >= --1": '--' directly followed by '1'`},
	{name: "comment opener in a literal", check: "note <> '--'", spelled: `"note" <> '--'`},
	{name: "block comment openers in literals", check: "note <> '/*' AND note <> '*/'", dialect: "spark", spelled: "`note` <> '/*' AND `note` <> '*/'"},
	{name: "doubled quote", check: "note = 'a''b'", spelled: `"note" = 'a''b'`},
	{name: "doubled quote on bigquery", check: "note = 'a''b'", dialect: "bigquery", spelled: "`note` = 'a\\'b'"},
	{name: "markers in literals", check: "note IN ('?', '$1', ':x', '@y', '$$')", dialect: "duckdb", spelled: `"note" IN ('?', '$1', ':x', '@y', '$$')`},
	{name: "hash comment", check: "amount >= 0 # OR 1=1", invalid: "quality check \"amount >= 0 # OR 1=1\": comments are not allowed in a check"},
	{name: "executable comment", check: "amount >= 0 /*! OR 1=1 */", invalid: "MySQL executes the text of /*! ... */ comments"},
	{name: "backslash in a literal", check: `note = 'a\'b'`, invalid: "backslash in a string literal"},
	{name: "tab in a literal", check: "note = 'a\tb'", invalid: `control character '\t' in a string literal`},
	{name: "line separator in a literal", check: "note = 'a\u2028b'", invalid: `line separator '\u2028' in a string literal`},

	{name: "a second statement after --x", query: q + " --x; DROP TABLE t", invalid: "hostile.yaml:3:65: source.query '--' directly followed by 'x'"},
	{name: "a lone carriage return", query: q + " -- x\r; DROP TABLE t", invalid: "source.query a carriage return alone ends a comment"},
	{name: "spark's continued comment", query: q + " -- x \\\nWHERE note = 'mine'", invalid: "source.query a backslash at the end of a comment line"},
	{name: "nested comment", query: q + " /* a /* b */ , secret */", invalid: "source.query a comment inside a comment"},
	{name: "hash comment in a query", query: q + " # x", invalid: "source.query '#' starts a comment on MySQL and BigQuery"},
	{name: "dollar quoting", query: q + " WHERE note = $$x$$", invalid: "source.query '$' starts a dollar-quoted string"},
	{name: "backslash quote", query: q + ` WHERE note <> 'a\'; DROP TABLE t; --'`, invalid: "source.query backslash in a string literal"},
	{name: "triple quotes", query: q + " WHERE note <> '''x'''", invalid: "source.query three ' in a row"},
	{name: "closes the wrapper", query: q + ") AS src, (SELECT 1", invalid: "source.query ')' closes a parenthesis the query did not open"},
	{name: "a parameter", query: q + " WHERE note <> ?", invalid: "source.query must not use bind parameters (?)"},
	{name: "an optimizer hint", query: "SELECT /*+ BROADCAST(p) */ id, amount, note, updated_at FROM app.payments", invalid: "source.query optimizer hints"},
	{name: "mariadb executable comment", query: q + " /*M! , 1 */", invalid: "source.query MySQL executes"},
	{name: "sqlite brackets hiding a quote", query: q + " WHERE note <> [']; DROP TABLE t; --']", invalid: "source.query SQLite reads [...] as a quoted name"},
	{name: "comments are left out", query: q + " -- the payments\nWHERE note <> '-- kept' /* gone */", spelled: "WHERE note <> '-- kept'", absent: "the payments"},
	{name: "comments are left out on mysql", query: q + " -- the payments\nWHERE note <> '-- kept' /* gone */", dialect: "mysql", spelled: "WHERE note <> '-- kept'", absent: "gone"},
	{name: "backticks on bigquery", query: "SELECT id, amount, note, updated_at FROM `proj-1.app.payments`", dialect: "bigquery", spelled: "FROM `proj-1.app.payments`"},
	{name: "backticks on snowflake", query: "SELECT id, amount, note, updated_at FROM `proj-1.app.payments`", dialect: "snowflake",
		refused: "hostile.yaml:3:52: source.query, as snowflake reads it: unexpected character '`'"},
	{name: "a line break in a literal", query: q + " WHERE note <> 'two\nlines'", dialect: "duckdb", spelled: "'two\nlines'"},
	{name: "a line break in a literal on bigquery", query: q + " WHERE note <> 'two\nlines'", dialect: "bigquery",
		refused: "source.query, as bigquery reads it: unterminated string literal: bigquery ends a quoted string at the line end"},
}

func TestHostile(t *testing.T) {
	for _, tt := range hostileCases {
		t.Run(tt.name, func(t *testing.T) {
			s, err := compiler.Parse("hostile.yaml", []byte(hostileSpec(tt.check, tt.query)))
			if err != nil {
				t.Fatal(err)
			}
			diags := compiler.Validate(s).Err()
			if tt.invalid != "" {
				if diags == nil || !strings.Contains(diags.Error(), tt.invalid) {
					t.Fatalf("validation said %v, want %q", diags, tt.invalid)
				}
				return
			}
			if diags != nil {
				t.Fatal(diags)
			}
			plan, err := compiler.Lower(s)
			if err != nil {
				t.Fatal(err)
			}
			names := []string{tt.dialect}
			if tt.dialect == "" {
				names = all.Names()
			}
			for _, name := range names {
				d, err := all.Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				file, err := dialects.File(d, plan, "hostile.yaml")
				if tt.refused != "" {
					if err == nil || !strings.Contains(err.Error(), tt.refused) {
						t.Errorf("%s: compiling said %v, want %q", name, err, tt.refused)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if name == tt.dialect || name == "duckdb" {
					if !strings.Contains(string(file), tt.spelled) {
						t.Errorf("%s: the compiled file does not hold %q:\n%s", name, tt.spelled, file)
					}
				}
				if tt.absent != "" && strings.Contains(string(file), tt.absent) {
					t.Errorf("%s: the compiled file holds %q", name, tt.absent)
				}
			}
		})
	}
}

// TestHeaderStaysComment: spec text the header repeats (a query's
// literal) cannot end a comment line and start a statement. (A files glob
// with a line break is refused at validation.)
func TestHeaderStaysComment(t *testing.T) {
	specs := map[string]string{
		"query": "source:\n  query: " + strconv.Quote(q+" WHERE note <> 'two\nDROP TABLE dw.hostile; --'"),
	}
	for name, src := range specs {
		t.Run(name, func(t *testing.T) {
			text := strings.Replace(hostileSpec("", ""), "source:\n  table: app.payments", src, 1)
			s, err := compiler.Parse("hostile.yaml", []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			if diags := compiler.Validate(s).Err(); diags != nil {
				t.Fatal(diags)
			}
			plan, err := compiler.Lower(s)
			if err != nil {
				t.Fatal(err)
			}
			d, err := all.Lookup("duckdb")
			if err != nil {
				t.Fatal(err)
			}
			file, err := dialects.File(d, plan, "hostile.yaml")
			if err != nil {
				t.Fatal(err)
			}
			header, _, _ := strings.Cut(string(file), "\n-- name: ")
			for i, line := range strings.Split(header, "\n") {
				if line != "" && !strings.HasPrefix(line, "--") {
					t.Errorf("header line %d is not a comment: %q", i+1, line)
				}
			}
			if !strings.Contains(header, `\nDROP TABLE`) {
				t.Errorf("the header does not show the line break escaped:\n%s", header)
			}
		})
	}
}

// TestScriptsHostile: a check's string literal cannot end the body of an
// engine-side script. PL/pgSQL quotes each statement with a dollar tag the
// statement does not hold; Snowflake's body is delimited by $$, which
// nothing escapes, so a statement holding $$ gets no Snowflake script.
func TestScriptsHostile(t *testing.T) {
	check := "note <> '$$; DROP TABLE dw.hostile; SELECT $$' AND note <> '$s$; DROP TABLE dw.hostile; SELECT $s$'"
	s, err := compiler.Parse("hostile.yaml", []byte(hostileSpec(check, "")))
	if err != nil {
		t.Fatal(err)
	}
	if diags := compiler.Validate(s).Err(); diags != nil {
		t.Fatal(diags)
	}
	plan, err := compiler.Lower(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"postgres", "redshift", "snowflake", "bigquery"} {
		d, err := all.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if name == "postgres" || name == "redshift" {
			// The procedure's own quote in a literal: no procedure.
			tagged, err := compiler.Parse("hostile.yaml", []byte(hostileSpec("note <> '$incrc$; DROP TABLE dw.hostile; SELECT $incrc$'", "")))
			if err != nil {
				t.Fatal(err)
			}
			tp, err := compiler.Lower(tagged)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := script.Render(d, tp, "hostile.yaml"); !errors.Is(err, script.ErrDelimiter) {
				t.Errorf("%s: rendered a script whose body holds its own delimiter (err %v)", name, err)
			}
		}
		files, err := script.Render(d, plan, "hostile.yaml")
		if name == "snowflake" {
			if !errors.Is(err, script.ErrDelimiter) {
				t.Errorf("snowflake: rendered a script whose body holds $$ (err %v)", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, f := range files {
			text := string(f.Data)
			if name == "bigquery" {
				continue // statements are the script's own: the literal stays a literal
			}
			// Every EXECUTE's text is quoted with a tag it does not hold:
			// the check's literal holds $s$, so the tag is another
			// (Redshift runs its statements as they are, inside $incrc$).
			if name == "postgres" && !strings.Contains(text, "$s0$") {
				t.Errorf("%s %s: no statement quoted with a tag other than $s$", name, f.Suffix)
			}
		}
	}
}
