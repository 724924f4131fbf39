package runner

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
)

// engine is one database the scenarios run on.
type engine struct {
	name string
	// url returns a target URL for a test; it skips the test when the
	// engine is not available (and fails it under CI=true).
	url func(t *testing.T) string
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
		{"duckdb", func(t *testing.T) string { return "duckdb:" + filepath.Join(t.TempDir(), "wh.duckdb") }},
		{"sqlite", func(t *testing.T) string { return "sqlite:" + filepath.Join(t.TempDir(), "wh.db") }},
		{"postgres", server("INCRC_TEST_POSTGRES_URL", "PostgreSQL")},
		{"mysql", server("INCRC_TEST_MYSQL_URL", "MariaDB/MySQL")},
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
	tg, err := Open(ctx, url, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	en := &env{t: t, ctx: ctx, tg: tg, id: uniq(), url: url}
	t.Cleanup(en.dropSchemas)
	return en
}

// spec parses a spec template: {id} is replaced by the env's suffix.
func (e *env) spec(yaml string) *compiler.Plan {
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

func (e *env) table(name string) compiler.Table {
	return compiler.Table{Parts: strings.Split(strings.ReplaceAll(name, "{id}", e.id), ".")}
}

func (e *env) render(op compiler.Op, ps ...compiler.Param) []dialects.Part {
	e.t.Helper()
	parts, err := dialects.RenderStatement(e.tg.Dialect, &compiler.Statement{Name: "fixture", Op: op, Params: ps})
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

// createTable creates a source table from the plan's columns.
func (e *env) createTable(name string, cols []compiler.Col) {
	t := e.table(name)
	if s := t.Schema(); s != nil {
		e.exec(e.render(compiler.CreateSchema{Schema: s}), nil)
	}
	e.exec(e.render(compiler.CreateTable{Table: t, Columns: cols}), nil)
}

// insert adds rows; values are Go values, times as text the engine reads.
func (e *env) insert(name string, cols []compiler.Col, rows ...[]any) {
	e.t.Helper()
	var names []string
	var vals []compiler.Expr
	var ps []compiler.Param
	for _, c := range cols {
		names = append(names, c.Name)
		vals = append(vals, compiler.ParamRef{Name: c.Name})
		ps = append(ps, compiler.Param{Name: c.Name})
	}
	parts := e.render(compiler.InsertValues{Table: e.table(name), Columns: names, Values: vals}, ps...)
	for _, r := range rows {
		m := map[string]any{}
		for i, c := range cols {
			m[c.Name] = e.bind(c, r[i])
		}
		e.exec(parts, m)
	}
}

// bind converts fixture values: "2026-01-20" style strings for time
// columns become the engine's time binding.
func (e *env) bind(c compiler.Col, v any) any {
	if s, ok := v.(string); ok && c.Type.IsTime() {
		tm, err := compiler.ParseTime(s)
		if err != nil {
			e.t.Fatal(err)
		}
		return e.tg.Dialect.BindTime(tm, c.Type.Kind)
	}
	return v
}

// update sets columns of the rows where key = value.
func (e *env) update(name string, cols []compiler.Col, keyCol string, key any, set map[string]any) {
	e.t.Helper()
	var assigns []compiler.Assign
	var ps []compiler.Param
	vals := map[string]any{"k": key}
	var names []string
	for n := range set {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		assigns = append(assigns, compiler.Assign{Column: n, Value: compiler.ParamRef{Name: n}})
		ps = append(ps, compiler.Param{Name: n})
		for _, c := range cols {
			if c.Name == n {
				vals[n] = e.bind(c, set[n])
			}
		}
	}
	ps = append(ps, compiler.Param{Name: "k"})
	e.exec(e.render(compiler.Update{Table: e.table(name), Set: assigns,
		Where: compiler.Binary{Op: "=", L: compiler.ColRef{Name: keyCol}, R: compiler.ParamRef{Name: "k"}}}, ps...), vals)
}

// rows reads a table ordered by its first column, each value canonical.
func (e *env) rows(name string, cols []string) []string {
	e.t.Helper()
	parts := e.render(compiler.SelectRows{Table: e.table(name), Columns: cols, OrderBy: []compiler.Order{{Column: cols[0]}}})
	rs, err := e.tg.DB.QueryContext(e.ctx, parts[0].SQL)
	if err != nil {
		e.t.Fatal(err)
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
			e.t.Fatal(err)
		}
		s := make([]string, len(vals))
		for i, v := range vals {
			s[i] = Canon(v)
		}
		out = append(out, strings.Join(s, " | "))
	}
	return out
}

// dropSchemas removes what a test created on a shared server database.
func (e *env) dropSchemas() {
	name := e.tg.Dialect.Name()
	if name != "postgres" && name != "mysql" {
		return
	}
	q := e.tg.Dialect.QuoteIdent
	for _, s := range []string{"app_" + e.id, "dw_" + e.id} {
		stmt := "DROP SCHEMA IF EXISTS " + q(s)
		if name == "postgres" {
			stmt += " CASCADE"
		}
		e.tg.DB.ExecContext(e.ctx, stmt)
	}
}

var _ = sql.ErrNoRows
