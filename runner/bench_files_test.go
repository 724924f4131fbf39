//go:build bench

package runner

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler/ir"
	"github.com/incrc/incrc/dialects/all"
)

// BenchmarkFloorFiles is issue 28's landing-files rows, on a DuckDB target
// file: a whole incrc run of an append pipeline loading by file (open,
// run, close) against the honest hand-written load of the same files:
// open, one transaction that reads the pipeline's state, runs INSERT ...
// SELECT FROM read_parquet (or read_csv with the declared types) over
// exactly those files, records each file and the run's row, and advances
// the state by compare-and-set; close.
//
//   - parquet/first_load, csv/first_load: 100 files of 10,000 rows into an
//     empty database (both sides create their tables);
//   - parquet/new_files, csv/new_files: 5 new files beside the 100 loaded
//     before (a copy of a database that loaded them, untimed).
//
// -incrc.pairs pairs per row (default 7), alternating which side goes
// first; medians, min and max of each side and of the per-pair ratio. The
// rows each side loaded are compared after every pair. It asserts no
// time: BENCHMARKS.md has the figures.
//
//	go test -tags bench ./runner -run '^$' -bench FloorFiles -benchtime 1x -timeout 60m -v
func BenchmarkFloorFiles(b *testing.B) {
	if *benchPairs < 5 {
		b.Fatalf("-incrc.pairs %d: at least 5", *benchPairs)
	}
	for _, format := range []string{"parquet", "csv"} {
		b.Run(format, func(b *testing.B) {
			f := newFilesBench(b, format)
			b.Run("first_load", func(b *testing.B) { f.pairs(b, true) })
			b.Run("new_files", func(b *testing.B) { f.pairs(b, false) })
		})
	}
}

const (
	filesBenchFiles = 100
	filesBenchNew   = 5
	filesBenchRows  = 10_000
)

type filesBench struct {
	ctx        context.Context
	format     string
	dir, land  string
	plan       *ir.Plan
	first, new []string // the exact paths of the first load and of the new files
	// baseIncrc and baseHonest are database files that loaded the first
	// files: each new_files pair starts from a copy of them.
	baseIncrc, baseHonest string
}

func newFilesBench(b *testing.B, format string) *filesBench {
	ctx := context.Background()
	dir := b.TempDir()
	f := &filesBench{ctx: ctx, format: format, dir: dir, land: filepath.Join(dir, "land")}
	os.MkdirAll(f.land, 0o755)
	id := uniq()
	f.plan = benchPlan(b, strings.NewReplacer("{land}", filepath.ToSlash(f.land), "{format}", format).Replace(`pipeline: files_{id}
source: { files: "{land}/*.{format}", format: {format} }
target: { table: dw.landed }
columns:
  order_id: bigint
  customer_id: bigint
  amount: decimal(12,2)
  status: text
  updated_at: timestamp
strategy: append
watermark: { files: new }
`), id)
	start := time.Now()
	f.first = f.write(b, 0, filesBenchFiles)
	b.Logf("%s: %d files of %d rows in %s; load average %s", format, filesBenchFiles, filesBenchRows, time.Since(start).Round(time.Millisecond), loadAvg())
	f.baseIncrc, f.baseHonest = filepath.Join(dir, "base_incrc.duckdb"), filepath.Join(dir, "base_honest.duckdb")
	f.incrc(b, f.baseIncrc, filesBenchFiles*filesBenchRows, newStepTimes())
	f.honest(b, f.baseHonest, f.first, true)
	return f
}

