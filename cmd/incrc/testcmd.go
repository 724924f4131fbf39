package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/runner"
)

func testCmd() *command {
	c := &command{
		name:    "test",
		summary: "Run the pipeline tests (NAME.test.yaml next to the specs): given rows, run windows, expect rows and counts.",
		usage:   "[flags] [PIPELINE|SPEC|DIR...]",
		example: "incrc test                          # every test file in the specs folder, on an embedded DuckDB\nincrc test dw_orders --run lookback  # the tests of one pipeline whose name matches\nincrc test --target postgres://postgres@localhost/test   # on PostgreSQL: each test's schemas are its own, dropped after it",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p       projectFlags
			tf      targetFlags
			match   string
			verbose bool
			output  outputFlags
		)
		fs := c.flags(e)
		tf.register(fs, "run the tests on this database instead of a temporary DuckDB: each test creates schemas of its own there and drops them, and its state rows, after it")
		fs.StringVar(&match, "run", "", "run only the tests whose name matches this regular expression")
		fs.BoolVarP(&verbose, "verbose", "v", false, "print every test, passed ones too")
		output.register(fs)
		p.register(fs)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		format, ok := output.resolve(c, e)
		if !ok {
			return exitError
		}
		var filter *regexp.Regexp
		if match != "" {
			var err error
			if filter, err = regexp.Compile(match); err != nil {
				return c.fail(e, "--run: %v", err)
			}
		}
		// A test file named on the command line is run alone, with the
		// specs of its folder (unless --specs says where they are).
		var rest, named []string
		for _, a := range fs.Args() {
			if compiler.IsTestFile(a) {
				named = append(named, a)
			} else {
				rest = append(rest, a)
			}
		}
		if len(named) > 0 && len(p.specs) == 0 && len(specPaths(rest)) == 0 {
			for _, f := range named {
				if d := filepath.Dir(f); !slices.Contains(p.specs, d) {
					p.specs = append(p.specs, d)
				}
			}
		}
		pr, ok := p.load(e, c, rest)
		if !ok {
			return exitError
		}
		// The test files: next to the specs that were read.
		paths := specPaths(rest)
		paths = append(paths, p.specs...)
		if len(paths) == 0 {
			paths = []string{pr.cfg.Specs}
		}
		var dirs []string
		for _, path := range paths {
			if info, err := os.Stat(path); err == nil && !info.IsDir() && !compiler.IsTestFile(path) {
				path = filepath.Dir(path)
			}
			dirs = append(dirs, path)
		}
		files, err := compiler.TestFiles(dirs)
		if err != nil {
			return c.fail(e, "%v", err)
		}
		if len(named) > 0 {
			files = named
		}
		chosen := map[string]*compiler.Spec{}
		for _, s := range pr.chosen {
			chosen[s.Pipeline.Value] = s
		}
		var suites []*testFile
		for _, f := range files {
			tfile, err := loadTestFile(f, pr.roots)
			if err != nil {
				fmt.Fprintln(e.stderr, err)
				return exitError
			}
			if chosen[tfile.Pipeline] == nil {
				if !pr.named {
					return c.fail(e, "%s: pipeline %q is not a spec of the project", f, tfile.Pipeline)
				}
				continue
			}
			suites = append(suites, tfile)
		}
		if len(suites) == 0 {
			return c.fail(e, "no tests (NAME.test.yaml) for the chosen pipelines in %s; incrc init writes an example", strings.Join(dirs, ", "))
		}
		tf.log = e.stderr
		t := &tester{ctx: ctx, e: e, cfg: pr.cfg, tf: tf, all: pr.all}
		var results []testResult
		for _, s := range suites {
			for _, tc := range s.Tests {
				if filter != nil && !filter.MatchString(tc.Name) {
					continue
				}
				r := t.run(s, tc, chosen[s.Pipeline])
				results = append(results, r)
				// Each result as it finishes; the JSON lists them all in
				// testView.
				show(e.stdout, format, testResultView{r: r, verbose: verbose})
			}
		}
		v := newTestView(results)
		show(e.stdout, format, v)
		if v.failed > 0 || len(results) == 0 {
			return exitError
		}
		return exitOK
	}
	return c
}

