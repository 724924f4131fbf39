package all_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects/all"
	"github.com/incrc/incrc/dialects/script"
)

// parsedDialects are the compiled-only dialects whose every statement a
// real parser for the engine must accept (testdata/parsecheck/check.mjs
// says which parser reads which dialect).
var parsedDialects = []string{"bigquery", "redshift", "snowflake", "spark", "spark_iceberg", "trino"}

const parsecheckDir = "testdata/parsecheck"

type parseInput struct {
	Dialect string `json:"dialect"`
	Where   string `json:"where"`
	SQL     string `json:"sql"`
}

// parsecheck pipes the statements to the node checker and returns its
// output and whether it accepted them all. It skips the test when node or
// the parsers are not installed, except under CI, where they must be.
func parsecheck(t *testing.T, stmts []parseInput) (string, bool) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		_, err = os.Stat(filepath.Join(parsecheckDir, "node_modules"))
	}
	if err != nil {
		msg := fmt.Sprintf("parser check needs node and its packages (npm ci --prefix dialects/all/testdata/parsecheck): %v", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	in, err := json.Marshal(stmts)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "check.mjs")
	cmd.Dir = parsecheckDir
	cmd.Stdin = bytes.NewReader(in)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	if exit, ok := err.(*exec.ExitError); ok && exit.ExitCode() == 1 {
		return out.String(), false
	}
	if err != nil {
		t.Fatalf("parser check did not run: %v\n%s", err, out.String())
	}
	return out.String(), true
}

// TestParseCompiled parses every statement of every golden spec, compiled
// for each compiled-only dialect, with a real parser for that engine.
func TestParseCompiled(t *testing.T) {
	t.Parallel()
	var stmts []parseInput
	for _, s := range goldenSpecs(t) {
		for _, name := range parsedDialects {
			d, err := all.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range lowerAndRender(t, d, s) {
				on := name
				if r.On == ir.OnSource {
					continue // spelled for the source, an executed engine: the engine tests run it
				}
				for i, p := range r.Parts {
					stmts = append(stmts, parseInput{Dialect: on, Where: fmt.Sprintf("%s/%s#%d", s.Pipeline.Value, r.Name, i+1), SQL: p.SQL})
				}
			}
		}
	}
	out, ok := parsecheck(t, stmts)
	if !ok {
		t.Fatalf("a parser rejected compiled statements:\n%s", out)
	}
	t.Log(strings.TrimSpace(out))
}

// TestParseCheckRejects proves each parser is not vacuous: a statement
// that is wrong for the engine must fail, one that is right must pass.
func TestParseCheckRejects(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"bigquery":      "SELECT a FROM t WHERE a = 'it''s'",      // BigQuery has no doubled-quote escape
		"redshift":      "MERGE INTO t USING s ON t.k = s.k WHEN", // unfinished
		"snowflake":     "SELECT FROM WHERE",
		"spark":         "MERGE INTO t USING s ON WHEN MATCHED",
		"spark_iceberg": "SELECT a FROM t WHERE a >= = 1",
		"trino":         "SELECT a FROM t WHERE a >= :lo", // Trino binds ?, not :name
	}
	good := map[string]string{
		"bigquery":      "SELECT `a` FROM `ds`.`t` WHERE `a` >= ?",
		"redshift":      `SELECT "a" FROM "s"."t" WHERE "a" >= $1`,
		"snowflake":     `SELECT "A" FROM "S"."T" WHERE "A" >= ?`,
		"spark":         "SELECT `a` FROM `s`.`t` WHERE `a` >= ?",
		"spark_iceberg": "SELECT `a` FROM `s`.`t` WHERE `a` <=> ?",
		"trino":         `SELECT "a" FROM "s"."t" WHERE "a" >= ?`,
	}
	// One node process for all of them: loading the parsers takes seconds.
	var stmts []parseInput
	for _, d := range parsedDialects {
		stmts = append(stmts, parseInput{Dialect: d, Where: "bad", SQL: bad[d]}, parseInput{Dialect: d, Where: "good", SQL: good[d]})
	}
	out, _ := parsecheck(t, stmts)
	for _, d := range parsedDialects {
		if !strings.Contains(out, "FAIL "+d+" bad:") {
			t.Errorf("the %s parser accepted %q:\n%s", d, bad[d], out)
		}
		if strings.Contains(out, "FAIL "+d+" good:") {
			t.Errorf("the %s parser rejected %q:\n%s", d, good[d], out)
		}
	}
}

