package runner

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
)

// engine is one database the scenarios run on.
type engine struct {
	name string
	// url returns a target URL for a test; it skips the test when the
	// engine is not available (and fails it under CI=true).
	url func(t *testing.T) string
	// serial: the engine's tests run one at a time.
	serial bool
}

// engines are the executed engines: every scenario runs on each.
func engines() []engine {
	server := func(env, name string) func(t *testing.T) string {
		return func(t *testing.T) string {
			u := os.Getenv(env)
			if u == "" {
				if os.Getenv("CI") == "true" {
					t.Fatalf("%s is not set: CI must test %s", env, name)
				}
				t.Skipf("%s not set: skipping %s (see README, Tests)", env, name)
			}
			return u
		}
	}
	return []engine{
		{name: "duckdb", url: func(t *testing.T) string { return "duckdb:" + filepath.Join(t.TempDir(), "wh.duckdb") }},
		{name: "sqlite", url: func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "wh.db") }},
		{name: "postgres", url: server("INCRC_TEST_POSTGRES_URL", "PostgreSQL")},
		{name: "mysql", url: server("INCRC_TEST_MYSQL_URL", "MariaDB/MySQL")},
	}
}

// distributedEngines are the engines without transactions that are
// reached over the network, each at its own URL: Spark Connect with Delta
// Lake tables, with Iceberg tables, and Trino with Iceberg. Their
// statements take seconds, not milliseconds, so they run the conformance
// suite and the randomized equivalence tests, not every test of the
// package; their scenarios run one at a time (concurrent commits to the
// state tables every pipeline shares would conflict there: Delta's and
// Iceberg's optimistic commits). Without a URL they skip,
// also under CI=true, unless INCRC_TEST_REQUIRE names them: the CI step
// that started that engine sets it, so an engine that step cannot reach
// fails instead.
func distributedEngines() []engine {
	lake := func(env, name, what string) engine {
		return engine{name: name, serial: true, url: func(t *testing.T) string {
			u := os.Getenv(env)
			if u == "" {
				if slices.Contains(strings.Split(os.Getenv("INCRC_TEST_REQUIRE"), ","), name) {
					t.Fatalf("%s is not set, and INCRC_TEST_REQUIRE names %s: this step must test %s", env, name, what)
				}
				t.Skipf("%s not set: skipping %s (see docs/engines.md)", env, what)
			}
			return u
		}}
	}
	return []engine{
		lake("INCRC_TEST_SPARK_DELTA_URL", "spark", "Spark Connect with Delta Lake"),
		lake("INCRC_TEST_SPARK_ICEBERG_URL", "spark_iceberg", "Spark Connect with Iceberg"),
		lake("INCRC_TEST_TRINO_URL", "trino", "Trino with Iceberg"),
	}
}

var testSeq atomic.Int64

// uniq names a test's schemas and pipelines so that tests sharing a
// PostgreSQL or MariaDB database never see each other's tables.
func uniq() string {
	return fmt.Sprintf("t%d_%d", time.Now().UnixNano()%1e9, testSeq.Add(1))
}

// env is one scenario's database: a target, plus helpers that create and
// change source tables with statements the dialect spells.
type env struct {
	t   *testing.T
	ctx context.Context
	tg  *Target
	id  string // suffix for schema and pipeline names
	url string
}

