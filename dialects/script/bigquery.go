package script

import (
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects"
)

// bigquery is a multi-statement script (GoogleSQL procedural language):
// DECLAREs first, the protocol's statements each atomic on its own, the
// write in BEGIN TRANSACTION ... COMMIT TRANSACTION, failures caught by an
// EXCEPTION handler that rolls back and records the run. The statements'
// ? markers become the script's typed variables.
type bigquery struct{}

func (l *bigquery) render(g *gen) { (&flow{p: l}).render(g) }

func (l *bigquery) typ(t ir.Type) string {
	switch {
	case t.IsInteger():
		return "INT64"
	case t.Kind == ir.Date:
		return "DATE"
	case t.Kind == ir.TimestampTZ:
		return "TIMESTAMP"
	case t.Kind == ir.Timestamp:
		return "DATETIME"
	}
	return "STRING"
}

func (l *bigquery) text() string        { return "STRING" }
func (l *bigquery) lit(s string) string { return dialects.BackslashString(s) }
func (l *bigquery) clock() string       { return "CURRENT_DATETIME('UTC')" }

func (l *bigquery) stateTime(ts string) string {
	return "FORMAT_DATETIME('%Y-%m-%dT%H:%M:%E6SZ', " + ts + ")"
}

func (l *bigquery) rfc3339(ts string) string {
	us := "EXTRACT(MICROSECOND FROM " + ts + ")"
	return "CONCAT(FORMAT_DATETIME('%Y-%m-%dT%H:%M:%S', " + ts + "), IF(" + us + " = 0, '', CONCAT('.', RTRIM(FORMAT('%06d', " + us + "), '0'))), 'Z')"
}

func (l *bigquery) utc(v string, t ir.Type) string {
	switch t.Kind {
	case ir.TimestampTZ:
		return "DATETIME(" + v + ", 'UTC')"
	case ir.Date:
		return "DATETIME(" + v + ")"
	}
	return v
}

func (l *bigquery) fromUTC(ts string, t ir.Type) string {
	switch t.Kind {
	case ir.TimestampTZ:
		return "TIMESTAMP(" + ts + ", 'UTC')"
	case ir.Date:
		return "DATE(" + ts + ")"
	}
	return ts
}

func (l *bigquery) addMicros(ts string, us int64) string {
	switch {
	case us > 0:
		return fmt.Sprintf("DATETIME_ADD(%s, INTERVAL %d MICROSECOND)", ts, us)
	case us < 0:
		return fmt.Sprintf("DATETIME_SUB(%s, INTERVAL %d MICROSECOND)", ts, -us)
	}
	return ts
}

func (l *bigquery) addSeconds(ts, n string) string {
	return "DATETIME_ADD(" + ts + ", INTERVAL " + n + " SECOND)"
}

func (l *bigquery) millisSince(ts string) string {
	return "DATETIME_DIFF(" + l.clock() + ", " + ts + ", MILLISECOND)"
}

func (l *bigquery) addUnit(ts, g string) string {
	return "DATETIME_ADD(" + ts + ", INTERVAL 1 " + strings.ToUpper(g) + ")"
}

func (l *bigquery) trunc(ts, g string) string {
	return "DATETIME_TRUNC(" + ts + ", " + strings.ToUpper(g) + ")"
}

func (l *bigquery) format(ts, layout string) string {
	return "FORMAT_DATETIME('" + layout + "', " + ts + ")"
}

func (l *bigquery) parseMark(v string, t ir.Type) string {
	switch {
	case t.IsInteger():
		return "CAST(" + v + " AS INT64)"
	case t.Kind == ir.Date:
		return "CAST(" + v + " AS DATE)"
	case t.Kind == ir.TimestampTZ:
		return "CAST(" + v + " AS TIMESTAMP)"
	}
	return "DATETIME(CAST(" + v + " AS TIMESTAMP), 'UTC')"
}

