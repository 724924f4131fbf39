package compiler

import (
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler/ir"
)

func TestParseType(t *testing.T) {
	tests := []struct {
		in      string
		want    ir.Type
		wantErr string
	}{
		{in: "bigint", want: ir.Type{Kind: ir.Bigint}},
		{in: " BIGINT ", want: ir.Type{Kind: ir.Bigint}},
		{in: "decimal(12,2)", want: ir.Type{Kind: ir.Decimal, Precision: 12, Scale: 2}},
		{in: "decimal( 38 , 0 )", want: ir.Type{Kind: ir.Decimal, Precision: 38}},
		{in: "decimal(5)", want: ir.Type{Kind: ir.Decimal, Precision: 5}},
		{in: "varchar(64)", want: ir.Type{Kind: ir.Varchar, Length: 64}},
		{in: "timestamptz", want: ir.Type{Kind: ir.TimestampTZ}},
		{in: "json", want: ir.Type{Kind: ir.JSON}},
		{in: "int", wantErr: `unknown type "int"`},
		{in: "numeric(12,2)", wantErr: "unknown type"},
		{in: "decimal", wantErr: "needs a precision and scale"},
		{in: "decimal(0,0)", wantErr: "precision must be 1..38"},
		{in: "decimal(39,2)", wantErr: "precision must be 1..38"},
		{in: "decimal(4,5)", wantErr: "scale at most the precision"},
		{in: "decimal(99999999999999999999,1)", wantErr: "precision must be 1..38"},
		{in: "varchar", wantErr: "varchar needs one length"},
		{in: "varchar(0)", wantErr: "varchar needs one length"},
		{in: "varchar(65536)", wantErr: "varchar needs one length"},
		{in: "varchar(3,1)", wantErr: "varchar needs one length"},
		{in: "bigint(20)", wantErr: "bigint takes no arguments"},
		{in: "text); DROP TABLE t; --", wantErr: "unknown type"},
		{in: "", wantErr: "unknown type"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ir.ParseType(tt.in)
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
			// The canonical spelling parses back to the same type.
			if again, err := ir.ParseType(got.String()); err != nil || again != got {
				t.Errorf("%s does not round-trip: %+v, %v", got, again, err)
			}
		})
	}
}

func TestParseDuration(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		wantErr bool
	}{
		{in: "90s", want: 90 * time.Second},
		{in: "15m", want: 15 * time.Minute},
		{in: "36h", want: 36 * time.Hour},
		{in: "2d", want: 48 * time.Hour},
		{in: "1w", want: 7 * 24 * time.Hour},
		{in: "0s", want: 0},
		{in: " 5m ", want: 5 * time.Minute},
		{in: "100000d", want: 100000 * 24 * time.Hour},
		{in: "100000w", wantErr: true}, // would overflow a time.Duration
		{in: "100001s", wantErr: true},
		{in: "99999999999999999999d", wantErr: true},
		{in: "2days", wantErr: true},
		{in: "-5m", wantErr: true},
		{in: "1.5d", wantErr: true},
		{in: "1h30m", wantErr: true},
		{in: "5", wantErr: true},
		{in: "m", wantErr: true},
		{in: "5M", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ir.ParseDuration(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("accepted as %v", got)
				}
				if !strings.Contains(err.Error(), tt.in) {
					t.Errorf("error %q does not repeat the input", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestParseTime(t *testing.T) {
	utc := func(s string) time.Time {
		tm, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return tm.UTC()
	}
	tests := []struct {
		in      string
		want    time.Time
		wantErr bool
	}{
		{in: "2026-01-01", want: utc("2026-01-01T00:00:00Z")},
		{in: "2026-01-01T10:00:00Z", want: utc("2026-01-01T10:00:00Z")},
		{in: "2026-01-01T10:00:00+02:00", want: utc("2026-01-01T08:00:00Z")},
		{in: "2026-01-01T10:00:00.5Z", want: utc("2026-01-01T10:00:00.5Z")},
		{in: "2026-01-01T10:00:00", want: utc("2026-01-01T10:00:00Z")},
		{in: "2026-01-01 10:00:00", want: utc("2026-01-01T10:00:00Z")},
		{in: "2026-01-01 10:00:00.123", want: utc("2026-01-01T10:00:00.123Z")},
		{in: "2026-01-01 10:00", want: utc("2026-01-01T10:00:00Z")},
		// As a scheduler prints it: Airflow's {{ data_interval_end }}.
		{in: "2026-01-01 10:00:00+00:00", want: utc("2026-01-01T10:00:00Z")},
		{in: "2026-01-01 10:00:00.5+01:00", want: utc("2026-01-01T09:00:00.5Z")},
		{in: "2026-13-01", wantErr: true},
		{in: "2026-02-30", wantErr: true},
		{in: "01/02/2026", wantErr: true},
		{in: "yesterday", wantErr: true},
		{in: "2026-01-01Z", wantErr: true},
		{in: "", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ir.ParseTime(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Fatalf("accepted as %v", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(tt.want) || got.Location() != time.UTC {
				t.Errorf("got %v, want %v in UTC", got, tt.want)
			}
		})
	}
}

func TestParseWatermark(t *testing.T) {
	tests := []struct {
		typ     string
		in      string
		want    string
		wantErr string
	}{
		{typ: "bigint", in: "0", want: "0"},
		{typ: "integer", in: "1000", want: "1000"},
		{typ: "bigint", in: "-5", want: "-5"},
		{typ: "bigint", in: "007", wantErr: "not an integer"},
		{typ: "bigint", in: "1e3", wantErr: "not an integer"},
		{typ: "bigint", in: "2026-01-01", wantErr: "not an integer"},
		{typ: "bigint", in: "1 OR 1=1", wantErr: "not an integer"},
		{typ: "bigint", in: "99999999999999999999", wantErr: "not an integer"},
		{typ: "date", in: "2026-01-01", want: "2026-01-01"},
		{typ: "date", in: "2026-01-01T00:00:00Z", want: "2026-01-01"},
		{typ: "date", in: "2026-01-01T10:00:00Z", wantErr: "not a date"},
		{typ: "date", in: "2026-01-01T00:00:00+02:00", wantErr: "not a date"},
		{typ: "timestamp", in: "2026-01-01", want: "2026-01-01T00:00:00Z"},
		{typ: "timestamptz", in: "2026-01-01T10:00:00+02:00", want: "2026-01-01T08:00:00Z"},
		{typ: "timestamp", in: "2026-01-01 10:00:00.25", want: "2026-01-01T10:00:00.25Z"},
		{typ: "timestamp", in: "'2026-01-01'; DROP TABLE t", wantErr: "bad time"},
	}
	for _, tt := range tests {
		t.Run(tt.typ+"/"+tt.in, func(t *testing.T) {
			typ, err := ir.ParseType(tt.typ)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ir.ParseWatermark(typ, tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %q, %v; want an error saying %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}
