package script

import (
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
)

// plpgsql renders a stored procedure: PostgreSQL 15 (CALL, with COMMIT
// between the protocol's steps) or Redshift (NONATOMIC: each statement
// commits on its own, the write transaction is opened and committed
// explicitly, as the runner does).
//
// PostgreSQL binds each statement's markers with EXECUTE ... USING the
// script's typed variables: the compiled text runs as it is. Redshift's
// EXECUTE has no USING: its statements are static SQL with the markers
// replaced by the variables, which PL/pgSQL binds as typed parameters.
type plpgsql struct {
	redshift bool
}

func (l *plpgsql) typ(t compiler.Type) string {
	switch {
	case t.IsInteger():
		return "BIGINT"
	case t.Kind == compiler.Date:
		return "DATE"
	case t.Kind == compiler.TimestampTZ:
		return "TIMESTAMPTZ"
	case t.Kind == compiler.Timestamp:
		return "TIMESTAMP"
	}
	return l.text()
}

// clock is the time now, a naive UTC timestamp: CLOCK_TIMESTAMP moves
// within a transaction; Redshift's GETDATE is the statement's start, UTC.
func (l *plpgsql) clock() string {
	if l.redshift {
		return "GETDATE()"
	}
	return "CAST(CLOCK_TIMESTAMP() AT TIME ZONE 'UTC' AS TIMESTAMP)"
}

func (l *plpgsql) text() string {
	if l.redshift {
		return "VARCHAR(65535)"
	}
	return "TEXT"
}

// lit is a string literal: standard, quotes doubled; backslashes doubled
// too on Redshift (DoubledString), which reads them as escapes.
func (l *plpgsql) lit(s string) string {
	if l.redshift {
		return dialects.DoubledString(s)
	}
	return dialects.StringLit(s)
}

// dollar quotes SQL for EXECUTE with a tag the text does not hold.
func dollar(s string) string {
	tag := "$s$"
	for i := 0; strings.Contains(s, tag); i++ {
		tag = fmt.Sprintf("$s%d$", i)
	}
	return tag + s + tag
}

// stateTime spells a UTC timestamp expression as the state tables store
// times.
func (l *plpgsql) stateTime(ts string) string {
	return "TO_CHAR(" + ts + ", 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
}

// rfc3339 spells a UTC timestamp expression as the runner saves a
// watermark: RFC 3339, the fraction without trailing zeros.
func (l *plpgsql) rfc3339(ts string) string {
	frac := "CAST(EXTRACT(MICROSECONDS FROM " + ts + ") AS BIGINT) % 1000000"
	return "TO_CHAR(" + ts + ", 'YYYY-MM-DD\"T\"HH24:MI:SS') || CASE WHEN " + frac + " = 0 THEN '' ELSE '.' || RTRIM(TO_CHAR(" + frac + ", 'FM000000'), '0') END || 'Z'"
}

// markText spells a watermark-typed variable as the runner saves it.
func (l *plpgsql) markText(v string, t compiler.Type) string {
	switch {
	case t.IsInteger():
		return "CAST(" + v + " AS " + l.text() + ")"
	case t.Kind == compiler.Date:
		return "TO_CHAR(" + v + ", 'YYYY-MM-DD')"
	}
	return l.rfc3339(l.utc(v, t))
}

// utc turns a value of type t into a naive UTC timestamp.
func (l *plpgsql) utc(v string, t compiler.Type) string {
	switch t.Kind {
	case compiler.TimestampTZ:
		return "(" + v + " AT TIME ZONE 'UTC')"
	case compiler.Date:
		return "CAST(" + v + " AS TIMESTAMP)"
	}
	return v
}

// fromUTC turns a naive UTC timestamp into a value of type t.
func (l *plpgsql) fromUTC(ts string, t compiler.Type) string {
	switch t.Kind {
	case compiler.TimestampTZ:
		return "(" + ts + " AT TIME ZONE 'UTC')"
	case compiler.Date:
		return "CAST(" + ts + " AS DATE)"
	}
	return ts
}

func interval(us int64) string { return fmt.Sprintf("INTERVAL '%d microseconds'", us) }

func unitInterval(g string) string {
	switch g {
	case "hour":
		return "INTERVAL '1 hour'"
	case "month":
		return "INTERVAL '1 month'"
	}
	return "INTERVAL '1 day'"
}

func keyFormat(g string) string {
	switch g {
	case "hour":
		return `'YYYY-MM-DD"T"HH24'`
	case "month":
		return `'YYYY-MM'`
	}
	return `'YYYY-MM-DD'`
}

// call spells one part: EXECUTE with USING on PostgreSQL, the static
// statement on Redshift. into, when set, receives the first column.
func (l *plpgsql) call(g *gen, part dialects.Part, into string) {
	if l.redshift {
		sql, err := substitute(g.d, part, func(name string) string { return varName(name) })
		if err != nil {
			g.fail(err)
			return
		}
		if into != "" {
			// SELECT ... INTO: the first row's first column.
			g.line("SELECT INTO %s * FROM (", into)
			g.raw(indentText(sql, strings.Repeat("  ", g.depth+1)) + "\n")
			g.line(") AS incrc_q;")
			return
		}
		g.raw(indentText(sql, strings.Repeat("  ", g.depth)) + ";\n")
		return
	}
	stmt := "EXECUTE " + dollar(part.SQL)
	if into != "" {
		stmt += " INTO " + into
	}
	if len(part.Params) > 0 {
		vars := make([]string, len(part.Params))
		for i, p := range part.Params {
			vars[i] = varName(p)
		}
		stmt += " USING " + strings.Join(vars, ", ")
	}
	g.raw(indentText(stmt, strings.Repeat("  ", g.depth)) + ";\n")
}

