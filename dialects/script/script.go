// Package script renders a pipeline's programs as scripts the engine runs
// by itself, scheduled by its own tools: a PostgreSQL or Redshift stored
// procedure, a BigQuery multi-statement script, a Snowflake Scripting
// procedure with its task, a Spark SQL job.
//
// A script walks the same ir.Program the runner walks (runner/walk.go)
// and keeps the same protocol around it: it reads the state row, takes the
// lease by compare-and-set (and fails saying who holds it), fixes the window
// once, runs the program's steps (each partition, guards, registers),
// advances the watermark by compare-and-set in the write transaction where
// the engine has one, and records the run in the same run log. A target
// written by scripts and by the runner, in turns, reads the same to incrc
// state, reconcile and backfill.
//
// The statements are the compiled ones, spelled by the dialect and lexed
// back by its rules; a script only binds their parameters to its typed
// variables.
package script

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// File is one script: PIPELINE.<Suffix>.sql next to the compiled file.
type File struct {
	Mode   ir.Mode
	Suffix string // run, full_refresh, backfill
	Data   []byte
}

// Modes are the programs a script is rendered for, in file order.
var Modes = []ir.Mode{ir.ModeRun, ir.ModeFullRefresh, ir.ModeBackfill}

// Supported reports whether the dialect has scripts.
func Supported(d dialects.Dialect) bool { return langOf(d) != nil }

func langOf(d dialects.Dialect) lang {
	switch d.Name() {
	case "postgres":
		return &plpgsql{}
	case "redshift":
		return &plpgsql{redshift: true}
	case "bigquery":
		return &bigquery{}
	case "snowflake":
		return &snowflake{}
	case "spark":
		// Not spark_iceberg: on Spark 4.1.4 with Iceberg 1.11 a script's
		// variables do not resolve in an UPDATE's SET and WHERE nor in a
		// MERGE's conditions (UNRESOLVED_COLUMN), a MERGE condition takes
		// no subquery, and EXECUTE IMMEDIATE leaves its parameters unbound
		// in a compound statement: the runner executes those pipelines.
		return &sparkScript{}
	}
	return nil
}

// ProcName is the name of a pipeline's procedure for a mode:
// incrc_run_PIPELINE, incrc_full_refresh_PIPELINE, incrc_backfill_PIPELINE.
func ProcName(pipeline string, m ir.Mode) string {
	return "incrc_" + string(m) + "_" + pipeline
}

// ErrSourceOutside is Render's error for a pipeline whose source is outside
// its target (source.connection, source.files): a script runs inside the
// target engine and cannot reach another database or a local folder, so
// such a pipeline runs with incrc run, which streams the source in.
var ErrSourceOutside = errors.New("its source is outside the target, which a script running in the target engine cannot reach: run it with incrc run")

// ErrTiebreak is Render's error for a pipeline whose watermark has a
// tiebreak: its window's bounds are a time and an id, and a script keeps
// one value per bound in its state (the runner reads both).
var ErrTiebreak = errors.New("its watermark has a tiebreak, a window bound of a time and an id, which scripts do not keep: run it with incrc run")

// ErrZone is Render's error for a pipeline whose partitions are days or
// months of a time zone: the runner finds each row's partition and its
// bounds in the zone database, which a script running in the engine has
// not (SQLite and MariaDB may hold none).
var ErrZone = errors.New("its partitions are days of a time zone, which the runner computes from the zone database: run it with incrc run")

// ErrDelimiter is Render's error for a script whose body would hold its
// own delimiter (Snowflake's $$, the procedures' $incrc$), from a string
// literal of the spec: the body would end there and the rest run as
// statements of their own, so the pipeline gets no script for that engine.
var ErrDelimiter = errors.New("a statement holds the delimiter of the script's body (a string literal?): no script for this engine; run the pipeline with incrc run")

