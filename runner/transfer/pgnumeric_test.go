package transfer

import (
	"context"
	"fmt"
	"math"
	"math/big"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

var pgDecimalCases = []pgDecimal{
	{0, 0}, {0, 2}, {1, 0}, {-1, 0}, {1, 2}, {-1, 2}, {10000, 0}, {100000000, 0}, {12345, 2}, {-12345, 2},
	{99999999, 4}, {100000000, 4}, {1, 4}, {1, 5}, {1, 8}, {10, 9}, {123456789012, 6}, {5, 1}, {50000, 3},
	{math.MaxInt64, 0}, {math.MinInt64, 0}, {math.MaxInt64, 3}, {math.MinInt64, 18}, {999999999999, 2}, {-70000, 7},
}

// TestPGDecimalEncoding: PostgreSQL's binary numeric, written from an
// int64 and a scale, is the same number with the same display scale when
// pgx decodes it, and when PostgreSQL reads it (COPY) and prints it.
func TestPGDecimalEncoding(t *testing.T) {
	m := pgtype.NewMap()
	for _, d := range pgDecimalCases {
		buf := appendPGNumeric(nil, d)
		var got pgtype.Numeric
		if err := m.Scan(pgtype.NumericOID, pgtype.BinaryFormatCode, buf, &got); err != nil {
			t.Fatalf("%v: %v", d, err)
		}
		want := new(big.Rat).SetFrac(big.NewInt(d.unscaled), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.scale)), nil))
		r := new(big.Rat).SetInt(got.Int)
		e := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs32(got.Exp))), nil)
		if got.Exp < 0 {
			r.Quo(r, new(big.Rat).SetInt(e))
		} else {
			r.Mul(r, new(big.Rat).SetInt(e))
		}
		if r.Cmp(want) != 0 {
			t.Errorf("%v: decoded %s, want %s", d, r.FloatString(int(d.scale)), want.FloatString(int(d.scale)))
		}
		if dscale := int16(buf[6])<<8 | int16(buf[7]); dscale != d.scale {
			t.Errorf("%v: display scale %d, want %d", d, dscale, d.scale)
		}
	}

	url := os.Getenv("INCRC_TEST_POSTGRES_URL")
	if url == "" {
		t.Skip("INCRC_TEST_POSTGRES_URL not set: the round trip through PostgreSQL is not run")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	table := "pgdec" // temporary: the session's own
	if _, err := conn.Exec(ctx, "CREATE TEMP TABLE "+table+" (i int, v numeric)"); err != nil {
		t.Fatal(err)
	}
	usePGDecimal(conn.TypeMap())
	rows := make([][]any, len(pgDecimalCases))
	for i, d := range pgDecimalCases {
		rows[i] = []any{i, d}
	}
	if _, err := conn.CopyFrom(ctx, pgx.Identifier{table}, []string{"i", "v"}, pgx.CopyFromRows(rows)); err != nil {
		t.Fatal(err)
	}
	got, err := conn.Query(ctx, "SELECT i, v::text FROM "+table+" ORDER BY i")
	if err != nil {
		t.Fatal(err)
	}
	defer got.Close()
	n := 0
	for got.Next() {
		var i int
		var s string
		if err := got.Scan(&i, &s); err != nil {
			t.Fatal(err)
		}
		if want := decimalText(big.NewInt(pgDecimalCases[i].unscaled), int(pgDecimalCases[i].scale)); s != want {
			t.Errorf("%v: PostgreSQL reads %s, want %s", pgDecimalCases[i], s, want)
		}
		n++
	}
	if err := got.Err(); err != nil || n != len(pgDecimalCases) {
		t.Fatalf("%d rows back of %d: %v", n, len(pgDecimalCases), err)
	}
	// The codec leaves pgx's own numeric values alone.
	var back pgtype.Numeric
	if err := conn.QueryRow(ctx, "SELECT $1::numeric", pgtype.Numeric{Int: big.NewInt(-1234567), Exp: -3, Valid: true}).Scan(&back); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(back.Int, back.Exp) != "-1234567 -3" {
		t.Errorf("pgtype.Numeric round trip: %v %v", back.Int, back.Exp)
	}
}

func abs32(x int32) int32 {
	if x < 0 {
		return -x
	}
	return x
}
