package compiler

import (
	"errors"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"
)

var testCols = []string{"amount", "status", "note", "order_id", "updated_at"}

func TestParseExpr(t *testing.T) {
	tests := []struct {
		src  string
		want ir.Expr
	}{
		{"amount >= 0", ir.Binary{Op: ">=", L: ir.ColRef{Name: "amount"}, R: ir.Lit{Text: "0"}}},
		{"amount != 0", ir.Binary{Op: "<>", L: ir.ColRef{Name: "amount"}, R: ir.Lit{Text: "0"}}},
		{"amount >= 0 AND amount < 1e6", ir.Binary{Op: "AND", L: ir.Binary{Op: ">=", L: ir.ColRef{Name: "amount"}, R: ir.Lit{Text: "0"}}, R: ir.Binary{Op: "<", L: ir.ColRef{Name: "amount"}, R: ir.Lit{Text: "1e6"}}}},
		{"NOT (amount < 0 OR amount IS NULL)", ir.Unary{Op: "NOT", X: ir.Binary{Op: "OR", L: ir.Binary{Op: "<", L: ir.ColRef{Name: "amount"}, R: ir.Lit{Text: "0"}}, R: ir.IsNull{X: ir.ColRef{Name: "amount"}, Not: false}}}},
		{"note is not null", ir.IsNull{X: ir.ColRef{Name: "note"}, Not: true}},
		{"status IN ('paid', 'open')", ir.In{X: ir.ColRef{Name: "status"}, List: []ir.Expr{ir.Str{Value: "paid"}, ir.Str{Value: "open"}}, Not: false}},
		{"status NOT IN ('it''s')", ir.In{X: ir.ColRef{Name: "status"}, List: []ir.Expr{ir.Str{Value: "it's"}}, Not: true}},
		{"abs(amount - 1) * 2 <= 10", ir.Binary{Op: "<=", L: ir.Binary{Op: "*", L: ir.Call{Fn: "abs", Args: []ir.Expr{ir.Binary{Op: "-", L: ir.ColRef{Name: "amount"}, R: ir.Lit{Text: "1"}}}}, R: ir.Lit{Text: "2"}}, R: ir.Lit{Text: "10"}}},
		{"COALESCE(note, status, '') <> ''", ir.Binary{Op: "<>", L: ir.Call{Fn: "coalesce", Args: []ir.Expr{ir.ColRef{Name: "note"}, ir.ColRef{Name: "status"}, ir.Str{Value: ""}}}, R: ir.Str{Value: ""}}},
		{"-amount < 0", ir.Binary{Op: "<", L: ir.Unary{Op: "-", X: ir.ColRef{Name: "amount"}}, R: ir.Lit{Text: "0"}}},
		{`"amount" > 0`, ir.Binary{Op: ">", L: ir.ColRef{Name: "amount"}, R: ir.Lit{Text: "0"}}},
		{"amount > .5", ir.Binary{Op: ">", L: ir.ColRef{Name: "amount"}, R: ir.Lit{Text: "0.5"}}},
		{"amount > 5. AND amount < 1E+3", ir.Binary{Op: "AND", L: ir.Binary{Op: ">", L: ir.ColRef{Name: "amount"}, R: ir.Lit{Text: "5.0"}}, R: ir.Binary{Op: "<", L: ir.ColRef{Name: "amount"}, R: ir.Lit{Text: "1e3"}}}},
		{"amount >= - -1", ir.Binary{Op: ">=", L: ir.ColRef{Name: "amount"}, R: ir.Unary{Op: "-", X: ir.Unary{Op: "-", X: ir.Lit{Text: "1"}}}}},
		{"note <> '--' AND note <> '/*' AND note <> '#'", ir.Binary{Op: "AND", L: ir.Binary{Op: "AND", L: ir.Binary{Op: "<>", L: ir.ColRef{Name: "note"}, R: ir.Str{Value: "--"}}, R: ir.Binary{Op: "<>", L: ir.ColRef{Name: "note"}, R: ir.Str{Value: "/*"}}}, R: ir.Binary{Op: "<>", L: ir.ColRef{Name: "note"}, R: ir.Str{Value: "#"}}}},
		{"note = 'a''b' OR note = ';'", ir.Binary{Op: "OR", L: ir.Binary{Op: "=", L: ir.ColRef{Name: "note"}, R: ir.Str{Value: "a'b"}}, R: ir.Binary{Op: "=", L: ir.ColRef{Name: "note"}, R: ir.Str{Value: ";"}}}},
		{"TRUE", ir.Lit{Text: "TRUE"}},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got, err := ParseExpr(tt.src, testCols)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseExprRejects is the injection table: each check tries to carry
// SQL of its own, or is simply not a check, and must be refused with an
// error that points at the offending offset.
func TestParseExprRejects(t *testing.T) {
	tests := []struct {
		src string
		msg string // a part of the message
		off int    // where it points
	}{
		{"amount >= 0; DROP TABLE t", "';' is not allowed", 11},
		{"amount >= 0 -- '", "comments are not allowed", 12},
		{"amount >= 0 /* x */", "comments are not allowed", 12},
		{"amount >= 0 /*! OR 1=1 */", "MySQL executes", 12},
		{"amount >= 0 /* unterminated", "unterminated /* comment", 12},
		{"note = 'it\\'s'", "backslash", 10},
		{`note = "x\"`, "in a quoted identifier", 9},
		{"note = 'open", "unterminated string", 7},
		{`"amount`, "unterminated quoted identifier", 0},
		{"note = 'a\x00b'", "control character", 9},
		{"pg_sleep(10) IS NULL", `function "pg_sleep" is not allowed`, 0},
		{"(SELECT 1) = 1", "SELECT is not allowed", 1},
		{"amount BETWEEN 0 AND 1", "BETWEEN is not allowed", 7},
		{"status LIKE 'a%'", "LIKE is not allowed", 7},
		{"amount > 0 OR 1=1) OR (1=1", `unexpected ")"`, 17},
		{"amount >= 0 AND", "unexpected end of check", 15},
		{"amount > $1", `"$1" is not allowed`, 9},
		{"amount > :lo", `":lo" is not allowed`, 9},
		{"amout > 0", `unknown column "amout", did you mean "amount"?`, 0},
		{"amount::text = '1'", `unexpected "::"`, 6},
		{"status || 'x' = 'y'", `unexpected "||"`, 7},
		{"amount > 1..2", "malformed number", 9},
		{"amount > 1e", "malformed number", 9},
		{"amount > 0x10", "malformed number", 9},
		{"abs(amount, 1) > 0", "abs() takes 1 argument(s), got 2", 0},
		{"coalesce() > 0", "coalesce() takes at least one argument", 0},
		{"status IN 'a'", "expected ( after IN", 10},
		{"status IN ('a' 'b')", "expected , or ) in the IN list", 15},
		{"amount # 1", "comments are not allowed", 7},
		{"amount // 2 > 0", "comments are not allowed", 7},
		{"amount >= --1", "'--' directly followed by '1'", 10},
		{"amount >= 0 --", "comments are not allowed", 12},
		{"note = 'a\nb'", `control character '\n' in a string literal`, 9},
		{"note = 'a\tb'", `control character '\t' in a string literal`, 9},
		{"note = 'a\rb'", `control character '\r' in a string literal`, 9},
		{"note = 'a\u2028b'", `line separator '\u2028' in a string literal`, 9},
		{"note = \"a\nb\"", `control character '\n' in a quoted identifier`, 9},
		{"amount >= - -1 OR kind = '\n0) OR 1=0; DROP TABLE IF EXISTS pwned; SELECT 0 --'", `control character '\n' in a string literal`, 26},
		{"amount > 0 ; ", "';' is not allowed", 11},
		{"montant ≥ 0", `unexpected character '≥'`, 8},
		{strings.Repeat("(", 100) + "amount" + strings.Repeat(")", 100), "nests deeper than", 64},
		{strings.Repeat("NOT ", 100) + "amount > 0", "nests deeper than", 256},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			_, err := ParseExpr(tt.src, testCols)
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("error %q does not say %q", err, tt.msg)
			}
			var oe *OffsetError
			if !errors.As(err, &oe) {
				t.Fatalf("error %T has no offset", err)
			}
			if oe.Off != tt.off {
				t.Errorf("offset %d, want %d", oe.Off, tt.off)
			}
		})
	}
}

