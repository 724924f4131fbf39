package script

import (
	"errors"
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects"
)

// proc is an engine's procedural language, word by word: the flow below
// (the runner's protocol around a program, and the program's steps) is
// written once with these words.
type proc interface {
	// Types and literals.
	typ(t ir.Type) string
	text() string
	lit(s string) string

	// Expressions. Times are naive UTC timestamps unless said otherwise.
	clock() string                        // now
	stateTime(ts string) string           // as the state tables store a time
	rfc3339(ts string) string             // as the runner saves a watermark
	utc(v string, t ir.Type) string       // a value of type t as a UTC timestamp
	fromUTC(ts string, t ir.Type) string  // a UTC timestamp as a value of type t
	addMicros(ts string, us int64) string // ts + us microseconds (negative: minus)
	addSeconds(ts, n string) string       // ts + n seconds, n an integer expression
	millisSince(ts string) string         // milliseconds from ts to now, an integer
	addUnit(ts, g string) string          // ts + one hour, day or month
	trunc(ts, g string) string            // the start of ts's hour, day or month
	format(ts, layout string) string      // ts as text, a strftime-like layout (%Y %m %d %H %M %S)
	parseMark(v string, t ir.Type) string // saved text as a value of type t
	startLit(st mark, t ir.Type) string   // watermark.start as a typed literal
	concat(parts ...string) string        // text concatenation
	str(e string) string                  // any value as text
	field(rec, name string) string        // a column of a loop's row
	contains(hay, needle string) string   // true when needle is in hay
	sha16(e string) string                // the first 16 hex digits of sha256(e)
	random8() string                      // 8 random hex digits
	sessionID() string                    // who the script runs as, for the owner

	// Statements.
	declare(g *gen, name, typ string)
	set(g *gen, v, e string)
	ifOpen(g *gen, cond string)
	elseIf(g *gen, cond string)
	elseOpen(g *gen)
	endIf(g *gen)
	whileOpen(g *gen, cond string)
	whileClose(g *gen)
	exec(g *gen, part dialects.Part, acc string) // acc: add the rows changed to it
	into(g *gen, part dialects.Part, v string)   // the first column of the first row into v
	loopRows(g *gen, part dialects.Part, wrap func(string) string, rec string, body func())
	partsReset(g *gen)
	partsAdd(g *gen, ts string)
	partsCount(g *gen, v string)
	eachOpen(g *gen) // over the partition list, x_part set
	eachClose(g *gen)
	raise(g *gen, pieces ...string) // text, expression, text, ...
	reraise(g *gen, v string)       // fail with the message in v
	commit(g *gen)                  // between the protocol's steps, where the engine needs it
	txBegin(g *gen)                 // the write transaction, where the script opens one
	transactional() bool            // whether a partition's write and marker commit together
	txCommit(g *gen)
	tryOpen(g *gen)
	catchOpen(g *gen) // sets x_error_text: the failure's message, the step's name before a server error
	tryClose(g *gen)
	ignoreErrors(g *gen, body func())

	// The script's frame.
	open(g *gen, params []param)
	begin(g *gen) // after the declarations
	close(g *gen)
	how(g *gen) []string // the header's lines on calling and scheduling it
}

// param is one of a script's inputs.
type param struct {
	name, typ, def, doc string
}

// flow renders one script with a procedural language.
type flow struct {
	p proc
}

func (f *flow) render(g *gen) {
	if g.pr.Mode == ir.ModeBackfill {
		f.backfill(g)
		return
	}
	l := f.p
	g.header("-- ", l.how(g))
	l.open(g, []param{
		{"p_until", l.typ(ir.Type{Kind: ir.TimestampTZ}), "NULL", "--until; NULL: now minus the lag"},
		{"p_owner", l.text(), "NULL", "who holds the lease; NULL: this session"},
		{"p_lease_seconds", "BIGINT", "300", "how long the lease lasts: it must outlast the run"},
	})
	f.declare(g, nil)
	l.begin(g)
	f.prologue(g)
	f.setup(g)
	f.acquire(g)
	f.fixWindow(g)
	// The run's record commits before any data moves, as the runner's
	// first step does: a failure closes it.
	steps := g.pr.Steps
	for len(steps) > 0 && steps[0].Stmt == ir.StmtRecordStart && !steps[0].Tx {
		f.step(g, steps[0])
		steps = steps[1:]
	}
	l.commit(g)
	g.line("")
	g.line("-- The program's steps; a failure rolls the write back and records the run as failed.")
	l.tryOpen(g)
	f.steps(g, steps)
	l.catchOpen(g)
	f.failed(g)
	l.tryClose(g)
	f.finish(g)
	l.close(g)
}