func (l *bigquery) startLit(st mark, t ir.Type) string {
	switch {
	case t.IsInteger():
		return st.n
	case t.Kind == ir.Date:
		return "DATE " + l.lit(st.t.Format("2006-01-02"))
	case t.Kind == ir.TimestampTZ:
		return "TIMESTAMP " + l.lit(st.t.Format("2006-01-02 15:04:05.999999")+"+00")
	}
	return "DATETIME " + l.lit(st.t.Format("2006-01-02 15:04:05.999999"))
}

func (l *bigquery) concat(parts ...string) string { return "CONCAT(" + strings.Join(parts, ", ") + ")" }
func (l *bigquery) str(e string) string           { return "CAST(" + e + " AS STRING)" }
func (l *bigquery) field(rec, name string) string { return rec + ".`" + name + "`" }
func (l *bigquery) contains(hay, needle string) string {
	return "STRPOS(" + hay + ", " + needle + ") > 0"
}
func (l *bigquery) sha16(e string) string { return "SUBSTR(TO_HEX(SHA256(" + e + ")), 1, 16)" }
func (l *bigquery) random8() string       { return "SUBSTR(GENERATE_UUID(), 1, 8)" }
func (l *bigquery) sessionID() string     { return "SESSION_USER()" }

func (l *bigquery) declare(g *gen, name, typ string) { g.line("DECLARE %s %s;", name, typ) }
func (l *bigquery) set(g *gen, v, e string)          { g.line("SET %s = %s;", v, e) }
func (l *bigquery) ifOpen(g *gen, c string)          { g.line("IF %s THEN", c); g.in() }
func (l *bigquery) elseIf(g *gen, c string)          { g.out(); g.line("ELSEIF %s THEN", c); g.in() }
func (l *bigquery) elseOpen(g *gen)                  { g.out(); g.line("ELSE"); g.in() }
func (l *bigquery) endIf(g *gen)                     { g.out(); g.line("END IF;") }
func (l *bigquery) whileOpen(g *gen, c string)       { g.line("WHILE %s DO", c); g.in() }
func (l *bigquery) whileClose(g *gen)                { g.out(); g.line("END WHILE;") }

// sql spells a part with its ? markers as the script's variables.
func (l *bigquery) sql(g *gen, part dialects.Part) string {
	s, err := substitute(g.d, part, varName)
	if err != nil {
		g.fail(err)
	}
	return s
}

func (l *bigquery) emit(g *gen, s string) {
	g.raw(indentText(s, strings.Repeat("  ", g.depth)) + "\n")
}

func (l *bigquery) exec(g *gen, part dialects.Part, acc string) {
	l.emit(g, l.sql(g, part)+";")
	if acc != "" {
		g.line("SET %s = %s + COALESCE(@@row_count, 0);", acc, acc)
	}
}

func (l *bigquery) into(g *gen, part dialects.Part, v string) {
	l.emit(g, "SET "+v+" = (\n"+indentText(l.sql(g, part), "  ")+"\n);")
}

func (l *bigquery) loopRows(g *gen, part dialects.Part, wrap func(string) string, rec string, body func()) {
	l.emit(g, "FOR "+rec+" IN (\n"+indentText(wrap(l.sql(g, part)), "  ")+"\n) DO")
	g.in()
	body()
	g.out()
	g.line("END FOR;")
}

func (l *bigquery) partsReset(g *gen) { g.line("SET x_parts = [];") }
func (l *bigquery) partsAdd(g *gen, ts string) {
	g.line("SET x_parts = ARRAY_CONCAT(x_parts, [%s]);", ts)
}
func (l *bigquery) partsCount(g *gen, v string) {
	g.line("SET %s = ARRAY_LENGTH(x_parts);", v)
}

func (l *bigquery) eachOpen(g *gen) {
	g.line("FOR x_prec IN (SELECT p FROM UNNEST(x_parts) AS p ORDER BY p) DO")
	g.in()
	g.line("SET x_part = x_prec.p;")
}

func (l *bigquery) eachClose(g *gen) { g.out(); g.line("END FOR;") }

// raise keeps the message in x_error_text and marks it the script's own:
// the handler then records it as it is, as the runner does.
func (l *bigquery) raise(g *gen, pieces ...string) {
	msg := message(l, pieces...)
	g.line("SET x_error_text = %s;", msg)
	g.line("SET x_raised = 1;")
	g.line("RAISE USING MESSAGE = x_error_text;")
}

