package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/runner"
)

func reconcileCmd() *command {
	c := &command{
		name:    "reconcile",
		summary: "Compare source and target per reconcile.by value in [from, to): count and each measure.",
		usage:   "--target URL PIPELINE --from D --to D [flags]",
		example: "incrc reconcile --target duckdb:wh.duckdb dw_orders --from 2026-01-01 --to 2026-02-01\n# exit 0: match, 2: drift (the drifting values are named), 1: error",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p        projectFlags
			tf       targetFlags
			from, to string
			output   outputFlags
			allow    bool
		)
		fs := c.flags(e)
		tf.register(fs, "target database URL, or a target named in incrc.yaml")
		tf.registerSources(fs)
		fs.StringVar(&from, "from", "", "first value of reconcile.by to compare (inclusive): a date or RFC 3339")
		fs.StringVar(&to, "to", "", "end of the range (exclusive)")
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
		lo, err := parseDay("--from", from)
		var hi time.Time
		if err == nil {
			hi, err = parseDay("--to", to)
		}
		if err == nil && !lo.Before(hi) {
			err = fmt.Errorf("--from %s must be before --to %s: the range is [from, to)", from, to)
		}
		if err != nil {
			c.errorf(e, "%v", err)
			return exitError
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
		if _, ok := c.reviewed(e, pr, pr.chosen, tg.Dialect, allow); !ok {
			return exitError
		}
		rec, err := tg.Reconcile(ctx, plan, lo, hi)
		if err != nil {
			c.errorf(e, "%v", err)
			return exitError
		}
		show(e.stdout, format, reconcileView{plan: plan, rec: rec, lo: lo, hi: hi, target: targetArg(tf.target, tg.URL), color: useColor(e, e.stdout)})
		if len(rec.Drifted) > 0 {
			return exitChanges
		}
		return exitOK
	}
	return c
}

// reconcileView is what incrc reconcile prints: source against target
// per value of reconcile.by, a partitioned pipeline's grid, and the
// command that repairs a drift.
type reconcileView struct {
	plan   *ir.Plan
	rec    *runner.Reconciliation
	lo, hi time.Time
	target string // how the repair command names the target
	color  bool
}

func (v reconcileView) indent() string { return "  " }

func (v reconcileView) json() any { return v.rec }

func (v reconcileView) text(w io.Writer) {
	printReconciliation(w, v.rec)
	if v.plan.Partition != nil {
		printPartitionGrid(w, v.color, v.plan, v.rec, v.lo, v.hi)
	}
	printRepair(w, v.plan, v.rec, v.target)
}

func printReconciliation(w io.Writer, rec *runner.Reconciliation) {
	fmt.Fprintf(w, "%s: source vs target by %s in [%s, %s)\n\n", rec.Pipeline, rec.By, rec.From, rec.To)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\t", rec.By)
	for _, m := range rec.Measures {
		fmt.Fprintf(tw, "%s (source / target)\t", m)
	}
	fmt.Fprintln(tw, "")
	for _, g := range rec.Groups {
		fmt.Fprintf(tw, "%s\t", g.Key)
		for i := range rec.Measures {
			fmt.Fprintf(tw, "%s / %s\t", at(g.Source, i), at(g.Target, i))
		}
		switch {
		case g.Match:
			fmt.Fprintln(tw, "ok")
		case slices.Contains(rec.Pending, g.Key):
			fmt.Fprintln(tw, "pending")
		default:
			fmt.Fprintln(tw, "DRIFT")
		}
	}
	tw.Flush()
	if len(rec.Groups) == 0 {
		fmt.Fprintln(w, "(no rows on either side)")
	}
	fmt.Fprintln(w)
	switch {
	case len(rec.Drifted) == 0 && len(rec.Pending) == 0:
		fmt.Fprintf(w, "All %d match.\n", len(rec.Groups))
	case len(rec.Drifted) == 0:
		fmt.Fprintf(w, "%d of %d match, none drifted.\n", len(rec.Groups)-len(rec.Pending), len(rec.Groups))
	default:
		fmt.Fprintf(w, "%d of %d drifted: %s\n", len(rec.Drifted), len(rec.Groups), strings.Join(rec.Drifted, ", "))
	}
	if len(rec.Pending) > 0 {
		fmt.Fprintf(w, "%d pending: %s (not read to their end yet: the watermark is %s; the next runs fill them)\n",
			len(rec.Pending), strings.Join(rec.Pending, ", "), orWord(rec.Watermark, "not set, as nothing has run"))
	}
	if len(rec.InsertOnly) > 0 {
		verb := "keep each key's first value (merge), so they differ"
		if len(rec.InsertOnly) == 1 {
			verb = "keeps each key's first value (merge), so it differs"
		}
		fmt.Fprintf(w, "Compared: the columns updates write. %s %s from the source by design", strings.Join(rec.InsertOnly, ", "), verb)
		if len(rec.Uncompared) > 0 {
			fmt.Fprintf(w, ": not compared: %s", strings.Join(rec.Uncompared, ", "))
		}
		fmt.Fprintln(w, ".")
	}
}

