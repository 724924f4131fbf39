package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/runner"
)

func runCmd() *command {
	c := &command{
		name:    "run",
		summary: "Run each pipeline once, incrementally: read [watermark - lookback, hi), write, advance the watermark.",
		usage:   "--target URL [flags] [PIPELINE|SPEC|DIR...]",
		example: "incrc run --target duckdb:wh.duckdb                       # every pipeline, hi = now - lag\nincrc run --target postgres://etl@db/wh dw_orders --until 2026-01-27\nincrc run --target sqlite:wh.db dw_orders --full-refresh   # rebuild from the whole source",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p           projectFlags
			tf          targetFlags
			dialect     string
			untilFlag   string
			fullRefresh bool
			dryRun      bool
			allowFuture bool
			force       bool
			reload      bool
			leaseTTL    time.Duration
			output      outputFlags
			allow       bool
		)
		fs := c.flags(e)
		tf.register(fs, "target database URL, or a target named in incrc.yaml")
		tf.registerSources(fs)
		fs.StringVar(&untilFlag, "until", "", "fix the window's upper bound hi: RFC 3339 or a date, UTC (default: now minus watermark.lag)")
		fs.BoolVar(&allowFuture, "allow-future", false, "accept an --until later than now: the watermark then stays ahead, and runs read nothing until the clock passes it")
		fs.BoolVar(&fullRefresh, "full-refresh", false, "rebuild the target from the whole source below hi, and set the watermark to hi")
		fs.BoolVar(&dryRun, "dry-run", false, "print each run's window, the source rows it would read (and partitions it would rewrite) and its statements; write nothing, take no lease, log no run")
		fs.BoolVar(&force, "force", false, "run a program that the compiled file says is refused without --force (a full refresh that would destroy history no source holds)")
		fs.DurationVar(&leaseTTL, "lease-ttl", runner.DefaultLeaseTTL, "how long the lease outlives a run that dies")
		fs.BoolVar(&reload, "reload-rewritten", false, "a files source loaded by file (watermark: {files: new}) loads again the files rewritten in place since they were loaded")
		reviewFlag(fs, &allow)
		output.register(fs)
		// The target's URL says its dialect; --dialect, which compile and
		// plan read as the dialects to write, only asserted it here.
		fs.StringVar(&dialect, "dialect", "", "expected dialect of the target (an error when the URL says otherwise)")
		fs.MarkDeprecated("dialect", "the target URL says the dialect")
		p.register(fs)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		format, ok := output.resolve(c, e)
		if !ok {
			return exitError
		}
		asJSON := format == "json"
		opts := runner.Options{FullRefresh: fullRefresh, Force: force, LeaseTTL: leaseTTL, AllowFuture: allowFuture, Now: e.now, ReloadRewritten: reload}
		if untilFlag != "" {
			u, err := runner.ParseUntil(untilFlag)
			if err != nil {
				c.errorf(e, "%v", err)
				return exitError
			}
			opts.Until = &u
		}
		if dryRun && fullRefresh {
			c.errorf(e, "--dry-run previews an incremental run, and --full-refresh reads the whole source below hi: incrc plan shows its statements")
			return exitError
		}
		if err := checkLeaseTTL(leaseTTL); err != nil {
			c.errorf(e, "%v", err)
			return exitError
		}
		pr, ok := p.load(e, c, fs.Args())
		if !ok {
			return exitError
		}
		plans, err := pr.plans()
		if err != nil {
			return c.fail(e, "%v", err)
		}
		// The first pipeline's run counts from here, the open included:
		// its run log then says what a scheduler timing the command saw.
		opts.Since = time.Now()
		if e.now != nil {
			opts.Since = e.now()
		}
		tg, code := c.open(ctx, e, pr.cfg, tf, dialect)
		if code != exitOK {
			return code
		}
		defer tg.Close()
		notes, ok := c.reviewed(e, pr, pr.chosen, tg.Dialect, allow)
		if !ok {
			return exitError
		}
		clashes, err := pr.clashes(ctx, tg)
		if err != nil {
			return c.fail(e, "%v", err)
		}
		if dryRun {
			// After the checks a run makes first: a dry run is refused
			// where the run would be.
			return dryRunAll(ctx, c, e, tg, plans, opts, clashes, format)
		}
		progress := isTerminal(e.stderr) && !asJSON
		if progress {
			opts.Progress = func(p runner.Progress) { printProgress(e.stderr, p) }
		}
		color := useColor(e, e.stdout)
		for _, plan := range plans {
			if ctx.Err() != nil {
				// Cancelled: the pipelines not started yet are not run.
				c.errorf(e, "%s: not run: cancelled", plan.Pipeline)
				code = exitCancelled
				continue
			}
			if msg, ok := clashes[plan.Pipeline]; ok {
				c.errorf(e, "%s: refused: %s", plan.Pipeline, msg)
				code = exitError
				continue
			}
			opts.Unreviewed = notes[plan.Pipeline]
			hint := fmt.Sprintf("incrc state --target %s --release %s", targetArg(tf.target, tg.URL), plan.Pipeline)
			releaseHint.Store(&hint)
			opts.OnBatch = func(n int, b *runner.Result) {
				// A catch-up's progress, one line a batch, on stderr: each
				// is committed (or failed) when it is printed. It replaces the
				// progress line, which the next statement writes again.
				if progress {
					fmt.Fprint(e.stderr, "\r\033[K")
				}
				fmt.Fprintf(e.stderr, "%s: batch %d [%s, %s) %s: read %d, inserted %d, updated %d, deleted %d, quarantined %d; watermark -> %s (%d ms)\n",
					b.Pipeline, n, orWord(b.WindowLo, "-inf"), b.WindowHi, b.Status, b.RowsRead, b.RowsInserted, b.RowsUpdated, b.RowsDeleted, b.RowsQuarantined,
					orNone(b.WatermarkAfter), b.DurationMS)
			}
			res, err := tg.Run(ctx, plan, opts)
			opts.Since = time.Time{}
			if progress {
				fmt.Fprint(e.stderr, "\r\033[K") // the summary replaces the progress line
			}
			var locked *runner.LockedError
			switch {
			case errors.As(err, &locked):
				locked.Target = targetArg(tf.target, tg.URL)
				c.errorf(e, "%v", err)
				if code == exitOK {
					code = exitLocked
				}
				continue
			case err != nil && res == nil:
				c.errorf(e, "%s: %v", plan.Pipeline, err)
				code = exitError
				continue
			case err != nil:
				code = exitError
			}
			// Without a window the run was refused or failed before it
			// started (setup, the saved watermark, --until): the result has
			// no window or counts to report, and no status of its own.
			started := res.Started
			if err != nil && !started {
				res.Status = "failed"
				if res.Error == "" {
					res.Error = err.Error()
				}
			}
			show(e.stdout, format, runView{res: res, started: started, color: color})
			if err != nil {
				c.errorf(e, "%s failed: %v%s%s", plan.Pipeline, err, missingSourceHint(plan, err, targetArg(tf.target, tg.URL)), migrateHint(plan, err, targetArg(tf.target, tg.URL)))
			}
		}
		return code
	}
	return c
}