// declare lists the variables: every parameter and register of the
// program's statements, typed, and the script's own (x_...).
func (f *flow) declare(g *gen, extra [][2]string) {
	l := f.p
	wm := l.typ(g.wmType())
	var part string
	if g.p.Partition != nil {
		part = l.typ(g.p.Partition.Type)
	}
	for _, n := range g.names(g.protocol()...) {
		var t string
		switch g.kindOf(n) {
		case "text":
			t = l.text()
		case "wm", "bound":
			t = wm
		case "part":
			if part == "" {
				continue
			}
			t = part
		default:
			t = "BIGINT"
		}
		l.declare(g, varName(n), t)
	}
	ts := l.typ(ir.Type{Kind: ir.Timestamp})
	for _, d := range [][2]string{
		{"x_clock", ts}, {"x_until", ts}, {"x_n", "BIGINT"}, {"x_rows", "BIGINT"}, {"x_step", l.text()},
		{"x_holder", l.text()}, {"x_holder_until", l.text()}, {"x_saved", l.text()}, {"x_saved_mark", wm},
		{"x_hi", ts}, {"x_final", ts}, {"x_part", ts}, {"x_source", l.text()}, {"x_target", l.text()},
		{"x_error_text", l.text()}, {"x_failed", "BIGINT"},
	} {
		l.declare(g, d[0], d[1])
	}
	for _, d := range extra {
		l.declare(g, d[0], d[1])
	}
}

func (f *flow) zero(g *gen) {
	for _, n := range g.names(g.protocol()...) {
		if g.kindOf(n) == "int" {
			f.p.set(g, varName(n), "0")
		}
	}
	f.p.set(g, "x_failed", "0")
}

// prologue fixes the run's constants.
func (f *flow) prologue(g *gen) {
	l, p := f.p, g.p
	f.zero(g)
	l.set(g, "x_clock", l.clock())
	if g.pr.Mode != ir.ModeBackfill {
		l.set(g, "x_until", l.utc("p_until", ir.Type{Kind: ir.TimestampTZ}))
	}
	l.set(g, "v_pipeline", l.lit(p.Pipeline))
	l.set(g, "v_spec_hash", l.lit(p.SpecHash))
	kind := g.pr.Record
	if g.pr.Mode == ir.ModeBackfill {
		kind = "backfill"
	}
	l.set(g, "v_kind", l.lit(kind))
	l.set(g, "v_owner", "COALESCE(p_owner, "+l.concat(l.lit("script:"), l.sessionID(), l.lit(":"), l.random8())+")")
	l.set(g, "v_run_id", l.concat(l.format("x_clock", "%Y%m%dT%H%M%SZ"), l.lit("-"), l.random8()))
	l.set(g, "v_status", l.lit("succeeded"))
	l.set(g, "v_started_at", l.stateTime("x_clock"))
}

// tick sets the clock values a statement may bind: now, finished_at,
// duration_ms, as the runner does before each step.
func (f *flow) tick(g *gen) {
	l := f.p
	l.set(g, "v_now", l.stateTime(l.clock()))
	l.set(g, "v_finished_at", "v_now")
	l.set(g, "v_updated_at", "v_now")
	l.set(g, "v_duration_ms", l.millisSince("x_clock"))
}

// setup runs the setup program: idempotent DDL; a column probe's guarded
// additions run with their errors ignored (the column is there already);
// any other read or guard as in the program's steps.
func (f *flow) setup(g *gen) {
	l := f.p
	set := g.p.Program(ir.ModeSetup)
	if set == nil || !g.pr.Setup {
		return
	}
	g.line("-- setup: idempotent DDL, as the runner runs it before every program; a column a run log")
	g.line("-- already has fails to be added again, and that failure is ignored.")
	for _, s := range set.Steps {
		switch {
		case s.Read == ir.ReadColumns:
			continue
		case s.Read == ir.ReadSchema:
			// Schema changes are the runner's (incrc run adds and widens
			// columns, incrc migrate the rest): a script writes into the
			// tables as they are, and a column they lack fails its write.
			continue
		case columnGuarded(set, s):
			l.ignoreErrors(g, func() { f.exec(g, s.Stmt, "") })
		case s.Read != ir.ReadNothing || s.If != "":
			f.step(g, s)
		default:
			f.exec(g, s.Stmt, "")
		}
	}
	l.commit(g)
	g.line("")
}

// columnGuarded: the step runs only when a column probe of the setup
// (a ReadColumns step, which a script does not read) found no column: an
// addition a script runs with its error ignored.
func columnGuarded(set *ir.Program, s ir.Step) bool {
	for _, g := range s.Guards() {
		for _, p := range set.Steps {
			if p.Read == ir.ReadColumns && len(p.Into) > 0 && strings.HasPrefix(g.Reg, p.Into[0]) {
				return true
			}
		}
	}
	return false
}