func newEnv(t *testing.T, e engine) *env {
	t.Helper()
	url := e.url(t)
	ctx := context.Background()
	tg, err := Open(ctx, all.Lookup, url, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	en := &env{t: t, ctx: ctx, tg: tg, id: uniq(), url: url}
	t.Cleanup(en.dropSchemas)
	return en
}

// spec parses a spec template: {id} is replaced by the env's suffix.
func (e *env) spec(yaml string) *ir.Plan {
	e.t.Helper()
	yaml = strings.ReplaceAll(yaml, "{id}", e.id)
	s, err := compiler.Parse("test.yaml", []byte(yaml))
	if err != nil {
		e.t.Fatal(err)
	}
	if d := compiler.Validate(s); len(d) > 0 {
		e.t.Fatal(d.Err())
	}
	p, err := compiler.Lower(s)
	if err != nil {
		e.t.Fatal(err)
	}
	return p
}

func (e *env) table(name string) ir.Table {
	return ir.Table{Parts: strings.Split(strings.ReplaceAll(name, "{id}", e.id), ".")}
}

func (e *env) render(op ir.Op, ps ...ir.Param) []dialects.Part {
	e.t.Helper()
	parts, err := dialects.RenderStatement(e.tg.Dialect, &ir.Statement{Name: "fixture", Op: op, Params: ps})
	if err != nil {
		e.t.Fatal(err)
	}
	return parts
}

func (e *env) exec(parts []dialects.Part, vals map[string]any) {
	e.t.Helper()
	for _, p := range parts {
		args := make([]any, len(p.Params))
		for i, n := range p.Params {
			args[i] = vals[n]
		}
		if _, err := e.tg.DB.ExecContext(e.ctx, p.SQL, args...); err != nil {
			e.t.Fatalf("%s\n%v", p.SQL, err)
		}
	}
}

// createTable creates a table of cols, with the primary key key (none:
// no key).
func (e *env) createTable(name string, cols []ir.Col, key ...string) {
	t := e.table(name)
	if s := t.Schema(); s != nil {
		e.exec(e.render(ir.CreateSchema{Schema: s}), nil)
	}
	e.exec(e.render(ir.CreateTable{Table: t, Columns: cols, PrimaryKey: key}), nil)
}

// insert adds rows; values are Go values, times as text the engine reads.
func (e *env) insert(name string, cols []ir.Col, rows ...[]any) {
	e.t.Helper()
	var names []string
	var vals []ir.Expr
	var ps []ir.Param
	for _, c := range cols {
		names = append(names, c.Name)
		vals = append(vals, ir.ParamRef{Name: c.Name})
		ps = append(ps, ir.Param{Name: c.Name})
	}
	parts := e.render(ir.InsertValues{Table: e.table(name), Columns: names, Values: vals}, ps...)
	if e.insertBatch(parts, cols, rows) {
		return
	}
	for _, r := range rows {
		m := map[string]any{}
		for i, c := range cols {
			m[c.Name] = e.bind(c, r[i])
		}
		e.exec(parts, m)
	}
}

// insertBatch adds rows in one multi-row INSERT where the engine takes
// values as literals (Spark, Trino): there every statement is a commit of
// its own that costs a second or more, and a fixture of ten rows would
// otherwise be ten commits. The one-row statement the dialect rendered
// gives the prefix and the row's tuple, repeated once per row; inline
// spells each value in order, so the shape stays the rendered one. It
// reports false, inserting nothing, where that statement is not of the
// form it expects.
func (e *env) insertBatch(parts []dialects.Part, cols []ir.Col, rows [][]any) bool {
	e.t.Helper()
	if _, ok := e.tg.Dialect.(dialects.Literaler); !ok || len(rows) < 2 || len(parts) != 1 {
		return false
	}
	at := valuesKeyword.FindAllStringIndex(parts[0].SQL, -1)
	if len(at) != 1 {
		return false
	}
	head, tuple := parts[0].SQL[:at[0][1]], parts[0].SQL[at[0][1]:]
	if strings.Count(tuple, "?") != len(parts[0].Params) {
		return false
	}
	tuples := make([]string, len(rows))
	var args []any
	for i, r := range rows {
		tuples[i] = tuple
		m := map[string]any{}
		for j, c := range cols {
			m[c.Name] = e.bind(c, r[j])
		}
		for _, n := range parts[0].Params {
			args = append(args, m[n])
		}
	}
	q := head + strings.Join(tuples, ", ")
	if _, err := e.tg.DB.ExecContext(e.ctx, q, args...); err != nil {
		e.t.Fatalf("%s\n%v", q, err)
	}
	return true
}

var valuesKeyword = regexp.MustCompile(`\sVALUES\s`)

// bind converts fixture values: "2026-01-20" style strings for time
// columns become the engine's time binding.
func (e *env) bind(c ir.Col, v any) any {
	if s, ok := v.(string); ok && c.Type.IsTime() {
		tm, err := ir.ParseTime(s)
		if err != nil {
			e.t.Fatal(err)
		}
		return e.tg.Dialect.BindTime(tm, c.Type.Kind)
	}
	if _, ok := e.tg.Dialect.(dialects.Literaler); ok && v != nil && !c.Type.IsTime() {
		// Values spelled as literals take the column's type (Trino
		// inserts no text into a decimal, nor an integer into a smallint).
		return dialects.Typed{Value: v, Type: c.Type}
	}
	return v
}

// update sets columns of the rows where key = value.
func (e *env) update(name string, cols []ir.Col, keyCol string, key any, set map[string]any) {
	e.t.Helper()
	var assigns []ir.Assign
	var ps []ir.Param
	vals := map[string]any{"k": key}
	var names []string
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		assigns = append(assigns, ir.Assign{Column: n, Value: ir.ParamRef{Name: n}})
		ps = append(ps, ir.Param{Name: n})
		for _, c := range cols {
			if c.Name == n {
				vals[n] = e.bind(c, set[n])
			}
		}
	}
	ps = append(ps, ir.Param{Name: "k"})
	e.exec(e.render(ir.Update{Table: e.table(name), Set: assigns,
		Where: ir.Binary{Op: "=", L: ir.ColRef{Name: keyCol}, R: ir.ParamRef{Name: "k"}}}, ps...), vals)
}