// testView is the end of what incrc test prints: the count of tests
// passed and failed (as text each result was printed as it finished),
// with --json every result.
type testView struct {
	passed, failed int
	results        []testResult
}

func newTestView(results []testResult) testView {
	v := testView{results: results}
	for _, r := range results {
		if r.Passed {
			v.passed++
		} else {
			v.failed++
		}
	}
	return v
}

func (v testView) indent() string { return "  " }

func (v testView) json() any {
	return map[string]any{"passed": v.passed, "failed": v.failed, "tests": v.results}
}

func (v testView) text(w io.Writer) {
	fmt.Fprintf(w, "%d passed, %d failed\n", v.passed, v.failed)
}

// testResult is one test's outcome.
type testResult struct {
	Pipeline string   `json:"pipeline"`
	Name     string   `json:"name"`
	File     string   `json:"file"`
	Passed   bool     `json:"passed"`
	Failures []string `json:"failures,omitempty"`
	Ms       int64    `json:"duration_ms"`
}

// testResultView is one test's outcome, printed as it finishes: a
// failure with what differed; a pass only with --verbose.
type testResultView struct {
	r       testResult
	verbose bool
}

func (v testResultView) json() any { return nil }

func (v testResultView) text(w io.Writer) {
	r := v.r
	if r.Passed {
		if v.verbose {
			fmt.Fprintf(w, "ok    %s: %s (%s)\n", r.Pipeline, r.Name, r.File)
		}
		return
	}
	fmt.Fprintf(w, "FAIL  %s: %s (%s)\n", r.Pipeline, r.Name, r.File)
	for _, f := range r.Failures {
		fmt.Fprintf(w, "%s\n", indentBy(f, "      "))
	}
}

func indentBy(s, prefix string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = prefix + lines[i]
	}
	return strings.Join(lines, "\n")
}

// tester runs tests: each on a database of its own (a temporary DuckDB),
// or, with --target, in schemas of its own that it drops afterwards.
type tester struct {
	ctx context.Context
	e   *env
	cfg *compiler.Config
	tf  targetFlags
	all []*compiler.Spec
	seq int
}

// testFailure ends a test: what went wrong, already worded.
type testFailure struct{ msg string }

func (t *tester) run(file *testFile, tc testCase, spec *compiler.Spec) (res testResult) {
	start := time.Now()
	res = testResult{Pipeline: file.Pipeline, Name: tc.Name, File: fmt.Sprintf("%s:%d", file.path, tc.line)}
	tt := &testRun{t: t, tc: tc, res: &res}
	defer func() {
		res.Ms = time.Since(start).Milliseconds()
		res.Passed = len(res.Failures) == 0
	}()
	defer func() {
		if v := recover(); v != nil {
			f, ok := v.(testFailure)
			if !ok {
				panic(v)
			}
			res.Failures = append(res.Failures, f.msg)
		}
	}()
	defer tt.cleanup()
	tt.open(spec)
	tt.given()
	for i, r := range tc.Runs {
		tt.step(i, r)
	}
	if tc.Expect != nil {
		tt.expectRows("after the last run", *tc.Expect)
	}
	return res
}

// testRun is one test in progress.
type testRun struct {
	t      *tester
	tc     testCase
	res    *testResult
	tg     *runner.Target
	plan   *ir.Plan
	dir    string            // the temporary database's folder
	rename map[string]string // schema as written -> the test's own (with --target)
	// On a server target: admin is the target as given, where the test
	// creates its schemas (own: the home schema first, then the renamed
	// ones) and drops them, and nothing else; tg is the same server with
	// the home schema as where every name without a schema resolves.
	admin   *runner.Target
	own     []string
	source  ir.Table
	srcCols []ir.Col
}