// ErrUncounted is Render's error for a step whose count a script needs
// but whose statement does not read it in its own parts, where the
// script's language cannot read how many rows a statement changed.
var ErrUncounted = errors.New("the script needs the rows it changed, which its engine's scripts cannot read and the statement does not count: run the pipeline with incrc run")

func (f *flow) exec(g *gen, name, acc string) {
	parts := g.parts(name)
	if c, ok := f.p.(interface{ countsByParts() bool }); ok && c.countsByParts() && acc != "" && !readsOwnCount(parts) {
		g.fail(fmt.Errorf("step %s: %w", name, ErrUncounted))
	}
	for _, part := range parts {
		f.p.exec(g, part, acc)
	}
}

func (f *flow) guarded(g *gen, s ir.Step, body func()) {
	l := f.p
	gs := s.Guards()
	if len(gs) == 0 {
		body()
		return
	}
	terms := make([]string, len(gs))
	for i, t := range gs {
		terms[i] = varName(t.Reg) + " <> 0"
		if t.Not {
			terms[i] = varName(t.Reg) + " = 0"
		}
	}
	l.ifOpen(g, strings.Join(terms, " AND "))
	body()
	l.endIf(g)
}

// readState reads the state row, counting the rows.
func (f *flow) readState(g *gen) {
	l := f.p
	l.set(g, "x_rows", "0")
	parts := g.parts(ir.StmtReadState)
	if len(parts) != 1 {
		g.fail(fmt.Errorf("read_state has %d parts", len(parts)))
		return
	}
	l.loopRows(g, parts[0], func(inner string) string { return inner }, "x_rec", func() {
		l.set(g, "x_rows", "x_rows + 1")
		l.set(g, "x_saved", l.field("x_rec", "watermark"))
		l.set(g, "x_holder", l.field("x_rec", "lease_owner"))
		l.set(g, "x_holder_until", l.field("x_rec", "lease_expires_at"))
	})
	l.ifOpen(g, "x_rows > 1")
	l.raise(g, g.duplicateMessage())
	l.endIf(g)
}

// acquire takes the lease as the runner does: read the state, fail at
// once when another holds it, create the row, compare-and-set the owner,
// mark dead runs abandoned.
func (f *flow) acquire(g *gen) {
	l := f.p
	a, b, c := g.lockedMessage()
	g.line("-- The lease: read the state, create the row if absent, take it by compare-and-set.")
	f.tick(g)
	l.set(g, "v_expires_at", l.stateTime(l.addSeconds(l.clock(), "p_lease_seconds")))
	f.readState(g)
	l.ifOpen(g, "x_holder IS NOT NULL AND x_holder <> v_owner AND x_holder_until >= v_now")
	l.raise(g, a, "x_holder", b, "x_holder_until", c)
	l.endIf(g)
	l.ifOpen(g, "x_rows = 0")
	f.exec(g, ir.StmtInitState, "")
	l.endIf(g)
	l.set(g, "x_n", "0")
	f.exec(g, ir.StmtAcquireLease, "x_n")
	l.ifOpen(g, "x_n <> 1")
	f.readState(g)
	l.raise(g, a, "x_holder", b, "x_holder_until", c)
	l.endIf(g)
	f.exec(g, ir.StmtAbandonRuns, "")
	l.commit(g)
	g.line("")
}

// fixWindow fixes the window under the lease: a window refused (an
// --until before the watermark, in the future) gives the lease back and
// fails, recording nothing, as the runner does.
func (f *flow) fixWindow(g *gen) {
	l := f.p
	l.tryOpen(g)
	f.window(g)
	l.catchOpen(g)
	l.set(g, "x_failed", "1")
	l.tryClose(g)
	l.ifOpen(g, "x_failed <> 0")
	f.exec(g, ir.StmtReleaseLease, "")
	l.commit(g)
	l.reraise(g, "x_error_text")
	l.endIf(g)
}

