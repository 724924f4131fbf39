// Package transfer moves rows between databases for the runner: it
// converts each value a source returns to its declared column's type
// (exactly, or with an error saying why it does not fit), streams the
// converted rows into a target's bulk path (the DuckDB appender,
// PostgreSQL's COPY FROM STDIN, batched INSERTs elsewhere), and lists the
// files of a landing folder. It runs the statements it is handed and
// knows no strategy, no plan program and no state: the runner walks the
// plan and decides what moves where.
package transfer

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/incrc/incrc/compiler/ir"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5/pgtype"
)

// Held is a row a copy held back: its values as the quarantine takes
// them (the column that does not fit NULL), and why.
type Held struct {
	Values map[string]any // by column
	Reason string
}

func KeyIndexes(key, cols []string) []int {
	var out []int
	for _, k := range key {
		for i, c := range cols {
			if c == k {
				out = append(out, i)
			}
		}
	}
	return out
}

// Converter turns a source row into the values the target's bulk path
// takes for the declared columns.
type Converter struct {
	Cols   []ir.Col
	Key    []int  // the indexes of the unique key's columns, to name a row in an error
	Target string // the target dialect: duckdb and postgres take their own decimal types
	Source string // the source's dialect
	Bind   func(time.Time, ir.TypeKind) any
	// Hold: a row with a time the target cannot hold as it is is held
	// back for the quarantine instead of failing the copy.
	Hold bool
}

// outOfRange is a time the target cannot hold as it is.
type outOfRange struct{ error }

// mysqlFirstDay is the first day of MariaDB's and MySQL's DATE and
// DATETIME range: an earlier one is stored as the zero date 0000-00-00.
var mysqlFirstDay = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)

// timeInRange refuses a time the target cannot hold as it is, and
// MariaDB's zero date, which is no time at all (its driver reads it as
// 0001-01-01): each engine would write another value in its place.
func (cv *Converter) timeInRange(tm time.Time) error {
	if cv.Source == "mysql" && tm.IsZero() {
		return outOfRange{fmt.Errorf("0000-00-00 (MariaDB's zero date) is not a date, and %s would write it as %s: fix the source, or leave the column NULL there", cv.Target, tm.Format("2006-01-02"))}
	}
	if cv.Target == "mysql" && (tm.Before(mysqlFirstDay) || tm.Year() > 9999) {
		return outOfRange{fmt.Errorf("%s is outside the range of MariaDB's dates (1000-01-01 to 9999-12-31), which would store it as 0000-00-00", tm.Format(time.RFC3339Nano))}
	}
	return nil
}

// Row converts a source row for the bulk path; with hold, a row with a
// time the target cannot hold comes back as held instead, converted for
// the quarantine's statement.
func (cv *Converter) Row(raw []any, n int64) (out []any, held *Held, err error) {
	out = make([]any, len(raw))
	var unfit []bool
	for i, v := range raw {
		x, err := cv.value(v, cv.Cols[i].Type)
		if _, ok := err.(outOfRange); ok && cv.Hold {
			if held == nil {
				held, unfit = &Held{Reason: fmt.Sprintf("range(%s): %v; quarantined with %s NULL", cv.Cols[i].Name, err, cv.Cols[i].Name)}, make([]bool, len(raw))
			}
			unfit[i] = true
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s, column %s: %v", cv.describe(raw, n), cv.Cols[i].Name, err)
		}
		out[i] = x
	}
	if held == nil {
		return out, nil, nil
	}
	// The quarantine's statement binds plain values (decimals and json as
	// text), not the bulk path's own types.
	plain := *cv
	plain.Target = ""
	held.Values = make(map[string]any, len(raw))
	for i, v := range raw {
		if unfit[i] {
			continue
		}
		x, err := plain.value(v, cv.Cols[i].Type)
		if err != nil {
			return nil, nil, fmt.Errorf("%s, column %s: %v", cv.describe(raw, n), cv.Cols[i].Name, err)
		}
		held.Values[cv.Cols[i].Name] = x
	}
	return nil, held, nil
}

