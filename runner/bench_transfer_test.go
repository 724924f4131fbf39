//go:build bench

package runner

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/runner/transfer"
	"github.com/jackc/pgx/v5"
)

// BenchmarkTransfer measures a source outside the target, end to end, as
// a user runs it: the incrc binary (built for the benchmark) as a
// subprocess, its wall time and peak RSS (the kernel's maximum resident
// set of the process), against the same transfer written by hand, run as
// a subprocess too (this test binary, TestTransferHandChild):
//
//   - postgres_to_duckdb_append, _merge: a PostgreSQL table of -incrc.rows
//     rows (default 1,000,000) and 6 columns into a DuckDB file, the first
//     run of an append pipeline and of a merge pipeline (the whole window;
//     merge also dedupes by key and merges); by hand, COPY (SELECT ...) TO
//     STDOUT read through pgx into a pipe that DuckDB's COPY FROM reads
//     into a table without a key, in one process; and the append again
//     with DuckDB's memory_limit at 128MB (a URL parameter), for both, and
//     at 64MB for incrc (the hand-written pipe needs 96MB);
//   - postgres_to_duckdb_full_refresh_memory_limit_64MB, _128MB: incrc
//     run --full-refresh of the merge pipeline over a DuckDB file holding
//     the whole source already, DuckDB's memory_limit in the URL: whether it
//     succeeds, and its peak RSS (no hand-written side);
//   - files_to_postgres: 100 Parquet files holding the same rows in day=
//     folders into PostgreSQL, by file; by hand, DuckDB reads the files
//     and writes CSV into a pipe that PostgreSQL's COPY FROM STDIN reads.
//
// Each side runs once per iteration, in turns; the rows each loads are
// checked. It asserts no time: BENCHMARKS.md has the numbers.
//
//	go test -tags bench ./runner -run '^$' -bench Transfer -benchtime 1x -v
func BenchmarkTransfer(b *testing.B) {
	pgURL := os.Getenv("INCRC_TEST_POSTGRES_URL")
	if pgURL == "" {
		b.Skip("INCRC_TEST_POSTGRES_URL not set: the transfer benchmarks read or write PostgreSQL")
	}
	rows := *benchRows
	dir := b.TempDir()
	bin := filepath.Join(dir, "incrc")
	build := exec.Command("go", "build", "-o", bin, "../cmd/incrc")
	if out, err := build.CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	ctx := context.Background()
	id := uniq()
	schema := "app_" + id
	db, err := sql.Open("pgx", pgURL)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	defer db.ExecContext(ctx, "DROP SCHEMA IF EXISTS "+schema+" CASCADE")
	defer db.ExecContext(ctx, "DELETE FROM incrc_state WHERE pipeline LIKE '%"+id+"'")
	defer db.ExecContext(ctx, "DELETE FROM incrc_runs WHERE pipeline LIKE '%"+id+"'")
	defer db.ExecContext(ctx, "DELETE FROM incrc_files WHERE pipeline LIKE '%"+id+"'")
	defer db.ExecContext(ctx, "DROP SCHEMA IF EXISTS dw_"+id+" CASCADE")
	start := time.Now()
	for _, q := range []string{
		"CREATE SCHEMA " + schema,
		"CREATE TABLE " + schema + ".orders (order_id bigint PRIMARY KEY, customer_id bigint, amount numeric(12,2), status varchar(16), order_date date, updated_at timestamp)",
		fmt.Sprintf(`INSERT INTO %s.orders SELECT i, i %% 5000, (i %% 100000) / 100.0, CASE WHEN i %% 3 = 0 THEN 'paid' ELSE 'open' END,
			DATE '2026-01-01' + (i %% 100)::int, TIMESTAMP '2026-01-01' + (i %% 100) * INTERVAL '1 day' + (i %% 86400) * INTERVAL '1 second'
			FROM generate_series(1, %d) AS i`, schema, rows),
		"ANALYZE " + schema + ".orders",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			b.Fatalf("%s: %v", q, err)
		}
	}
	b.Logf("source: %d rows in PostgreSQL in %s", rows, time.Since(start).Round(time.Millisecond))

	// The landing folder: the same rows in 100 Parquet files, one per day.
	land := filepath.Join(dir, "landing")
	start = time.Now()
	if err := writeLanding(land, rows); err != nil {
		b.Fatal(err)
	}
	files, _ := transfer.ListGlob(land + "/**/*.parquet")
	b.Logf("landing: %d Parquet files in %s", len(files), time.Since(start).Round(time.Millisecond))

	specs := filepath.Join(dir, "specs")
	os.MkdirAll(specs, 0o755)
	for _, strategy := range []string{"append", "merge"} {
		key := ""
		if strategy == "merge" {
			key = "unique_key: [order_id]\n"
		}
		os.WriteFile(filepath.Join(specs, "app_"+strategy+".yaml"), []byte(strings.NewReplacer("{id}", id, "{schema}", schema, "{strategy}", strategy, "{key}", key).Replace(`pipeline: app_orders_{strategy}_{id}
source: { connection: app, table: {schema}.orders }
target: { table: dw.app_orders }
columns:
  order_id: bigint
  customer_id: bigint
  amount: decimal(12,2)
  status: varchar(16)
  order_date: date
  updated_at: timestamp
strategy: {strategy}
{key}watermark: { column: updated_at, start: 2026-01-01 }
`)), 0o644)
	}
	os.WriteFile(filepath.Join(specs, "files.yaml"), []byte(strings.NewReplacer("{id}", id, "{land}", land).Replace(`pipeline: landed_orders_{id}
source: { files: "{land}/**/*.parquet" }
target: { table: dw_{id}.landed_orders }
columns:
  order_id: bigint
  customer_id: bigint
  amount: decimal(12,2)
  status: varchar(16)
  updated_at: timestamp
  day: date
strategy: append
watermark: { files: new }
`)), 0o644)

	for i := 0; i < b.N; i++ {
		for _, bc := range []struct{ strategy, opts, handOpts, name string }{
			{"append", "", "", "append"}, {"merge", "", "", "merge"},
			{"append", "?memory_limit=128MB", "?memory_limit=128MB", "append_memory_limit_128MB"},
			// The hand-written pipe's CSV reader runs out of memory at
			// 64MB (it allocates 30 MiB blocks): it runs at 96MB.
			{"append", "?memory_limit=64MB", "?memory_limit=96MB", "append_memory_limit_64MB"},
		} {
			name := "postgres_to_duckdb_" + bc.name
			b.Run(name, func(b *testing.B) {
				target := "duckdb:" + filepath.Join(b.TempDir(), "wh.duckdb") + bc.opts
				hand := measureProcess(b, []string{"INCRC_BENCH_HAND=postgres_to_duckdb", "INCRC_BENCH_SCHEMA=" + schema, "INCRC_BENCH_DUCKDB_OPTS=" + bc.handOpts},
					os.Args[0], "-test.run=^TestTransferHandChild$", "-test.v")
				args := []string{"run", "--target", target, "--source", "app=" + pgURL, "--specs", filepath.Join(specs, "app_"+bc.strategy+".yaml"), "--until", "2026-06-01"}
				inc := measureProcess(b, nil, bin, args...)
				report(b, name, rows, inc, hand)
				// The same run again reads nothing: what incrc and its
				// embedded DuckDB take without the rows.
				empty := measureProcess(b, nil, bin, args...)
				b.Logf("%s: the same run again (an empty window): %s, peak RSS %d MB", name, empty.wall.Round(time.Millisecond), empty.maxRSS>>20)
			})
		}
		// A full refresh of the merge pipeline over a target holding the
		// whole source (loaded first, without a limit), within DuckDB's
		// memory_limit as docs/targets.md shows it, and twice that.
		for _, limit := range []string{"64MB", "128MB"} {
			name := "postgres_to_duckdb_full_refresh_memory_limit_" + limit
			b.Run(name, func(b *testing.B) {
				path := filepath.Join(b.TempDir(), "wh.duckdb")
				args := func(target string, more ...string) []string {
					return append([]string{"run", "--target", target, "--source", "app=" + pgURL, "--specs", filepath.Join(specs, "app_merge.yaml"), "--until", "2026-06-01"}, more...)
				}
				first := measureProcess(b, nil, bin, args("duckdb:"+path)...)
				full, err := tryProcess(b, nil, bin, args("duckdb:"+path+"?memory_limit="+limit, "--full-refresh")...)
				outcome := "succeeded (" + strings.TrimSpace(full.out) + ")"
				if err != nil {
					outcome = fmt.Sprintf("FAILED (%v): %s", err, strings.TrimSpace(full.out))
				}
				b.Logf("%s: the first run (no limit) %s, peak RSS %d MB; the full refresh with memory_limit=%s %s in %s, peak RSS %d MB",
					name, first.wall.Round(time.Millisecond), first.maxRSS>>20, limit, outcome, full.wall.Round(time.Millisecond), full.maxRSS>>20)
				b.ReportMetric(float64(full.maxRSS>>20), "incrc_MB")
			})
		}
		b.Run("files_to_postgres", func(b *testing.B) {
			db.ExecContext(ctx, "DELETE FROM incrc_files WHERE pipeline LIKE '%"+id+"'")
			db.ExecContext(ctx, "DROP SCHEMA IF EXISTS dw_"+id+" CASCADE")
			db.ExecContext(ctx, "DELETE FROM incrc_state WHERE pipeline = 'landed_orders_"+id+"'")
			inc := measureProcess(b, nil, bin, "run", "--target", pgURL, "--specs", filepath.Join(specs, "files.yaml"))
			hand := measureProcess(b, []string{"INCRC_BENCH_HAND=files_to_postgres", "INCRC_BENCH_LAND=" + land, "INCRC_BENCH_TABLE=" + schema + ".hand_landed"},
				os.Args[0], "-test.run=^TestTransferHandChild$", "-test.v")
			report(b, "files_to_postgres", rows, inc, hand)
		})
	}
}