// rows reads a table ordered by its first column, each value canonical.
func (e *env) rows(name string, cols []string) []string {
	e.t.Helper()
	out, err := e.read(name, cols)
	if err != nil {
		e.t.Fatal(err)
	}
	return out
}

// read is rows for a table that may not exist yet (a run creates its
// target in setup): the engine's error instead of a failed test.
func (e *env) read(name string, cols []string) ([]string, error) {
	parts := e.render(ir.SelectRows{Table: e.table(name), Columns: cols, OrderBy: []ir.Order{{Column: cols[0]}}})
	rs, err := e.tg.DB.QueryContext(e.ctx, parts[0].SQL)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		s := make([]string, len(vals))
		for i, v := range vals {
			s[i] = Canon(v)
		}
		out = append(out, strings.Join(s, " | "))
	}
	return out, rs.Err()
}

// dropSchemas removes what a test created on a shared server database:
// its schemas, and its pipelines' rows in the state tables that every
// pipeline shares (every pipeline name of a test ends in its id). It
// opens a connection of its own: a test may have closed or replaced
// e.tg (a kill step does) before its cleanup runs.
func (e *env) dropSchemas() {
	switch e.tg.Dialect.Name() {
	case "postgres", "mysql", "spark", "spark_iceberg", "trino":
	default:
		return
	}
	tg, err := Open(e.ctx, all.Lookup, e.url, "")
	if err != nil {
		e.t.Errorf("cleanup: %v", err)
		return
	}
	defer tg.Close()
	for _, s := range []string{"app_" + e.id, "dw_" + e.id} {
		if err := tg.DropSchema(e.ctx, s); err != nil {
			e.t.Errorf("cleanup: drop schema %s: %v", s, err)
		}
	}
	for _, tb := range []ir.Table{ir.StateTable, ir.RunsTable, ir.PartitionsTable, ir.FilesTable} {
		// The id is [a-z0-9_]: safe to spell in the statement.
		stmt := "DELETE FROM " + tg.Dialect.QuoteIdent(tb.Name()) + " WHERE pipeline LIKE '%" + e.id + "'"
		if _, err := tg.DB.ExecContext(e.ctx, stmt); err != nil && !strings.Contains(err.Error(), "exist") && !strings.Contains(err.Error(), "TABLE_OR_VIEW_NOT_FOUND") {
			e.t.Errorf("cleanup: %s: %v", stmt, err)
		}
	}
}

var _ = sql.ErrNoRows

// line is one expected row as env.rows prints it.
func line(vals ...any) string {
	s := make([]string, len(vals))
	for i, v := range vals {
		s[i] = Canon(v)
	}
	return strings.Join(s, " | ")
}

// sorted returns rows in text order, for tables whose first column does
// not identify a row (the order of ties differs between engines).
func sorted(rows []string) []string {
	out := append([]string(nil), rows...)
	sort.Strings(out)
	return out
}

// sourceName is how a source.query names a fixture table on this engine:
// SQLite folds the schema into the name (see dialects/sqlite).
func (e *env) sourceName(name string) string {
	t := e.table(name)
	if n, ok := e.tg.Dialect.(dialects.TableNamer); ok {
		return n.TableName(t)
	}
	return strings.Join(t.Parts, ".")
}