// rowsQuery runs a part that returns rows through a wrapper: wrap is a
// SELECT around "(SQL) AS q". Redshift's static form inlines it.
func (l *plpgsql) loopRows(g *gen, part dialects.Part, wrap func(inner string) string, rec string) {
	if l.redshift {
		sql, err := substitute(g.d, part, func(name string) string { return varName(name) })
		if err != nil {
			g.fail(err)
			return
		}
		g.raw(indentText("FOR "+rec+" IN "+wrap(sql)+" LOOP", strings.Repeat("  ", g.depth)) + "\n")
		return
	}
	stmt := "FOR " + rec + " IN EXECUTE " + dollar(wrap(part.SQL))
	if len(part.Params) > 0 {
		vars := make([]string, len(part.Params))
		for i, p := range part.Params {
			vars[i] = varName(p)
		}
		stmt += " USING " + strings.Join(vars, ", ")
	}
	g.raw(indentText(stmt+" LOOP", strings.Repeat("  ", g.depth)) + "\n")
}

func indentText(s, prefix string) string {
	lines := strings.Split(s, "\n")
	for i, ln := range lines {
		if ln != "" {
			lines[i] = prefix + ln
		}
	}
	return strings.Join(lines, "\n")
}

// exec runs a statement's parts; with acc, adds the rows each changed.
func (l *plpgsql) exec(g *gen, name, acc string) {
	for _, part := range g.parts(name) {
		l.call(g, part, "")
		if acc != "" {
			g.line("GET DIAGNOSTICS x_n = ROW_COUNT;")
			g.line("%s := %s + x_n;", acc, acc)
		}
	}
}

// count reads one integer (NULL is 0) into x_n.
func (l *plpgsql) count(g *gen, name string) {
	parts := g.parts(name)
	g.line("x_n := 0;")
	for _, part := range parts {
		l.call(g, part, "x_n")
	}
	g.line("x_n := COALESCE(x_n, 0);")
}

// raise fails with a message made of literal text and expressions.
func (l *plpgsql) raise(g *gen, pieces ...string) {
	var fmtParts, args []string
	for i, p := range pieces {
		if i%2 == 0 {
			fmtParts = append(fmtParts, strings.ReplaceAll(p, "%", "%%"))
		} else {
			fmtParts = append(fmtParts, "%")
			args = append(args, p)
		}
	}
	s := "RAISE EXCEPTION " + l.lit(strings.Join(fmtParts, ""))
	if len(args) > 0 {
		s += ", " + strings.Join(args, ", ")
	}
	g.line("%s;", s)
}

func (l *plpgsql) render(g *gen) {
	p, pr := g.p, g.pr
	name := ProcName(p.Pipeline, pr.Mode)
	q := g.d.QuoteIdent(name)
	if g.pr.Mode == compiler.ModeBackfill {
		l.renderBackfill(g, q)
		return
	}
	var how []string
	if l.redshift {
		how = []string{
			"Redshift: a NONATOMIC stored procedure. Each protocol statement commits on its own and the write runs",
			"in one explicit transaction, as the runner does. Create it once (run this file), then:",
			"  CALL " + q + "();                                    -- hi = now - lag",
			"  CALL " + q + "('2024-01-02 00:00:00+00');            -- --until",
			"Schedule it with the query editor's scheduler (a scheduled query running the CALL).",
		}
	} else {
		how = []string{
			"PostgreSQL 15+: a procedure. Create it once (run this file), then:",
			"  CALL " + q + "();                                    -- hi = now - lag",
			"  CALL " + q + "(p_until => '2024-01-02T00:00:00Z');   -- --until",
			"Schedule it with pg_cron: SELECT cron.schedule('" + name + "', '*/15 * * * *', 'CALL " + strings.ReplaceAll(q, "'", "''") + "()');",
			"Call it outside a transaction block: it commits between the lease, the write and the release.",
		}
	}
	how = append(how, "Not done here, done by the runner: source column types are not checked against the declared ones (the",
		"probe only fails on a missing column); the lease is not renewed while the write runs (p_lease_seconds must",
		"outlast a run; a run that outlives it fails at its compare-and-set); no progress output; no --allow-future.")
	g.header("-- ", how)
	g.line("CREATE OR REPLACE PROCEDURE %s(p_until TIMESTAMPTZ DEFAULT NULL, p_owner %s DEFAULT NULL, p_lease_seconds INTEGER DEFAULT 300)", q, l.text())
	if l.redshift {
		g.line("NONATOMIC")
	}
	g.line("LANGUAGE plpgsql")
	g.line("AS $incrc$")
	l.declare(g)
	g.line("BEGIN")
	g.in()
	l.prologue(g)
	l.setup(g)
	l.acquire(g)
	l.window(g)
	// The run's record commits before any data moves, as the runner's
	// first step does: a failure closes it.
	steps := pr.Steps
	for len(steps) > 0 && steps[0].Stmt == compiler.StmtRecordStart && !steps[0].Tx {
		l.step(g, steps[0])
		steps = steps[1:]
	}
	if !l.redshift {
		g.line("COMMIT;")
	}
	g.line("")
	g.line("-- The program's steps. PostgreSQL runs them in one subtransaction: a failure rolls all of them back.")
	g.line("BEGIN")
	g.in()
	l.steps(g, steps)
	if l.redshift {
		l.txEnd(g)
	}
	g.out()
	g.line("EXCEPTION WHEN OTHERS THEN")
	g.in()
	if l.redshift {
		g.line("ROLLBACK;")
	}
	l.failed(g)
	g.out()
	g.line("END;")
	l.finish(g)
	g.out()
	g.line("END;")
	g.line("$incrc$;")
}

