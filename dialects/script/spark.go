package script

import (
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/spark"
)

// sparkScript is a Spark SQL script (SQL scripting, GA in Spark 4.1): one
// compound statement that a job runs as it is. Spark has no multi-statement
// transactions, so the script runs the runner's protocol statement by
// statement, as the runner does on Spark: the write is idempotent and the
// watermark's compare-and-set comes last.
//
// Three things a script cannot do shape it:
//   - read how many rows a statement changed (there is no ROW_COUNT): its
//     statements are spelled as on Iceberg (spark.Dialect.Counted), every
//     count the rows counted before and after a write and every
//     compare-and-set read back, each read into a variable;
//   - read an error's message (no GET DIAGNOSTICS in Spark 4.1): a failed
//     statement is recorded with the step that failed, and the script fails
//     saying so;
//   - put a handler after the statements it guards: an EXIT handler is
//     declared at the start of its block, so a try's body is written first
//     and moved behind its handler when the try closes.
//
// A column of a source table takes the place of a variable of the same
// name in Spark's name resolution, so the statements name every variable
// with its block's label (incrc_script.v_lo); the label is one no table
// of the pipeline is named.
type sparkScript struct {
	label string
	tries []sparkTry
}

// sparkTry is an open try: where its body and its handler start in the
// output, and the depth it opened at.
type sparkTry struct {
	body, handler, depth int
}

func (l *sparkScript) render(g *gen) {
	l.label = scriptLabel(g)
	(&flow{p: l}).render(g)
}

// statements is the dialect a script's statements are spelled with: every
// count read from the statement's own parts (spark.Dialect.Counted).
func (l *sparkScript) statements(d dialects.Dialect) dialects.Dialect {
	return &spark.Dialect{Counted: true}
}

// scriptLabel is incrc_script, or with a number where a statement holds
// that name (a table of the pipeline, a name in the source query).
func scriptLabel(g *gen) string {
	taken := func(label string) bool {
		for _, r := range g.stmts {
			for _, p := range r.Parts {
				if strings.Contains(strings.ToLower(p.SQL), label) {
					return true
				}
			}
		}
		return false
	}
	label := "incrc_script"
	for i := 2; taken(label); i++ {
		label = fmt.Sprintf("incrc_script%d", i)
	}
	return label
}

func (l *sparkScript) typ(t ir.Type) string {
	switch {
	case t.IsInteger():
		return "BIGINT"
	case t.Kind == ir.Date:
		return "DATE"
	case t.Kind == ir.TimestampTZ:
		return "TIMESTAMP"
	case t.Kind == ir.Timestamp:
		return "TIMESTAMP_NTZ"
	}
	return "STRING"
}

func (l *sparkScript) text() string        { return "STRING" }
func (l *sparkScript) lit(s string) string { return dialects.BackslashString(s) }

// clock is now as a naive UTC time: the script checks that the session
// is in UTC before it reads the clock.
func (l *sparkScript) clock() string { return "CAST(current_timestamp() AS TIMESTAMP_NTZ)" }

func (l *sparkScript) stateTime(ts string) string {
	return "date_format(" + ts + ", " + l.lit("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'") + ")"
}

func (l *sparkScript) rfc3339(ts string) string {
	frac := "date_format(" + ts + ", 'SSSSSS')"
	return "concat(date_format(" + ts + ", " + l.lit("yyyy-MM-dd'T'HH:mm:ss") + "), CASE WHEN " + frac +
		" = '000000' THEN '' ELSE concat('.', regexp_replace(" + frac + ", '0+$', '')) END, 'Z')"
}

func (l *sparkScript) utc(v string, t ir.Type) string {
	switch t.Kind {
	case ir.TimestampTZ, ir.Date:
		return "CAST(" + v + " AS TIMESTAMP_NTZ)"
	}
	return v
}

func (l *sparkScript) fromUTC(ts string, t ir.Type) string {
	switch t.Kind {
	case ir.TimestampTZ:
		return "CAST(" + ts + " AS TIMESTAMP)"
	case ir.Date:
		return "CAST(" + ts + " AS DATE)"
	}
	return ts
}

