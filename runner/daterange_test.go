package runner

import (
	"strings"
	"testing"
)

// TestTransferDateOutOfRange: a date the target cannot hold as it is fails
// the run before anything is written, naming the row's key and the column,
// never rewritten into another date: DuckDB's 0001-01-01 into MariaDB
// (which would store 0000-00-00), and MariaDB's zero date 0000-00-00 into
// PostgreSQL and DuckDB (which would store 0001-01-01, the driver's reading
// of it).
func TestTransferDateOutOfRange(t *testing.T) {
	for _, pair := range [][2]string{{"duckdb", "mysql"}, {"mysql", "postgres"}, {"mysql", "duckdb"}} {
		t.Run(pair[0]+" to "+pair[1], func(t *testing.T) {
			src := newEnv(t, engineByName(pair[0]))
			dst := newEnv(t, engineByName(pair[1]))
			dst.id = src.id
			dst.tg.SourceURLs = map[string]string{"app": src.url}
			src.createTable("app_{id}.orders", transferCols)
			src.insert("app_{id}.orders", transferCols, []any{int64(1), "ann", "10.50", int64(1), true, "2026-01-10", "2026-01-10 09:00:00", nil})
			if pair[0] == "mysql" {
				// The zero date, which MariaDB stores unless its sql_mode says NO_ZERO_DATE.
				if _, err := src.tg.DB.ExecContext(src.ctx, "INSERT INTO app_"+src.id+".orders (order_id, order_date, updated_at) VALUES (7, '0000-00-00', '2026-01-10 10:00:00')"); err != nil {
					t.Fatal(err)
				}
			} else {
				src.insert("app_{id}.orders", transferCols, []any{int64(7), "bob", "1.00", int64(1), true, "0001-01-01", "2026-01-10 10:00:00", nil})
			}
			p := dst.spec(strings.ReplaceAll(transferSpec, "{name}", "orders"))
			_, err := dst.tg.Run(dst.ctx, p, Options{Until: until("2026-01-15")})
			if err == nil || !strings.Contains(err.Error(), "order_id=7") || !strings.Contains(err.Error(), "column order_date") {
				rows, _ := dst.read("dw_{id}.orders", []string{"order_id", "order_date"})
				t.Fatalf("run: %v, want a failure naming order_id=7 and column order_date; target %q", err, rows)
			}
			if rows, _ := dst.read("dw_{id}.orders", transferColNames); len(rows) != 0 {
				t.Errorf("target rows after a failed run: %q", rows)
			}
		})
	}
}