func (r *testRun) fatalf(format string, args ...any) {
	panic(testFailure{fmt.Sprintf(format, args...)})
}

func (r *testRun) errorf(format string, args ...any) {
	r.res.Failures = append(r.res.Failures, fmt.Sprintf(format, args...))
}

// open opens the test's database and lowers the spec. Without --target,
// and on an embedded engine's --target, the database is a new file in a
// temporary folder (the file --target names is not touched); on a server,
// the test creates schemas of its own (isolate) and nothing it runs
// resolves a name outside them.
func (r *testRun) open(spec *compiler.Spec) {
	t := r.t
	t.seq++
	for name := range r.tc.Given.Tables {
		if reservedName(name) {
			r.fatalf("given.tables.%s: a fixture may not be named like incrc's own tables (incrc_...): the test would replace what incrc keeps there", name)
		}
	}
	url := t.tf.target
	if url != "" && !strings.Contains(url, ":") {
		named, err := t.cfg.Target(url)
		if err != nil {
			r.fatalf("--target %s: %v", url, err)
		}
		url = named
	}
	s := *spec
	embedded := url == ""
	if d, ok := ir.DialectOfURL(url); ok && (d == "duckdb" || d == "sqlite") {
		embedded = true
	}
	if embedded {
		dir, err := os.MkdirTemp("", "incrc-test-")
		if err != nil {
			r.fatalf("%v", err)
		}
		r.dir = dir
		if d, _ := ir.DialectOfURL(url); d == "sqlite" {
			url = "sqlite:" + filepath.Join(dir, "test.db")
		} else {
			url = "duckdb:" + filepath.Join(dir, "test.duckdb")
		}
	} else {
		url = r.isolate(&s, url)
	}
	plan, err := compiler.Lower(&s)
	if err != nil {
		r.fatalf("%v", err)
	}
	// A test gives the rows of the tables its pipeline reads, an upstream
	// pipeline's target too: no upstream runs here to hold its hi back.
	plan.Upstream = nil
	r.plan = plan
	tf := t.tf
	tf.target = url
	tg, err := openTarget(t.ctx, t.cfg, tf, "")
	if err != nil {
		r.fatalf("%v", r.unrename(err.Error()))
	}
	r.tg = tg
}

// reservedName: a table named like incrc's own (incrc_state, incrc_runs,
// a staging table), with or without a schema.
func reservedName(table string) bool {
	last := table[strings.LastIndexByte(table, '.')+1:]
	return strings.HasPrefix(strings.ToLower(strings.Trim(last, "`\"")), "incrc_")
}

var testIDs = 0