// describe names a row by its key, or by its place in the read.
func (cv *Converter) describe(raw []any, n int64) string {
	if len(cv.Key) == 0 {
		return fmt.Sprintf("row %d of the source", n)
	}
	parts := make([]string, len(cv.Key))
	for i, k := range cv.Key {
		parts[i] = cv.Cols[k].Name + "=" + shortValue(raw[k])
	}
	return "row " + strings.Join(parts, ", ")
}

func shortValue(v any) string {
	s := "NULL"
	if v != nil {
		s, _ = Text(v)
	}
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// value converts one source value to the declared type: exactly, or an
// error saying why it does not fit.
func (cv *Converter) value(v any, t ir.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Kind {
	case ir.Smallint, ir.Integer, ir.Bigint:
		n, err := asInteger(v)
		if err != nil {
			return nil, err
		}
		lim := int64(math.MaxInt64)
		switch t.Kind {
		case ir.Smallint:
			lim = math.MaxInt16
		case ir.Integer:
			lim = math.MaxInt32
		}
		if n > lim || n < -lim-1 {
			return nil, fmt.Errorf("%d does not fit %s", n, t)
		}
		return n, nil
	case ir.Decimal:
		if s, ok := v.(string); ok {
			// A number as text (PostgreSQL's numeric, MariaDB's decimal)
			// that fits an int64 is read and rescaled without a big.Int;
			// anything else, or a value that does not fit, takes the
			// exact path below (and its error).
			if u, from, ok := parseDecimal64(s); ok {
				if r, ok, err := rescale64(u, from, t.Precision, t.Scale); ok && err == nil {
					return cv.decimal64(r, t), nil
				}
			}
		}
		d, err := asDecimal(v)
		if err != nil {
			return nil, err
		}
		if u, ok, err := d.fit64(t.Precision, t.Scale); ok {
			// Most values fit an int64: no big.Int for PostgreSQL, whose
			// COPY encodes them without one (pgNumericCodec).
			if err != nil {
				return nil, fmt.Errorf("%s does not fit %s: %v", d, t, err)
			}
			return cv.decimal64(u, t), nil
		}
		unscaled, err := d.fit(t.Precision, t.Scale)
		if err != nil {
			return nil, fmt.Errorf("%s does not fit %s: %v", d, t, err)
		}
		switch cv.Target {
		case "duckdb":
			return duckdb.Decimal{Width: uint8(t.Precision), Scale: uint8(t.Scale), Value: unscaled}, nil
		case "postgres":
			return pgtype.Numeric{Int: unscaled, Exp: int32(-t.Scale), Valid: true}, nil
		}
		return decimalText(unscaled, t.Scale), nil
	case ir.Double:
		switch x := v.(type) {
		case float64:
			return x, nil
		case float32:
			return float64(x), nil
		}
		s, _ := Text(v)
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	case ir.Boolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			if x == 0 || x == 1 {
				return x == 1, nil
			}
		}
		s, _ := Text(v)
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "t", "1":
			return true, nil
		case "false", "f", "0":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not a boolean", s)
	case ir.Text, ir.Varchar, ir.JSON:
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case []byte:
			s = string(x)
		case time.Time:
			s = x.UTC().Format("2006-01-02 15:04:05.999999")
		case map[string]any, []any:
			b, err := json.Marshal(x)
			if err != nil {
				return nil, err
			}
			s = string(b)
		default:
			s, _ = Text(v)
		}
		if t.Kind == ir.JSON {
			dec := json.NewDecoder(strings.NewReader(s))
			dec.UseNumber()
			var doc any
			if err := dec.Decode(&doc); err != nil || dec.More() {
				return nil, fmt.Errorf("the value is not one JSON document")
			}
			if cv.Target == "duckdb" {
				// The appender writes a Go string into a JSON column as
				// a JSON string: the document goes in parsed.
				return doc, nil
			}
		}
		if t.Kind == ir.Varchar && utf8.RuneCountInString(s) > t.Length {
			return nil, fmt.Errorf("%d characters do not fit %s", utf8.RuneCountInString(s), t)
		}
		if !utf8.ValidString(s) {
			return nil, fmt.Errorf("the value is not valid UTF-8 text")
		}
		return s, nil
	case ir.Date, ir.Timestamp, ir.TimestampTZ:
		tm, err := Time(v)
		if err != nil {
			return nil, err
		}
		tm = tm.UTC()
		if err := cv.timeInRange(tm); err != nil {
			return nil, err
		}
		if t.Kind == ir.Date && tm != tm.Truncate(24*time.Hour) {
			return nil, fmt.Errorf("%s has a time of day, and %s holds none", tm.Format(time.RFC3339Nano), t)
		}
		return cv.Bind(tm, t.Kind), nil
	}
	return v, nil
}