// window fixes the window once, as runner/window.go does, and binds it.
func (f *flow) window(g *gen) {
	l, p, pr := f.p, g.p, g.pr
	wm := p.Watermark
	t := g.wmType()
	g.line("-- The window, fixed once.")
	l.set(g, "v_watermark_before", "x_saved")
	l.set(g, "v_expected", "COALESCE(x_saved, '')")
	if pr.Mode != ir.ModeBackfill {
		l.ifOpen(g, "x_until > "+l.addMicros(l.clock(), 5*60*1e6))
		l.raise(g, "--until ", l.rfc3339("x_until"), " is later than now: a watermark in the future makes every later run read nothing until then; the runner's --allow-future has no equivalent here")
		l.endIf(g)
	}
	if wm == nil {
		l.set(g, "x_hi", "COALESCE(x_until, x_clock)")
		l.set(g, "v_hi", "x_hi")
		l.set(g, "v_watermark", l.rfc3339("x_hi"))
		l.set(g, "v_window_hi", "v_watermark")
		l.set(g, "v_watermark_after", "v_watermark")
		l.set(g, "v_window", "1")
		return
	}
	st := g.start()
	startLit := l.startLit(st, t)
	l.set(g, "v_start", startLit)
	l.ifOpen(g, "x_saved IS NOT NULL")
	l.set(g, "x_saved_mark", l.parseMark("x_saved", t))
	l.endIf(g)
	switch pr.Hi {
	case ir.HiSaved:
		l.ifOpen(g, "x_saved IS NULL")
		l.raise(g, "pipeline "+p.Pipeline+" has not run yet: an append backfill reads up to the watermark, and there is none")
		l.endIf(g)
		l.set(g, "v_hi", "x_saved_mark")
	case ir.HiNow:
		if t.IsInteger() {
			l.ifOpen(g, "x_until IS NOT NULL")
			l.raise(g, "--until does not apply to "+p.Pipeline+": its watermark "+wm.Name+" is an integer, and a run reads up to the largest id present")
			l.endIf(g)
			l.set(g, "x_step", l.lit(wm.MaxStatement))
			// The largest id plus one; no rows: the saved mark, or 0.
			l.set(g, "v_hi", "NULL")
			for _, part := range g.parts(wm.MaxStatement) {
				l.into(g, part, "v_hi")
			}
			l.set(g, "v_hi", "COALESCE(v_hi + 1, x_saved_mark, 0)")
		} else {
			hi := "COALESCE(x_until, " + l.addMicros("x_clock", -micros(wm.Lag.Value)) + ")"
			if t.Kind == ir.Date {
				hi = l.trunc(hi, "day")
			}
			l.set(g, "x_hi", hi)
			l.set(g, "v_hi", l.fromUTC("x_hi", t))
		}
		l.ifOpen(g, "x_saved IS NOT NULL AND v_hi < x_saved_mark")
		l.ifOpen(g, "x_until IS NOT NULL")
		l.raise(g, "--until ", f.markText("v_hi", t), " is before the saved watermark ", "x_saved", " of "+p.Pipeline+": the watermark never moves backwards (a backfill rebuilds the past; incrc state --rewind moves it back on purpose)")
		l.endIf(g)
		l.set(g, "v_hi", "x_saved_mark")
		l.endIf(g)
		l.ifOpen(g, "x_saved IS NULL AND v_hi < v_start")
		l.ifOpen(g, "x_until IS NOT NULL")
		l.raise(g, "--until ", f.markText("v_hi", t), " is before watermark.start "+st.text+" of "+p.Pipeline+": nothing before start is ever read")
		l.endIf(g)
		l.set(g, "v_hi", "v_start")
		l.endIf(g)
	}
	l.set(g, "v_watermark", f.markText("v_hi", t))
	l.set(g, "v_window_hi", "v_watermark")
	l.set(g, "v_watermark_after", "v_watermark")
	if pt := p.Partition; pt != nil && pt.FinalizeAfter.Value > 0 && !t.IsInteger() && pr.Mode != ir.ModeBackfill {
		l.ifOpen(g, "x_saved IS NOT NULL")
		l.set(g, "x_final", l.trunc(l.addMicros(l.utc("x_saved_mark", t), -micros(pt.FinalizeAfter.Value)), pt.Granularity))
		l.endIf(g)
	}
	switch pr.Lo {
	case ir.LoStart:
		l.set(g, "v_lo", "v_start")
	case ir.LoWatermark:
		l.set(g, "v_lo", "COALESCE(x_saved_mark, v_start)")
		var finalize int64
		if p.Partition != nil {
			finalize = micros(p.Partition.FinalizeAfter.Value)
		}
		switch {
		case t.IsInteger():
			l.set(g, "v_lo", fmt.Sprintf("v_lo - %d", wm.Lookback.Count))
		case finalize > 0 && finalize < micros(wm.Lookback.Value):
			l.set(g, "v_lo", l.fromUTC(l.addMicros(l.utc("v_lo", t), -finalize), t))
		default:
			l.set(g, "v_lo", l.fromUTC(l.addMicros(l.utc("v_lo", t), -micros(wm.Lookback.Value)), t))
		}
		l.ifOpen(g, "v_lo < v_start")
		l.set(g, "v_lo", "v_start")
		l.endIf(g)
		l.ifOpen(g, "v_hi < v_lo")
		l.set(g, "v_lo", "v_hi")
		l.endIf(g)
	}
	if pr.Lo != ir.LoNone {
		l.set(g, "v_window_lo", f.markText("v_lo", t))
		l.ifOpen(g, "v_lo < v_hi")
		l.set(g, "v_window", "1")
		l.endIf(g)
	}
}

