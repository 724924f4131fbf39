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

// TestTiebreakRefused: watermark.tiebreak is an integer key column after a
// timestamp, on merge or append; anything else is an error at the key.
func TestTiebreakRefused(t *testing.T) {
	const base = "pipeline: tk\nsource: {table: app.tk}\ntarget: {table: dw.tk}\ncolumns: {id: bigint, seq: bigint, code: text, d: date, ts: timestamp}\nunique_key: [id]\n"
	for _, c := range []struct{ body, at, want string }{
		{"strategy: merge\nwatermark: {column: ts, tiebreak: code, start: 2026-01-01}\n", "7:35", `watermark.tiebreak "code" has type text`},
		{"strategy: merge\nwatermark: {column: ts, tiebreak: idd, start: 2026-01-01}\n", "7:35", `watermark.tiebreak "idd" is not a declared column, did you mean "id"?`},
		{"strategy: merge\nwatermark: {column: d, tiebreak: id, start: 2026-01-01}\n", "7:34", "needs a timestamp watermark"},
		{"strategy: merge\nwatermark: {column: ts, tiebreak: seq, start: 2026-01-01}\n", "7:35", "must be a unique_key column"},
		{"strategy: overwrite_partitions\npartition: {column: d}\nwatermark: {column: ts, tiebreak: id, start: 2026-01-01}\n", "8:35", "applies to strategy merge and append"},
		{"strategy: merge\nwatermark: {column: ts, tiebreak: id, start: 2026-01-01, batch: 1d}\n", "7:65", "watermark.batch cuts windows on the time alone"},
	} {
		s, err := Parse("tk.yaml", []byte(base+c.body))
		if err != nil {
			t.Fatal(err)
		}
		d := Validate(s)
		if len(d) != 1 || !strings.Contains(d[0].Msg, c.want) || !strings.Contains(d[0].String(), "tk.yaml:"+c.at+":") {
			t.Errorf("%q: %v, want one error at %s saying %q", c.body, d, c.at, c.want)
		}
	}
}

// TestTimezoneRefused: partition.timezone is an IANA name the compiled-in
// zone database knows, with whole-hour offsets, on day or month partitions
// of a timestamp; anything else is an error at the key.
func TestTimezoneRefused(t *testing.T) {
	const base = "pipeline: tz\nsource: {table: app.tz}\ntarget: {table: dw.tz}\ncolumns: {id: bigint, d: date, ts: timestamp}\nstrategy: overwrite_partitions\nunique_key: [id]\nwatermark: {column: ts, start: 2026-01-01}\n"
	for _, c := range []struct{ part, want string }{
		{"{column: ts, timezone: Europe/Berlinn}", `unknown time zone "Europe/Berlinn"`},
		{"{column: ts, timezone: ../../etc/passwd}", `"../../etc/passwd" is not a time zone name`},
		{`{column: ts, timezone: "Europe/Berlin'; DROP TABLE x; --"}`, "is not a time zone name"},
		{"{column: ts, timezone: Asia/Kolkata}", "not a whole number of hours"},
		{"{column: d, timezone: Europe/Berlin}", `"d" is a date, which is a day already`},
		{"{column: ts, granularity: hour, timezone: Europe/Berlin}", "hours are the same in every zone"},
	} {
		s, err := Parse("tz.yaml", []byte(base+"partition: "+c.part+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		d := Validate(s)
		if len(d) != 1 || !strings.Contains(d[0].Msg, c.want) || !strings.HasPrefix(d[0].String(), "tz.yaml:8:") {
			t.Errorf("%s: %v, want one error on line 8 saying %q", c.part, d, c.want)
		}
	}
	for _, ok := range []string{"Europe/Berlin", "UTC", "America/New_York", "Etc/GMT-2"} {
		s, _ := Parse("tz.yaml", []byte(base+"partition: {column: ts, timezone: "+ok+"}\n"))
		if d := Validate(s); len(d) != 0 {
			t.Errorf("timezone %s: %v", ok, d)
		}
	}
}