func (l *bigquery) reraise(g *gen, v string) { g.line("RAISE USING MESSAGE = %s;", v) }
func (l *bigquery) transactional() bool      { return true }

func (l *bigquery) commit(g *gen) {}

func (l *bigquery) txBegin(g *gen) {
	g.line("BEGIN TRANSACTION;")
	g.line("SET x_in_tx = 1;")
}

func (l *bigquery) txCommit(g *gen) {
	g.line("COMMIT TRANSACTION;")
	g.line("SET x_in_tx = 0;")
}

func (l *bigquery) tryOpen(g *gen) {
	g.line("SET x_raised = 0;")
	g.line("BEGIN")
	g.in()
}

func (l *bigquery) catchOpen(g *gen) {
	g.out()
	g.line("EXCEPTION WHEN ERROR THEN")
	g.in()
	g.line("IF x_in_tx = 1 THEN")
	g.line("  ROLLBACK TRANSACTION;")
	g.line("  SET x_in_tx = 0;")
	g.line("END IF;")
	g.line("IF x_raised = 0 THEN")
	g.line("  SET x_error_text = CONCAT(x_step, ': ', @@error.message);")
	g.line("END IF;")
}

func (l *bigquery) tryClose(g *gen) { g.out(); g.line("END;") }

func (l *bigquery) ignoreErrors(g *gen, body func()) {
	g.line("BEGIN")
	g.in()
	body()
	g.out()
	g.line("EXCEPTION WHEN ERROR THEN")
	g.line("  SET x_rc = 0;")
	g.line("END;")
}

func (l *bigquery) open(g *gen, params []param) {
	g.line("-- Inputs: edit their defaults, or set them from the scheduled query's @run_time.")
	for _, p := range params {
		typ := p.typ
		if typ == "BIGINT" {
			typ = "INT64"
		}
		if typ == "BOOLEAN" {
			typ = "BOOL"
		}
		def := p.def
		if def == "" {
			def = "NULL"
		}
		g.line("DECLARE %s %s DEFAULT %s;  -- %s", p.name, typ, def, p.doc)
	}
}

func (l *bigquery) begin(g *gen) {
	g.line("DECLARE x_rc INT64;")
	g.line("DECLARE x_raised INT64 DEFAULT 0;")
	g.line("DECLARE x_in_tx INT64 DEFAULT 0;")
	g.line("DECLARE x_parts ARRAY<DATETIME>;")
	g.line("-- Every time below is UTC by name (CURRENT_DATETIME('UTC'), DATETIME(ts, 'UTC')): the session's")
	g.line("-- @@time_zone changes nothing here.")
}

func (l *bigquery) close(g *gen) {}

func (l *bigquery) how(g *gen) []string {
	out := []string{
		"BigQuery: a multi-statement script. The protocol's statements are each atomic; the write, its counts, the",
		"watermark's compare-and-set and the run's record commit in one BEGIN TRANSACTION. Unqualified names (the",
		"state tables, the stages) resolve in the default dataset: run it with one (bq query --dataset_id, or",
		"SET @@dataset_id = 'DATASET'; as its first statement). Schedule it as a scheduled query:",
		"  bq mk --transfer_config --data_source=scheduled_query --display_name=" + ProcName(g.p.Pipeline, g.pr.Mode) + " \\",
		"    --schedule='every 15 minutes' --params='{\"query\": \"<this file>\"}'",
	}
	if g.pr.Mode == ir.ModeBackfill {
		return append(out, "Set p_from and p_to above. Not done here, done by incrc backfill: --parallel, --only-drifted, --dry-run;",
			"the lease is not renewed (p_lease_seconds must outlast the backfill).")
	}
	out = append(out, "BigQuery allows a few concurrent DML statements on one table: a run that loses a race fails",
		"at its compare-and-set or with BigQuery's conflict error, commits nothing, and the next run retries.")
	return append(out, notDone...)
}
