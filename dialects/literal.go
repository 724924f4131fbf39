package dialects

import (
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/incrc/incrc/compiler/ir"
)

// Literaler is implemented by dialects whose engines are reached through a
// client that binds no parameters (Spark Connect's Go client), or binds
// them in ways the engine's types do not take (Trino's client refuses a
// float64 and sends a time as a timestamp with time zone). The runner then
// spells each value the statement's markers stand for with Literal, puts
// it in place of its marker and lexes the statement back with the
// dialect's rules: a value never changes a statement's shape, only what
// its one literal holds.
type Literaler interface {
	// Literal spells a value the runner binds (what BindTime returns, the
	// Go values of counts, names and texts) as a literal of the engine.
	Literal(v any) (string, error)
}

// Instant is a point in time bound for a column of one kind (date,
// timestamp, timestamptz): what BindTime returns for engines whose values
// are spelled as literals, so that the literal has the column's type
// instead of one the engine must guess.
type Instant struct {
	T    time.Time // UTC
	Kind ir.TypeKind
}

// Typed is a value bound for a column of type Type, spelled as a literal
// cast to the column's type: for an engine that takes no implicit cast
// where a value meets its column (Trino inserts no text into a decimal).
type Typed struct {
	Value any
	Type  ir.Type
}

// LiteralStyle is how one engine spells the values Literals takes.
type LiteralStyle struct {
	// Type spells a column type (the dialect's ColumnType): for Typed.
	Type   func(ir.Type) (string, error)
	String func(string) string // a string literal, escaped as the engine reads it
	// Date, Timestamp and TimestampTZ spell a point in time as a literal
	// of the column's type; each is given the UTC text
	// "2006-01-02", "2006-01-02 15:04:05.000000".
	Date, Timestamp, TimestampTZ func(text string) string
	Double                       func(text string) string // from strconv's shortest form
	Bytes                        func(hex string) string
}

// Literal spells v in the style: NULL, TRUE/FALSE, integers (negative
// ones in parentheses, so no neighbour reads "--"), doubles,
// strings, bytes and Instants. A value of any other type is an error,
// never its fmt form.
func (s LiteralStyle) Literal(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "NULL", nil
	case bool:
		if v {
			return "TRUE", nil
		}
		return "FALSE", nil
	case int:
		return intLit(int64(v)), nil
	case int8:
		return intLit(int64(v)), nil
	case int16:
		return intLit(int64(v)), nil
	case int32:
		return intLit(int64(v)), nil
	case int64:
		return intLit(v), nil
	case uint8:
		return intLit(int64(v)), nil
	case uint16:
		return intLit(int64(v)), nil
	case uint32:
		return intLit(int64(v)), nil
	case float32:
		return s.Double(strconv.FormatFloat(float64(v), 'g', -1, 32)), nil
	case float64:
		return s.Double(strconv.FormatFloat(v, 'g', -1, 64)), nil
	case string:
		return s.String(v), nil
	case []byte:
		return s.Bytes(hex.EncodeToString(v)), nil
	case time.Time:
		return s.TimestampTZ(v.UTC().Format("2006-01-02 15:04:05.000000")), nil
	case Typed:
		lit, err := s.Literal(v.Value)
		if err != nil {
			return "", err
		}
		typ, err := s.Type(v.Type)
		if err != nil {
			return "", err
		}
		return "CAST(" + lit + " AS " + typ + ")", nil
	case Instant:
		t := v.T.UTC()
		switch v.Kind {
		case ir.Date:
			return s.Date(t.Format("2006-01-02")), nil
		case ir.Timestamp:
			return s.Timestamp(t.Format("2006-01-02 15:04:05.000000")), nil
		case ir.TimestampTZ:
			return s.TimestampTZ(t.Format("2006-01-02 15:04:05.000000")), nil
		}
		return "", fmt.Errorf("a time bound for a column of kind %v", v.Kind)
	}
	return "", fmt.Errorf("no literal for a value of type %T", v)
}

func intLit(n int64) string {
	if n < 0 {
		return "(" + strconv.FormatInt(n, 10) + ")"
	}
	return strconv.FormatInt(n, 10)
}