// isolate gives the test a home schema and schemas and a pipeline name of
// its own on the server url, and returns the URL its runs use: each schema
// the spec names gets a suffix (in its tables and its query), and every
// name without one (a table, incrc's state tables) resolves in the home
// schema: PostgreSQL's search_path, MariaDB's database. The schemas are
// created here, each by a CREATE that fails if it is there: the test
// drops only what it made.
func (r *testRun) isolate(s *compiler.Spec, url string) string {
	testIDs++
	id := fmt.Sprintf("t%d_%d_%d", time.Now().UnixNano()%1e9, os.Getpid()%1e4, testIDs)
	r.rename = map[string]string{}
	schemaOf := func(table string) {
		if i := strings.IndexByte(table, '.'); i > 0 {
			r.rename[table[:i]] = table[:i] + "_" + id
		}
	}
	schemaOf(s.Source.Table.Value)
	schemaOf(s.Target.Table.Value)
	for _, l := range s.Lookups {
		schemaOf(l.Table.Value)
	}
	for name := range r.tc.Given.Tables {
		schemaOf(name)
	}
	s.Source.Table.Value = r.renamed(s.Source.Table.Value)
	s.Target.Table.Value = r.renamed(s.Target.Table.Value)
	s.Lookups = slices.Clone(s.Lookups)
	for i := range s.Lookups {
		s.Lookups[i].Table.Value = r.renamed(s.Lookups[i].Table.Value)
	}
	if q := s.Source.Query.Value; q != "" {
		for from, to := range r.rename {
			q = regexp.MustCompile(`(?i)\b`+regexp.QuoteMeta(from)+`\.`).ReplaceAllString(q, to+".")
		}
		s.Source.Query.Value = q
	}
	name := s.Pipeline.Value
	if max := compiler.MaxPipelineLen - len(id) - 1; len(name) > max {
		name = name[:max]
	}
	s.Pipeline.Value = name + "_" + id

	home := "incrc_test_" + id
	tf := r.t.tf
	tf.target = url
	admin, err := openTarget(r.t.ctx, r.t.cfg, tf, "")
	if err != nil {
		r.fatalf("%v", err)
	}
	r.admin = admin
	schemas := []string{home}
	for _, to := range r.rename {
		schemas = append(schemas, to)
	}
	sort.Strings(schemas[1:])
	for _, sc := range schemas {
		if err := admin.CreateOwnSchema(r.t.ctx, sc); err != nil {
			r.fatalf("create the test's schema %s: %v", sc, err)
		}
		r.own = append(r.own, sc)
	}
	homeURL, err := runner.InSchema(url, home)
	if err != nil {
		r.fatalf("--target: %v", err)
	}
	return homeURL
}

// renamed is a table name as the test's schemas name it.
func (r *testRun) renamed(table string) string {
	if i := strings.IndexByte(table, '.'); i > 0 && r.rename[table[:i]] != "" {
		return r.rename[table[:i]] + table[i:]
	}
	return table
}

func (r *testRun) table(name string) ir.Table {
	return ir.Table{Parts: strings.Split(r.renamed(name), ".")}
}

// cleanup drops what the test created: its temporary database, or the
// schemas it created on a server (the state tables of its runs are in
// its home schema), and nothing else.
func (r *testRun) cleanup() {
	ctx := context.WithoutCancel(r.t.ctx)
	if r.tg != nil {
		r.tg.Close()
	}
	if r.admin != nil {
		for i := len(r.own) - 1; i >= 0; i-- {
			if err := r.admin.DropSchema(ctx, r.own[i]); err != nil {
				r.errorf("cleanup: drop the test's schema %s: %v", r.own[i], err)
			}
		}
		r.admin.Close()
	}
	if r.dir != "" {
		os.RemoveAll(r.dir)
	}
}

// given creates the source, the other tables and the target, and sets
// the saved watermark.
func (r *testRun) given() {
	g := r.tc.Given
	p := r.plan
	names := make([]string, 0, len(g.Tables))
	for n := range g.Tables {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		tb := g.Tables[name]
		var cols []ir.Col
		var colNames []string
		for c := range tb.Columns {
			colNames = append(colNames, c)
		}
		sort.Strings(colNames)
		for _, c := range colNames {
			typ, err := ir.ParseType(tb.Columns[c])
			if err != nil {
				r.fatalf("given.tables.%s.columns.%s: %v", name, c, err)
			}
			cols = append(cols, ir.Col{Name: c, Type: typ})
		}
		r.create(r.table(name), cols)
		r.insert("given.tables."+name, r.table(name), cols, tb.Rows)
	}
	if p.Source.Query == "" {
		r.source = p.Source.Table
		r.srcCols = sourceColumns(p)
		if _, exists := g.Tables[strings.Join(p.Source.Table.Parts, ".")]; !exists {
			r.create(r.source, r.srcCols)
		}
		r.insert("given.source", r.source, r.srcCols, g.Source)
	} else if len(g.Source) > 0 {
		r.fatalf("given.source: the pipeline reads a source.query: give the tables it reads under given.tables (with their columns)")
	}
	if len(g.Target) > 0 {
		for _, name := range []string{ir.StmtCreateSchema, ir.StmtCreateTarget} {
			if st := p.Statement(name); st != nil {
				if err := r.tg.ExecOp(r.t.ctx, st.Op, nil); err != nil {
					r.fatalf("given.target: %s: %v", name, err)
				}
			}
		}
		ct := p.Statement(ir.StmtCreateTarget).Op.(ir.CreateTable)
		r.insert("given.target", p.Target, ct.Columns, g.Target)
	}
	if g.Watermark != "" {
		if err := r.tg.SetWatermark(r.t.ctx, p, g.Watermark); err != nil {
			r.fatalf("given.watermark: %v", err)
		}
	}
}