// runView is what incrc run prints of one pipeline's run, as it ends.
type runView struct {
	res     *runner.Result
	started bool // a window was fixed: the result has counts to report
	color   bool
}

func (v runView) json() any { return v.res }

func (v runView) text(w io.Writer) {
	if v.started {
		printResult(w, v.res, v.color)
		return
	}
	fmt.Fprintf(w, "%s: %s failed before it started: %s\n", v.res.Pipeline, kindWord(v.res.Kind), v.res.Error)
}

// printProgress rewrites the progress line of a run on a terminal.
func printProgress(w io.Writer, p runner.Progress) {
	parts := ""
	if p.Partitions > 0 {
		parts = fmt.Sprintf(", partition %d/%d", p.PartitionsDone, p.Partitions)
	}
	fmt.Fprintf(w, "\r\033[K%s: %s, %d rows read%s, %s elapsed", p.Pipeline, p.Statement, p.RowsRead, parts, p.Elapsed.Round(100*time.Millisecond))
}

// statusColor is the ANSI colour of a run's status on a terminal.
var statusColor = map[string]string{"succeeded": "32", "failed": "1;31", runner.StatusCancelled: "33"}

func printResult(w io.Writer, r *runner.Result, color bool) {
	status := r.Status
	if c, ok := statusColor[status]; ok && color {
		status = "\033[" + c + "m" + status + "\033[0m"
	}
	lo := r.WindowLo
	if lo == "" {
		lo = "-inf"
	}
	// Changes a newer change of their key superseded (strategy cdc): said
	// only when there are any, so other pipelines' summaries read as before.
	ignored := ""
	if r.RowsIgnored > 0 {
		ignored = fmt.Sprintf(", ignored %d", r.RowsIgnored)
	}
	batches := ""
	if len(r.Batches) > 0 {
		batches = fmt.Sprintf(" in %d %s", len(r.Batches), plural(len(r.Batches), "batch", "batches"))
	}
	fmt.Fprintf(w, "%s: %s %s%s, window [%s, %s): read %d, inserted %d, updated %d, deleted %d, quarantined %d%s; watermark %s -> %s (%d ms)\n",
		r.Pipeline, kindWord(r.Kind), status, batches, lo, r.WindowHi, r.RowsRead, r.RowsInserted, r.RowsUpdated, r.RowsDeleted, r.RowsQuarantined, ignored,
		orNone(r.WatermarkBefore), orNone(r.WatermarkAfter), r.DurationMS)
	if r.RowsSkipped > 0 {
		fmt.Fprintf(w, "  %d %s for finalized partitions skipped: backfill them with --restate\n", r.RowsSkipped, plural(int(r.RowsSkipped), "row", "rows"))
	}
	if r.Note != "" {
		// The files a run of a files source loaded, and the rewritten ones.
		fmt.Fprintf(w, "  %s\n", r.Note)
	}
	for _, ch := range r.Schema {
		switch ch.Kind {
		case "add":
			fmt.Fprintf(w, "  column %s %s added to %s: rows written before hold NULL there until a backfill or a --full-refresh rewrites them\n", ch.Column, ch.To, ch.Table)
		case "widen":
			fmt.Fprintf(w, "  column %s of %s widened in place: %s -> %s\n", ch.Column, ch.Table, ch.From, ch.To)
		default:
			continue
		}
		// The DDL the run decided from the catalog, as it ran: it is in no
		// compiled file (incrc plan --target lists it before the run).
		for _, ddl := range ch.DDL {
			fmt.Fprintf(w, "    %s;\n", strings.ReplaceAll(ddl, "\n", "\n    "))
		}
	}
	if r.HeldBy != "" {
		fmt.Fprintf(w, "  hi held back from %s to %s by upstream %s's watermark: the rest is read once %s has written it\n", r.HeldFrom, r.WindowHi, r.HeldBy, r.HeldBy)
	}
}