// markText spells a watermark-typed variable as the runner saves it.
func (f *flow) markText(v string, t ir.Type) string {
	l := f.p
	switch {
	case t.IsInteger():
		return l.str(v)
	case t.Kind == ir.Date:
		return l.format(l.utc(v, t), "%Y-%m-%d")
	}
	return l.rfc3339(l.utc(v, t))
}

// steps walks a program's steps: guards, partitions, registers; the
// write transaction where the script opens one.
func (f *flow) steps(g *gen, steps []ir.Step) {
	l := f.p
	inTx := false
	for i := 0; i < len(steps); {
		s := steps[i]
		if s.Tx != inTx {
			if s.Tx {
				l.txBegin(g)
			} else {
				l.txCommit(g)
			}
			inTx = s.Tx
		}
		if !s.Each {
			f.step(g, s)
			i++
			continue
		}
		j := i
		for j < len(steps) && steps[j].Each && steps[j].Tx == s.Tx {
			j++
		}
		l.eachOpen(g)
		f.bindPartition(g)
		for _, e := range steps[i:j] {
			f.step(g, e)
		}
		l.eachClose(g)
		i = j
	}
	if inTx {
		l.txCommit(g)
	}
}

func (f *flow) bindPartition(g *gen) {
	l := f.p
	pt := g.p.Partition
	if pt == nil {
		g.fail(fmt.Errorf("steps repeat per partition without a partition section"))
		return
	}
	l.set(g, "v_plo", l.fromUTC("x_part", pt.Type))
	l.set(g, "v_phi", l.fromUTC(l.addUnit("x_part", pt.Granularity), pt.Type))
	l.set(g, "v_partition_key", l.format("x_part", keyLayout(pt.Granularity)))
}

func keyLayout(g string) string {
	switch g {
	case "hour":
		return "%Y-%m-%dT%H"
	case "month":
		return "%Y-%m"
	}
	return "%Y-%m-%d"
}

func (f *flow) into(g *gen, s ir.Step, v string) {
	for _, r := range s.Into {
		if name, ok := strings.CutPrefix(r, "-"); ok {
			f.p.set(g, varName(name), varName(name)+" - "+v)
		} else {
			f.p.set(g, varName(r), varName(r)+" + "+v)
		}
	}
}

func (f *flow) usesClock(g *gen, name string) bool {
	for _, part := range g.parts(name) {
		for _, pa := range part.Params {
			if pa == "now" || pa == "finished_at" || pa == "duration_ms" || pa == "updated_at" {
				return true
			}
		}
	}
	return false
}

func (f *flow) step(g *gen, s ir.Step) {
	if s.Read == ir.ReadNothing && s.Note == "" && len(g.parts(s.Stmt)) == 0 {
		return // the dialect has nothing to do for it: nothing to guard, name or run
	}
	l := f.p
	f.guarded(g, s, func() {
		l.set(g, "x_step", l.lit(s.Stmt))
		if s.Note != "" {
			// Which variant ran, added to the run log's note as the
			// runner adds it.
			l.ifOpen(g, "v_note IS NULL")
			l.set(g, "v_note", l.lit(s.Note))
			l.elseOpen(g)
			l.set(g, "v_note", l.concat("v_note", l.lit("; "+s.Note)))
			l.endIf(g)
		}
		if f.usesClock(g, s.Stmt) {
			f.tick(g)
		}
		switch s.Read {
		case ir.ReadNothing, ir.ReadTypes:
			f.exec(g, s.Stmt, "")
		case ir.ReadAffected:
			l.set(g, "x_rows", "0")
			f.exec(g, s.Stmt, "x_rows")
			f.into(g, s, "x_rows")
		case ir.ReadSwap:
			l.set(g, "x_rows", "0")
			f.exec(g, s.Stmt, "x_rows")
			a, b := g.swapMessage(s.Stmt)
			l.ifOpen(g, "x_rows <> 1")
			l.raise(g, a, "x_rows", b)
			l.endIf(g)
		case ir.ReadCount:
			l.set(g, "x_n", "NULL")
			// The value is the reading part's (the first, unless one is
			// marked); the others run in their order, as the runner runs
			// them.
			parts := g.parts(s.Stmt)
			if reads := readingParts(parts); reads > 1 {
				// The runner adds them up; no script dialect spells one.
				g.fail(fmt.Errorf("%s: a script reads a count from one part, the spelling reads %d", s.Stmt, reads))
			}
			for i, part := range parts {
				if dialects.Reading(parts, i) {
					l.into(g, part, "x_n")
				} else {
					l.exec(g, part, "")
				}
			}
			l.set(g, "x_n", "COALESCE(x_n, 0)")
			f.into(g, s, "x_n")
			if s.Fail != "" {
				a, b := failParts(s.Fail)
				l.ifOpen(g, "x_n <> 0")
				l.raise(g, a, "x_n", b)
				l.endIf(g)
			}
		case ir.ReadCounts:
			// One row per reading part, its columns named as the
			// registers, added to them; the other parts run in their
			// order, as for a count.
			parts := g.parts(s.Stmt)
			for i, part := range parts {
				if !dialects.Reading(parts, i) {
					l.exec(g, part, "")
					continue
				}
				l.loopRows(g, part, func(inner string) string { return inner }, "x_rec", func() {
					for _, r := range s.Into {
						name, minus := strings.CutPrefix(r, "-")
						op := " + "
						if minus {
							op = " - "
						}
						l.set(g, varName(name), varName(name)+op+"COALESCE("+l.field("x_rec", name)+", 0)")
					}
				})
			}
		case ir.ReadRows:
			v := "x_source"
			if s.Into[0] == ir.RegTarget {
				v = "x_target"
			}
			l.set(g, v, "''")
			for _, part := range g.parts(s.Stmt) {
				l.loopRows(g, part, func(inner string) string {
					return "SELECT " + f.measuresText(g) + " AS r FROM (\n" + indentText(inner, "  ") + "\n) AS q"
				}, "x_rec", func() {
					l.set(g, v, l.concat(v, "CASE WHEN "+v+" = '' THEN '' ELSE '; ' END", l.field("x_rec", "r")))
				})
			}
			// An empty partition's count is 0 and it has no measures, as
			// the runner reads it.
			l.ifOpen(g, v+" = ''")
			l.set(g, v, l.lit("0"))
			l.endIf(g)
		case ir.ReadPartitions:
			f.partitions(g, s)
		default:
			g.fail(fmt.Errorf("%s: a script does not know how to read %q", s.Stmt, s.Read))
		}
	})
}

