package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/runner"
)

func backfillCmd() *command {
	c := &command{
		name:    "backfill",
		summary: "Rebuild the partitions of [from, to) from the source, oldest first, each checked; resumable; never moves the watermark.",
		usage:   "--target URL PIPELINE --from D --to D [flags]",
		example: "incrc backfill --target duckdb:wh.duckdb dw_events --from 2026-01-03 --to 2026-01-14\nincrc backfill --target postgres://etl@db/wh dw_events --from 2026-01-01 --to 2026-02-01 --only-drifted --parallel 2\nincrc backfill --target duckdb:wh.duckdb dw_events --from 2026-01-03 --to 2026-01-14 --dry-run\n# exit 0: done, 2: a rebuilt partition does not match the source (named), 1: error, 3: locked",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p        projectFlags
			tf       targetFlags
			from, to string
			o        runner.BackfillOptions
			output   outputFlags
			allow    bool
		)
		fs := c.flags(e)
		tf.register(fs, "target database URL, or a target named in incrc.yaml")
		tf.registerSources(fs)
		fs.StringVar(&from, "from", "", "first partition (inclusive): a date or RFC 3339")
		fs.StringVar(&to, "to", "", "end of the range (exclusive)")
		fs.IntVar(&o.Parallel, "parallel", 1, "partitions rebuilt at a time")
		fs.BoolVar(&o.Restart, "restart", false, "redo the partitions an interrupted attempt of this backfill already finished")
		fs.BoolVar(&o.OnlyDrifted, "only-drifted", false, "rebuild only the partitions whose source and target differ")
		fs.BoolVar(&o.Restate, "restate", false, "allow rebuilding partitions older than partition.finalize_after")
		fs.BoolVar(&o.Stale, "stale", false, "rebuild only the partitions built with an older logic than the spec's (--from and --to optional)")
		fs.BoolVar(&o.DryRun, "dry-run", false, "list the partitions and print the SQL; change nothing")
		fs.DurationVar(&o.LeaseTTL, "lease-ttl", runner.DefaultLeaseTTL, "how long the lease outlives a backfill that dies")
		reviewFlag(fs, &allow)
		output.register(fs)
		p.register(fs)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		format, ok := output.resolve(c, e)
		if !ok {
			return exitError
		}
		if err := checkLeaseTTL(o.LeaseTTL); err != nil {
			c.errorf(e, "%v", err)
			return exitError
		}
		if o.Parallel < 1 || o.Parallel > 64 {
			c.errorf(e, "--parallel %d: expected 1..64", o.Parallel)
			return exitError
		}
		var err error
		switch {
		case o.Stale && o.OnlyDrifted:
			c.errorf(e, "--stale and --only-drifted: one at a time")
			return exitError
		case o.Stale && from == "" && to == "":
			// every stale partition: the runner finds the range
		default:
			if o.From, o.To, err = parseRange(from, to); err != nil {
				c.errorf(e, "%v", err)
				return exitError
			}
		}
		pr, ok := p.load(e, c, fs.Args())
		if !ok {
			return exitError
		}
		plan, ok := pr.one(c, e)
		if !ok {
			return exitError
		}
		tg, code := c.open(ctx, e, pr.cfg, tf, "")
		if code != exitOK {
			return code
		}
		defer tg.Close()
		notes, ok := c.reviewed(e, pr, pr.chosen, tg.Dialect, allow)
		if !ok {
			return exitError
		}
		o.Unreviewed = notes[plan.Pipeline]
		progress := isTerminal(e.stderr) && format != "json"
		start := e.now()
		var rows int64
		if progress {
			o.Progress = func(done, total int, pr runner.PartitionResult) {
				rows += pr.Rows
				elapsed := e.now().Sub(start)
				left := time.Duration(float64(elapsed) / float64(done) * float64(total-done))
				fmt.Fprintf(e.stderr, "\r\033[K%s: %d/%d partitions, %d rows written, %s elapsed, about %s left", plan.Pipeline, done, total, rows, elapsed.Round(time.Second), left.Round(time.Second))
			}
		}
		if clashes, err := pr.clashes(ctx, tg); err != nil {
			return c.fail(e, "%v", err)
		} else if msg, ok := clashes[plan.Pipeline]; ok {
			return c.fail(e, "%s: refused: %s", plan.Pipeline, msg)
		}
		res, err := tg.Backfill(ctx, plan, o)
		if progress {
			fmt.Fprintln(e.stderr)
		}
		var locked *runner.LockedError
		switch {
		case errors.As(err, &locked):
			locked.Target = targetArg(tf.target, tg.URL)
			c.errorf(e, "%v", err)
			return exitLocked
		case res == nil || res.Partitions == nil:
			c.errorf(e, "%v", err)
			return exitError
		case o.Stale && len(res.Partitions) == 0 && err == nil:
			show(e.stdout, format, backfillView{plan: plan, res: res, opts: o, nothingStale: true})
			return exitOK
		}
		v := backfillView{plan: plan, res: res, opts: o, color: useColor(e, e.stdout)}
		var sqlErr error
		if o.DryRun {
			v.sql, sqlErr = backfillSQL(tg.Dialect, plan)
		}
		show(e.stdout, format, v)
		if sqlErr != nil {
			c.errorf(e, "%v", sqlErr)
			return exitError
		}
		switch {
		case errors.Is(err, runner.ErrMismatch):
			c.errorf(e, "stopped: %v", err)
			return exitChanges
		case err != nil:
			c.errorf(e, "%v", err)
			return exitError
		}
		return exitOK
	}
	return c
}

