package script

import (
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects"
)

// snowflake is a Snowflake Scripting stored procedure (LANGUAGE SQL,
// EXECUTE AS CALLER), with the CREATE TASK that schedules it in its
// header. The protocol's statements commit each on its own; the write runs
// in BEGIN TRANSACTION ... COMMIT. The statements' ? markers become the
// procedure's typed variables, :name inside SQL.
type snowflake struct{}

func (l *snowflake) render(g *gen) { (&flow{p: l}).render(g) }

func (l *snowflake) typ(t ir.Type) string {
	switch {
	case t.IsInteger():
		return "NUMBER(38,0)"
	case t.Kind == ir.Date:
		return "DATE"
	case t.Kind == ir.TimestampTZ:
		return "TIMESTAMP_TZ"
	case t.Kind == ir.Timestamp:
		return "TIMESTAMP_NTZ"
	}
	return "VARCHAR"
}

func (l *snowflake) text() string        { return "VARCHAR" }
func (l *snowflake) lit(s string) string { return dialects.DoubledString(s) }
func (l *snowflake) clock() string {
	return "CAST(CONVERT_TIMEZONE('UTC', CURRENT_TIMESTAMP()) AS TIMESTAMP_NTZ)"
}

func (l *snowflake) stateTime(ts string) string {
	return "TO_CHAR(" + ts + ", 'YYYY-MM-DD\"T\"HH24:MI:SS.FF6\"Z\"')"
}

func (l *snowflake) rfc3339(ts string) string {
	us := "FLOOR(DATE_PART(NANOSECOND, " + ts + ") / 1000)"
	return "TO_CHAR(" + ts + ", 'YYYY-MM-DD\"T\"HH24:MI:SS') || IFF(" + us + " = 0, '', '.' || RTRIM(LPAD(CAST(" + us + " AS VARCHAR), 6, '0'), '0')) || 'Z'"
}

func (l *snowflake) utc(v string, t ir.Type) string {
	switch t.Kind {
	case ir.TimestampTZ:
		return "CAST(CONVERT_TIMEZONE('UTC', " + v + ") AS TIMESTAMP_NTZ)"
	case ir.Date:
		return "CAST(" + v + " AS TIMESTAMP_NTZ)"
	}
	return v
}

func (l *snowflake) fromUTC(ts string, t ir.Type) string {
	switch t.Kind {
	case ir.TimestampTZ:
		return "TIMESTAMP_TZ_FROM_PARTS(YEAR(" + ts + "), MONTH(" + ts + "), DAY(" + ts + "), HOUR(" + ts + "), MINUTE(" + ts + "), SECOND(" + ts + "), DATE_PART(NANOSECOND, " + ts + "), 'UTC')"
	case ir.Date:
		return "CAST(" + ts + " AS DATE)"
	}
	return ts
}

func (l *snowflake) addMicros(ts string, us int64) string {
	if us == 0 {
		return ts
	}
	return fmt.Sprintf("DATEADD(MICROSECOND, %d, %s)", us, ts)
}

func (l *snowflake) addSeconds(ts, n string) string { return "DATEADD(SECOND, " + n + ", " + ts + ")" }
func (l *snowflake) millisSince(ts string) string {
	return "DATEDIFF(MILLISECOND, " + ts + ", " + l.clock() + ")"
}
func (l *snowflake) addUnit(ts, g string) string {
	return "DATEADD(" + strings.ToUpper(g) + ", 1, " + ts + ")"
}
func (l *snowflake) trunc(ts, g string) string {
	return "DATE_TRUNC('" + strings.ToUpper(g) + "', " + ts + ")"
}