func asInteger(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("%d does not fit bigint", x)
		}
		return int64(x), nil
	case bool:
		return 0, fmt.Errorf("a boolean is not an integer")
	}
	d, err := asDecimal(v)
	if err != nil {
		return 0, err
	}
	n, err := d.fit(19, 0)
	if err != nil || !n.IsInt64() {
		return 0, fmt.Errorf("%s is not an integer", d)
	}
	return n.Int64(), nil
}

// decimal is an exact number: unscaled * 10^-scale.
type decimal struct {
	unscaled *big.Int
	scale    int
}

func (d decimal) String() string { return decimalText(d.unscaled, d.scale) }

func decimalText(unscaled *big.Int, scale int) string {
	s := new(big.Int).Abs(unscaled).String()
	if scale > 0 {
		for len(s) <= scale {
			s = "0" + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if unscaled.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// fit rescales the number to scale, exactly (digits dropped must be
// zeros), within precision digits.
func (d decimal) fit(precision, scale int) (*big.Int, error) {
	if u, ok, err := d.fit64(precision, scale); ok {
		if err != nil {
			return nil, err
		}
		return big.NewInt(u), nil
	}
	u := new(big.Int).Set(d.unscaled)
	switch {
	case d.scale < scale:
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-d.scale)), nil))
	case d.scale > scale:
		q, r := new(big.Int).QuoRem(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.scale-scale)), nil), new(big.Int))
		if r.Sign() != 0 {
			return nil, fmt.Errorf("more than %d decimal(s)", scale)
		}
		u = q
	}
	if digits := len(new(big.Int).Abs(u).String()); precision > 0 && digits > precision && u.Sign() != 0 {
		return nil, fmt.Errorf("more than %d digit(s)", precision)
	}
	return u, nil
}

var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// decimal64 is the value the target's bulk path takes for the decimal
// u * 10^-t.Scale.
func (cv *Converter) decimal64(u int64, t ir.Type) any {
	switch cv.Target {
	case "duckdb":
		return duckdb.Decimal{Width: uint8(t.Precision), Scale: uint8(t.Scale), Value: big.NewInt(u)}
	case "postgres":
		return pgDecimal{unscaled: u, scale: int16(t.Scale)}
	}
	return decimalText(big.NewInt(u), t.Scale)
}

// parseDecimal64 reads [-+]digits[.digits] of at most 18 digits into an
// int64 and its scale; ok is false for anything else (parseDecimal
// decides then).
func parseDecimal64(s string) (u int64, scale int, ok bool) {
	i, neg := 0, false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg, i = s[i] == '-', i+1
	}
	digits, dot := 0, false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if digits++; digits > 18 {
				return 0, 0, false
			}
			u = u*10 + int64(c-'0')
			if dot {
				scale++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, 0, false
		}
	}
	if digits == 0 {
		return 0, 0, false
	}
	if neg {
		u = -u
	}
	return u, scale, true
}

