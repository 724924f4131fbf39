package transfer

import (
	"fmt"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	duckdb "github.com/duckdb/duckdb-go/v2"

	"github.com/jackc/pgx/v5/pgtype"
)

// TestConvertValue: each source value becomes its declared type exactly,
// or fails saying why it does not fit.
func TestConvertValue(t *testing.T) {
	dec := ir.Type{Kind: ir.Decimal, Precision: 6, Scale: 2}
	tests := []struct {
		v       any
		t       ir.Type
		want    string // the converted value, as the batched INSERTs bind it
		problem string // a part of the error, when it does not fit
	}{
		{int64(7), ir.Type{Kind: ir.Smallint}, "7", ""},
		{int64(40000), ir.Type{Kind: ir.Smallint}, "", "does not fit smallint"},
		{"12", ir.Type{Kind: ir.Integer}, "12", ""},
		{"1.5", ir.Type{Kind: ir.Bigint}, "", "is not an integer"},
		{float64(3), ir.Type{Kind: ir.Bigint}, "3", ""},
		{"abc", ir.Type{Kind: ir.Bigint}, "", "is not a number"},
		{"1234.5", dec, "1234.50", ""},
		{[]byte("-0.25"), dec, "-0.25", ""},
		{"1.005", dec, "", "more than 2 decimal(s)"},
		{"12345.00", dec, "", "more than 6 digit(s)"},
		{"1.50e2", dec, "150.00", ""},
		{duckdb.Decimal{Width: 12, Scale: 3, Value: big.NewInt(12340)}, dec, "12.34", ""},
		{"123456789012345678901234.5", ir.Type{Kind: ir.Decimal, Precision: 30, Scale: 2}, "123456789012345678901234.50", ""},
		{"héllo", ir.Type{Kind: ir.Varchar, Length: 5}, "héllo", ""},
		{"héllo!", ir.Type{Kind: ir.Varchar, Length: 5}, "", "6 characters do not fit varchar(5)"},
		{int64(1), ir.Type{Kind: ir.Boolean}, "true", ""},
		{"f", ir.Type{Kind: ir.Boolean}, "false", ""},
		{int64(2), ir.Type{Kind: ir.Boolean}, "", "not a boolean"},
		{"2026-01-10", ir.Type{Kind: ir.Date}, "2026-01-10T00:00:00Z", ""},
		{"2026-01-10 09:00:00", ir.Type{Kind: ir.Date}, "", "has a time of day"},
		{`{"a": [1, 2]}`, ir.Type{Kind: ir.JSON}, `{"a": [1, 2]}`, ""},
		{`{"a": `, ir.Type{Kind: ir.JSON}, "", "not one JSON document"},
	}
	cv := &Converter{Target: "mysql", Bind: func(t time.Time, _ ir.TypeKind) any { return t.UTC() }}
	for _, tt := range tests {
		got, err := cv.value(tt.v, tt.t)
		switch {
		case tt.problem != "":
			if err == nil || !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("%v (%T) as %s: %v, %v; want an error saying %q", tt.v, tt.v, tt.t, got, err, tt.problem)
			}
		case err != nil:
			t.Errorf("%v (%T) as %s: %v", tt.v, tt.v, tt.t, err)
		default:
			s, _ := Text(got)
			if s != tt.want {
				t.Errorf("%v (%T) as %s: %q, want %q", tt.v, tt.v, tt.t, s, tt.want)
			}
		}
	}
}

// TestConvertDecimalText: a decimal read as text takes a short path
// without big.Int when it fits an int64; it gives what the exact path
// gives (the same text as bytes takes the exact path), value or error,
// for every target's flavor.
func TestConvertDecimalText(t *testing.T) {
	inputs := []string{"0", "-0", "+1", "1.5", "-1.5", ".5", "5.", "10.505", "1234.5", "12345.00", "999999999999999999",
		"-999999999999999999", "9999999999999999999", "0.000000000000000001", "1e3", " 1", "1-", "", ".", "-", "1.2.3", "123456789012.34", "-0.01"}
	types := []ir.Type{{Kind: ir.Decimal, Precision: 12, Scale: 2}, {Kind: ir.Decimal, Precision: 6, Scale: 2},
		{Kind: ir.Decimal, Precision: 18, Scale: 0}, {Kind: ir.Decimal, Precision: 38, Scale: 10}, {Kind: ir.Decimal, Precision: 18, Scale: 18}}
	for _, flavor := range []string{"duckdb", "postgres", "mysql"} {
		cv := &Converter{Target: flavor}
		for _, typ := range types {
			for _, in := range inputs {
				fast, ferr := cv.value(in, typ)
				exact, eerr := cv.value([]byte(in), typ)
				if (ferr == nil) != (eerr == nil) || (ferr != nil && ferr.Error() != eerr.Error()) {
					t.Errorf("%s %s %q: error %v, the exact path's %v", flavor, typ, in, ferr, eerr)
					continue
				}
				if ferr == nil && decimalString(fast) != decimalString(exact) {
					t.Errorf("%s %s %q: %s, the exact path gives %s", flavor, typ, in, decimalString(fast), decimalString(exact))
				}
			}
		}
	}
}

func decimalString(v any) string {
	switch x := v.(type) {
	case duckdb.Decimal:
		return fmt.Sprintf("%s/%d/%d", decimalText(x.Value, int(x.Scale)), x.Width, x.Scale)
	case pgDecimal:
		return decimalText(big.NewInt(x.unscaled), int(x.scale))
	case pgtype.Numeric:
		return decimalText(x.Int, int(-x.Exp))
	}
	return fmt.Sprint(v)
}