func orWord(s, none string) string {
	if s == "" {
		return none
	}
	return s
}

// targetArg is how a suggested command names the target: as the user
// gave it (a named target, a URL), unless it holds a password, which is
// never printed.
func targetArg(given, redacted string) string {
	if runner.Redact(given) != given {
		return shellQuote(redacted)
	}
	return shellQuote(given)
}

// shellQuote quotes s for a shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,:/@%+=") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// printRepair prints the command that repairs the drift: a backfill of the
// drifted partitions (with --restate when one is finalized), or a full
// refresh of a pipeline without partitions.
func printRepair(w io.Writer, plan *ir.Plan, rec *runner.Reconciliation, target string) {
	if len(rec.Drifted) == 0 {
		return
	}
	if plan.Partition == nil {
		fmt.Fprintf(w, "\nRebuild the target from the source with:\n  incrc run --target %s %s --full-refresh\n", target, plan.Pipeline)
		return
	}
	first, last := rec.Drifted[0], rec.Drifted[len(rec.Drifted)-1]
	restate := ""
	if rec.Restate {
		restate = " --restate"
	}
	from, _ := runner.PartitionBounds(plan, first)
	_, to := runner.PartitionBounds(plan, last)
	fmt.Fprintf(w, "\nThe blast radius starts at %s. Rebuild the drifted partitions with:\n  incrc backfill --target %s %s --from %s --to %s --only-drifted%s\n",
		runner.PartitionKey(plan, first), target, plan.Pipeline, from, to, restate)
	if rec.Restate {
		fmt.Fprintf(w, "(--restate: partitions older than partition.finalize_after %s before the watermark are finalized, and a backfill rewrites them only when told to)\n", plan.Partition.FinalizeAfter.Text)
	}
}

// printPartitionGrid shows a partitioned pipeline's reconciliation as one
// cell per partition, and where the blast radius starts.
func printPartitionGrid(w io.Writer, color bool, plan *ir.Plan, rec *runner.Reconciliation, lo, hi time.Time) {
	status := map[string]string{}
	for _, g := range rec.Groups {
		k := runner.PartitionKey(plan, g.Key)
		switch {
		case g.Match:
			status[k] = "ok"
		case slices.Contains(rec.Pending, g.Key):
			status[k] = "pending"
		default:
			status[k] = "drifted"
		}
	}
	keys := runner.PartitionKeys(plan, lo, hi)
	for _, k := range keys {
		if status[k] == "" {
			status[k] = "empty"
		}
	}
	fmt.Fprintln(w)
	printGrid(w, color, keys, status)
}

func at(vals []string, i int) string {
	if vals == nil {
		return "-"
	}
	return vals[i]
}