// measuresText spells a check row's count and measures (m0, m1, ...) as
// one text, NULL as empty: what the backfill compares.
func (f *flow) measuresText(g *gen) string {
	l := f.p
	var out []string
	for i := range g.p.Measures {
		if i > 0 {
			out = append(out, l.lit(", "))
		}
		out = append(out, "COALESCE("+l.str(fmt.Sprintf("q.m%d", i))+", '')")
	}
	return l.concat(out...)
}

// partitions lists the partitions of the window, as the runner does:
// rows of finalized partitions are skipped, rows without one counted.
func (f *flow) partitions(g *gen, s ir.Step) {
	l := f.p
	pt := g.p.Partition
	parts := g.parts(s.Stmt)
	if len(parts) != 1 || pt == nil {
		g.fail(fmt.Errorf("%s: a partition list of %d parts", s.Stmt, len(parts)))
		return
	}
	l.partsReset(g)
	l.loopRows(g, parts[0], func(inner string) string {
		return "SELECT " + l.utc("q.incrc_partition", pt.Type) + " AS p, q.incrc_rows AS n FROM (\n" + indentText(inner, "  ") + "\n) AS q ORDER BY 1"
	}, "x_rec", func() {
		// The rows of partitions left out also to Into, as the runner
		// adds them.
		l.set(g, "x_n", l.field("x_rec", "n"))
		l.ifOpen(g, l.field("x_rec", "p")+" IS NULL")
		l.set(g, varName(ir.RegUnpartitioned), varName(ir.RegUnpartitioned)+" + x_n")
		f.into(g, s, "x_n")
		l.elseIf(g, "x_final IS NOT NULL AND "+l.trunc(l.field("x_rec", "p"), pt.Granularity)+" < x_final")
		l.set(g, varName(ir.RegSkipped), varName(ir.RegSkipped)+" + x_n")
		f.into(g, s, "x_n")
		l.elseOpen(g)
		l.partsAdd(g, l.trunc(l.field("x_rec", "p"), pt.Granularity))
		l.endIf(g)
	})
	l.partsCount(g, varName(ir.RegPartitions))
}

// failed records a failed run after the rollback, as the runner does:
// rows read are what it saw, every other count zero, the watermark where
// it was.
func (f *flow) failed(g *gen) {
	l := f.p
	l.set(g, "v_error", "x_error_text")
	l.set(g, "v_status", l.lit("failed"))
	l.set(g, "x_failed", "1")
	l.set(g, "v_watermark_after", "v_watermark_before")
	for _, reg := range ir.Counters {
		if reg != ir.RegRead {
			l.set(g, varName(reg), "0")
		}
	}
	f.tick(g)
	f.exec(g, ir.StmtRecordFinish, "")
}

// finish runs the cleanup, releases the lease, and fails the script when
// the run failed, after its record is committed.
func (f *flow) finish(g *gen) {
	l := f.p
	g.line("-- Then, failed or not: the cleanup, the lease given back.")
	for _, name := range g.pr.Cleanup {
		l.ignoreErrors(g, func() { f.exec(g, name, "") })
	}
	f.exec(g, ir.StmtReleaseLease, "")
	l.commit(g)
	l.ifOpen(g, "x_failed <> 0")
	l.reraise(g, "v_error")
	l.endIf(g)
}