// measured is one subprocess's wall time, peak RSS and output.
type measured struct {
	wall   time.Duration
	maxRSS int64 // bytes
	out    string
}

func measureProcess(b *testing.B, env []string, bin string, args ...string) measured {
	b.Helper()
	m, err := tryProcess(b, env, bin, args...)
	if err != nil {
		b.Fatalf("%s %s: %v\n%s", bin, strings.Join(args, " "), err, m.out)
	}
	return m
}

// tryProcess is measureProcess for a run that may fail: its error is
// returned with what it measured.
func tryProcess(b *testing.B, env []string, bin string, args ...string) (measured, error) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	// The peak RSS is the kernel's high-water mark of the process's own
	// memory (VmHWM), sampled until it exits. (The rusage of a child
	// started by a large process is no use: Linux starts it from the
	// parent's high-water mark.)
	done := make(chan struct{})
	peak := make(chan int64, 1)
	go func() {
		var hwm int64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := vmHWM(cmd.Process.Pid); v > hwm {
				hwm = v
			}
			select {
			case <-done:
				peak <- hwm
				return
			case <-tick.C:
			}
		}
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	close(done)
	return measured{wall: wall, out: out.String(), maxRSS: <-peak}, err
}

// vmHWM reads a live process's peak resident set (bytes), or 0.
func vmHWM(pid int) int64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