func kindWord(k string) string {
	if k == "full_refresh" {
		return "full refresh"
	}
	return k
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// missingSourceHint explains a source table the target database does not
// hold: incrc reads a pipeline's source from its target database.
func missingSourceHint(plan *ir.Plan, err error, target string) string {
	msg := strings.ToLower(err.Error())
	if plan.Source.Query != "" || !strings.Contains(msg, ir.StmtProbeSource) ||
		!(strings.Contains(msg, "does not exist") || strings.Contains(msg, "doesn't exist") || strings.Contains(msg, "no such table")) {
		return ""
	}
	return fmt.Sprintf("\n(incrc reads the source %s from the target database: create it there, or load sample rows with incrc seed --target %s %s --rows FILE)",
		strings.Join(plan.Source.Table.Parts, "."), target, plan.Pipeline)
}

// migrateHint names the command that applies what a run refused to change
// in its tables.
func migrateHint(plan *ir.Plan, err error, target string) string {
	var se *runner.SchemaError
	if !errors.As(err, &se) {
		return ""
	}
	return fmt.Sprintf("\n(incrc migrate --target %s %s --dry-run prints the DDL; without --dry-run it applies it, holding the lease)", target, plan.Pipeline)
}

// dryRunAll previews each pipeline's run: the window it would fix, the
// source rows (and partitions) it would read, and the statements it would
// execute, setup first. It only reads: no lease, no state table created,
// nothing logged.
func dryRunAll(ctx context.Context, c *command, e *env, tg *runner.Target, plans []*ir.Plan, opts runner.Options, clashes map[string]string, format string) int {
	code := exitOK
	for _, plan := range plans {
		if msg, ok := clashes[plan.Pipeline]; ok {
			c.errorf(e, "%s: a run would be refused: %s", plan.Pipeline, msg)
			code = exitError
			continue
		}
		pv, err := tg.PreviewRun(ctx, plan, opts)
		if err != nil {
			c.errorf(e, "%s: %v", plan.Pipeline, err)
			code = exitError
			continue
		}
		steps, err := tg.Steps(plan, ir.ModeSetup, ir.ModeRun)
		if err != nil {
			c.errorf(e, "%s: %v", plan.Pipeline, err)
			code = exitError
			continue
		}
		show(e.stdout, format, dryRunView{pipeline: plan.Pipeline, preview: pv, steps: steps, dialect: string(tg.Dialect.Name())})
	}
	return code
}

// dryRunView is what incrc run --dry-run prints of a pipeline: the window
// it would read, what it would change, and every statement it would
// execute, in order.
type dryRunView struct {
	pipeline string
	preview  *runner.Preview
	steps    []runner.PlannedStep
	dialect  string
}

func (v dryRunView) json() any {
	return map[string]any{"pipeline": v.pipeline, "dry_run": true, "preview": v.preview, "steps": v.steps}
}

func (v dryRunView) text(w io.Writer) {
	lo := v.preview.WindowLo
	if lo == "" {
		lo = "-inf"
	}
	fmt.Fprintf(w, "%s: dry run, nothing written: window [%s, %s), %d source row(s) in the window; watermark %s -> %s if the run succeeds\n",
		v.pipeline, lo, v.preview.WindowHi, v.preview.Rows, orNone(v.preview.Watermark), v.preview.WindowHi)
	if len(v.preview.Partitions) > 0 {
		fmt.Fprintf(w, "  partitions it would rewrite, each read whole: %s\n", strings.Join(v.preview.Partitions, ", "))
	}
	if v.preview.HeldBy != "" {
		fmt.Fprintf(w, "  hi held back by upstream %s's watermark\n", v.preview.HeldBy)
	}
	if v.preview.LeaseOwner != "" {
		fmt.Fprintf(w, "  the lease is held by %s: the run would wait for it or be refused\n", v.preview.LeaseOwner)
	}
	for _, ch := range v.preview.Schema {
		fmt.Fprintf(w, "  schema: %s %s of %s\n", ch.Kind, ch.Column, ch.Table)
	}
	fmt.Fprintf(w, "  the statements it would execute, in order (%s):\n", v.dialect)
	for _, st := range v.steps {
		var notes []string
		if st.If != "" {
			notes = append(notes, "when "+st.If)
		}
		if st.Each {
			notes = append(notes, "for each partition")
		}
		if st.On != "" {
			notes = append(notes, "on the "+st.On)
		}
		note := ""
		if len(notes) > 0 {
			note = " (" + strings.Join(notes, ", ") + ")"
		}
		fmt.Fprintf(w, "    -- %s: %s%s\n", st.Program, st.Name, note)
		for _, q := range st.SQL {
			fmt.Fprintf(w, "    %s;\n", strings.ReplaceAll(strings.TrimRight(q, "; \n"), "\n", "\n    "))
		}
	}
}