// write writes n files from file k on, and returns their paths.
func (f *filesBench) write(b *testing.B, k, n int) []string {
	db, err := sql.Open("duckdb", "")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	opts := "FORMAT parquet"
	if f.format == "csv" {
		opts = "FORMAT csv, HEADER"
	}
	var paths []string
	for i := k; i < k+n; i++ {
		p := filepath.Join(f.land, fmt.Sprintf("part-%03d.%s", i, f.format))
		q := fmt.Sprintf(`COPY (SELECT i AS order_id, i %% 5000 AS customer_id, CAST((i %% 100000) / 100.0 AS DECIMAL(12,2)) AS amount,
  CASE WHEN i %% 3 = 0 THEN 'paid' ELSE 'open' END AS status, TIMESTAMP '2026-01-01' + INTERVAL (i %% 86400) SECOND AS updated_at
FROM range(%d, %d) AS t(i)) TO '%s' (%s)`, i*filesBenchRows, (i+1)*filesBenchRows, p, opts)
		if _, err := db.Exec(q); err != nil {
			b.Fatalf("%s\n%v", q, err)
		}
		paths = append(paths, p)
	}
	return paths
}

// pairs runs one row's pairs: first, the first load into empty
// databases; otherwise the new files into copies of the bases.
func (f *filesBench) pairs(b *testing.B, first bool) {
	var inc, hon []time.Duration
	steps := newStepTimes()
	load := loadAvg()
	want := int64(filesBenchNew * filesBenchRows)
	if !first && f.new == nil {
		// After the first loads, which would read them too.
		f.new = f.write(b, filesBenchFiles, filesBenchNew)
	}
	files := f.new
	if first {
		want, files = filesBenchFiles*filesBenchRows, f.first
	}
	for i := 0; i < *benchPairs; i++ {
		ip, hp := filepath.Join(f.dir, fmt.Sprintf("incrc_%v_%d.duckdb", first, i)), filepath.Join(f.dir, fmt.Sprintf("honest_%v_%d.duckdb", first, i))
		if !first {
			copyFile(b, f.baseIncrc, ip)
			copyFile(b, f.baseHonest, hp)
		}
		incrc := func() { inc = append(inc, f.incrc(b, ip, want, steps)) }
		honest := func() { hon = append(hon, f.honest(b, hp, files, first)) }
		if i%2 == 0 {
			incrc()
			honest()
		} else {
			honest()
			incrc()
		}
		f.same(b, ip, hp)
		os.Remove(ip)
		os.Remove(hp)
	}
	ratios := make([]float64, len(inc))
	for i := range inc {
		ratios[i] = float64(inc[i]) / float64(hon[i])
	}
	mi, hi, mr := spread(inc), spread(hon), spreadF(ratios)
	b.ReportMetric(mi[0], "incrc-ms")
	b.ReportMetric(hi[0], "honest-ms")
	b.ReportMetric(mr[0], "incrc/honest")
	b.Logf("%d pairs, load average %s -> %s\n  incrc   median %.1f ms (min %.1f, max %.1f)\n  honest  median %.1f ms (min %.1f, max %.1f)\n  ratio   median %.2f (min %.2f, max %.2f)\n  incrc per statement: %s",
		len(inc), load, loadAvg(), mi[0], mi[1], mi[2], hi[0], hi[1], hi[2], mr[0], mr[1], mr[2], steps.report(len(inc)))
}

// incrc is incrc's side, whole: open the target file, run, close.
func (f *filesBench) incrc(b *testing.B, path string, want int64, steps *stepTimes) time.Duration {
	t0 := time.Now()
	tg, err := Open(f.ctx, all.Lookup, "duckdb:"+path, "")
	if err != nil {
		b.Fatal(err)
	}
	steps.add("open", time.Since(t0))
	steps.begin()
	res, err := tg.Run(f.ctx, f.plan, Options{BeforeStatement: steps.hook})
	steps.end()
	if err != nil {
		b.Fatal(err)
	}
	t1 := time.Now()
	if err := tg.Close(); err != nil {
		b.Fatal(err)
	}
	steps.add("close", time.Since(t1))
	d := time.Since(t0)
	if res.RowsInserted != want || res.RowsRead != want {
		b.Fatalf("incrc read %d rows and inserted %d, want %d", res.RowsRead, res.RowsInserted, want)
	}
	return d
}