func (r *testRun) create(t ir.Table, cols []ir.Col) {
	if s := t.Schema(); s != nil {
		if err := r.tg.ExecOp(r.t.ctx, ir.CreateSchema{Schema: s}, nil); err != nil {
			r.fatalf("create schema %s: %v", strings.Join(s, "."), err)
		}
	}
	if err := r.tg.ExecOp(r.t.ctx, ir.CreateTable{Table: t, Columns: cols}, nil); err != nil {
		r.fatalf("create %s: %v", strings.Join(t.Parts, "."), err)
	}
}

// insert adds rows to a table; a row names columns of cols (the others
// are NULL).
func (r *testRun) insert(what string, t ir.Table, cols []ir.Col, rows []testRow) {
	if err := insertRows(r.t.ctx, r.tg, what, t, cols, rows); err != nil {
		r.fatalf("%s", r.unrename(err.Error()))
	}
}

// insertRows adds rows written in YAML to a table: incrc test's fixtures
// and incrc seed's rows. what names the rows in errors.
func insertRows(ctx context.Context, tg *runner.Target, what string, t ir.Table, cols []ir.Col, rows []testRow) error {
	for i, row := range rows {
		var names []string
		var exprs []ir.Expr
		vals := map[string]any{}
		for c := range row {
			if !slices.ContainsFunc(cols, func(x ir.Col) bool { return x.Name == c }) {
				return fmt.Errorf("%s row %d: no column %q (the table has %s)", what, i+1, c, colList(cols))
			}
		}
		for _, c := range cols {
			n, ok := row[c.Name]
			if !ok {
				continue
			}
			v, err := bindValue(n, c.Type, tg.BindTime)
			if err != nil {
				return fmt.Errorf("%s row %d, column %s: %v", what, i+1, c.Name, err)
			}
			param := fmt.Sprintf("v%d", len(names))
			names = append(names, c.Name)
			exprs = append(exprs, ir.ParamRef{Name: param})
			vals[param] = v
		}
		if err := tg.ExecOp(ctx, ir.InsertValues{Table: t, Columns: names, Values: exprs}, vals); err != nil {
			return fmt.Errorf("%s row %d: %v", what, i+1, err)
		}
	}
	return nil
}

// sourceColumns are the columns of a pipeline's source table: the
// declared ones but those its lookups fill, none NOT NULL (a test or a
// seed may hold the NULL keys the pipeline must refuse).
func sourceColumns(p *ir.Plan) []ir.Col {
	filled := map[string]bool{}
	for _, l := range p.Source.Lookups {
		for _, c := range l.Columns {
			filled[c.Source] = true
		}
	}
	var out []ir.Col
	for _, c := range p.Columns {
		if !filled[c.Name] {
			c.NotNull = false
			out = append(out, c)
		}
	}
	return out
}