// declare lists the variables: every parameter and register of the
// program's statements, typed, and the script's own (x_...).
func (l *plpgsql) declare(g *gen) {
	g.line("DECLARE")
	g.in()
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
			t = part
		default:
			t = "BIGINT := 0"
		}
		g.line("%s %s;", varName(n), t)
	}
	g.line("x_clock TIMESTAMP;           -- the run's start, UTC")
	g.line("x_until TIMESTAMP;           -- p_until in UTC")
	g.line("x_n BIGINT;")
	g.line("x_rows BIGINT;")
	g.line("x_step %s;", l.text())
	g.line("x_holder %s;", l.text())
	g.line("x_holder_until %s;", l.text())
	g.line("x_saved %s;                  -- the saved watermark, as saved", l.text())
	g.line("x_saved_mark %s;", wm)
	g.line("x_hi TIMESTAMP;")
	g.line("x_lo TIMESTAMP;")
	g.line("x_final TIMESTAMP;           -- partitions that start before it are finalized")
	if !l.redshift {
		g.line("x_parts TIMESTAMP[];")
	}
	g.line("x_part TIMESTAMP;")
	g.line("x_source %s;", l.text())
	g.line("x_target %s;", l.text())
	g.line("x_detail %s;", l.text())
	g.line("x_ok BOOLEAN;")
	g.line("x_rec RECORD;")
	g.out()
}

// prologue fixes the run's constants.
func (l *plpgsql) prologue(g *gen) {
	p := g.p
	g.line("x_clock := %s;", l.clock())
	if g.pr.Mode != compiler.ModeBackfill {
		g.line("x_until := CAST(p_until AT TIME ZONE 'UTC' AS TIMESTAMP);")
	}
	g.line("v_pipeline := %s;", l.lit(p.Pipeline))
	g.line("v_spec_hash := %s;", l.lit(p.SpecHash))
	kind := g.pr.Record
	if g.pr.Mode == compiler.ModeBackfill {
		kind = "backfill"
	}
	g.line("v_kind := %s;", l.lit(kind))
	rnd := "SUBSTRING(MD5(RANDOM()::TEXT || CLOCK_TIMESTAMP()::TEXT), 1, 8)"
	if l.redshift {
		g.line("v_owner := COALESCE(p_owner, 'procedure:' || CURRENT_USER || ':' || %s);", rnd)
	} else {
		g.line("v_owner := COALESCE(p_owner, 'procedure:' || PG_BACKEND_PID() || ':' || %s);", rnd)
	}
	g.line("v_run_id := TO_CHAR(x_clock, 'YYYYMMDD\"T\"HH24MISS\"Z\"') || '-' || %s;", rnd)
	g.line("v_status := 'succeeded';")
	g.line("v_started_at := %s;", l.stateTime("x_clock"))
}

// tick sets the clock values a statement may bind: now, finished_at,
// duration_ms, as the runner does before each step.
func (l *plpgsql) tick(g *gen) {
	now := l.clock()
	g.line("v_now := %s;", l.stateTime(now))
	g.line("v_finished_at := v_now;")
	g.line("v_duration_ms := CAST(EXTRACT(EPOCH FROM (%s - x_clock)) * 1000 AS BIGINT);", now)
}

// setup runs the setup program: idempotent DDL; a column probe reads the
// catalog instead of a driver's column list.
func (l *plpgsql) setup(g *gen) {
	set := g.p.Program(compiler.ModeSetup)
	if set == nil || !g.pr.Setup {
		return
	}
	g.line("-- setup: idempotent DDL, as the runner runs it before every program.")
	for _, s := range set.Steps {
		if s.Read == compiler.ReadColumns {
			probe, ok := g.p.Statement(s.Stmt).Op.(compiler.ProbeColumns)
			if !ok {
				g.fail(fmt.Errorf("%s reads columns of something that is not a table", s.Stmt))
				return
			}
			t := probe.Source.Table
			schema := "CURRENT_SCHEMA()"
			if len(t.Parts) > 1 {
				schema = l.lit(t.Parts[len(t.Parts)-2])
			}
			for _, reg := range g.names() {
				col, ok := strings.CutPrefix(reg, s.Into[0])
				if !ok {
					continue
				}
				g.line("SELECT COUNT(*) INTO %s FROM information_schema.columns WHERE table_schema = %s AND table_name = %s AND column_name = %s;",
					varName(reg), schema, l.lit(t.Name()), l.lit(col))
			}
			continue
		}
		l.guarded(g, s, func() { l.exec(g, s.Stmt, "") })
	}
	if !l.redshift {
		g.line("COMMIT;")
	}
	g.line("")
}

func (l *plpgsql) guarded(g *gen, s compiler.Step, body func()) {
	if s.If == "" {
		body()
		return
	}
	if reg, ok := strings.CutPrefix(s.If, "!"); ok {
		g.line("IF %s = 0 THEN", varName(reg))
	} else {
		g.line("IF %s <> 0 THEN", varName(s.If))
	}
	g.in()
	body()
	g.out()
	g.line("END IF;")
}