// backfill renders incrc backfill [p_from, p_to): the partitions of the
// range oldest first, each rebuilt by the backfill program in its own
// transaction with its marker, then checked against the source; resumed
// after the partitions an earlier call of the same range finished.
func (f *flow) backfill(g *gen) {
	l, p, pr := f.p, g.p, g.pr
	pt := p.Partition
	g.header("-- ", l.how(g))
	tstz := l.typ(ir.Type{Kind: ir.TimestampTZ})
	l.open(g, []param{
		{"p_from", tstz, "", "the range's start: partitions that intersect [from, to)"},
		{"p_to", tstz, "", "the range's end"},
		{"p_restart", "BOOLEAN", "FALSE", "--restart: redo the partitions an earlier call finished"},
		{"p_restate", "BOOLEAN", "FALSE", "--restate: allow finalized partitions"},
		{"p_owner", l.text(), "NULL", "who holds the lease; NULL: this session"},
		{"p_lease_seconds", "BIGINT", "3600", "how long the lease lasts: it must outlast the backfill"},
	})
	ts := l.typ(ir.Type{Kind: ir.Timestamp})
	f.declare(g, [][2]string{{"x_from", ts}, {"x_to", ts}, {"x_done", l.text()}, {"x_err", l.text()},
		{"x_total", "BIGINT"}, {"x_first", l.text()}, {"x_last", l.text()}, {"x_finalized", "BIGINT"}})
	l.begin(g)
	f.prologue(g)
	l.set(g, "x_total", "0")
	l.set(g, "x_finalized", "0")
	l.set(g, "x_from", l.utc("p_from", ir.Type{Kind: ir.TimestampTZ}))
	l.set(g, "x_to", l.utc("p_to", ir.Type{Kind: ir.TimestampTZ}))
	l.ifOpen(g, "NOT x_from < x_to")
	l.raise(g, "--from must be before --to: the range is [from, to)")
	l.endIf(g)
	rfcSec := func(v string) string { return l.format(v, "%Y-%m-%dT%H:%M:%SZ") }
	l.set(g, "v_backfill_id", l.sha16(l.concat("v_pipeline", l.lit("|"), rfcSec("x_from"), l.lit("|"), rfcSec("x_to"), l.lit("|"), "v_spec_hash")))
	g.line("")
	f.setup(g)
	f.acquire(g)
	// The window the program binds (start, hi), fixed once; a backfill
	// never moves the watermark.
	f.fixWindow(g)
	l.set(g, "v_window_lo", rfcSec("x_from"))
	l.set(g, "v_window_hi", rfcSec("x_to"))
	l.set(g, "v_watermark_before", "x_saved")
	l.set(g, "v_watermark_after", "x_saved")
	if fa := pt.FinalizeAfter.Value; fa > 0 {
		ref := "x_clock"
		if p.Watermark != nil && !p.Watermark.Type.IsInteger() {
			ref = "COALESCE(" + l.utc("x_saved_mark", g.wmType()) + ", x_clock)"
		}
		l.set(g, "x_final", l.trunc(l.addMicros(ref, -micros(fa)), pt.Granularity))
	}
	g.line("")
	g.line("-- Which partitions: finalized ones need p_restate; those an earlier call finished are skipped.")
	l.set(g, "x_part", l.trunc("x_from", pt.Granularity))
	l.whileOpen(g, "x_part < x_to")
	l.ifOpen(g, "x_final IS NOT NULL AND x_part < x_final AND NOT p_restate")
	l.set(g, "x_finalized", "x_finalized + 1")
	l.set(g, "x_first", "COALESCE(x_first, "+l.format("x_part", keyLayout(pt.Granularity))+")")
	l.set(g, "x_last", l.format("x_part", keyLayout(pt.Granularity)))
	l.endIf(g)
	l.set(g, "x_part", l.addUnit("x_part", pt.Granularity))
	l.whileClose(g)
	l.ifOpen(g, "x_finalized > 0")
	l.set(g, "x_err", l.concat(l.str("x_finalized"), l.lit(" partition(s) are finalized (older than finalize_after "+pt.FinalizeAfter.Text+" before the watermark): "), "x_first",
		"CASE WHEN x_finalized > 1 THEN "+l.concat(l.lit(" .. "), "x_last")+" ELSE '' END", l.lit("; rebuilding them needs --restate")))
	f.exec(g, ir.StmtReleaseLease, "")
	l.commit(g)
	l.reraise(g, "x_err")
	l.endIf(g)
	l.ifOpen(g, "p_restart")
	f.exec(g, ir.StmtClearMarkers, "")
	l.endIf(g)
	l.set(g, "x_done", l.lit(";"))
	if parts := g.parts(ir.StmtReadMarkers); len(parts) == 1 {
		l.loopRows(g, parts[0], func(inner string) string { return inner }, "x_rec", func() {
			l.ifOpen(g, l.field("x_rec", "status")+" = 'done'")
			l.set(g, "x_done", l.concat("x_done", l.field("x_rec", "partition_key"), l.lit(";")))
			l.endIf(g)
		})
	} else {
		g.fail(fmt.Errorf("read_markers has %d parts", len(parts)))
	}
	f.tick(g)
	f.exec(g, ir.StmtRecordStart, "")
	l.commit(g)
	g.line("")
	if l.transactional() {
		g.line("-- Each partition, oldest first, in its own transaction; the first failure or mismatch stops the backfill.")
	} else {
		g.line("-- Each partition, oldest first: its rows are rebuilt, then its marker recorded, so a rerun")
		g.line("-- redoes a partition whose marker is missing; the first failure or mismatch stops the backfill.")
	}
	l.set(g, "x_part", l.trunc("x_from", pt.Granularity))
	l.whileOpen(g, "x_part < x_to AND x_err IS NULL")
	f.bindPartition(g)
	l.ifOpen(g, "NOT "+l.contains("x_done", l.concat(l.lit(";"), "v_partition_key", l.lit(";"))))
	for _, n := range g.names(g.protocol()...) {
		if g.kindOf(n) == "int" && !strings.HasPrefix(n, "runs.") {
			l.set(g, varName(n), "0")
		}
	}
	l.set(g, "v_marker_status", l.lit("done"))
	l.set(g, "v_detail", "NULL")
	l.tryOpen(g)
	f.steps(g, pr.Steps)
	l.catchOpen(g)
	l.set(g, "x_err", l.concat(l.lit("partition "), "v_partition_key", l.lit(": "), "x_error_text"))
	l.tryClose(g)
	for _, name := range pr.Cleanup {
		l.ignoreErrors(g, func() { f.exec(g, name, "") })
	}
	measures := make([]string, len(p.Measures))
	for i, m := range p.Measures {
		measures[i] = m.String()
	}
	l.ifOpen(g, "x_err IS NULL AND x_source <> x_target")
	l.set(g, "v_marker_status", l.lit("failed"))
	l.set(g, "v_detail", l.concat(l.lit("source ["), "x_source", l.lit("], target ["), "x_target", l.lit("]")))
	f.tick(g)
	f.exec(g, ir.StmtDeleteMarker, "")
	f.exec(g, ir.StmtInsertMarker, "")
	l.set(g, "x_err", l.concat(l.lit("partition "), "v_partition_key", l.lit(": rebuilt partition does not match the source: source "), "x_source", l.lit(", target "), "x_target", l.lit(" ("+strings.Join(measures, ", ")+")")))
	l.elseIf(g, "x_err IS NULL")
	l.set(g, "x_total", "x_total + "+varName(ir.RegWritten))
	l.endIf(g)
	l.commit(g)
	l.endIf(g)
	l.set(g, "x_part", l.addUnit("x_part", pt.Granularity))
	l.whileClose(g)
	g.line("")
	g.line("-- The backfill's record: the rows it rebuilt; the watermark it found and left.")
	for _, reg := range ir.Counters {
		l.set(g, varName(reg), "0")
	}
	l.set(g, varName(ir.RegInserted), "x_total")
	l.set(g, varName(ir.RegRead), "x_total")
	l.ifOpen(g, "x_err IS NOT NULL")
	l.set(g, "v_status", l.lit("failed"))
	l.set(g, "v_error", "x_err")
	l.endIf(g)
	f.tick(g)
	f.exec(g, ir.StmtRecordFinish, "")
	f.exec(g, ir.StmtReleaseLease, "")
	l.commit(g)
	l.ifOpen(g, "x_err IS NOT NULL")
	l.reraise(g, "x_err")
	l.endIf(g)
	l.close(g)
}

// readingParts is how many of a count's parts are read (dialects.Reading).
func readingParts(parts []dialects.Part) int {
	n := 0
	for i := range parts {
		if dialects.Reading(parts, i) {
			n++
		}
	}
	return n
}

// readsOwnCount: a statement counts the rows it changes in parts of its
// own (dialects.CountedWrite, dialects.ReadBackUpdate).
func readsOwnCount(parts []dialects.Part) bool {
	for _, p := range parts {
		if p.Reads {
			return true
		}
	}
	return false
}

// message spells a failure's message from its pieces (text, expression,
// text, ...): one literal, or their concatenation.
func message(l proc, pieces ...string) string {
	var parts []string
	for i, p := range pieces {
		if i%2 == 0 {
			if p != "" {
				parts = append(parts, l.lit(p))
			}
		} else {
			parts = append(parts, l.str(p))
		}
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return l.concat(parts...)
}