// Render renders the scripts of one pipeline for one dialect: one per mode
// the plan has. The bytes depend only on the spec and the dialect.
func Render(d dialects.Dialect, p *ir.Plan, specPath string) ([]File, error) {
	l := langOf(d)
	if l == nil {
		if d.Name() == "spark_iceberg" {
			return nil, fmt.Errorf("spark_iceberg has no scripts: a Spark SQL script's variables do not resolve in the UPDATE and MERGE statements of Iceberg tables (Spark 4.1, Iceberg 1.11); the runner executes its pipelines (incrc run)")
		}
		return nil, fmt.Errorf("%s has no scripts: the runner executes its pipelines (incrc run)", d.Name())
	}
	if p.From != nil {
		return nil, fmt.Errorf("pipeline %s: %w", p.Pipeline, ErrSourceOutside)
	}
	if p.Watermark != nil && p.Watermark.Tiebreak != "" {
		return nil, fmt.Errorf("pipeline %s: %w", p.Pipeline, ErrTiebreak)
	}
	if p.Partition != nil && p.Partition.Zone != "" {
		return nil, fmt.Errorf("pipeline %s: %w", p.Pipeline, ErrZone)
	}
	// A language may need the statements spelled its own way (Spark's
	// scripts read every count from the statement's parts).
	sd := d
	if s, ok := l.(interface {
		statements(dialects.Dialect) dialects.Dialect
	}); ok {
		sd = s.statements(d)
	}
	rendered, err := dialects.Render(sd, p)
	if err != nil {
		return nil, err
	}
	stmts := map[string]dialects.Rendered{}
	types := map[string]ir.ParamType{}
	for _, r := range rendered {
		stmts[r.Name] = r
		for _, pa := range r.Params {
			types[pa.Name] = pa.Type
		}
	}
	specPath = strings.NewReplacer("\n", " ", "\r", " ").Replace(specPath)
	var out []File
	for _, m := range Modes {
		pr := p.Program(m)
		if pr == nil {
			continue
		}
		g := &gen{d: d, p: p, pr: pr, stmts: stmts, types: types, l: l, spec: specPath}
		if err := g.render(); err != nil {
			return nil, fmt.Errorf("%s: pipeline %s: script %s: %w", d.Name(), p.Pipeline, m, err)
		}
		out = append(out, File{Mode: m, Suffix: string(m), Data: []byte(g.b.String())})
	}
	return out, nil
}

// gen renders one script.
type gen struct {
	d     dialects.Dialect
	p     *ir.Plan
	pr    *ir.Program
	stmts map[string]dialects.Rendered
	types map[string]ir.ParamType
	l     lang
	spec  string
	b     strings.Builder
	depth int
	err   error
}

// lang is one engine's procedural language.
type lang interface {
	render(g *gen)
}

func (g *gen) render() error {
	g.l.render(g)
	return g.err
}

func (g *gen) fail(err error) {
	if g.err == nil {
		g.err = err
	}
}

// line writes one line at the current depth.
func (g *gen) line(format string, args ...any) {
	s := format
	if len(args) > 0 {
		s = fmt.Sprintf(format, args...)
	}
	if s == "" {
		g.b.WriteString("\n")
		return
	}
	g.b.WriteString(strings.Repeat("  ", g.depth) + s + "\n")
}

// raw writes text as it is (a statement's SQL keeps its own layout).
func (g *gen) raw(s string) { g.b.WriteString(s) }

func (g *gen) in()  { g.depth++ }
func (g *gen) out() { g.depth-- }

// parts returns a statement's rendered parts; a name the plan does not
// hold is an error, never a skip.
func (g *gen) parts(name string) []dialects.Part {
	r, ok := g.stmts[name]
	if !ok {
		g.fail(fmt.Errorf("no statement %q", name))
		return nil
	}
	return r.Parts
}

// varName is a register's or parameter's variable: v_ and the name, dots
// as underscores (runs.note -> v_runs_note).
func varName(name string) string {
	return "v_" + strings.NewReplacer(".", "_", "-", "_").Replace(name)
}