func report(b *testing.B, name string, rows int, inc, hand measured) {
	b.Logf("%s: incrc %s (%.0f rows/s), peak RSS %d MB; by hand %s (%.0f rows/s), peak RSS %d MB; incrc/hand time %.2fx\nincrc: %s\nhand: %s",
		name, inc.wall.Round(time.Millisecond), float64(rows)/inc.wall.Seconds(), inc.maxRSS>>20,
		hand.wall.Round(time.Millisecond), float64(rows)/hand.wall.Seconds(), hand.maxRSS>>20,
		inc.wall.Seconds()/hand.wall.Seconds(), strings.TrimSpace(inc.out), lastLine(hand.out))
	b.ReportMetric(float64(rows)/inc.wall.Seconds(), "incrc_rows/s")
	b.ReportMetric(float64(rows)/hand.wall.Seconds(), "hand_rows/s")
	b.ReportMetric(float64(inc.maxRSS>>20), "incrc_MB")
	b.ReportMetric(float64(hand.maxRSS>>20), "hand_MB")
}

func lastLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, "hand-written:") {
			return strings.TrimSpace(l)
		}
	}
	return strings.TrimSpace(s)
}

// writeLanding writes rows into 100 Parquet files, one per day= folder.
func writeLanding(dir string, rows int) error {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer db.Close()
	q := fmt.Sprintf(`COPY (SELECT i AS order_id, i %% 5000 AS customer_id, CAST((i %% 100000) / 100.0 AS DECIMAL(12,2)) AS amount,
		CASE WHEN i %% 3 = 0 THEN 'paid' ELSE 'open' END AS status,
		TIMESTAMP '2026-01-01' + to_days(CAST(i %% 100 AS INTEGER)) + to_seconds(i %% 86400) AS updated_at,
		DATE '2026-01-01' + CAST(i %% 100 AS INTEGER) AS day
		FROM range(1, %d) AS r(i)) TO '%s' (FORMAT parquet, PARTITION_BY (day))`, rows+1, dir)
	_, err = db.Exec(q)
	return err
}

