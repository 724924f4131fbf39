package script

import (
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects"
)

// plpgsql is a stored procedure: PostgreSQL 15 (CALL, with COMMIT between
// the protocol's steps, and the program's steps in one subtransaction) or
// Redshift (NONATOMIC: each statement commits on its own, the write
// transaction is opened and committed explicitly, as the runner does).
//
// PostgreSQL binds each statement's markers with EXECUTE ... USING the
// script's typed variables: the compiled text runs as it is. Redshift's
// EXECUTE has no USING: its statements are static SQL with the markers
// replaced by the variables, which PL/pgSQL binds as typed parameters.
type plpgsql struct {
	redshift bool
}

func (l *plpgsql) render(g *gen) { (&flow{p: l}).render(g) }

func (l *plpgsql) typ(t ir.Type) string {
	switch {
	case t.IsInteger():
		return "BIGINT"
	case t.Kind == ir.Date:
		return "DATE"
	case t.Kind == ir.TimestampTZ:
		return "TIMESTAMPTZ"
	case t.Kind == ir.Timestamp:
		return "TIMESTAMP"
	}
	return l.text()
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

// clock is the time now, a naive UTC timestamp: CLOCK_TIMESTAMP moves
// within a transaction; Redshift's GETDATE is the statement's start, UTC.
func (l *plpgsql) clock() string {
	if l.redshift {
		return "GETDATE()"
	}
	return "CAST(CLOCK_TIMESTAMP() AT TIME ZONE 'UTC' AS TIMESTAMP)"
}

func (l *plpgsql) stateTime(ts string) string {
	return "TO_CHAR(" + ts + ", 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
}

func (l *plpgsql) rfc3339(ts string) string {
	frac := "CAST(EXTRACT(MICROSECONDS FROM " + ts + ") AS BIGINT) % 1000000"
	return "TO_CHAR(" + ts + ", 'YYYY-MM-DD\"T\"HH24:MI:SS') || CASE WHEN " + frac + " = 0 THEN '' ELSE '.' || RTRIM(TO_CHAR(" + frac + ", 'FM000000'), '0') END || 'Z'"
}

func (l *plpgsql) utc(v string, t ir.Type) string {
	switch t.Kind {
	case ir.TimestampTZ:
		return "CAST(" + v + " AT TIME ZONE 'UTC' AS TIMESTAMP)"
	case ir.Date:
		return "CAST(" + v + " AS TIMESTAMP)"
	}
	return v
}

func (l *plpgsql) fromUTC(ts string, t ir.Type) string {
	switch t.Kind {
	case ir.TimestampTZ:
		return "(" + ts + " AT TIME ZONE 'UTC')"
	case ir.Date:
		return "CAST(" + ts + " AS DATE)"
	}
	return ts
}

func (l *plpgsql) addMicros(ts string, us int64) string {
	switch {
	case us > 0:
		return fmt.Sprintf("(%s + INTERVAL '%d microseconds')", ts, us)
	case us < 0:
		return fmt.Sprintf("(%s - INTERVAL '%d microseconds')", ts, -us)
	}
	return ts
}

func (l *plpgsql) addSeconds(ts, n string) string {
	return "(" + ts + " + " + n + " * INTERVAL '1 second')"
}

func (l *plpgsql) millisSince(ts string) string {
	return "CAST(EXTRACT(EPOCH FROM (" + l.clock() + " - " + ts + ")) * 1000 AS BIGINT)"
}

func (l *plpgsql) addUnit(ts, g string) string {
	return "(" + ts + " + INTERVAL '1 " + g + "')"
}

func (l *plpgsql) trunc(ts, g string) string {
	return "DATE_TRUNC('" + g + "', " + ts + ")"
}

// format spells a strftime-like layout with TO_CHAR.
func (l *plpgsql) format(ts, layout string) string {
	var b strings.Builder
	for i := 0; i < len(layout); i++ {
		c := layout[i]
		if c == '%' && i+1 < len(layout) {
			i++
			b.WriteString(map[byte]string{'Y': "YYYY", 'm': "MM", 'd': "DD", 'H': "HH24", 'M': "MI", 'S': "SS"}[layout[i]])
			continue
		}
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			b.WriteString(`"` + string(c) + `"`)
			continue
		}
		b.WriteByte(c)
	}
	return "TO_CHAR(" + ts + ", '" + b.String() + "')"
}