// readState reads the state row, counting the rows.
func (l *plpgsql) readState(g *gen) {
	g.line("x_rows := 0;")
	parts := g.parts(compiler.StmtReadState)
	if len(parts) != 1 {
		g.fail(fmt.Errorf("read_state has %d parts", len(parts)))
		return
	}
	l.loopRows(g, parts[0], func(inner string) string { return inner }, "x_rec")
	g.in()
	g.line("x_rows := x_rows + 1;")
	g.line("x_saved := x_rec.\"watermark\";")
	g.line("x_holder := x_rec.\"lease_owner\";")
	g.line("x_holder_until := x_rec.\"lease_expires_at\";")
	g.out()
	g.line("END LOOP;")
	g.line("IF x_rows > 1 THEN")
	g.in()
	l.raise(g, g.duplicateMessage())
	g.out()
	g.line("END IF;")
}

// acquire takes the lease as the runner does: read the state, fail at
// once when another holds it, create the row, compare-and-set the owner,
// mark dead runs abandoned.
func (l *plpgsql) acquire(g *gen) {
	a, b, c := g.lockedMessage()
	g.line("-- The lease: read the state, create the row if absent, take it by compare-and-set.")
	l.tick(g)
	g.line("v_expires_at := %s;", l.stateTime(""+l.clock()+" + p_lease_seconds * INTERVAL '1 second'"))
	l.readState(g)
	g.line("IF x_holder IS NOT NULL AND x_holder <> v_owner AND x_holder_until >= v_now THEN")
	g.in()
	l.raise(g, a, "x_holder", b, "x_holder_until", c)
	g.out()
	g.line("END IF;")
	g.line("IF x_rows = 0 THEN")
	g.in()
	l.exec(g, compiler.StmtInitState, "")
	g.out()
	g.line("END IF;")
	g.line("x_n := 0;")
	l.exec(g, compiler.StmtAcquireLease, "")
	g.line("GET DIAGNOSTICS x_n = ROW_COUNT;")
	g.line("IF x_n <> 1 THEN")
	g.in()
	l.readState(g)
	l.raise(g, a, "x_holder", b, "x_holder_until", c)
	g.out()
	g.line("END IF;")
	l.exec(g, compiler.StmtAbandonRuns, "")
	if !l.redshift {
		g.line("COMMIT;")
	}
	g.line("")
}

// window fixes the window once, as runner/window.go does, and binds it.
func (l *plpgsql) window(g *gen) {
	p, pr := g.p, g.pr
	wm := p.Watermark
	t := g.wmType()
	g.line("-- The window, fixed once.")
	g.line("v_watermark_before := x_saved;")
	g.line("v_expected := COALESCE(x_saved, '');")
	g.line("IF x_until > %s + INTERVAL '5 minutes' THEN", l.clock())
	g.in()
	l.raise(g, "--until ", l.rfc3339("x_until"), " is later than now: a watermark in the future makes every later run read nothing until then; the runner's --allow-future has no equivalent here")
	g.out()
	g.line("END IF;")
	if wm == nil {
		g.line("x_hi := COALESCE(x_until, x_clock);")
		g.line("v_hi := x_hi;")
		g.line("v_watermark := %s;", l.rfc3339("x_hi"))
		g.line("v_window_hi := v_watermark;")
		g.line("v_watermark_after := v_watermark;")
		g.line("v_window := 1;")
		return
	}
	st := g.start()
	startLit := l.startLit(st, t)
	if pr.Lo != compiler.LoNone {
		g.line("v_start := %s;", startLit)
	}
	g.line("IF x_saved IS NOT NULL THEN")
	g.in()
	g.line("x_saved_mark := %s;", l.parseMark("x_saved", t))
	g.out()
	g.line("END IF;")
	switch pr.Hi {
	case compiler.HiSaved:
		g.line("IF x_saved IS NULL THEN")
		g.in()
		l.raise(g, "pipeline "+p.Pipeline+" has not run yet: an append backfill reads up to the watermark, and there is none")
		g.out()
		g.line("END IF;")
		g.line("v_hi := x_saved_mark;")
	case compiler.HiNow:
		if t.IsInteger() {
			g.line("IF x_until IS NOT NULL THEN")
			g.in()
			l.raise(g, "--until does not apply to "+p.Pipeline+": its watermark "+wm.Name+" is an integer, and a run reads up to the largest id present")
			g.out()
			g.line("END IF;")
			g.line("x_step := %s;", l.lit(wm.MaxStatement))
			// The largest id plus one; NULL (no rows): the saved mark, or 0.
			g.line("v_hi := NULL;")
			for _, part := range g.parts(wm.MaxStatement) {
				l.call(g, part, "v_hi")
			}
			g.line("v_hi := COALESCE(v_hi + 1, x_saved_mark, 0);")
		} else {
			hi := "COALESCE(x_until, x_clock - " + interval(micros(wm.Lag.Value)) + ")"
			if t.Kind == compiler.Date {
				hi = "DATE_TRUNC('day', " + hi + ")"
			}
			g.line("x_hi := %s;", hi)
			g.line("v_hi := %s;", l.fromUTC("x_hi", t))
		}
		g.line("IF x_saved IS NOT NULL AND v_hi < x_saved_mark THEN")
		g.in()
		g.line("IF x_until IS NOT NULL THEN")
		g.in()
		l.raise(g, "--until ", l.markText("v_hi", t), " is before the saved watermark ", "x_saved", " of "+p.Pipeline+": the watermark never moves backwards (a backfill rebuilds the past; incrc state --rewind moves it back on purpose)")
		g.out()
		g.line("END IF;")
		g.line("v_hi := x_saved_mark;")
		g.out()
		g.line("END IF;")
		g.line("IF x_saved IS NULL AND v_hi < %s THEN", startLit)
		g.in()
		g.line("IF x_until IS NOT NULL THEN")
		g.in()
		l.raise(g, "--until ", l.markText("v_hi", t), " is before watermark.start "+st.text+" of "+p.Pipeline+": nothing before start is ever read")
		g.out()
		g.line("END IF;")
		g.line("v_hi := %s;", startLit)
		g.out()
		g.line("END IF;")
	}
	g.line("v_watermark := %s;", l.markText("v_hi", t))
	g.line("v_window_hi := v_watermark;")
	g.line("v_watermark_after := v_watermark;")
	if pt := p.Partition; pt != nil && pt.FinalizeAfter.Value > 0 && !t.IsInteger() {
		g.line("IF x_saved IS NOT NULL THEN")
		g.in()
		g.line("x_final := DATE_TRUNC('%s', %s - %s);", pt.Granularity, l.utc("x_saved_mark", t), interval(micros(pt.FinalizeAfter.Value)))
		g.out()
		g.line("END IF;")
	}
	switch pr.Lo {
	case compiler.LoStart:
		g.line("v_lo := v_start;")
	case compiler.LoWatermark:
		g.line("v_lo := COALESCE(x_saved_mark, v_start);")
		var finalize = int64(0)
		if p.Partition != nil {
			finalize = micros(p.Partition.FinalizeAfter.Value)
		}
		switch {
		case t.IsInteger():
			g.line("v_lo := v_lo - %d;", wm.Lookback.Count)
		case finalize > 0 && finalize < micros(wm.Lookback.Value):
			g.line("v_lo := %s;", l.fromUTC(l.utc("v_lo", t)+" - "+interval(finalize), t))
		default:
			g.line("v_lo := %s;", l.fromUTC(l.utc("v_lo", t)+" - "+interval(micros(wm.Lookback.Value)), t))
		}
		g.line("IF v_lo < v_start THEN v_lo := v_start; END IF;")
		g.line("IF v_hi < v_lo THEN v_lo := v_hi; END IF;")
	}
	if pr.Lo != compiler.LoNone {
		g.line("v_window_lo := %s;", l.markText("v_lo", t))
		g.line("IF v_lo < v_hi THEN v_window := 1; END IF;")
	}
}