// honest is the hand-written load, whole: open; on a first load create
// the tables; one transaction: read the state, load exactly the files,
// record them and the run, compare-and-set the state; close.
func (f *filesBench) honest(b *testing.B, path string, files []string, first bool) time.Duration {
	t0 := time.Now()
	db, err := sql.Open("duckdb", path)
	if err != nil {
		b.Fatal(err)
	}
	exec := func(q string, args ...any) sql.Result {
		res, err := db.ExecContext(f.ctx, q, args...)
		if err != nil {
			b.Fatalf("%s\n%v", q, err)
		}
		return res
	}
	if first {
		exec(`CREATE SCHEMA dw;
CREATE TABLE dw.landed (order_id BIGINT, customer_id BIGINT, amount DECIMAL(12,2), status VARCHAR, updated_at TIMESTAMP);
CREATE TABLE state (pipeline VARCHAR PRIMARY KEY, version BIGINT);
CREATE TABLE runs (run_id VARCHAR PRIMARY KEY, pipeline VARCHAR, rows_read BIGINT, started_at VARCHAR, finished_at VARCHAR);
CREATE TABLE files (pipeline VARCHAR, path VARCHAR, size BIGINT, mtime VARCHAR, PRIMARY KEY (pipeline, path));
INSERT INTO state VALUES ('hand', 0)`)
	}
	tx, err := db.BeginTx(f.ctx, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer tx.Rollback()
	var version int64
	if err := tx.QueryRowContext(f.ctx, `SELECT version FROM state WHERE pipeline = 'hand'`).Scan(&version); err != nil {
		b.Fatal(err)
	}
	read := `read_parquet($1)`
	if f.format == "csv" {
		read = `read_csv($1, header = true, types = {'order_id': 'BIGINT', 'customer_id': 'BIGINT', 'amount': 'DECIMAL(12,2)', 'status': 'VARCHAR', 'updated_at': 'TIMESTAMP'})`
	}
	res, err := tx.ExecContext(f.ctx, `INSERT INTO dw.landed SELECT order_id, customer_id, amount, status, updated_at FROM `+read, files)
	if err != nil {
		b.Fatal(err)
	}
	rows, _ := res.RowsAffected()
	var vals []string
	var args []any
	for _, p := range files {
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		vals = append(vals, "('hand', ?, ?, ?)")
		args = append(args, filepath.Base(p), fi.Size(), fi.ModTime().UTC().Format(time.RFC3339Nano))
	}
	if _, err := tx.ExecContext(f.ctx, `INSERT INTO files VALUES `+strings.Join(vals, ", "), args...); err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC().Format(time.RFC3339Nano)
	if _, err := tx.ExecContext(f.ctx, `INSERT INTO runs VALUES ($1, 'hand', $2, $3, $4)`, fmt.Sprintf("hand-%d", time.Now().UnixNano()), rows, t0.UTC().Format(time.RFC3339Nano), now); err != nil {
		b.Fatal(err)
	}
	cas, err := tx.ExecContext(f.ctx, `UPDATE state SET version = version + 1 WHERE pipeline = 'hand' AND version = $1`, version)
	if err != nil {
		b.Fatal(err)
	}
	if n, _ := cas.RowsAffected(); n != 1 {
		b.Fatalf("the compare-and-set moved %d rows, want 1", n)
	}
	if err := tx.Commit(); err != nil {
		b.Fatal(err)
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	return time.Since(t0)
}

// same fails when the two sides' targets differ.
func (f *filesBench) same(b *testing.B, incrc, honest string) {
	read := func(path string) string {
		db, err := sql.Open("duckdb", path)
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		var s string
		if err := db.QueryRow(`SELECT COUNT(*) || ' ' || SUM(amount) || ' ' || SUM(hash(order_id, customer_id, amount, status, updated_at)) FROM dw.landed`).Scan(&s); err != nil {
			b.Fatal(err)
		}
		return s
	}
	if a, h := read(incrc), read(honest); a != h {
		b.Fatalf("incrc's target (%s) differs from the hand-written load's (%s)", a, h)
	}
}

func copyFile(b *testing.B, from, to string) {
	in, err := os.Open(from)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		b.Fatal(err)
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
}