func (l *plpgsql) parseMark(v string, t ir.Type) string {
	switch {
	case t.IsInteger():
		return "CAST(" + v + " AS BIGINT)"
	case t.Kind == ir.Date:
		return "CAST(" + v + " AS DATE)"
	case t.Kind == ir.TimestampTZ:
		return "CAST(" + v + " AS TIMESTAMPTZ)"
	}
	return "CAST(CAST(" + v + " AS TIMESTAMPTZ) AT TIME ZONE 'UTC' AS TIMESTAMP)"
}

func (l *plpgsql) startLit(st mark, t ir.Type) string {
	switch {
	case t.IsInteger():
		return st.n
	case t.Kind == ir.Date:
		return "DATE " + l.lit(st.t.Format("2006-01-02"))
	case t.Kind == ir.TimestampTZ:
		return "TIMESTAMPTZ " + l.lit(st.t.Format("2006-01-02 15:04:05.999999")+"+00")
	}
	return "TIMESTAMP " + l.lit(st.t.Format("2006-01-02 15:04:05.999999"))
}

func (l *plpgsql) concat(parts ...string) string { return "(" + strings.Join(parts, " || ") + ")" }

func (l *plpgsql) str(e string) string { return "CAST(" + e + " AS " + l.text() + ")" }

func (l *plpgsql) field(rec, name string) string { return rec + `."` + name + `"` }

func (l *plpgsql) contains(hay, needle string) string {
	return "POSITION(" + needle + " IN " + hay + ") > 0"
}

func (l *plpgsql) sha16(e string) string {
	if l.redshift {
		return "SUBSTRING(SHA2(" + e + ", 256), 1, 16)"
	}
	return "SUBSTRING(ENCODE(SHA256(CONVERT_TO(" + e + ", 'UTF8')), 'hex'), 1, 16)"
}

func (l *plpgsql) random8() string {
	return "SUBSTRING(MD5(CAST(RANDOM() AS " + l.text() + ")), 1, 8)"
}

func (l *plpgsql) sessionID() string { return "CAST(PG_BACKEND_PID() AS " + l.text() + ")" }

func (l *plpgsql) declare(g *gen, name, typ string) { g.line("%s %s;", name, typ) }

func (l *plpgsql) set(g *gen, v, e string) { g.line("%s := %s;", v, e) }

func (l *plpgsql) ifOpen(g *gen, cond string) { g.line("IF %s THEN", cond); g.in() }
func (l *plpgsql) elseIf(g *gen, cond string) { g.out(); g.line("ELSIF %s THEN", cond); g.in() }
func (l *plpgsql) elseOpen(g *gen)            { g.out(); g.line("ELSE"); g.in() }
func (l *plpgsql) endIf(g *gen)               { g.out(); g.line("END IF;") }
func (l *plpgsql) whileOpen(g *gen, c string) { g.line("WHILE %s LOOP", c); g.in() }
func (l *plpgsql) whileClose(g *gen)          { g.out(); g.line("END LOOP;") }

// sql spells a part for the procedure: the statement and its USING list
// on PostgreSQL, the static statement on Redshift.
func (l *plpgsql) sql(g *gen, part dialects.Part, wrap func(string) string) (text, using string) {
	if wrap == nil {
		wrap = func(s string) string { return s }
	}
	if l.redshift {
		s, err := substitute(g.d, part, func(name string) string { return varName(name) })
		if err != nil {
			g.fail(err)
		}
		return wrap(s), ""
	}
	if len(part.Params) > 0 {
		vars := make([]string, len(part.Params))
		for i, p := range part.Params {
			vars[i] = varName(p)
		}
		using = " USING " + strings.Join(vars, ", ")
	}
	return "EXECUTE " + dollar(wrap(part.SQL)), using
}

func (l *plpgsql) emit(g *gen, s string) {
	g.raw(indentText(s, strings.Repeat("  ", g.depth)) + "\n")
}

func (l *plpgsql) exec(g *gen, part dialects.Part, acc string) {
	text, using := l.sql(g, part, nil)
	l.emit(g, text+using+";")
	if acc != "" {
		g.line("GET DIAGNOSTICS x_rc := ROW_COUNT;")
		g.line("%s := %s + x_rc;", acc, acc)
	}
}