// nullableCols returns the columns without NOT NULL: a fixture source may
// hold the NULL keys that the pipeline must reject.
func nullableCols(cols []ir.Col) []ir.Col {
	out := append([]ir.Col(nil), cols...)
	for i := range out {
		out[i].NotNull = false
	}
	return out
}

// deleteWhere deletes the rows of a fixture table where col = v; an empty
// col deletes them all.
func (e *env) deleteWhere(name, col string, v any) {
	e.t.Helper()
	op := ir.DeleteRows{Table: e.table(name)}
	var ps []ir.Param
	if col != "" {
		op.Where = ir.Binary{Op: "=", L: ir.ColRef{Name: col}, R: ir.ParamRef{Name: "v"}}
		ps = append(ps, ir.Param{Name: "v"})
	}
	e.exec(e.render(op, ps...), map[string]any{"v": v})
}

func (e *env) state(p *ir.Plan) *Status {
	e.t.Helper()
	st, err := e.tg.State(e.ctx, p)
	if err != nil {
		e.t.Fatal(err)
	}
	return st
}

// counts is the part of a Result that a scenario predicts. A zero Hi
// leaves the window unchecked (a pipeline without a watermark reads up
// to the clock).
type counts struct {
	Lo, Hi                                                 string
	Read, Inserted, Updated, Deleted, Quarantined, Skipped int64
}

func countsOf(r *Result) counts {
	return counts{r.WindowLo, r.WindowHi, r.RowsRead, r.RowsInserted, r.RowsUpdated, r.RowsDeleted, r.RowsQuarantined, r.RowsSkipped}
}

func checkCounts(t *testing.T, what string, r *Result, want counts) {
	t.Helper()
	got := countsOf(r)
	if want.Hi == "" {
		got.Lo, got.Hi = "", ""
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s: run result (-want +got):\n%s", what, diff)
	}
}

func mustRun(t *testing.T, e *env, p *ir.Plan, opts Options) *Result {
	t.Helper()
	res, err := e.tg.Run(e.ctx, p, opts)
	if err != nil {
		t.Fatalf("run %s until %v: %v", p.Pipeline, opts.Until, err)
	}
	return res
}

// statuses lists the partitions of a backfill with the given status.
func statuses(res *BackfillResult, status string) []string {
	var out []string
	for _, p := range res.Partitions {
		if p.Status == status {
			out = append(out, p.Key)
		}
	}
	return out
}

// TestDuckDBFileLock: DuckDB allows one writing process per file; a second
// process that finds it held gets a LockedError (incrc exits 3), not a
// failure.
func TestDuckDBFileLock(t *testing.T) {
	if os.Getenv("INCRC_TEST_HOLD") != "" {
		return // the child's work is in TestDuckDBFileLockChild
	}
	path := "duckdb:" + t.TempDir() + "/wh.duckdb"
	cmd := exec.Command(os.Args[0], "-test.run=^TestDuckDBFileLockChild$")
	cmd.Env = append(os.Environ(), "INCRC_TEST_HOLD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	buf := make([]byte, 16)
	if n, _ := out.Read(buf); !strings.Contains(string(buf[:n]), "open") {
		t.Fatalf("child did not open the file: %q", buf[:n])
	}
	_, err = Open(context.Background(), all.Lookup, path, "")
	var locked *LockedError
	if !errors.As(err, &locked) || !strings.Contains(err.Error(), "locked by another process") {
		t.Errorf("open while another process holds the file: %v, want a LockedError", err)
	}
}

// TestDuckDBFileLockChild holds a DuckDB file open until it is killed.
func TestDuckDBFileLockChild(t *testing.T) {
	path := os.Getenv("INCRC_TEST_HOLD")
	if path == "" {
		t.Skip("only runs as TestDuckDBFileLock's child process")
	}
	tg, err := Open(context.Background(), all.Lookup, path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	os.Stdout.WriteString("open\n")
	time.Sleep(time.Minute)
}

// until reads a fixture's --until: a date or RFC 3339, as ParseUntil does.
func until(s string) *time.Time {
	t, err := ParseUntil(s)
	if err != nil {
		panic(err)
	}
	return &t
}
