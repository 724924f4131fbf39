package script

import (
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
)

// sparkJob is the statement sequence a Spark or Databricks job runs for a
// program, with what the job does around each statement. Spark has SQL
// scripting (Spark 4.0+, Databricks Runtime 16.3+), but a script cannot
// read how many rows a statement changed, and the lease's and the
// watermark's compare-and-set, and the counts the run log keeps, are
// exactly that: on Delta Lake and Iceberg each DML statement returns it
// (num_affected_rows), which a job reads from the statement's result. So
// the file is the job's steps in order, each statement as compiled (?
// markers, bound in the order its params line lists), and a job (a
// notebook task or spark-submit of a small driver) runs them.
type sparkJob struct{}

func (l *sparkJob) render(g *gen) {
	p, pr := g.p, g.pr
	how := []string{
		"Spark / Databricks: the statement sequence a job runs, in order. Spark's SQL scripting (Spark 4.0+, Databricks",
		"Runtime 16.3+) cannot read how many rows a statement changed, which the lease's and the watermark's compare-and-set",
		"and the run log's counts need; Delta Lake's UPDATE, DELETE and MERGE return it (num_affected_rows), and where the",
		"engine returns none (open-source Delta's INSERT, every Iceberg write on Spark) the step's SELECT COUNT(*) statements",
		"around the write give it; so a job runs these statements one by one (a Databricks job's notebook task: spark.sql(text, args) per step, Databricks",
		"Runtime 14.2+ for ? markers) and does what each step's job: line says. Schedule the job (Databricks Jobs: a",
		"schedule trigger; or cron with spark-submit). No statement spans a transaction: each commits on its own, the",
		"write is idempotent and the compare-and-set comes last, so a retry of the same window converges.",
		"Set spark.sql.session.timeZone=UTC. Times the job binds: state times as text YYYY-MM-DDTHH:MM:SS.ffffffZ (UTC),",
		"the watermark as RFC 3339 (UTC), window bounds as the watermark column's type.",
	}
	g.header("-- ", how)
	n := 0
	step := func(name, job string) {
		n++
		parts := g.parts(name)
		g.line("")
		g.line("-- step %d: %s", n, name)
		for _, ln := range strings.Split(job, "\n") {
			g.line("-- job: %s", ln)
		}
		if len(parts) == 0 {
			g.line("-- (nothing to run on %s)", g.d.Name())
		}
		for _, part := range parts {
			if len(part.Params) > 0 {
				g.line("-- params: %s", strings.Join(part.Params, ", "))
			}
			g.raw(part.SQL + ";\n")
		}
	}
	if set := p.Program(compiler.ModeSetup); set != nil && (pr.Setup || pr.Mode == compiler.ModeBackfill) {
		for _, s := range set.Steps {
			job := "run it (idempotent DDL)."
			switch {
			case s.Read == compiler.ReadColumns:
				job = "read the column names of the result; the add_runs_* steps run only for a column not there."
			case columnGuarded(set, s):
				job = "only when the run log lacks the column (see probe_runs)."
			case s.Read == compiler.ReadCount:
				job = "read the count into " + s.Into[0] + "."
			case s.If != "":
				job = "only when " + strings.TrimPrefix(s.If, "!") + " is 0."
			}
			step(s.Stmt, job)
		}
	}
	a, b, c := g.lockedMessage()
	step(compiler.StmtReadState, "read the pipeline's state rows. Two rows: fail with \""+g.duplicateMessage()+"\".\n"+
		"A lease_owner other than the job's own with lease_expires_at >= now: fail with \""+a+"OWNER"+b+"UNTIL"+c+"\".")
	step(compiler.StmtInitState, "only when read_state found no row.")
	acquired := "it must change exactly one\nrow (num_affected_rows)"
	if counted(g.parts(compiler.StmtAcquireLease)) {
		acquired = "the SELECT COUNT(*) after\nit must read exactly one row back"
	}
	step(compiler.StmtAcquireLease, "owner: the job's own id (a run id); expires_at: now plus the lease's time; "+acquired+", or fail as read_state does with the holder it reads again.")
	step(compiler.StmtAbandonRuns, "run it: runs still marked running lost their lease.")
	if pr.Mode == compiler.ModeBackfill {
		l.backfillWindow(g)
		step(compiler.StmtClearMarkers, "only with --restart.")
		step(compiler.StmtReadMarkers, "the partitions of this backfill already done are skipped.")
	} else {
		l.window(g)
	}
	for _, s := range pr.Steps {
		var notes []string
		if s.Each {
			notes = append(notes, "once per partition of the list touched_partitions read, oldest first, binding plo, phi (its range)\nand partition_key")
		}
		if gs := s.Guards(); len(gs) > 0 {
			terms := make([]string, len(gs))
			for i, t := range gs {
				terms[i] = t.Reg + " is not 0"
				if t.Not {
					terms[i] = t.Reg + " is 0"
				}
			}
			notes = append(notes, "only when "+strings.Join(terms, " and "))
		}
		switch s.Read {
		case compiler.ReadAffected:
			if counted(g.parts(s.Stmt)) {
				notes = append(notes, "add the values its SELECT COUNT(*) statements read to "+strings.Join(s.Into, ", ")+" (a leading - subtracts)")
			} else {
				notes = append(notes, "add num_affected_rows to "+strings.Join(s.Into, ", ")+" (a leading - subtracts)")
			}
		case compiler.ReadCount:
			t := "read one integer (NULL is 0)"
			if len(s.Into) > 0 {
				t += " and add it to " + strings.Join(s.Into, ", ") + " (a leading - subtracts)"
			}
			if s.Fail != "" {
				t += "; not 0: fail with \"" + s.Fail + "\""
			}
			notes = append(notes, t)
		case compiler.ReadCounts:
			notes = append(notes, "read one row of integers (NULL is 0), its columns named as the registers, and add each to its register: "+
				strings.Join(s.Into, ", ")+" (a leading - subtracts)")
		case compiler.ReadSwap:
			sa, sb := g.swapMessage(s.Stmt)
			what := "it must change exactly one row (num_affected_rows)"
			if counted(g.parts(s.Stmt)) {
				what = "the SELECT COUNT(*) after it must read exactly one row back"
			}
			notes = append(notes, what+", or fail with \""+sa+"N"+sb+"\"")
		case compiler.ReadPartitions:
			also := ""
			if len(s.Into) > 0 {
				also = " and to " + strings.Join(s.Into, ", ")
			}
			notes = append(notes, "read (partition start, rows): add the rows of a NULL partition to\nunpartitioned"+also+"; rows of a partition that starts before the finalized bound to rows_skipped"+also+", the partition\nleft out; partitions is the number listed")
		case compiler.ReadTypes:
			notes = append(notes, "read the columns' types: each must fit its declared type without loss")
		case compiler.ReadRows:
			notes = append(notes, "keep the row (count and measures) as "+s.Into[0]+": after the partition, source and target must be equal,\nor mark it failed (delete_marker, insert_marker with status failed) and stop")
		}
		if s.Stmt == compiler.StmtRecordFinish {
			notes = append(notes, "status succeeded, the counts, finished_at and duration_ms")
		}
		job := "run it"
		if len(notes) > 0 {
			job = strings.Join(notes, "; ")
		}
		step(s.Stmt, job+".")
	}
	if pr.Mode == compiler.ModeBackfill {
		step(compiler.StmtRecordFinish, "once, after the last partition: rows_read and rows_inserted are the rows of the partitions rebuilt,\nthe watermark before and after as read_state found it; failed, with the error, when a partition failed.")
	}
	for _, name := range pr.Cleanup {
		step(name, "failed or not, after the steps: errors ignored.")
	}
	step(compiler.StmtReleaseLease, "failed or not, last. After a failure, before it: roll nothing back (each statement committed on its\nown), set every count but rows_read to 0 and run record_finish with status failed and the error.")
}