func (l *plpgsql) into(g *gen, part dialects.Part, v string) {
	if l.redshift {
		text, _ := l.sql(g, part, func(s string) string { return "SELECT * FROM (\n" + indentText(s, "  ") + "\n) AS incrc_q" })
		l.emit(g, "SELECT INTO "+v+" "+strings.TrimPrefix(text, "SELECT ")+";")
		return
	}
	text, using := l.sql(g, part, nil)
	l.emit(g, text+" INTO "+v+using+";")
}

func (l *plpgsql) loopRows(g *gen, part dialects.Part, wrap func(string) string, rec string, body func()) {
	text, using := l.sql(g, part, wrap)
	l.emit(g, "FOR "+rec+" IN "+text+using+" LOOP")
	g.in()
	body()
	g.out()
	g.line("END LOOP;")
}

// The partition list: an array on PostgreSQL; Redshift's PL/pgSQL has no
// arrays, so there it is a session table.
func (l *plpgsql) partsTable(g *gen) string {
	return g.d.QuoteIdent("incrc_parts_" + g.p.Pipeline)
}

func (l *plpgsql) partsReset(g *gen) {
	if l.redshift {
		g.line("DROP TABLE IF EXISTS %s;", l.partsTable(g))
		g.line("CREATE TEMPORARY TABLE %s (p TIMESTAMP);", l.partsTable(g))
		return
	}
	g.line("x_parts := ARRAY[]::TIMESTAMP[];")
}

func (l *plpgsql) partsAdd(g *gen, ts string) {
	if l.redshift {
		g.line("INSERT INTO %s VALUES (%s);", l.partsTable(g), ts)
		return
	}
	g.line("x_parts := ARRAY_APPEND(x_parts, %s);", ts)
}

func (l *plpgsql) partsCount(g *gen, v string) {
	if l.redshift {
		g.line("SELECT INTO %s COUNT(*) FROM %s;", v, l.partsTable(g))
		return
	}
	g.line("%s := COALESCE(ARRAY_LENGTH(x_parts, 1), 0);", v)
}

func (l *plpgsql) eachOpen(g *gen) {
	if l.redshift {
		g.line("FOR x_prec IN SELECT p FROM %s ORDER BY p LOOP", l.partsTable(g))
		g.in()
		g.line("x_part := x_prec.p;")
		return
	}
	g.line("FOREACH x_part IN ARRAY COALESCE(x_parts, ARRAY[]::TIMESTAMP[]) LOOP")
	g.in()
}

func (l *plpgsql) eachClose(g *gen) { g.out(); g.line("END LOOP;") }

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

func (l *plpgsql) reraise(g *gen, v string) { g.line("RAISE EXCEPTION '%%', %s;", v) }

func (l *plpgsql) transactional() bool { return true }

func (l *plpgsql) commit(g *gen) {
	if !l.redshift {
		g.line("COMMIT;")
	}
}

func (l *plpgsql) txBegin(g *gen) {
	if l.redshift {
		g.line("START TRANSACTION;")
	}
}

func (l *plpgsql) txCommit(g *gen) {
	if l.redshift {
		g.line("COMMIT;")
	}
}

func (l *plpgsql) tryOpen(g *gen) { g.line("BEGIN"); g.in() }

func (l *plpgsql) catchOpen(g *gen) {
	g.out()
	g.line("EXCEPTION WHEN OTHERS THEN")
	g.in()
	if l.redshift {
		g.line("ROLLBACK;")
	}
	// A failure the script raised says it all; the server's is prefixed
	// with the step, as the runner's is.
	g.line("IF SQLSTATE = 'P0001' THEN")
	g.line("  x_error_text := SQLERRM;")
	g.line("ELSE")
	g.line("  x_error_text := x_step || ': ' || SQLERRM;")
	g.line("END IF;")
}

func (l *plpgsql) tryClose(g *gen) { g.out(); g.line("END;") }

func (l *plpgsql) ignoreErrors(g *gen, body func()) {
	g.line("BEGIN")
	g.in()
	body()
	g.out()
	g.line("EXCEPTION WHEN OTHERS THEN NULL;")
	g.line("END;")
}