func TestColumns(t *testing.T) {
	e, err := ParseExpr("amount > 0 AND coalesce(note, status) IN (status, 'x') AND amount < 9", testCols)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"amount", "note", "status"}, ir.Columns(e)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseMeasure(t *testing.T) {
	tests := []struct {
		src     string
		want    ir.Measure
		wantErr string
	}{
		{src: "count", want: ir.Measure{Fn: "count"}},
		{src: "count(*)", want: ir.Measure{Fn: "count"}},
		{src: "COUNT(note)", want: ir.Measure{Fn: "count", Column: "note"}},
		{src: "sum(amount)", want: ir.Measure{Fn: "sum", Column: "amount"}},
		{src: `max("updated_at")`, want: ir.Measure{Fn: "max", Column: "updated_at"}},
		{src: "min( amount )", want: ir.Measure{Fn: "min", Column: "amount"}},
		{src: "sum", wantErr: "sum needs a column"},
		{src: "avg(amount)", wantErr: "expected count"},
		{src: "sum(amount); DROP TABLE t", wantErr: "expected count"},
		{src: "sum(amount) -- x", wantErr: "expected count"},
		{src: "sum(amount + 1)", wantErr: "expected count"},
		{src: "sum(*)", wantErr: "expected count"},
		{src: "sum(amout)", wantErr: `unknown column "amout"`},
		{src: "sum(", wantErr: "expected count"},
		{src: "sum('x')", wantErr: "expected count"},
		{src: "", wantErr: "expected count"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			got, err := ParseMeasure(tt.src, testCols)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one saying %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestCheckLiteralsPrintable: a check's literal holding a character a
// reviewer cannot see (a bidirectional control, a zero-width character,
// a no-break space) is refused where it is.
func TestCheckLiteralsPrintable(t *testing.T) {
	for _, r := range []rune{0x202E, 0x2066, 0x200F, 0x200B, 0x200D, 0xFEFF, 0x00A0, 0x2028} {
		src := "note <> 'ab" + string(r) + "c'"
		_, err := ParseExpr(src, []string{"note"})
		var oe *OffsetError
		if !errors.As(err, &oe) || oe.Off != len("note <> 'ab") {
			t.Errorf("%U: got %v, want it refused at its offset", r, err)
		}
	}
	if _, err := ParseExpr("note <> 'prix: 5 €, ça va'", []string{"note"}); err != nil {
		t.Errorf("printable text is a literal: %v", err)
	}
}