func (l *sparkJob) window(g *gen) {
	p, pr := g.p, g.pr
	var lines []string
	switch {
	case p.Watermark == nil:
		lines = append(lines, "The window: hi is --until or now (a timestamp); watermark is hi as RFC 3339; window is 1.")
	default:
		wm := p.Watermark
		lines = append(lines, fmt.Sprintf("The window, fixed once: start is %s; the saved watermark is read_state's.", g.start().text))
		if wm.Type.IsInteger() {
			lines = append(lines, "hi is the largest "+wm.Name+" plus one ("+wm.MaxStatement+"), else the saved watermark, else 0.")
		} else {
			lines = append(lines, fmt.Sprintf("hi is --until, or now minus the lag (%s)%s; never below the saved watermark (an --until below it fails)",
				wm.Lag.Text, map[bool]string{true: ", truncated to the day", false: ""}[wm.Type.Kind == compiler.Date]),
				"nor, on the first run, below start.")
		}
		if pr.Lo == compiler.LoWatermark {
			lines = append(lines, fmt.Sprintf("lo is the saved watermark (start on the first run) minus the lookback (%s), never below start nor above hi.", wm.Lookback.Text))
		} else {
			lines = append(lines, "lo is start.")
		}
		lines = append(lines, "window is 1 when lo < hi; watermark is hi as saved text; expected is the saved watermark, '' before the first run.")
	}
	if pt := p.Partition; pt != nil && pt.FinalizeAfter.Value > 0 {
		lines = append(lines, "Partitions that start before the saved watermark minus finalize_after ("+pt.FinalizeAfter.Text+") are finalized.")
	}
	g.line("")
	for _, ln := range lines {
		g.line("-- %s", ln)
	}
}

func (l *sparkJob) backfillWindow(g *gen) {
	g.line("")
	g.line("-- The range [from, to): the partitions that intersect it, oldest first. backfill_id is the first 16 hex digits of")
	g.line("-- sha256(pipeline|from|to|spec_hash), from and to as RFC 3339 in UTC (seconds): the same backfill resumes.")
	g.line("-- start and hi as incrc run fixes them; finalized partitions need --restate.")
}

// counted: the statement reads its own count in parts (dialects.CountedWrite,
// dialects.ReadBackUpdate) where the engine reports none.
func counted(parts []dialects.Part) bool {
	for _, p := range parts {
		if p.Reads {
			return true
		}
	}
	return false
}
