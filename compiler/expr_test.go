package compiler

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var testCols = []string{"amount", "status", "note", "order_id", "updated_at"}

func TestParseExpr(t *testing.T) {
	tests := []struct {
		src  string
		want Expr
	}{
		{"amount >= 0", Binary{">=", ColRef{"amount"}, Lit{"0"}}},
		{"amount != 0", Binary{"<>", ColRef{"amount"}, Lit{"0"}}},
		{"amount >= 0 AND amount < 1e6", Binary{"AND", Binary{">=", ColRef{"amount"}, Lit{"0"}}, Binary{"<", ColRef{"amount"}, Lit{"1e6"}}}},
		{"NOT (amount < 0 OR amount IS NULL)", Unary{"NOT", Binary{"OR", Binary{"<", ColRef{"amount"}, Lit{"0"}}, IsNull{ColRef{"amount"}, false}}}},
		{"note is not null", IsNull{ColRef{"note"}, true}},
		{"status IN ('paid', 'open')", In{ColRef{"status"}, []Expr{Str{"paid"}, Str{"open"}}, false}},
		{"status NOT IN ('it''s')", In{ColRef{"status"}, []Expr{Str{"it's"}}, true}},
		{"abs(amount - 1) * 2 <= 10", Binary{"<=", Binary{"*", Call{"abs", []Expr{Binary{"-", ColRef{"amount"}, Lit{"1"}}}}, Lit{"2"}}, Lit{"10"}}},
		{"COALESCE(note, status, '') <> ''", Binary{"<>", Call{"coalesce", []Expr{ColRef{"note"}, ColRef{"status"}, Str{""}}}, Str{""}}},
		{"-amount < 0", Binary{"<", Unary{"-", ColRef{"amount"}}, Lit{"0"}}},
		{`"amount" > 0`, Binary{">", ColRef{"amount"}, Lit{"0"}}},
		{"amount > .5", Binary{">", ColRef{"amount"}, Lit{"0.5"}}},
		{"amount > 5. AND amount < 1E+3", Binary{"AND", Binary{">", ColRef{"amount"}, Lit{"5.0"}}, Binary{"<", ColRef{"amount"}, Lit{"1e3"}}}},
		{"amount >= - -1", Binary{">=", ColRef{"amount"}, Unary{"-", Unary{"-", Lit{"1"}}}}},
		{"note <> '--' AND note <> '/*' AND note <> '#'", Binary{"AND", Binary{"AND", Binary{"<>", ColRef{"note"}, Str{"--"}}, Binary{"<>", ColRef{"note"}, Str{"/*"}}}, Binary{"<>", ColRef{"note"}, Str{"#"}}}},
		{"note = 'a''b' OR note = ';'", Binary{"OR", Binary{"=", ColRef{"note"}, Str{"a'b"}}, Binary{"=", ColRef{"note"}, Str{";"}}}},
		{"TRUE", Lit{"TRUE"}},
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
	if diff := cmp.Diff([]string{"amount", "note", "status"}, Columns(e)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestParseMeasure(t *testing.T) {
	tests := []struct {
		src     string
		want    Measure
		wantErr string
	}{
		{src: "count", want: Measure{Fn: "count"}},
		{src: "count(*)", want: Measure{Fn: "count"}},
		{src: "COUNT(note)", want: Measure{Fn: "count", Column: "note"}},
		{src: "sum(amount)", want: Measure{Fn: "sum", Column: "amount"}},
		{src: `max("updated_at")`, want: Measure{Fn: "max", Column: "updated_at"}},
		{src: "min( amount )", want: Measure{Fn: "min", Column: "amount"}},
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