func (l *plpgsql) startLit(st mark, t compiler.Type) string {
	switch {
	case t.IsInteger():
		return st.n
	case t.Kind == compiler.Date:
		return "DATE " + l.lit(st.t.Format("2006-01-02"))
	case t.Kind == compiler.TimestampTZ:
		return "TIMESTAMPTZ " + l.lit(st.t.Format("2006-01-02 15:04:05.999999")+"+00")
	}
	return "TIMESTAMP " + l.lit(st.t.Format("2006-01-02 15:04:05.999999"))
}

func (l *plpgsql) parseMark(v string, t compiler.Type) string {
	switch {
	case t.IsInteger():
		return "CAST(" + v + " AS BIGINT)"
	case t.Kind == compiler.Date:
		return "CAST(" + v + " AS DATE)"
	case t.Kind == compiler.TimestampTZ:
		return "CAST(" + v + " AS TIMESTAMPTZ)"
	}
	return "CAST(CAST(" + v + " AS TIMESTAMPTZ) AT TIME ZONE 'UTC' AS TIMESTAMP)"
}

// steps walks a program's steps: guards, partitions, registers.
func (l *plpgsql) steps(g *gen, steps []compiler.Step) {
	inTx := false
	for i := 0; i < len(steps); {
		s := steps[i]
		if l.redshift && s.Tx != inTx {
			if s.Tx {
				g.line("START TRANSACTION;")
			} else {
				g.line("COMMIT;")
			}
			inTx = s.Tx
		}
		if !s.Each {
			l.step(g, s)
			i++
			continue
		}
		j := i
		for j < len(steps) && steps[j].Each && steps[j].Tx == s.Tx {
			j++
		}
		if l.redshift {
			// No arrays in Redshift's PL/pgSQL: the list is a session table.
			g.line("FOR x_rec IN SELECT p FROM %s ORDER BY p LOOP", l.partsTable(g))
			g.in()
			g.line("x_part := x_rec.p;")
		} else {
			g.line("FOREACH x_part IN ARRAY COALESCE(x_parts, ARRAY[]::TIMESTAMP[]) LOOP")
			g.in()
		}
		l.bindPartition(g)
		for _, e := range steps[i:j] {
			l.step(g, e)
		}
		g.out()
		g.line("END LOOP;")
		i = j
	}
	if l.redshift && inTx {
		g.line("COMMIT;")
	}
}

func (l *plpgsql) txEnd(g *gen) {}

// partsTable is Redshift's session table of the partition list.
func (l *plpgsql) partsTable(g *gen) string {
	return g.d.QuoteIdent("incrc_parts_" + g.p.Pipeline)
}

func (l *plpgsql) bindPartition(g *gen) {
	pt := g.p.Partition
	if pt == nil {
		g.fail(fmt.Errorf("steps repeat per partition without a partition section"))
		return
	}
	g.line("v_plo := %s;", l.fromUTC("x_part", pt.Type))
	g.line("v_phi := %s;", l.fromUTC("x_part + "+unitInterval(pt.Granularity), pt.Type))
	g.line("v_partition_key := TO_CHAR(x_part, %s);", keyFormat(pt.Granularity))
}

func (l *plpgsql) into(g *gen, s compiler.Step, v string) {
	for _, r := range s.Into {
		if name, ok := strings.CutPrefix(r, "-"); ok {
			g.line("%s := %s - %s;", varName(name), varName(name), v)
		} else {
			g.line("%s := %s + %s;", varName(r), varName(r), v)
		}
	}
}