func parseRange(from, to string) (time.Time, time.Time, error) {
	lo, err := parseDay("--from", from)
	if err != nil {
		return lo, lo, err
	}
	hi, err := parseDay("--to", to)
	if err != nil {
		return lo, hi, err
	}
	if !lo.Before(hi) {
		return lo, hi, fmt.Errorf("--from %s must be before --to %s: the range is [from, to)", from, to)
	}
	return lo, hi, nil
}

// backfillView is what incrc backfill prints: the partitions of the range
// as a grid and a count per status, why it stopped, and with --dry-run
// the statements each partition runs.
type backfillView struct {
	plan *ir.Plan
	res  *runner.BackfillResult
	opts runner.BackfillOptions
	// nothingStale: --stale found no partition to rebuild.
	nothingStale bool
	sql          string // the dry run's statements (backfillSQL)
	color        bool
}

func (v backfillView) json() any { return v.res }

// indent: the one-line answer that nothing is stale stays one line.
func (v backfillView) indent() string {
	if v.nothingStale {
		return ""
	}
	return "  "
}

func (v backfillView) text(w io.Writer) {
	plan, res := v.plan, v.res
	if v.nothingStale {
		fmt.Fprintf(w, "%s: no partition was built with an older logic than the spec's: nothing to rebuild\n", plan.Pipeline)
		return
	}
	verb := "backfill"
	if v.opts.DryRun {
		verb = "backfill plan (dry run: nothing changed)"
	}
	fmt.Fprintf(w, "%s: %s of [%s, %s), id %s; watermark %s (a backfill never moves it)\n\n", plan.Pipeline, verb, res.From[:10], res.To[:10], res.BackfillID, orNone(res.Watermark))
	keys := make([]string, len(res.Partitions))
	status := map[string]string{}
	counts := map[string]int{}
	for i, p := range res.Partitions {
		keys[i] = p.Key
		status[p.Key] = p.Status
		counts[p.Status]++
	}
	printGrid(w, v.color, keys, status)
	var parts []string
	for _, c := range cells {
		if n := counts[c.status]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, c.status))
		}
	}
	fmt.Fprintf(w, "\n%d partition(s): %s.\n", len(keys), strings.Join(parts, ", "))
	if res.Note != "" {
		fmt.Fprintf(w, "Note: %s.\n", res.Note)
	}
	if m := res.Mismatch; m != nil {
		fmt.Fprintf(w, "Stopped at %s: source %s, target %s (%s).\n", m.Key, strings.Join(m.Source, ", "), strings.Join(m.Target, ", "), strings.Join(res.Measures, ", "))
	}
	for _, p := range res.Partitions {
		if p.Status == runner.PartFailed && p.Error != "" && (res.Mismatch == nil || p.Key != res.Mismatch.Key) {
			fmt.Fprintf(w, "%s failed: %s\n", p.Key, p.Error)
		}
	}
	fmt.Fprint(w, v.sql)
}

// backfillSQL is the backfill program's statements, in the order it runs
// them for each partition.
func backfillSQL(d dialects.Dialect, plan *ir.Plan) (string, error) {
	var b strings.Builder
	pr := plan.Program(ir.ModeBackfill)
	fmt.Fprintf(&b, "\nFor each pending partition [plo, phi):\n")
	for _, line := range pr.Listing() {
		fmt.Fprintf(&b, "-- %s\n", line)
	}
	for _, s := range pr.Steps {
		parts, err := dialects.RenderStatement(d, plan.Statement(s.Stmt))
		if err != nil {
			return "", err
		}
		for _, p := range parts {
			fmt.Fprintf(&b, "\n-- name: %s\n%s;\n", s.Stmt, p.SQL)
		}
	}
	return b.String(), nil
}
