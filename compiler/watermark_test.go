package compiler

import (
	"strings"
	"testing"
)

// TestIntegerStartInRange: watermark.start must be a value of the
// watermark column's type; the error says the type's range.
func TestIntegerStartInRange(t *testing.T) {
	for _, c := range []struct{ typ, start, want string }{
		{"smallint", "32768", "32768 is outside the range of the watermark column's type smallint (-32768 to 32767)"},
		{"integer", "-2147483649", "outside the range of the watermark column's type integer"},
		{"bigint", "9223372036854775808", "is not an integer"},
	} {
		y := "pipeline: ids\nsource: {table: app.ids}\ntarget: {table: dw.ids}\ncolumns: {id: " + c.typ + "}\nstrategy: merge\nunique_key: [id]\nwatermark: {column: id, start: \"" + c.start + "\"}\n"
		s, err := Parse("ids.yaml", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		d := Validate(s)
		if len(d) != 1 || !strings.Contains(d[0].Msg, c.want) {
			t.Errorf("%s start %s: %v, want one error saying %q", c.typ, c.start, d, c.want)
		}
	}
}