// substitute spells a part with each parameter marker replaced by what
// spell returns for its name: the lexer finds the markers, so a marker-like
// text inside a literal, a name or the source query is never touched.
func substitute(d dialects.Dialect, part dialects.Part, spell func(name string) string) (string, error) {
	toks, err := sqllex.LexExact(d.Lexer(), part.SQL)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	prev, n := 0, 0
	for _, t := range toks {
		if t.Kind != sqllex.Param {
			continue
		}
		var name string
		if d.Caps().ReusesParams {
			var k int
			if _, err := fmt.Sscanf(strings.TrimLeft(t.Text, "$:@?"), "%d", &k); err != nil || k < 1 || k > len(part.Params) {
				return "", fmt.Errorf("marker %q is not one of the %d parameters", t.Text, len(part.Params))
			}
			name = part.Params[k-1]
		} else {
			if n >= len(part.Params) {
				return "", fmt.Errorf("more markers than the %d parameters", len(part.Params))
			}
			name = part.Params[n]
		}
		n++
		b.WriteString(part.SQL[prev:t.Off])
		b.WriteString(spell(name))
		prev = t.End()
	}
	if !d.Caps().ReusesParams && n != len(part.Params) {
		return "", fmt.Errorf("%d markers for %d parameters", n, len(part.Params))
	}
	b.WriteString(part.SQL[prev:])
	return b.String(), nil
}

