package transfer

import (
	"encoding/binary"
	"math/big"

	"github.com/jackc/pgx/v5/pgtype"
)

// pgDecimal is a decimal for PostgreSQL's COPY FROM STDIN: unscaled *
// 10^-scale, with unscaled in an int64 (the values a decimal(p,s) column
// with p <= 18 holds, and most others). pgNumericCodec writes it in
// PostgreSQL's binary numeric format with integer arithmetic; pgx's own
// encoding goes through big.Int divisions for every value.
type pgDecimal struct {
	unscaled int64
	scale    int16
}

// NumericValue lets any other pgx path encode it too.
func (d pgDecimal) NumericValue() (pgtype.Numeric, error) {
	return pgtype.Numeric{Int: big.NewInt(d.unscaled), Exp: -int32(d.scale), Valid: true}, nil
}

// pgNumericCodec is pgx's numeric codec, with a binary encode plan of its
// own for pgDecimal; every other value and every decode is pgx's.
type pgNumericCodec struct{ pgtype.NumericCodec }

func (c pgNumericCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(pgDecimal); ok && format == pgtype.BinaryFormatCode {
		return pgDecimalPlan{}
	}
	return c.NumericCodec.PlanEncode(m, oid, format, value)
}

type pgDecimalPlan struct{}

func (pgDecimalPlan) Encode(value any, buf []byte) ([]byte, error) {
	return appendPGNumeric(buf, value.(pgDecimal)), nil
}

// usePGDecimal makes a connection's type map encode pgDecimal itself (once
// per connection; values of every other type encode as before).
func usePGDecimal(m *pgtype.Map) {
	if t, ok := m.TypeForOID(pgtype.NumericOID); ok {
		if _, mine := t.Codec.(pgNumericCodec); mine {
			return
		}
	}
	m.RegisterType(&pgtype.Type{Name: "numeric", OID: pgtype.NumericOID, Codec: pgNumericCodec{}})
}

// appendPGNumeric appends d in PostgreSQL's binary numeric format: the
// number of base-10000 digits, the weight of the first (its power of
// 10000), the sign, the display scale, then the digits, most significant
// first, without leading or trailing zero digits.
func appendPGNumeric(buf []byte, d pgDecimal) []byte {
	neg := d.unscaled < 0
	a := uint64(d.unscaled)
	if neg {
		a = -a // two's complement: also right for math.MinInt64
	}
	scale := int(d.scale)
	// The fraction's digits are grouped by four from the decimal point:
	// the value is taken as a * 10^pad with scale+pad a multiple of 4.
	pad := (4 - scale%4) % 4
	frac := (scale + pad) / 4 // base-10000 digits after the point
	// a * 10^pad may not fit a uint64: the digits are taken from a and the
	// pad separately. The lowest group of the padded value is
	// (a mod 10^(4-pad)) * 10^pad, the rest a / 10^(4-pad) in groups.
	var groups [8]uint16 // least significant first; a < 2^64 gives at most 6
	n := 0
	if a != 0 {
		if pad > 0 {
			low := uint64(pow10[4-pad])
			groups[n] = uint16((a % low) * uint64(pow10[pad]))
			a /= low
			n++
		}
		for a != 0 {
			groups[n] = uint16(a % 10000)
			a /= 10000
			n++
		}
	}
	hi, lo := n-1, 0
	for hi >= 0 && groups[hi] == 0 {
		hi--
	}
	for lo <= hi && groups[lo] == 0 {
		lo++
	}
	ndigits, weight, sign := 0, 0, uint16(0)
	if hi >= 0 {
		ndigits, weight = hi-lo+1, hi-frac
		if neg {
			sign = 0x4000
		}
	}
	buf = binary.BigEndian.AppendUint16(buf, uint16(ndigits))
	buf = binary.BigEndian.AppendUint16(buf, uint16(int16(weight)))
	buf = binary.BigEndian.AppendUint16(buf, sign)
	buf = binary.BigEndian.AppendUint16(buf, uint16(d.scale))
	for i := hi; i >= lo; i-- {
		buf = binary.BigEndian.AppendUint16(buf, groups[i])
	}
	return buf
}