// TestTransferHandChild is the hand-written transfer, run by
// BenchmarkTransfer as a subprocess so that its peak RSS is its own. It
// does nothing in a normal test run.
func TestTransferHandChild(t *testing.T) {
	mode := os.Getenv("INCRC_BENCH_HAND")
	if mode == "" {
		t.Skip("only runs as BenchmarkTransfer's child process")
	}
	ctx := context.Background()
	pgURL := os.Getenv("INCRC_TEST_POSTGRES_URL")
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	fifo := fmt.Sprintf("/dev/fd/%d", pr.Fd())
	start := time.Now()
	var n int64
	switch mode {
	case "postgres_to_duckdb":
		schema := os.Getenv("INCRC_BENCH_SCHEMA")
		db, err := sql.Open("duckdb", filepath.Join(t.TempDir(), "hand.duckdb")+os.Getenv("INCRC_BENCH_DUCKDB_OPTS"))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec("CREATE TABLE orders (order_id BIGINT, customer_id BIGINT, amount DECIMAL(12,2), status VARCHAR(16), order_date DATE, updated_at TIMESTAMP)"); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := conn.PgConn().CopyTo(ctx, pw, "COPY (SELECT order_id, customer_id, amount, status, order_date, updated_at FROM "+schema+".orders) TO STDOUT (FORMAT csv)")
			pw.Close()
			done <- err
		}()
		if _, err := db.Exec("COPY orders FROM '" + fifo + "' (FORMAT csv)"); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		db.QueryRow("SELECT COUNT(*) FROM orders").Scan(&n)
	case "files_to_postgres":
		land, table := os.Getenv("INCRC_BENCH_LAND"), os.Getenv("INCRC_BENCH_TABLE")
		if _, err := conn.Exec(ctx, "CREATE TABLE "+table+" (order_id bigint, customer_id bigint, amount numeric(12,2), status varchar(16), updated_at timestamp, day date)"); err != nil {
			t.Fatal(err)
		}
		defer conn.Exec(ctx, "DROP TABLE "+table)
		db, err := sql.Open("duckdb", "")
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		done := make(chan error, 1)
		go func() {
			_, err := db.Exec("COPY (SELECT order_id, customer_id, amount, status, updated_at, day FROM read_parquet('" + land + "/**/*.parquet', hive_partitioning = true)) TO '/dev/fd/" + strconv.Itoa(int(pw.Fd())) + "' (FORMAT csv, HEADER false, USE_TMP_FILE false)")
			pw.Close()
			done <- err
		}()
		tag, err := conn.PgConn().CopyFrom(ctx, pr, "COPY "+table+" FROM STDIN (FORMAT csv)")
		if err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		n = tag.RowsAffected()
	}
	pr.Close()
	fmt.Printf("hand-written: %d rows in %s\n", n, time.Since(start).Round(time.Millisecond))
}