// names lists every register and parameter a script declares, sorted:
// the program's registers and every parameter of the statements it runs.
func (g *gen) names(stmts ...string) []string {
	set := map[string]bool{}
	for _, reg := range ir.Counters {
		set[reg] = true
	}
	steps := g.pr.Steps
	if set := g.p.Program(ir.ModeSetup); set != nil && g.pr.Setup {
		steps = append(append([]ir.Step{}, set.Steps...), steps...)
	}
	for _, s := range steps {
		stmts = append(stmts, s.Stmt)
		for _, r := range s.Into {
			set[strings.TrimPrefix(r, "-")] = true
		}
		for _, t := range s.Guards() {
			set[t.Reg] = true
		}
	}
	stmts = append(stmts, g.pr.Cleanup...)
	if g.p.Watermark != nil && g.p.Watermark.MaxStatement != "" {
		stmts = append(stmts, g.p.Watermark.MaxStatement)
	}
	for _, name := range stmts {
		for _, part := range g.parts(name) {
			for _, pa := range part.Params {
				set[pa] = true
			}
		}
	}
	for n, t := range always {
		if n == "plo" || n == "phi" || n == "partition_key" {
			if g.p.Partition == nil {
				continue
			}
		}
		set[n] = true
		if _, ok := g.types[n]; !ok {
			g.types[n] = t
		}
	}
	out := make([]string, 0, len(set))
	for n := range set {
		if strings.Contains(n, ".") {
			continue // a column probe's registers: the setup adds columns and ignores "exists"
		}
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// always are the variables every script declares, whether a statement
// binds them or not: the protocol around the program sets them.
var always = map[string]ir.ParamType{
	"start": ir.PWatermark, "lo": ir.PWatermark, "hi": ir.PWatermark,
	"plo": ir.PPartition, "phi": ir.PPartition, "partition_key": ir.PText,
	"watermark": ir.PText, "expected": ir.PText, "window_lo": ir.PText, "window_hi": ir.PText,
	"watermark_before": ir.PText, "watermark_after": ir.PText, "updated_at": ir.PText,
	"marker_status": ir.PText, "detail": ir.PText, "backfill_id": ir.PText,
	"now": ir.PText, "finished_at": ir.PText, "expires_at": ir.PText, "started_at": ir.PText,
	"status": ir.PText, "error": ir.PText, "note": ir.PText, "run_id": ir.PText,
	"owner": ir.PText, "pipeline": ir.PText, "spec_hash": ir.PText, "kind": ir.PText,
	ir.RegPartitions: ir.PInt, ir.RegUnpartitioned: ir.PInt, ir.RegWindow: ir.PInt,
	ir.RegWritten: ir.PInt, "duration_ms": ir.PInt,
}

// kindOf is how a script types a parameter or register: "text", "int",
// "wm" (the watermark column's type), "part" (the partition column's).
func (g *gen) kindOf(name string) string {
	switch g.types[name] {
	case ir.PWatermark:
		return "wm"
	case ir.PPartition:
		return "part"
	case ir.PText:
		return "text"
	case ir.PBound:
		return "bound"
	case "":
		// A register no statement binds: a count.
	}
	return "int"
}

// wmType is the type a script holds watermark values in: the watermark
// column's; without a watermark, hi is the run's time, a timestamp.
func (g *gen) wmType() ir.Type {
	if g.p.Watermark == nil {
		return ir.Type{Kind: ir.Timestamp}
	}
	return g.p.Watermark.Type
}

// protocol lists the statements the protocol around a program runs.
var protocol = []string{ir.StmtReadState, ir.StmtInitState, ir.StmtAcquireLease, ir.StmtAbandonRuns,
	ir.StmtReleaseLease, ir.StmtRecordStart, ir.StmtRecordFinish}

// protocol lists the statements a script of this program runs besides
// its steps.
func (g *gen) protocol() []string {
	out := append([]string{}, protocol...)
	if g.pr.Mode == ir.ModeBackfill {
		out = append(out, ir.StmtClearMarkers, ir.StmtReadMarkers, ir.StmtDeleteMarker, ir.StmtInsertMarker)
	}
	return out
}

// mark is a watermark value the compiler fixed (watermark.start), as the
// runner saves it and as a typed literal needs it.
type mark struct {
	text string    // as saved: an integer, a date, or RFC 3339 in UTC
	t    time.Time // a time's value, UTC
	n    string    // an integer's digits
}

func (g *gen) start() mark {
	wm := g.p.Watermark
	if wm == nil {
		return mark{}
	}
	canon, err := ir.ParseWatermark(wm.Type, wm.Start)
	if err != nil {
		g.fail(err)
		return mark{}
	}
	if wm.Type.IsInteger() {
		return mark{text: canon, n: canon}
	}
	t, err := ir.ParseTime(canon)
	if err != nil {
		g.fail(err)
	}
	t = t.UTC()
	if wm.Type.Kind == ir.Date {
		return mark{text: t.Format("2006-01-02"), t: t}
	}
	return mark{text: t.Format(time.RFC3339Nano), t: t}
}

// micros is a duration in microseconds, what every engine's interval
// arithmetic takes exactly.
func micros(d time.Duration) int64 { return d.Microseconds() }

// failParts splits a Fail message around its %d.
func failParts(msg string) (before, after string) {
	before, after, _ = strings.Cut(msg, "%d")
	return before, after
}

// swapMessage is the runner's message for a compare-and-set that changed
// another number of rows than one, around the count.
func (g *gen) swapMessage(stmt string) (before, after string) {
	return fmt.Sprintf("%s: the state of pipeline %s changed under this run, or its lease was lost (", stmt, g.p.Pipeline),
		" rows changed, expected 1): nothing committed"
}

// lockedMessage is the runner's LockedError text around owner and until.
func (g *gen) lockedMessage() (a, b, c string) {
	return "pipeline " + g.p.Pipeline + " is locked by run ", " until ",
		" (wait, or free a dead run's lease with: incrc state --release " + g.p.Pipeline + ")"
}

// duplicateMessage is said when the state table holds two rows of the
// pipeline (an engine that does not enforce its key).
func (g *gen) duplicateMessage() string {
	return "pipeline " + g.p.Pipeline + " has more than one row in incrc_state: two first runs raced on an engine that does not enforce the state table's key; delete all but the row with the latest watermark, then run again"
}

// header writes the script's comment header.
func (g *gen) header(comment string, how []string) {
	c := func(s string) {
		if s == "" {
			g.line("%s", strings.TrimRight(comment, " "))
			return
		}
		g.line("%s", comment+s)
	}
	c(fmt.Sprintf("incrc: pipeline %s, %s script for %s, compiled from %s.", g.p.Pipeline, g.pr.Mode, g.d.Name(), g.spec))
	c("Generated by `incrc compile --scripts`: edit the spec, not this file.")
	c("spec sha256: " + g.p.SpecHash)
	c("")
	for _, l := range g.pr.Listing() {
		c(l)
	}
	c("")
	for _, h := range how {
		c(h)
	}
}