func (l *plpgsql) usesClock(g *gen, name string) bool {
	for _, part := range g.parts(name) {
		for _, pa := range part.Params {
			if pa == "now" || pa == "finished_at" || pa == "duration_ms" || pa == "updated_at" {
				return true
			}
		}
	}
	return false
}

func (l *plpgsql) step(g *gen, s compiler.Step) {
	l.guarded(g, s, func() {
		g.line("x_step := %s;", l.lit(s.Stmt))
		if l.usesClock(g, s.Stmt) {
			l.tick(g)
			g.line("v_updated_at := v_now;")
		}
		switch s.Read {
		case compiler.ReadNothing, compiler.ReadTypes:
			l.exec(g, s.Stmt, "")
		case compiler.ReadAffected:
			g.line("x_rows := 0;")
			l.exec(g, s.Stmt, "x_rows")
			l.into(g, s, "x_rows")
		case compiler.ReadSwap:
			g.line("x_rows := 0;")
			l.exec(g, s.Stmt, "x_rows")
			a, b := g.swapMessage(s.Stmt)
			g.line("IF x_rows <> 1 THEN")
			g.in()
			l.raise(g, a, "x_rows", b)
			g.out()
			g.line("END IF;")
		case compiler.ReadCount:
			l.count(g, s.Stmt)
			l.into(g, s, "x_n")
			if s.Fail != "" {
				a, b := failParts(s.Fail)
				g.line("IF x_n <> 0 THEN")
				g.in()
				l.raise(g, a, "x_n", b)
				g.out()
				g.line("END IF;")
			}
		case compiler.ReadRows:
			v := "x_source"
			if s.Into[0] == compiler.RegTarget {
				v = "x_target"
			}
			parts := g.parts(s.Stmt)
			g.line("%s := '';", v)
			for _, part := range parts {
				l.loopRows(g, part, func(inner string) string {
					return "SELECT " + l.measuresText(g) + " AS r FROM (\n" + indentText(inner, "  ") + "\n) AS q"
				}, "x_rec")
				g.in()
				g.line("%s := %s || x_rec.r || ';';", v, v)
				g.out()
				g.line("END LOOP;")
			}
		case compiler.ReadPartitions:
			l.partitions(g, s)
		default:
			g.fail(fmt.Errorf("%s: a script does not know how to read %q", s.Stmt, s.Read))
		}
	})
}

// partitions lists the partitions of the window, as the runner does:
// rows of finalized partitions are skipped, rows without one counted.
func (l *plpgsql) partitions(g *gen, s compiler.Step) {
	pt := g.p.Partition
	parts := g.parts(s.Stmt)
	if len(parts) != 1 || pt == nil {
		g.fail(fmt.Errorf("%s: a partition list of %d parts", s.Stmt, len(parts)))
		return
	}
	if l.redshift {
		g.line("DROP TABLE IF EXISTS %s;", l.partsTable(g))
		g.line("CREATE TEMPORARY TABLE %s (p TIMESTAMP);", l.partsTable(g))
	} else {
		g.line("x_parts := ARRAY[]::TIMESTAMP[];")
	}
	l.loopRows(g, parts[0], func(inner string) string {
		return "SELECT " + l.utc("q.p", pt.Type) + " AS p, q.n AS n FROM (\n" + indentText(inner, "  ") + "\n) AS q (p, n) ORDER BY 1"
	}, "x_rec")
	g.in()
	g.line("x_n := x_rec.n;")
	l.into(g, s, "x_n")
	g.line("IF x_rec.p IS NULL THEN")
	g.in()
	g.line("%s := %s + x_n;", varName(compiler.RegUnpartitioned), varName(compiler.RegUnpartitioned))
	g.out()
	g.line("ELSIF x_final IS NOT NULL AND DATE_TRUNC('%s', x_rec.p) < x_final THEN", pt.Granularity)
	g.in()
	g.line("%s := %s + x_n;", varName(compiler.RegSkipped), varName(compiler.RegSkipped))
	g.out()
	g.line("ELSE")
	g.in()
	if l.redshift {
		g.line("INSERT INTO %s VALUES (DATE_TRUNC('%s', x_rec.p));", l.partsTable(g), pt.Granularity)
		g.line("%s := %s + 1;", varName(compiler.RegPartitions), varName(compiler.RegPartitions))
	} else {
		g.line("x_parts := ARRAY_APPEND(x_parts, DATE_TRUNC('%s', x_rec.p));", pt.Granularity)
	}
	g.out()
	g.line("END IF;")
	g.out()
	g.line("END LOOP;")
	if !l.redshift {
		g.line("%s := COALESCE(ARRAY_LENGTH(x_parts, 1), 0);", varName(compiler.RegPartitions))
	}
}

// failed records a failed run after the rollback, as the runner does:
// rows read are what it saw, every other count zero, the watermark where
// it was.
func (l *plpgsql) failed(g *gen) {
	g.line("IF SQLSTATE = 'P0001' THEN")
	g.in()
	g.line("v_error := SQLERRM;")
	g.out()
	g.line("ELSE")
	g.in()
	g.line("v_error := x_step || ': ' || SQLERRM;")
	g.out()
	g.line("END IF;")
	g.line("v_status := 'failed';")
	g.line("v_watermark_after := v_watermark_before;")
	for _, reg := range compiler.Counters {
		if reg != compiler.RegRead {
			g.line("%s := 0;", varName(reg))
		}
	}
	l.tick(g)
	l.exec(g, compiler.StmtRecordFinish, "")
}

