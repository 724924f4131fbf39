package ir

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// TypeKind is a portable column type name. Each dialect maps it.
type TypeKind string

const (
	Smallint    TypeKind = "smallint"
	Integer     TypeKind = "integer"
	Bigint      TypeKind = "bigint"
	Decimal     TypeKind = "decimal"
	Double      TypeKind = "double"
	Boolean     TypeKind = "boolean"
	Text        TypeKind = "text"
	Varchar     TypeKind = "varchar"
	Date        TypeKind = "date"
	Timestamp   TypeKind = "timestamp"
	TimestampTZ TypeKind = "timestamptz"
	JSON        TypeKind = "json"
)

var TypeKinds = []string{"smallint", "integer", "bigint", "decimal(p,s)", "double", "boolean", "text", "varchar(n)", "date", "timestamp", "timestamptz", "json"}

// Type is a parsed portable type.
type Type struct {
	Kind      TypeKind
	Precision int // decimal
	Scale     int // decimal
	Length    int // varchar
}

func (t Type) String() string {
	switch t.Kind {
	case Decimal:
		return fmt.Sprintf("decimal(%d,%d)", t.Precision, t.Scale)
	case Varchar:
		return fmt.Sprintf("varchar(%d)", t.Length)
	}
	return string(t.Kind)
}

// IsInteger reports whether values of t are whole numbers.
func (t Type) IsInteger() bool {
	return t.Kind == Smallint || t.Kind == Integer || t.Kind == Bigint
}

// IntRange is the smallest and the largest value of an integer type, the
// same on every engine (2, 4 and 8 bytes, signed).
func (t Type) IntRange() (lo, hi int64) {
	switch t.Kind {
	case Smallint:
		return math.MinInt16, math.MaxInt16
	case Integer:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

// IsTime reports whether t is a date or a timestamp.
func (t Type) IsTime() bool {
	return t.Kind == Date || t.Kind == Timestamp || t.Kind == TimestampTZ
}

// IsNumeric reports whether sum() is meaningful on t.
func (t Type) IsNumeric() bool {
	return t.IsInteger() || t.Kind == Decimal || t.Kind == Double
}

// typeAliases are other engines' names for a portable type, to say which
// name incrc uses rather than list them all.
var typeAliases = map[string]string{
	"int": "integer", "int4": "integer", "int8": "bigint", "int2": "smallint", "long": "bigint",
	"numeric": "decimal(p,s)", "number": "decimal(p,s)", "float": "double", "float8": "double", "real": "double",
	"bool": "boolean", "string": "text", "char": "varchar(n)", "datetime": "timestamp", "timestamp_ntz": "timestamp",
	"timestamp_tz": "timestamptz", "jsonb": "json",
}

// ParseType parses a portable type name such as "decimal(12,2)": a name,
// and in parentheses one or two numbers (typeParts).
func ParseType(s string) (Type, error) {
	name, a, b, ok := typeParts(strings.ToLower(strings.TrimSpace(s)))
	if ok && typeAliases[name] != "" {
		return Type{}, fmt.Errorf("unknown type %q: the portable name is %s", s, typeAliases[name])
	}
	if !ok {
		return Type{}, fmt.Errorf("unknown type %q (expected one of: %s)", s, strings.Join(TypeKinds, ", "))
	}
	kind := TypeKind(name)
	num := func(x string) int { n, _ := strconv.Atoi(x); return n }
	switch kind {
	case Decimal:
		if a == "" {
			return Type{}, fmt.Errorf("type %q: decimal needs a precision and scale, as in decimal(12,2)", s)
		}
		p, sc := num(a), num(b)
		if p < 1 || p > 38 || sc > p {
			return Type{}, fmt.Errorf("type %q: precision must be 1..38 and scale at most the precision", s)
		}
		return Type{Kind: Decimal, Precision: p, Scale: sc}, nil
	case Varchar:
		if a == "" || b != "" || num(a) < 1 || num(a) > 65535 {
			return Type{}, fmt.Errorf("type %q: varchar needs one length, 1..65535, as in varchar(64)", s)
		}
		return Type{Kind: Varchar, Length: num(a)}, nil
	case Smallint, Integer, Bigint, Double, Boolean, Text, Date, Timestamp, TimestampTZ, JSON:
		if a != "" {
			return Type{}, fmt.Errorf("type %q: %s takes no arguments", s, kind)
		}
		return Type{Kind: kind}, nil
	}
	return Type{}, fmt.Errorf("unknown type %q (expected one of: %s)", s, strings.Join(TypeKinds, ", "))
}

// DurationPattern is the regexp of a duration (the JSON Schema's; the
// parser checks it with durationParts).
const DurationPattern = `^(\d+)(s|m|h|d|w)$`

// ParseDuration parses 90s, 15m, 36h, 2d or 1w. A day is 24 hours: windows
// are computed in UTC, where every day has 24 hours.
func ParseDuration(s string) (time.Duration, error) {
	digits, u, ok := durationParts(strings.TrimSpace(s))
	if !ok {
		return 0, fmt.Errorf("bad duration %q (expected a whole number and a unit: 90s, 15m, 36h, 2d, 1w)", s)
	}
	var unit time.Duration
	switch u {
	case "s":
		unit = time.Second
	case "m":
		unit = time.Minute
	case "h":
		unit = time.Hour
	case "d":
		unit = 24 * time.Hour
	case "w":
		unit = 7 * 24 * time.Hour
	}
	// 100000 of a unit is already absurd for a lookback or a lag; the
	// product must also fit a time.Duration (100000w would not).
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > 100000 || n > math.MaxInt64/int64(unit) {
		return 0, fmt.Errorf("bad duration %q: too large", s)
	}
	return time.Duration(n) * unit, nil
}

// ParseTime parses a point in time written as a date (2026-01-01), a
// timestamp without zone (2026-01-01 10:00:00, read as UTC) or RFC 3339.
// The result is in UTC.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	// "2006-01-02 15:04:05+00:00" is how schedulers print a time (Airflow's
	// {{ data_interval_end }}): RFC 3339 with a space.
	for _, layout := range []string{"2006-01-02", time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02 15:04:05.999999999", "2006-01-02 15:04", "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("bad time %q (expected a date such as 2026-01-01 or RFC 3339 such as 2026-01-01T10:00:00Z)", s)
}