// fit64 is fit for the numbers that fit an int64 throughout (almost all):
// ok is false when the big path must decide.
func (d decimal) fit64(precision, scale int) (int64, bool, error) {
	if !d.unscaled.IsInt64() {
		return 0, false, nil
	}
	return rescale64(d.unscaled.Int64(), d.scale, precision, scale)
}

// rescale64 is fit64 for unscaled u at scale from.
func rescale64(u int64, from, precision, scale int) (int64, bool, error) {
	if scale-from > 18 || from-scale > 18 {
		return 0, false, nil
	}
	switch k := scale - from; {
	case k > 0:
		if u > math.MaxInt64/pow10[k] || u < math.MinInt64/pow10[k] {
			return 0, false, nil
		}
		u *= pow10[k]
	case k < 0:
		if u%pow10[-k] != 0 {
			return 0, true, fmt.Errorf("more than %d decimal(s)", scale)
		}
		u /= pow10[-k]
	}
	if precision > 0 && precision < 19 {
		if a := u; a >= pow10[precision] || a <= -pow10[precision] {
			return 0, true, fmt.Errorf("more than %d digit(s)", precision)
		}
	}
	return u, true, nil
}

func asDecimal(v any) (decimal, error) {
	switch x := v.(type) {
	case duckdb.Decimal:
		// fit never changes unscaled: no copy.
		return decimal{unscaled: x.Value, scale: int(x.Scale)}, nil
	case pgtype.Numeric:
		if !x.Valid || x.NaN || x.InfinityModifier != pgtype.Finite {
			return decimal{}, fmt.Errorf("not a finite number")
		}
		if x.Exp >= 0 {
			return decimal{unscaled: new(big.Int).Mul(x.Int, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Exp)), nil))}, nil
		}
		return decimal{unscaled: x.Int, scale: int(-x.Exp)}, nil
	case *big.Int:
		return decimal{unscaled: new(big.Int).Set(x)}, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return decimal{}, fmt.Errorf("%v is not a finite number", x)
		}
		return parseDecimal(strconv.FormatFloat(x, 'f', -1, 64))
	case float32:
		return parseDecimal(strconv.FormatFloat(float64(x), 'f', -1, 32))
	case int64, int32, int16, int8, int, uint8, uint16, uint32, uint64:
		return parseDecimal(fmt.Sprint(x))
	case string:
		return parseDecimal(x)
	case []byte:
		return parseDecimal(string(x))
	}
	return decimal{}, fmt.Errorf("a %T is not a number", v)
}

// parseDecimal reads [-+]digits[.digits][e[-+]digits] exactly.
func parseDecimal(s string) (decimal, error) {
	s = strings.TrimSpace(s)
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return decimal{}, fmt.Errorf("%q is not a number", s)
		}
		mant, exp = s[:i], e
	}
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimLeft(mant, "+-")
	whole, frac, _ := strings.Cut(mant, ".")
	digits := whole + frac
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return decimal{}, fmt.Errorf("%q is not a number", s)
	}
	var u *big.Int
	if len(digits) <= 18 {
		n, _ := strconv.ParseInt(digits, 10, 64)
		u = big.NewInt(n)
	} else {
		u, _ = new(big.Int).SetString(digits, 10)
	}
	if neg {
		u.Neg(u)
	}
	scale := len(frac) - exp
	if scale < 0 {
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
		scale = 0
	}
	return decimal{unscaled: u, scale: scale}, nil
}

// Text reads a nullable text value from a scanned row.
func Text(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", false
	case string:
		return v, true
	case []byte:
		return string(v), true
	case time.Time:
		return v.UTC().Format(time.RFC3339Nano), true
	}
	return fmt.Sprint(v), true
}

// Time reads a time as an engine returns it: a time, or ISO text.
func Time(v any) (time.Time, error) {
	if t, ok := v.(time.Time); ok {
		return t.UTC(), nil
	}
	s, _ := Text(v)
	return ir.ParseTime(s)
}