func (l *plpgsql) open(g *gen, params []param) {
	var ps []string
	for _, p := range params {
		s := p.name + " " + p.typ
		if p.def != "" && !l.redshift {
			s += " DEFAULT " + p.def // Redshift's procedures take no defaults: a CALL passes every argument
		}
		ps = append(ps, s)
	}
	for _, p := range params {
		g.line("-- %s: %s", p.name, p.doc)
	}
	g.line("CREATE OR REPLACE PROCEDURE %s(%s)", g.d.QuoteIdent(ProcName(g.p.Pipeline, g.pr.Mode)), strings.Join(ps, ", "))
	if l.redshift {
		g.line("NONATOMIC")
	}
	g.line("LANGUAGE plpgsql")
	g.line("AS $incrc$")
	g.line("DECLARE")
	g.in()
}

func (l *plpgsql) begin(g *gen) {
	g.line("x_rc BIGINT;")
	g.line("x_rec RECORD;")
	if l.redshift {
		g.line("x_prec RECORD;")
	} else {
		g.line("x_parts TIMESTAMP[];")
	}
	g.out()
	g.line("BEGIN")
	g.in()
}

func (l *plpgsql) close(g *gen) {
	g.out()
	g.line("END;")
	// The body is quoted with $incrc$: a statement holding that tag (a
	// string literal of a check, say) would end it there and run the rest
	// as statements of their own. Such a pipeline gets no procedure.
	text := g.b.String()
	if open := strings.Index(text, "\nAS $incrc$\n"); open >= 0 && strings.Contains(text[open+len("\nAS $incrc$\n"):], "$incrc$") {
		g.fail(fmt.Errorf("the procedure's body is quoted with $incrc$: %w", ErrDelimiter))
	}
	g.line("$incrc$;")
}

func (l *plpgsql) how(g *gen) []string {
	q := g.d.QuoteIdent(ProcName(g.p.Pipeline, g.pr.Mode))
	var out []string
	if l.redshift {
		out = append(out, "Redshift: a NONATOMIC stored procedure. Each protocol statement commits on its own and the write runs",
			"in one explicit transaction, as the runner does. Create it once (run this file), then:")
	} else {
		out = append(out, "PostgreSQL 15+: a procedure. Create it once (run this file), then call it outside a transaction",
			"block (it commits between the lease, the write and the release):")
	}
	if g.pr.Mode == ir.ModeBackfill {
		args := ""
		if l.redshift {
			args = ", FALSE, FALSE, NULL, 3600" // no defaults on Redshift
		}
		out = append(out,
			"  CALL "+q+"('2026-01-01T00:00:00Z', '2026-02-01T00:00:00Z'"+args+");",
			"(then p_restart, p_restate: --restart, --restate; p_owner; p_lease_seconds)",
			"Not done here, done by incrc backfill: --parallel, --only-drifted (run incrc reconcile first), --dry-run;",
			"the lease is not renewed while partitions are rebuilt (p_lease_seconds must outlast the backfill).")
		return out
	}
	if l.redshift {
		out = append(out, "  CALL "+q+"(NULL, NULL, 300);                         -- hi = now minus the lag",
			"  CALL "+q+"('2026-01-02 00:00:00+00', NULL, 300);   -- --until")
	} else {
		out = append(out, "  CALL "+q+"();                              -- hi = now minus the lag",
			"  CALL "+q+"('2026-01-02T00:00:00Z');      -- --until")
	}
	if l.redshift {
		out = append(out, "Schedule the CALL as a scheduled query (Redshift query editor v2, or EventBridge Scheduler with the Data API).")
	} else {
		out = append(out, "Schedule it with pg_cron:",
			"  SELECT cron.schedule('"+ProcName(g.p.Pipeline, g.pr.Mode)+"', '*/15 * * * *', 'CALL "+strings.ReplaceAll(q, "'", "''")+"()');")
	}
	return append(out, notDone...)
}

// notDone is what every run script leaves to the runner.
var notDone = []string{
	"Not done here, done by incrc run: source column types are not checked against the declared ones (the probe",
	"fails only on a missing column); the lease is not renewed while the write runs (p_lease_seconds must outlast a",
	"run: one that outlives it fails at its compare-and-set); no --allow-future, no progress output.",
}

// dollar quotes SQL for EXECUTE with a tag the text does not hold.
func dollar(s string) string {
	tag := "$s$"
	for i := 0; strings.Contains(s, tag); i++ {
		tag = fmt.Sprintf("$s%d$", i)
	}
	return tag + s + tag
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