func colList(cols []ir.Col) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// deleteKeys deletes the source rows that have the unique_key of rows.
func (r *testRun) deleteKeys(what string, rows []testRow) {
	key := r.plan.Key
	if len(rows) == 0 {
		return
	}
	if len(key) == 0 {
		r.fatalf("%s: the pipeline has no unique_key to find the source rows by", what)
	}
	for i, row := range rows {
		var where ir.Expr
		vals := map[string]any{}
		for j, k := range key {
			n, ok := row[k]
			if !ok {
				r.fatalf("%s row %d: the key column %s is missing", what, i+1, k)
			}
			var typ ir.Type
			for _, c := range r.srcCols {
				if c.Name == k {
					typ = c.Type
				}
			}
			v, err := bindValue(n, typ, r.tg.BindTime)
			if err != nil {
				r.fatalf("%s row %d, column %s: %v", what, i+1, k, err)
			}
			param := fmt.Sprintf("k%d", j)
			vals[param] = v
			eq := ir.Binary{Op: "=", L: ir.ColRef{Name: k}, R: ir.ParamRef{Name: param}}
			if where == nil {
				where = eq
			} else {
				where = ir.Binary{Op: "AND", L: where, R: eq}
			}
		}
		if err := r.tg.ExecOp(r.t.ctx, ir.DeleteRows{Table: r.source, Where: where}, vals); err != nil {
			r.fatalf("%s row %d: %v", what, i+1, err)
		}
	}
}

// step changes the source, runs one window and checks what the run says.
func (r *testRun) step(i int, run testStep) {
	what := fmt.Sprintf("run %d", i+1)
	if run.Until != "" {
		what += " (until " + run.Until + ")"
	}
	if len(run.Insert)+len(run.Update)+len(run.Delete) > 0 && r.source.Parts == nil {
		r.fatalf("%s: insert, update and delete change the source table, and the pipeline reads a source.query", what)
	}
	r.deleteKeys(what+": update", run.Update)
	r.deleteKeys(what+": delete", run.Delete)
	r.insert(what+": insert", r.source, r.srcCols, run.Insert)
	r.insert(what+": update", r.source, r.srcCols, run.Update)
	opts := runner.Options{FullRefresh: run.FullRefresh, Force: run.Force, AllowFuture: true}
	if run.Until != "" {
		u, err := runner.ParseUntil(run.Until)
		if err != nil {
			r.fatalf("%s: %v", what, err)
		}
		opts.Until = &u
	}
	res, err := r.tg.Run(r.t.ctx, r.plan, opts)
	exp := testExpect{}
	if run.Expect != nil {
		exp = *run.Expect
	}
	switch {
	case exp.Fails != "" && err == nil:
		r.fatalf("%s: succeeded, want it to fail with %q", what, exp.Fails)
	case exp.Fails != "" && !strings.Contains(err.Error(), exp.Fails):
		r.fatalf("%s: failed with %v\n  want an error containing %q", what, r.unrename(err.Error()), exp.Fails)
	case exp.Fails == "" && err != nil:
		r.fatalf("%s: failed: %s", what, r.unrename(err.Error()))
	}
	if res != nil && err == nil {
		var diffs []string
		check := func(name string, want *int64, got int64) {
			if want != nil && *want != got {
				diffs = append(diffs, fmt.Sprintf("%s %d, want %d", name, got, *want))
			}
		}
		check("read", exp.Read, res.RowsRead)
		check("inserted", exp.Inserted, res.RowsInserted)
		check("updated", exp.Updated, res.RowsUpdated)
		check("deleted", exp.Deleted, res.RowsDeleted)
		check("quarantined", exp.Quarantined, res.RowsQuarantined)
		check("skipped", exp.Skipped, res.RowsSkipped)
		check("ignored", exp.Ignored, res.RowsIgnored)
		if exp.Watermark != "" && res.WatermarkAfter != exp.Watermark {
			diffs = append(diffs, fmt.Sprintf("watermark %s, want %s", res.WatermarkAfter, exp.Watermark))
		}
		if len(diffs) > 0 {
			r.errorf("%s, window [%s, %s): %s", what, orWord(res.WindowLo, "-inf"), res.WindowHi, strings.Join(diffs, "; "))
		}
	}
	r.expectRows("after "+what, exp)
}