func (l *snowflake) format(ts, layout string) string {
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

func (l *snowflake) parseMark(v string, t ir.Type) string {
	switch {
	case t.IsInteger():
		return "CAST(" + v + " AS NUMBER(38,0))"
	case t.Kind == ir.Date:
		return "TO_DATE(" + v + ", 'YYYY-MM-DD')"
	case t.Kind == ir.TimestampTZ:
		return "TO_TIMESTAMP_TZ(" + v + ")"
	}
	return "CAST(CONVERT_TIMEZONE('UTC', TO_TIMESTAMP_TZ(" + v + ")) AS TIMESTAMP_NTZ)"
}

func (l *snowflake) startLit(st mark, t ir.Type) string {
	switch {
	case t.IsInteger():
		return st.n
	case t.Kind == ir.Date:
		return "TO_DATE(" + l.lit(st.t.Format("2006-01-02")) + ", 'YYYY-MM-DD')"
	case t.Kind == ir.TimestampTZ:
		return "TO_TIMESTAMP_TZ(" + l.lit(st.t.Format("2006-01-02 15:04:05.999999")+" +00:00") + ")"
	}
	return "TO_TIMESTAMP_NTZ(" + l.lit(st.t.Format("2006-01-02 15:04:05.999999")) + ")"
}

func (l *snowflake) concat(parts ...string) string { return "(" + strings.Join(parts, " || ") + ")" }
func (l *snowflake) str(e string) string           { return "CAST(" + e + " AS VARCHAR)" }

// field reads a column of a cursor's row: unquoted names fold to upper
// case, and the compiled statements quote theirs in upper case.
func (l *snowflake) field(rec, name string) string { return rec + "." + strings.ToUpper(name) }
func (l *snowflake) contains(hay, needle string) string {
	return "CONTAINS(" + hay + ", " + needle + ")"
}
func (l *snowflake) sha16(e string) string { return "SUBSTR(SHA2(" + e + ", 256), 1, 16)" }
func (l *snowflake) random8() string       { return "SUBSTR(UUID_STRING(), 1, 8)" }
func (l *snowflake) sessionID() string     { return "CURRENT_SESSION()" }

func (l *snowflake) declare(g *gen, name, typ string) { g.line("%s %s;", name, typ) }
func (l *snowflake) set(g *gen, v, e string)          { g.line("%s := %s;", v, e) }
func (l *snowflake) ifOpen(g *gen, c string)          { g.line("IF (%s) THEN", c); g.in() }
func (l *snowflake) elseIf(g *gen, c string)          { g.out(); g.line("ELSEIF (%s) THEN", c); g.in() }
func (l *snowflake) elseOpen(g *gen)                  { g.out(); g.line("ELSE"); g.in() }
func (l *snowflake) endIf(g *gen)                     { g.out(); g.line("END IF;") }
func (l *snowflake) whileOpen(g *gen, c string)       { g.line("WHILE (%s) DO", c); g.in() }
func (l *snowflake) whileClose(g *gen)                { g.out(); g.line("END WHILE;") }

// sql spells a part with its ? markers as :variables.
func (l *snowflake) sql(g *gen, part dialects.Part) string {
	s, err := substitute(g.d, part, func(name string) string { return ":" + varName(name) })
	if err != nil {
		g.fail(err)
	}
	return s
}

func (l *snowflake) emit(g *gen, s string) {
	g.raw(indentText(s, strings.Repeat("  ", g.depth)) + "\n")
}

func (l *snowflake) exec(g *gen, part dialects.Part, acc string) {
	l.emit(g, l.sql(g, part)+";")
	if acc != "" {
		g.line("%s := %s + COALESCE(SQLROWCOUNT, 0);", acc, acc)
	}
}

func (l *snowflake) into(g *gen, part dialects.Part, v string) {
	l.emit(g, "SELECT q.$1 INTO :"+v+" FROM (\n"+indentText(l.sql(g, part), "  ")+"\n) AS q;")
}

// loopRows opens a block of its own: a RESULTSET of the query, a cursor
// over it.
func (l *snowflake) loopRows(g *gen, part dialects.Part, wrap func(string) string, rec string, body func()) {
	g.line("BEGIN")
	g.in()
	l.emit(g, "LET x_res RESULTSET := (\n"+indentText(wrap(l.sql(g, part)), "  ")+"\n);")
	g.line("LET x_cur CURSOR FOR x_res;")
	g.line("FOR %s IN x_cur DO", rec)
	g.in()
	body()
	g.out()
	g.line("END FOR;")
	g.out()
	g.line("END;")
}

func (l *snowflake) partsReset(g *gen)          { g.line("x_parts := ARRAY_CONSTRUCT();") }
func (l *snowflake) partsAdd(g *gen, ts string) { g.line("x_parts := ARRAY_APPEND(x_parts, %s);", ts) }
func (l *snowflake) partsCount(g *gen, v string) {
	g.line("%s := ARRAY_SIZE(x_parts);", v)
}

func (l *snowflake) eachOpen(g *gen) {
	g.line("x_i := 0;")
	g.line("WHILE (x_i < ARRAY_SIZE(x_parts)) DO")
	g.in()
	g.line("x_part := CAST(GET(x_parts, x_i) AS TIMESTAMP_NTZ);")
	g.line("x_i := x_i + 1;")
}

func (l *snowflake) eachClose(g *gen) { g.out(); g.line("END WHILE;") }

// raise keeps the message in x_error_text and raises the procedure's own
// exception: Snowflake's exceptions carry a fixed message, the handler
// records this one.
func (l *snowflake) raise(g *gen, pieces ...string) {
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
	g.line("x_error_text := %s;", l.concat(parts...))
	g.line("x_raised := 1;")
	g.line("RAISE x_fail;")
}

func (l *snowflake) reraise(g *gen, v string) {
	g.line("x_error_text := %s;", v)
	g.line("RAISE x_fail;")
}

func (l *snowflake) transactional() bool { return true }

func (l *snowflake) commit(g *gen) {}

func (l *snowflake) txBegin(g *gen) {
	g.line("BEGIN TRANSACTION;")
	g.line("x_in_tx := 1;")
}

func (l *snowflake) txCommit(g *gen) {
	g.line("COMMIT;")
	g.line("x_in_tx := 0;")
}

func (l *snowflake) tryOpen(g *gen) {
	g.line("x_raised := 0;")
	g.line("BEGIN")
	g.in()
}

func (l *snowflake) catchOpen(g *gen) {
	g.out()
	g.line("EXCEPTION")
	g.line("  WHEN OTHER THEN")
	g.in()
	g.line("IF (x_in_tx = 1) THEN")
	g.line("  ROLLBACK;")
	g.line("  x_in_tx := 0;")
	g.line("END IF;")
	g.line("IF (x_raised = 0) THEN")
	g.line("  x_error_text := x_step || ': ' || SQLERRM;")
	g.line("END IF;")
}

func (l *snowflake) tryClose(g *gen) { g.out(); g.line("END;") }

func (l *snowflake) ignoreErrors(g *gen, body func()) {
	g.line("BEGIN")
	g.in()
	body()
	g.out()
	g.line("EXCEPTION")
	g.line("  WHEN OTHER THEN")
	g.line("    x_rc := 0;")
	g.line("END;")
}

func (l *snowflake) open(g *gen, params []param) {
	var ps []string
	for _, p := range params {
		s := p.name + " " + p.typ
		if p.def != "" {
			s += " DEFAULT " + p.def
		}
		ps = append(ps, s)
		g.line("-- %s: %s", p.name, p.doc)
	}
	g.line("CREATE OR REPLACE PROCEDURE %s(%s)", ProcName(g.p.Pipeline, g.pr.Mode), strings.Join(ps, ", "))
	g.line("RETURNS VARCHAR")
	g.line("LANGUAGE SQL")
	g.line("EXECUTE AS CALLER")
	g.line("AS")
	g.line("$$")
	g.line("DECLARE")
	g.in()
}

func (l *snowflake) begin(g *gen) {
	g.line("x_rc NUMBER(38,0);")
	g.line("x_i NUMBER(38,0);")
	g.line("x_raised NUMBER(38,0) DEFAULT 0;")
	g.line("x_in_tx NUMBER(38,0) DEFAULT 0;")
	g.line("x_parts ARRAY;")
	g.line("x_fail EXCEPTION (-20001, 'incrc: the run failed; incrc_runs.error says why');")
	g.out()
	g.line("BEGIN")
	g.in()
	g.line("-- Every time below is UTC by name (CONVERT_TIMEZONE('UTC', ...)); the session's TIMEZONE changes nothing.")
}

func (l *snowflake) close(g *gen) {
	g.line("RETURN 'succeeded';")
	g.out()
	g.line("END;")
	// The body is delimited by $$, which nothing in it can escape: a $$
	// inside (a string literal of a check, say) would end the body there
	// and run the rest as statements of their own. Such a pipeline gets no
	// Snowflake script.
	text := g.b.String()
	if open := strings.Index(text, "\n$$\n"); open >= 0 && strings.Contains(text[open+len("\n$$\n"):], "$$") {
		g.fail(fmt.Errorf("the procedure's body is delimited by $$: %w", ErrDelimiter))
	}
	g.line("$$;")
}

func (l *snowflake) how(g *gen) []string {
	name := ProcName(g.p.Pipeline, g.pr.Mode)
	out := []string{
		"Snowflake: a Snowflake Scripting procedure. The protocol's statements commit each on its own; the write, its",
		"counts, the watermark's compare-and-set and the run's record commit in one BEGIN TRANSACTION. Create it once",
		"(run this file) in the database and schema that hold the state tables, then:",
	}
	if g.pr.Mode == ir.ModeBackfill {
		return append(out, "  CALL "+name+"('2026-01-01 00:00:00 +00:00'::TIMESTAMP_TZ, '2026-02-01 00:00:00 +00:00'::TIMESTAMP_TZ);",
			"Not done here, done by incrc backfill: --parallel, --only-drifted, --dry-run; the lease is not renewed",
			"(p_lease_seconds must outlast the backfill). A failure raises 'incrc: the run failed': incrc_runs.error says why.")
	}
	out = append(out,
		"  CALL "+name+"();",
		"and schedule it with a task:",
		"  CREATE OR REPLACE TASK "+name+" WAREHOUSE = MY_WH SCHEDULE = 'USING CRON */15 * * * * UTC'",
		"    AS CALL "+name+"();",
		"  ALTER TASK "+name+" RESUME;",
		"A failure raises 'incrc: the run failed', so the task's run fails; incrc_runs.error says why.")
	return append(out, notDone...)
}
