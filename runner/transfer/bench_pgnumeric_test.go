//go:build bench

package transfer

import (
	"math/big"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// BenchmarkPGDecimalEncoding: the decimal(12,2) encoding of a copy into
// PostgreSQL, pgx's from a big.Int against appendPGNumeric.
func BenchmarkPGDecimalEncoding(b *testing.B) {
	m := pgtype.NewMap()
	buf := make([]byte, 0, 64)
	b.Run("pgx_numeric", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			v := pgtype.Numeric{Int: big.NewInt(int64(i % 10000000)), Exp: -2, Valid: true}
			var err error
			if buf, err = m.Encode(pgtype.NumericOID, pgtype.BinaryFormatCode, v, buf[:0]); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("pgDecimal", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			buf = appendPGNumeric(buf[:0], pgDecimal{int64(i % 10000000), 2})
		}
	})
}