// unrename spells the test's own schemas as the spec does, in a message.
func (r *testRun) unrename(msg string) string {
	for from, to := range r.rename {
		msg = strings.ReplaceAll(msg, to, from)
	}
	return msg
}

// expectRows compares the target's and the quarantine's rows with what a
// test expects: the columns the expected rows name, in any order.
func (r *testRun) expectRows(when string, exp testExpect) {
	p := r.plan
	if exp.Target != nil {
		r.compare(when, "target", p.Target, *exp.Target)
	}
	if exp.Quarantine != nil {
		if p.Quarantine.IsZero() {
			r.errorf("%s: expect.quarantine: the pipeline has no quarantine (quality: on_invalid: quarantine)", when)
			return
		}
		r.compare(when, "quarantine", p.Quarantine, *exp.Quarantine)
	}
}

func (r *testRun) compare(when, what string, t ir.Table, want []testRow) {
	order := append([]string{"incrc_reason"}, colNames(r.plan.Columns)...)
	cols, err := rowColumns(want, order)
	if err != nil {
		r.errorf("%s: expect.%s: %v", when, what, err)
		return
	}
	var wantLines []string
	for _, row := range want {
		var cells []string
		for _, c := range cols {
			v, null := cellText(row[c])
			cell := "NULL"
			if !null {
				cell = canonFor(r.colType(c), runner.Canon(v))
			}
			cells = append(cells, c+"="+cell)
		}
		wantLines = append(wantLines, strings.Join(cells, ", "))
	}
	var gotLines []string
	if len(cols) > 0 || len(want) == 0 {
		read := cols
		if len(read) == 0 {
			read = []string{colNames(r.plan.Columns)[0]}
		}
		rows, err := r.tg.QueryOp(r.t.ctx, ir.SelectRows{Table: t, Columns: read}, nil)
		if err != nil {
			r.errorf("%s: read the %s: %s", when, what, r.unrename(err.Error()))
			return
		}
		for _, row := range rows {
			var cells []string
			for i, c := range read {
				cells = append(cells, c+"="+canonFor(r.colType(c), row[i]))
			}
			gotLines = append(gotLines, strings.Join(cells, ", "))
		}
	}
	if diff := rowDiff(wantLines, gotLines); diff != "" {
		r.errorf("%s: %s rows differ (-want +got):\n%s", when, what, diff)
	}
}

// rowDiff is a diff of two sets of rows, in row order: each row of both
// once, "-" for a row that is only expected, "+" for one that is only
// there. Empty when they are equal.
func rowDiff(want, got []string) string {
	want, got = slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(got))
	if slices.Equal(want, got) { // nil and empty alike
		return ""
	}
	var b strings.Builder
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || i < len(want) && want[i] < got[j]:
			fmt.Fprintf(&b, "- %s\n", want[i])
			i++
		case i == len(want) || got[j] < want[i]:
			fmt.Fprintf(&b, "+ %s\n", got[j])
			j++
		default:
			fmt.Fprintf(&b, "  %s\n", want[i])
			i, j = i+1, j+1
		}
	}
	return strings.TrimRight(b.String(), "\n")
}

func colNames(cols []ir.Col) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// colType is the type of a target column the test names.
func (r *testRun) colType(name string) ir.Type {
	for _, c := range r.plan.Columns {
		if c.Name == name {
			return c.Type
		}
	}
	return ir.Type{Kind: ir.Text}
}

// canonFor spells a canonical value as a column of type t means it: a
// boolean read as 1 or 0 (MariaDB, SQLite) is true or false.
func canonFor(t ir.Type, v string) string {
	if t.Kind == ir.Boolean {
		switch strings.ToLower(v) {
		case "1", "true", "t":
			return "true"
		case "0", "false", "f":
			return "false"
		}
	}
	return v
}