// finish runs the cleanup, releases the lease, and fails the call when the
// run failed, after its record is committed.
func (l *plpgsql) finish(g *gen) {
	g.line("-- Then, failed or not: the cleanup, the lease given back.")
	for _, name := range g.pr.Cleanup {
		if l.redshift {
			l.exec(g, name, "") // DROP TABLE IF EXISTS: nothing to fail
			continue
		}
		g.line("BEGIN")
		g.in()
		l.exec(g, name, "")
		g.out()
		g.line("EXCEPTION WHEN OTHERS THEN NULL;")
		g.line("END;")
	}
	l.exec(g, compiler.StmtReleaseLease, "")
	if !l.redshift {
		g.line("COMMIT;")
	}
	g.line("IF v_status = 'failed' THEN")
	g.in()
	g.line("RAISE EXCEPTION '%%', %s;", "v_error")
	g.out()
	g.line("END IF;")
}

// measuresText spells a check row's count and measures (m0, m1, ...) as
// one text, NULL as empty: what the backfill compares.
func (l *plpgsql) measuresText(g *gen) string {
	var out []string
	for i := range g.p.Measures {
		out = append(out, fmt.Sprintf("COALESCE(CAST(q.m%d AS %s), '')", i, l.text()))
	}
	return strings.Join(out, " || ', ' || ")
}