func (l *sparkScript) addMicros(ts string, us int64) string {
	if us == 0 {
		return ts
	}
	return fmt.Sprintf("timestampadd(MICROSECOND, %d, %s)", us, ts)
}

func (l *sparkScript) addSeconds(ts, n string) string {
	return "timestampadd(SECOND, " + n + ", " + ts + ")"
}

func (l *sparkScript) millisSince(ts string) string {
	return "timestampdiff(MILLISECOND, " + ts + ", " + l.clock() + ")"
}

func (l *sparkScript) addUnit(ts, g string) string {
	return "timestampadd(" + strings.ToUpper(g) + ", 1, " + ts + ")"
}

// trunc: date_trunc returns a session-zone TIMESTAMP, cast back.
func (l *sparkScript) trunc(ts, g string) string {
	return "CAST(date_trunc(" + l.lit(strings.ToUpper(g)) + ", " + ts + ") AS TIMESTAMP_NTZ)"
}

func (l *sparkScript) format(ts, layout string) string {
	return "date_format(" + ts + ", " + l.lit(javaLayout(layout)) + ")"
}

// javaLayout spells a strftime-like layout as a datetime pattern: the
// fields as pattern letters, every other letter quoted.
func javaLayout(layout string) string {
	fields := map[byte]string{'Y': "yyyy", 'm': "MM", 'd': "dd", 'H': "HH", 'M': "mm", 'S': "ss"}
	var b strings.Builder
	for i := 0; i < len(layout); i++ {
		c := layout[i]
		if c == '%' && i+1 < len(layout) && fields[layout[i+1]] != "" {
			b.WriteString(fields[layout[i+1]])
			i++
			continue
		}
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' {
			b.WriteString("'" + string(c) + "'")
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

func (l *sparkScript) parseMark(v string, t ir.Type) string {
	switch {
	case t.IsInteger():
		return "CAST(" + v + " AS BIGINT)"
	case t.Kind == ir.Date:
		return "CAST(" + v + " AS DATE)"
	case t.Kind == ir.TimestampTZ:
		return "CAST(" + v + " AS TIMESTAMP)"
	}
	// Saved as RFC 3339 in UTC: read as an instant, then its UTC time.
	return "CAST(CAST(" + v + " AS TIMESTAMP) AS TIMESTAMP_NTZ)"
}

func (l *sparkScript) startLit(st mark, t ir.Type) string {
	switch {
	case t.IsInteger():
		return st.n
	case t.Kind == ir.Date:
		return "DATE " + l.lit(st.t.Format("2006-01-02"))
	case t.Kind == ir.TimestampTZ:
		return "TIMESTAMP " + l.lit(st.t.Format("2006-01-02 15:04:05.999999")+"+00:00")
	}
	return "TIMESTAMP_NTZ " + l.lit(st.t.Format("2006-01-02 15:04:05.999999"))
}

func (l *sparkScript) concat(parts ...string) string {
	return "concat(" + strings.Join(parts, ", ") + ")"
}
func (l *sparkScript) str(e string) string           { return "CAST(" + e + " AS STRING)" }
func (l *sparkScript) field(rec, name string) string { return rec + ".`" + name + "`" }
func (l *sparkScript) contains(hay, needle string) string {
	return "instr(" + hay + ", " + needle + ") > 0"
}
func (l *sparkScript) sha16(e string) string { return "substr(sha2(" + e + ", 256), 1, 16)" }
func (l *sparkScript) random8() string       { return "substr(uuid(), 1, 8)" }
func (l *sparkScript) sessionID() string     { return "current_user()" }

func (l *sparkScript) declare(g *gen, name, typ string) { g.line("DECLARE %s %s;", name, typ) }
func (l *sparkScript) set(g *gen, v, e string)          { g.line("SET %s = %s;", v, e) }
func (l *sparkScript) ifOpen(g *gen, c string)          { g.line("IF %s THEN", c); g.in() }
func (l *sparkScript) elseIf(g *gen, c string)          { g.out(); g.line("ELSEIF %s THEN", c); g.in() }
func (l *sparkScript) elseOpen(g *gen)                  { g.out(); g.line("ELSE"); g.in() }
func (l *sparkScript) endIf(g *gen)                     { g.out(); g.line("END IF;") }
func (l *sparkScript) whileOpen(g *gen, c string)       { g.line("WHILE %s DO", c); g.in() }
func (l *sparkScript) whileClose(g *gen)                { g.out(); g.line("END WHILE;") }

// sql spells a part with its ? markers as the script's variables, named
// with the label.
func (l *sparkScript) sql(g *gen, part dialects.Part) string {
	s, err := substitute(g.d, part, func(name string) string { return l.label + "." + varName(name) })
	if err != nil {
		g.fail(err)
	}
	return s
}

func (l *sparkScript) emit(g *gen, s string) {
	g.raw(indentText(s, strings.Repeat("  ", g.depth)) + "\n")
}

// countsByParts: a statement's count is read from its reading parts only.
func (l *sparkScript) countsByParts() bool { return true }

// exec runs a part; a reading part (a count before or after the write, a
// read-back) is added to acc, and left out where no count is wanted.
func (l *sparkScript) exec(g *gen, part dialects.Part, acc string) {
	if part.Reads {
		if acc != "" {
			l.emit(g, "SET "+acc+" = "+acc+" + COALESCE((\n"+indentText(l.sql(g, part), "  ")+"\n), 0);")
		}
		return
	}
	l.emit(g, l.sql(g, part)+";")
}

func (l *sparkScript) into(g *gen, part dialects.Part, v string) {
	l.emit(g, "SET "+v+" = (\n"+indentText(l.sql(g, part), "  ")+"\n);")
}

func (l *sparkScript) loopRows(g *gen, part dialects.Part, wrap func(string) string, rec string, body func()) {
	l.emit(g, "FOR "+rec+" AS\n"+indentText(wrap(l.sql(g, part)), "  ")+"\nDO")
	g.in()
	body()
	g.out()
	g.line("END FOR;")
}

func (l *sparkScript) partsReset(g *gen) {
	g.line("SET x_parts = CAST(array() AS ARRAY<TIMESTAMP_NTZ>);")
}
func (l *sparkScript) partsAdd(g *gen, ts string) {
	g.line("SET x_parts = array_append(x_parts, %s);", ts)
}
func (l *sparkScript) partsCount(g *gen, v string) { g.line("SET %s = size(x_parts);", v) }

func (l *sparkScript) eachOpen(g *gen) {
	g.line("FOR x_prec AS SELECT p FROM (SELECT explode(%s.x_parts) AS p) ORDER BY p DO", l.label)
	g.in()
	g.line("SET x_part = x_prec.p;")
}

func (l *sparkScript) eachClose(g *gen) { g.out(); g.line("END FOR;") }

// raise keeps the message in x_error_text and marks it the script's own:
// the handler then records it as it is, as the runner does.
func (l *sparkScript) raise(g *gen, pieces ...string) {
	msg := message(l, pieces...)
	g.line("SET x_error_text = %s;", msg)
	g.line("SET x_raised = 1;")
	l.reraise(g, "x_error_text")
}

func (l *sparkScript) reraise(g *gen, v string) { g.line("SET x_rc = raise_error(%s);", v) }

// Every statement commits on its own: nothing to open or commit.
func (l *sparkScript) transactional() bool { return false }

func (l *sparkScript) commit(g *gen)   {}
func (l *sparkScript) txBegin(g *gen)  {}
func (l *sparkScript) txCommit(g *gen) {}

func (l *sparkScript) tryOpen(g *gen) {
	g.line("SET x_raised = 0;")
	g.line("BEGIN")
	g.in()
	l.tries = append(l.tries, sparkTry{body: g.b.Len(), depth: g.depth})
}

// catchOpen starts the handler, one level deeper than the body: it is
// wrapped in the handler's BEGIN ... END when the try closes.
func (l *sparkScript) catchOpen(g *gen) {
	t := &l.tries[len(l.tries)-1]
	t.handler = g.b.Len()
	g.in()
	// A failure the script raised says it all; the engine's cannot be
	// read, so the step that failed is what the run log keeps.
	g.line("IF x_raised = 0 THEN")
	g.line("  SET x_error_text = concat(x_step, %s);", l.lit(": the statement failed (a Spark SQL script cannot read the error's message; incrc run shows it)"))
	g.line("END IF;")
}

// tryClose moves the handler before the body, as Spark declares it.
func (l *sparkScript) tryClose(g *gen) {
	t := l.tries[len(l.tries)-1]
	l.tries = l.tries[:len(l.tries)-1]
	g.out()
	g.out()
	text := g.b.String()
	body, handler := text[t.body:t.handler], text[t.handler:]
	ind := strings.Repeat("  ", t.depth)
	g.b.Reset()
	g.b.WriteString(text[:t.body])
	g.b.WriteString(ind + "DECLARE EXIT HANDLER FOR SQLEXCEPTION\n" + ind + "BEGIN\n")
	g.b.WriteString(handler)
	g.b.WriteString(ind + "END;\n")
	g.b.WriteString(body)
	g.line("END;")
}

func (l *sparkScript) ignoreErrors(g *gen, body func()) {
	g.line("BEGIN")
	g.in()
	g.line("DECLARE EXIT HANDLER FOR SQLEXCEPTION")
	g.line("BEGIN")
	g.line("  SET x_rc = 0;")
	g.line("END;")
	body()
	g.out()
	g.line("END;")
}

// open declares the inputs in an outer block; the statements see only the
// labeled inner one's variables.
func (l *sparkScript) open(g *gen, params []param) {
	g.line("BEGIN")
	g.in()
	g.line("-- Inputs: edit their defaults.")
	for _, p := range params {
		def := p.def
		if def == "" {
			def = "NULL"
		}
		g.line("DECLARE %s %s DEFAULT %s;  -- %s", p.name, p.typ, def, p.doc)
	}
	g.line("%s: BEGIN", l.label)
	g.in()
}

func (l *sparkScript) begin(g *gen) {
	g.line("DECLARE x_rc BIGINT;")
	g.line("DECLARE x_raised BIGINT DEFAULT 0;")
	g.line("DECLARE x_parts ARRAY<TIMESTAMP_NTZ>;")
	g.line("-- Every time below is read and written in the session's zone, which must be UTC, as the compiled")
	g.line("-- statements' partition starts and windows need.")
	l.ifOpen(g, "current_timezone() NOT IN ('UTC', 'Etc/UTC', 'Z', '+00:00', 'GMT')")
	g.line("SET x_rc = raise_error(concat('the session time zone is ', current_timezone(), %s));", l.lit(": this script needs UTC (SET TIME ZONE 'UTC', or spark.sql.session.timeZone=UTC)"))
	l.endIf(g)
}

func (l *sparkScript) close(g *gen) {
	g.out()
	g.line("END %s;", l.label)
	g.out()
	g.line("END")
}

func (l *sparkScript) how(g *gen) []string {
	out := []string{
		"Spark 4.1+ (Databricks Runtime 16.3+): a SQL script, one compound statement. Run the whole file as one",
		"statement: spark.sql(text) from PySpark or Spark Connect, a Databricks SQL task or notebook cell; schedule that",
		"job (Databricks Jobs, cron with spark-submit). Each statement commits on its own (Spark has no multi-statement",
		"transactions): the write is idempotent and the watermark's compare-and-set comes last, so a retry of the same",
		"window converges. The session must be in UTC (the script checks).",
		"A script cannot read how many rows a statement changed: each count is the table's rows counted before and after",
		"the write (exact under the run's lease), and the lease's and the watermark's compare-and-set are read back.",
		"Variables are named with their block's label (" + l.label + ".v_lo) in the statements, so that a column of",
		"the same name never takes their place.",
		"A statement that fails is recorded with the step that failed, not the engine's message: Spark 4.1's SQL",
		"scripting cannot read an error (no GET DIAGNOSTICS); the script then fails naming the step.",
	}
	if g.pr.Mode == ir.ModeBackfill {
		return append(out, "Set p_from and p_to above. Not done here, done by incrc backfill: --parallel, --only-drifted, --dry-run;",
			"the lease is not renewed (p_lease_seconds must outlast the backfill).")
	}
	return append(out, notDone...)
}