// TestParseScripts parses the engine-side scripts (dialects/script) with
// the real parsers the project has:
//
//   - BigQuery: each script whole, with sql-parser-cst (DECLARE, SET,
//     IF, WHILE, FOR ... IN, BEGIN ... EXCEPTION, BEGIN TRANSACTION,
//     RAISE USING MESSAGE, @@row_count, @@error.message);
//   - PostgreSQL: the CREATE PROCEDURE with sql-parser-cst's PostgreSQL
//     grammar (its PL/pgSQL grammar does not cover GET DIAGNOSTICS, COMMIT
//     and EXECUTE ... USING: the body is executed by the real server in
//     runner/scripts_test.go instead);
//   - Redshift: the same, without NONATOMIC, which no parser here knows;
//     the body is PL/pgSQL that no parser here covers;
//   - Spark: the SQL statements of the script (those a piece between two
//     semicolons starts with), with Spark's own grammar (dt-sql-parser),
//     which has no SQL scripting: the script whole runs on Spark in
//     runner's TestScriptsConformSpark;
//   - Snowflake: no parser here covers CREATE PROCEDURE ... LANGUAGE SQL
//     nor Snowflake Scripting (datafusion-sqlparser-rs rejects CREATE
//     PROCEDURE): its statements are the compiled ones TestParseCompiled
//     parses, with :variables for the markers.
func TestParseScripts(t *testing.T) {
	t.Parallel()
	var stmts []parseInput
	seen := map[[2]string]bool{} // a job's statements repeat across files: each is parsed once
	for _, s := range goldenSpecs(t) {
		plan, err := compiler.Lower(s)
		if err != nil {
			t.Fatalf("%s: %v", s.File, err)
		}
		if plan.From != nil || plan.Watermark != nil && plan.Watermark.Tiebreak != "" || plan.Partition != nil && plan.Partition.Zone != "" {
			continue // no script: TestGoldenScripts checks it is refused
		}
		for _, name := range []string{"bigquery", "postgres", "redshift", "spark"} {
			d, err := all.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			files, err := script.Render(d, plan, s.File)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range files {
				where := fmt.Sprintf("%s.%s", s.Pipeline.Value, f.Suffix)
				text := string(f.Data)
				switch name {
				case "bigquery":
					stmts = append(stmts, parseInput{Dialect: "bigquery", Where: where, SQL: text})
				case "postgres":
					stmts = append(stmts, parseInput{Dialect: "procedure", Where: where, SQL: text})
				case "redshift":
					stmts = append(stmts, parseInput{Dialect: "procedure", Where: "redshift " + where, SQL: strings.Replace(text, "\nNONATOMIC\n", "\n", 1)})
				default:
					for i, st := range strings.Split(text, ";\n") {
						if body := stripComments(st); sqlStatement(body) && !seen[[2]string{name, body}] {
							seen[[2]string{name, body}] = true
							stmts = append(stmts, parseInput{Dialect: name, Where: fmt.Sprintf("%s#%d", where, i+1), SQL: body})
						}
					}
				}
			}
		}
	}
	out, ok := parsecheck(t, stmts)
	if !ok {
		t.Fatalf("a parser rejected scripts:\n%s", out)
	}
	t.Log(strings.TrimSpace(out))
}

// sqlStatement: a piece of a Spark script that is a SQL statement, not
// one of scripting's (DECLARE, SET, IF, FOR, WHILE, BEGIN, END).
func sqlStatement(body string) bool {
	word, _, _ := strings.Cut(body, " ")
	switch strings.ToUpper(strings.TrimSpace(word)) {
	case "SELECT", "INSERT", "MERGE", "UPDATE", "DELETE", "CREATE", "DROP", "ALTER", "WITH":
		return true
	}
	return false
}

// stripComments drops the -- comment lines of a job file's statement.
func stripComments(s string) string {
	var keep []string
	for _, ln := range strings.Split(s, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(ln), "--") {
			keep = append(keep, ln)
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}