// renderBackfill renders incrc backfill [p_from, p_to): the partitions of
// the range oldest first, each rebuilt by the backfill program in its own
// transaction with its marker, then checked against the source; resumed
// after the partitions an earlier call of the same range finished.
func (l *plpgsql) renderBackfill(g *gen, q string) {
	p, pr := g.p, g.pr
	pt := p.Partition
	how := []string{
		"Create it once (run this file), then, for the partitions that intersect [from, to):",
		"  CALL " + q + "('2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z');",
		"  CALL " + q + "('2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z', p_restart => TRUE);  -- --restart",
		"  CALL " + q + "('2024-01-01T00:00:00Z', '2024-02-01T00:00:00Z', p_restate => TRUE);  -- --restate",
		"Partitions are rebuilt one at a time (no --parallel), every one (no --only-drifted: run incrc reconcile",
		"first); the lease is not renewed (p_lease_seconds must outlast the backfill); no progress output.",
	}
	g.header("-- ", how)
	g.line("CREATE OR REPLACE PROCEDURE %s(p_from TIMESTAMPTZ, p_to TIMESTAMPTZ, p_restart BOOLEAN DEFAULT FALSE, p_restate BOOLEAN DEFAULT FALSE, p_owner %s DEFAULT NULL, p_lease_seconds INTEGER DEFAULT 300)", q, l.text())
	if l.redshift {
		g.line("NONATOMIC")
	}
	g.line("LANGUAGE plpgsql")
	g.line("AS $incrc$")
	l.declare(g)
	g.in()
	g.line("x_from TIMESTAMP;")
	g.line("x_to TIMESTAMP;")
	g.line("x_done %s;", l.text())
	g.line("x_err %s;", l.text())
	g.line("x_total BIGINT := 0;")
	g.line("x_first %s;", l.text())
	g.line("x_last %s;", l.text())
	g.line("x_finalized BIGINT := 0;")
	g.out()
	g.line("BEGIN")
	g.in()
	l.prologue(g)
	g.line("x_from := CAST(p_from AT TIME ZONE 'UTC' AS TIMESTAMP);")
	g.line("x_to := CAST(p_to AT TIME ZONE 'UTC' AS TIMESTAMP);")
	g.line("IF NOT x_from < x_to THEN")
	g.in()
	l.raise(g, "--from must be before --to: the range is [from, to)")
	g.out()
	g.line("END IF;")
	rfcSec := func(v string) string { return "TO_CHAR(" + v + ", 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')" }
	id := "v_pipeline || '|' || " + rfcSec("x_from") + " || '|' || " + rfcSec("x_to") + " || '|' || v_spec_hash"
	if l.redshift {
		g.line("v_backfill_id := SUBSTRING(SHA2(%s, 256), 1, 16);", id)
	} else {
		g.line("v_backfill_id := SUBSTRING(ENCODE(SHA256(CONVERT_TO(%s, 'UTF8')), 'hex'), 1, 16);", id)
	}
	g.line("")
	l.setup(g)
	l.acquire(g)
	// The window the program binds (start, hi), fixed once; a backfill
	// never moves the watermark.
	l.window(g)
	g.line("v_window_lo := %s;", rfcSec("x_from"))
	g.line("v_window_hi := %s;", rfcSec("x_to"))
	g.line("v_watermark_before := x_saved;")
	g.line("v_watermark_after := x_saved;")
	if fa := pt.FinalizeAfter.Value; fa > 0 {
		ref := "x_clock"
		if p.Watermark != nil && !p.Watermark.Type.IsInteger() {
			ref = "COALESCE(" + l.utc("x_saved_mark", g.wmType()) + ", x_clock)"
		}
		g.line("x_final := DATE_TRUNC('%s', %s - %s);", pt.Granularity, ref, interval(micros(fa)))
	}
	g.line("")
	g.line("-- Which partitions: finalized ones need p_restate; those an earlier call finished are skipped.")
	g.line("x_part := DATE_TRUNC('%s', x_from);", pt.Granularity)
	g.line("WHILE x_part < x_to LOOP")
	g.in()
	g.line("IF x_final IS NOT NULL AND x_part < x_final AND NOT p_restate THEN")
	g.in()
	g.line("x_finalized := x_finalized + 1;")
	g.line("x_first := COALESCE(x_first, TO_CHAR(x_part, %s));", keyFormat(pt.Granularity))
	g.line("x_last := TO_CHAR(x_part, %s);", keyFormat(pt.Granularity))
	g.out()
	g.line("END IF;")
	g.line("x_part := x_part + %s;", unitInterval(pt.Granularity))
	g.out()
	g.line("END LOOP;")
	g.line("IF x_finalized > 0 THEN")
	g.in()
	g.line("x_err := x_finalized || ' partition(s) are finalized (older than finalize_after %s before the watermark): ' || x_first || CASE WHEN x_finalized > 1 THEN ' .. ' || x_last ELSE '' END || '; rebuilding them needs --restate';",
		strings.ReplaceAll(pt.FinalizeAfter.Text, "'", "''"))
	l.exec(g, compiler.StmtReleaseLease, "")
	if !l.redshift {
		g.line("COMMIT;")
	}
	g.line("RAISE EXCEPTION '%%', %s;", "x_err")
	g.out()
	g.line("END IF;")
	g.line("IF p_restart THEN")
	g.in()
	l.exec(g, compiler.StmtClearMarkers, "")
	g.out()
	g.line("END IF;")
	g.line("x_done := ';';")
	if parts := g.parts(compiler.StmtReadMarkers); len(parts) == 1 {
		l.loopRows(g, parts[0], func(inner string) string { return inner }, "x_rec")
		g.in()
		g.line("IF x_rec.\"status\" = 'done' THEN x_done := x_done || x_rec.\"partition_key\" || ';'; END IF;")
		g.out()
		g.line("END LOOP;")
	} else {
		g.fail(fmt.Errorf("read_markers has %d parts", len(parts)))
	}
	l.tick(g)
	l.exec(g, compiler.StmtRecordStart, "")
	if !l.redshift {
		g.line("COMMIT;")
	}
	g.line("")
	g.line("-- Each partition, oldest first, in its own transaction; the first failure or mismatch stops the backfill.")
	g.line("x_part := DATE_TRUNC('%s', x_from);", pt.Granularity)
	g.line("WHILE x_part < x_to AND x_err IS NULL LOOP")
	g.in()
	l.bindPartition(g)
	g.line("IF POSITION(';' || v_partition_key || ';' IN x_done) = 0 THEN")
	g.in()
	for _, n := range g.names() {
		if g.kindOf(n) == "int" && !strings.HasPrefix(n, "runs.") {
			g.line("%s := 0;", varName(n))
		}
	}
	g.line("v_marker_status := 'done';")
	g.line("v_detail := NULL;")
	g.line("BEGIN")
	g.in()
	l.steps(g, pr.Steps)
	g.out()
	g.line("EXCEPTION WHEN OTHERS THEN")
	g.in()
	if l.redshift {
		g.line("ROLLBACK;")
	}
	g.line("IF SQLSTATE = 'P0001' THEN x_err := 'partition ' || v_partition_key || ': ' || SQLERRM;")
	g.line("ELSE x_err := 'partition ' || v_partition_key || ': ' || x_step || ': ' || SQLERRM; END IF;")
	g.out()
	g.line("END;")
	for _, name := range pr.Cleanup {
		l.exec(g, name, "")
	}
	measures := make([]string, len(p.Measures))
	for i, m := range p.Measures {
		measures[i] = m.String()
	}
	g.line("IF x_err IS NULL AND x_source <> x_target THEN")
	g.in()
	g.line("v_marker_status := 'failed';")
	g.line("v_detail := 'source [' || x_source || '], target [' || x_target || ']';")
	l.tick(g)
	g.line("v_updated_at := v_now;")
	l.exec(g, compiler.StmtDeleteMarker, "")
	l.exec(g, compiler.StmtInsertMarker, "")
	g.line("x_err := 'partition ' || v_partition_key || ': rebuilt partition does not match the source: source ' || x_source || ', target ' || x_target || %s;", l.lit(" ("+strings.Join(measures, ", ")+")"))
	g.out()
	g.line("ELSIF x_err IS NULL THEN")
	g.in()
	g.line("x_total := x_total + %s;", varName(compiler.RegWritten))
	g.out()
	g.line("END IF;")
	if !l.redshift {
		g.line("COMMIT;")
	}
	g.out()
	g.line("END IF;")
	g.line("x_part := x_part + %s;", unitInterval(pt.Granularity))
	g.out()
	g.line("END LOOP;")
	g.line("")
	g.line("-- The backfill's record: the rows it rebuilt; the watermark it found and left.")
	for _, reg := range compiler.Counters {
		g.line("%s := 0;", varName(reg))
	}
	g.line("%s := x_total;", varName(compiler.RegInserted))
	g.line("%s := x_total;", varName(compiler.RegRead))
	g.line("IF x_err IS NOT NULL THEN")
	g.in()
	g.line("v_status := 'failed';")
	g.line("v_error := x_err;")
	g.out()
	g.line("END IF;")
	l.tick(g)
	l.exec(g, compiler.StmtRecordFinish, "")
	l.exec(g, compiler.StmtReleaseLease, "")
	if !l.redshift {
		g.line("COMMIT;")
	}
	g.line("IF x_err IS NOT NULL THEN")
	g.in()
	g.line("RAISE EXCEPTION '%%', %s;", "x_err")
	g.out()
	g.line("END IF;")
	g.out()
	g.line("END;")
	g.line("$incrc$;")
}
