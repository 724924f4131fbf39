package runner

import (
	"strings"
	"testing"
)

// TestTransferDateOutOfRange: a date the target cannot hold as it is is
// never rewritten into another date: DuckDB's and PostgreSQL's 0001-01-01
// into MariaDB (which would store 0000-00-00), and MariaDB's zero date
// 0000-00-00 into PostgreSQL and DuckDB (which would store 0001-01-01, the
// driver's reading of it). A pipeline that quarantines invalid rows
// quarantines the row, the column NULL and the reason naming the column and
// the value, counts it, and writes the others; one without a quarantine
// fails the run before anything is written, naming the row's key and the
// column (on_invalid: fail).
func TestTransferDateOutOfRange(t *testing.T) {
	for _, pair := range [][2]string{{"duckdb", "mysql"}, {"postgres", "mysql"}, {"mysql", "postgres"}, {"mysql", "duckdb"}} {
		for _, quarantine := range []bool{false, true} {
			name := pair[0] + " to " + pair[1]
			if quarantine {
				name += "/quarantined"
			}
			t.Run(name, func(t *testing.T) {
				src := newEnv(t, engineByName(pair[0]))
				dst := newEnv(t, engineByName(pair[1]))
				dst.id = src.id
				dst.tg.SourceURLs = map[string]string{"app": src.url}
				src.createTable("app_{id}.orders", transferCols)
				src.insert("app_{id}.orders", transferCols, []any{int64(1), "ann", "10.50", int64(1), true, "2026-01-10", "2026-01-10 09:00:00", nil})
				bad := "0001-01-01"
				if pair[0] == "mysql" {
					// The zero date, which MariaDB stores unless its sql_mode says NO_ZERO_DATE.
					bad = "0000-00-00"
					if _, err := src.tg.DB.ExecContext(src.ctx, "INSERT INTO app_"+src.id+".orders (order_id, customer, amount, order_date, updated_at) VALUES (7, 'bob', 1.25, '0000-00-00', '2026-01-10 10:00:00')"); err != nil {
						t.Fatal(err)
					}
				} else {
					src.insert("app_{id}.orders", transferCols, []any{int64(7), "bob", "1.25", int64(1), true, bad, "2026-01-10 10:00:00", nil})
				}
				spec := strings.ReplaceAll(transferSpec, "{name}", "orders")
				mode := "fail"
				if quarantine {
					mode = "quarantine"
				}
				spec = strings.Replace(spec, `checks: ["amount >= 0"]`, `checks: ["amount >= 0"], on_invalid: `+mode, 1)
				p := dst.spec(spec)
				res, err := dst.tg.Run(dst.ctx, p, Options{Until: until("2026-01-15")})
				if !quarantine {
					if err == nil || !strings.Contains(err.Error(), "order_id=7") || !strings.Contains(err.Error(), "column order_date") {
						rows, _ := dst.read("dw_{id}.orders", []string{"order_id", "order_date"})
						t.Fatalf("run: %v, want a failure naming order_id=7 and column order_date; target %q", err, rows)
					}
					if rows, _ := dst.read("dw_{id}.orders", transferColNames); len(rows) != 0 {
						t.Errorf("target rows after a failed run: %q", rows)
					}
					return
				}
				if err != nil {
					t.Fatalf("run: %v", err)
				}
				if res.RowsRead != 2 || res.RowsInserted != 1 || res.RowsQuarantined != 1 {
					t.Errorf("read %d, inserted %d, quarantined %d; want 2, 1, 1", res.RowsRead, res.RowsInserted, res.RowsQuarantined)
				}
				if msg := accounted(p, res); msg != "" {
					t.Errorf("%s: %+v", msg, countsOf(res))
				}
				rows, err := dst.read("dw_{id}.orders", []string{"order_id", "order_date"})
				if err != nil || len(rows) != 1 || !strings.HasPrefix(rows[0], "1 ") {
					t.Errorf("target: %q, %v; want order 1 alone", rows, err)
				}
				q, err := dst.read("dw_{id}.orders_quarantine", []string{"order_id", "customer", "amount", "order_date", "incrc_run_id", "incrc_reason"})
				if err != nil || len(q) != 1 {
					t.Fatalf("quarantine: %q, %v; want order 7", q, err)
				}
				for _, want := range []string{"7 | bob | 1.25 | NULL | " + res.RunID + " | ", "range(order_date): ", bad, "order_date NULL"} {
					if !strings.Contains(q[0], want) {
						t.Errorf("quarantine row %q lacks %q", q[0], want)
					}
				}
			})
		}
	}
}
