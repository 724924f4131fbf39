package all_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
)

// cdcTemplate is a change-log spec whose op codes a case chooses: each
// code becomes a string literal in SQL, as a check's literals do. The
// strategy is cdc, or scd2 (the same log kept as versions), whose
// statements spell the codes in other places.
const cdcTemplate = `pipeline: hostile_cdc
source:
  table: app.log
target:
  table: dw.accounts
columns:
  id: bigint
  op: text
  lsn: bigint
  at: timestamp
strategy: {strategy}
unique_key: [id]
watermark:
  column: at
  start: 2026-01-01
cdc:
  op: op
  sequence: lsn
  ops: {insert: [{insert}], update: [u], delete: [d]}
  at: at
`

// changeStrategies are the strategies that read a change log.
var changeStrategies = []string{"cdc", "scd2"}

func cdcSpec(strategy, code string) string {
	return strings.NewReplacer("{strategy}", strategy, "{insert}", strconv.Quote(code)).Replace(cdcTemplate)
}

// TestCDCOpCodes: op codes are spec text that reaches SQL as literals.
// Codes holding quotes, comment openers and markers are spelled by each
// engine's literal rule and lex back as one literal (Render checks every
// statement); a code no literal rule spells alike everywhere is refused at
// its place in the spec.
func TestCDCOpCodes(t *testing.T) {
	cases := []struct {
		name, code      string
		invalid, duckdb string
	}{
		{name: "a quote", code: "it's", duckdb: `"op" NOT IN ('it''s', 'u', 'd')`},
		{name: "a double dash", code: "--", duckdb: `'--'`},
		{name: "a comment opener", code: "/*", duckdb: `'/*'`},
		{name: "markers", code: "$1?", duckdb: `'$1?'`},
		{name: "a semicolon", code: ";", duckdb: `';'`},
		{name: "quoted names", code: "`x`\"y\"", duckdb: "'`x`\"y\"'"},
		{name: "a letter beyond ASCII", code: "é", duckdb: `'é'`},
		{name: "a backslash", code: `\'`, invalid: `hostile_cdc.yaml:19:18: cdc.ops.insert code "\\'" holds a backslash`},
		{name: "a line break", code: "a\nb", invalid: `cdc.ops.insert code "a\nb" holds the character U+000A, which is not printable`},
		{name: "a line separator", code: "a\u2028b", invalid: `holds the character U+2028, which is not printable`},
		{name: "a trailing space", code: "d ", invalid: `begins or ends with a space`},
	}
	for _, tt := range cases {
		for _, strategy := range changeStrategies {
			t.Run(strategy+"/"+tt.name, func(t *testing.T) {
				testOpCode(t, cdcSpec(strategy, tt.code), tt.invalid, tt.duckdb)
			})
		}
	}
}

// testOpCode compiles a spec with a chosen op code: validation refuses it
// with invalid, or every dialect compiles it and duckdb spells it so.
func testOpCode(t *testing.T, spec, invalid, duckdb string) {
	s, err := compiler.Parse("hostile_cdc.yaml", []byte(spec))
	if err != nil {
		t.Fatal(err)
	}
	diags := compiler.Validate(s).Err()
	if invalid != "" {
		if diags == nil || !strings.Contains(diags.Error(), invalid) {
			t.Fatalf("validation said %v, want %q", diags, invalid)
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
	for _, name := range all.Names() {
		d, _ := all.Lookup(name)
		file, err := dialects.File(d, plan, "hostile_cdc.yaml")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if name == "duckdb" && !strings.Contains(string(file), duckdb) {
			t.Errorf("the compiled file does not hold %q:\n%s", duckdb, file)
		}
	}
}

// renderCDC compiles the cdc template with code as an op code for every
// dialect, when validation accepts it: every statement must lex back as
// meant. FuzzRenderSafe calls it with its texts.
func renderCDC(t *testing.T, code string) {
	for _, strategy := range changeStrategies {
		renderChanges(t, cdcSpec(strategy, code), code)
	}
}

func renderChanges(t *testing.T, spec, code string) {
	s, err := compiler.Parse("fuzz_cdc.yaml", []byte(spec))
	if err != nil || len(compiler.Validate(s)) > 0 {
		return
	}
	plan, err := compiler.Lower(s)
	if err != nil {
		t.Fatalf("a valid spec does not lower: %v", err)
	}
	for _, name := range all.Names() {
		d, _ := all.Lookup(name)
		rendered, err := dialects.Render(d, plan)
		if err != nil {
			t.Fatalf("%s: op code %q: %v", name, code, err)
		}
		for _, r := range rendered {
			for _, p := range r.Parts {
				if err := dialects.CheckPart(d, p); err != nil {
					t.Fatalf("%s: %s: op code %q: %v", name, r.Name, code, err)
				}
			}
		}
	}
}
