package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/incrc/incrc/runner"
)

func stateCmd() *command {
	c := &command{
		name:    "state",
		summary: "Show watermarks, leases and recent runs; free a dead run's lease; move a watermark back.",
		usage:   "--target URL [flags] [PIPELINE|SPEC|DIR...]",
		example: "incrc state --target duckdb:wh.duckdb\nincrc state --target duckdb:wh.duckdb dw_orders --json\nincrc state --target postgres://etl@db/wh --release dw_orders\nincrc state --target postgres://etl@db/wh --rewind dw_orders --to 2026-01-20 --reason 'billing outage: late rows'",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p       projectFlags
			tf      targetFlags
			release string
			rewind  string
			to      string
			reason  string
			output  outputFlags
		)
		fs := c.flags(e)
		tf.register(fs, "target database URL, or a target named in incrc.yaml")
		tf.registerSources(fs)
		fs.StringVar(&release, "release", "", "free the lease of PIPELINE, whoever holds it (for a run that died)")
		fs.StringVar(&rewind, "rewind", "", "move the watermark of PIPELINE back to --to, so the next run re-reads from there (recorded in the run log)")
		fs.StringVar(&to, "to", "", "with --rewind: the watermark to go back to (a date or RFC 3339; an id for an integer watermark)")
		fs.StringVar(&reason, "reason", "", "with --rewind: why, recorded in the run log")
		output.register(fs)
		p.register(fs)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		format, ok := output.resolve(c, e)
		if !ok {
			return exitError
		}
		names := fs.Args()
		switch {
		case release != "" && rewind != "":
			c.errorf(e, "--release and --rewind: one at a time")
			return exitError
		case rewind != "" && to == "":
			c.errorf(e, "--rewind needs --to, the watermark to go back to")
			return exitError
		case rewind == "" && (to != "" || reason != ""):
			c.errorf(e, "--to and --reason go with --rewind PIPELINE")
			return exitError
		case release != "":
			names = append(specPaths(names), release)
		case rewind != "":
			names = append(specPaths(names), rewind)
		}
		pr, ok := p.load(e, c, names)
		if !ok {
			return exitError
		}
		plans, err := pr.plans()
		if err != nil {
			return c.fail(e, "%v", err)
		}
		tg, code := c.open(ctx, e, pr.cfg, tf, "")
		if code != exitOK {
			return code
		}
		defer tg.Close()
		if release != "" {
			freed, err := tg.Release(ctx, plans[0])
			if err != nil {
				c.errorf(e, "%v", err)
				return exitError
			}
			show(e.stdout, format, releaseView{pipeline: release, freed: freed})
			return exitOK
		}
		if rewind != "" {
			res, err := tg.Rewind(ctx, plans[0], runner.RewindOptions{To: to, Reason: reason, Who: who(e), Now: e.now})
			var locked *runner.LockedError
			switch {
			case errors.As(err, &locked):
				locked.Target = targetArg(tf.target, tg.URL)
				c.errorf(e, "%v", err)
				return exitLocked
			case err != nil:
				c.errorf(e, "%s: %v", rewind, err)
				return exitError
			}
			show(e.stdout, format, rewindView{pipeline: rewind, res: res})
			return exitOK
		}
		for _, plan := range plans {
			st, err := tg.State(ctx, plan)
			if err != nil {
				c.errorf(e, "%s: %v", plan.Pipeline, err)
				return exitError
			}
			// One view a pipeline, printed as it is read: as JSON, one
			// object per pipeline and line, as run --json prints.
			show(e.stdout, format, stateView{st: st, now: e.now()})
		}
		show(e.stdout, format, graphView(graphEdges(pr)))
		return exitOK
	}
	return c
}

// releaseView is what incrc state --release prints.
type releaseView struct {
	pipeline string
	freed    bool // false: the pipeline has no state yet
}

func (v releaseView) text(w io.Writer) {
	if v.freed {
		fmt.Fprintf(w, "%s: lease released\n", v.pipeline)
	} else {
		fmt.Fprintf(w, "%s: no state yet\n", v.pipeline)
	}
}

func (v releaseView) json() any {
	return map[string]any{"pipeline": v.pipeline, "released": v.freed}
}

// rewindView is what incrc state --rewind prints: its JSON is the run log
// entry the rewind recorded, as run --json prints a run.
type rewindView struct {
	pipeline string
	res      *runner.Result
}

func (v rewindView) json() any { return v.res }

func (v rewindView) text(w io.Writer) {
	fmt.Fprintf(w, "%s: watermark %s -> %s (run %s in the run log); the next run reads from %s\n",
		v.pipeline, v.res.WatermarkBefore, v.res.WatermarkAfter, v.res.RunID, v.res.WatermarkAfter)
}

// stateView is one pipeline's state: its watermark, lease, recent runs,
// backfill markers and stale partitions.
type stateView struct {
	st  *runner.Status
	now time.Time // whether the lease has expired is decided at now
}

func (v stateView) json() any { return v.st }

func (v stateView) text(w io.Writer) {
	st := v.st
	fmt.Fprintf(w, "%s\n", st.Pipeline)
	if st.Source != "" {
		fmt.Fprintf(w, "  source:    %s%s\n", st.Source, filesWord(st.NewFiles, st.Rewritten))
	}
	fmt.Fprintf(w, "  watermark: %s\n", orNone(st.Watermark))
	switch {
	case st.LeaseOwner != "" && leaseExpired(st.LeaseExpiresAt, v.now):
		fmt.Fprintf(w, "  lease:     expired (was held by %s until %s)\n", st.LeaseOwner, st.LeaseExpiresAt)
	case st.LeaseOwner != "":
		fmt.Fprintf(w, "  lease:     held by %s until %s\n", st.LeaseOwner, st.LeaseExpiresAt)
	default:
		fmt.Fprintf(w, "  lease:     free\n")
	}
	if len(st.Runs) == 0 {
		fmt.Fprintf(w, "  runs:      none\n")
	}
	for i, r := range st.Runs {
		if i == 5 {
			fmt.Fprintf(w, "  ... %d more (--json shows the last 20)\n", len(st.Runs)-5)
			break
		}
		lo := r.WindowLo
		if lo == "" {
			lo = "-inf"
		}
		fmt.Fprintf(w, "  %s %-12s %-9s [%s, %s) read %d ins %d upd %d del %d quar %d", r.RunID, kindWord(r.Kind), r.Status, lo, r.WindowHi,
			r.RowsRead, r.RowsInserted, r.RowsUpdated, r.RowsDeleted, r.RowsQuarantined)
		if r.RowsSkipped > 0 {
			fmt.Fprintf(w, " skipped %d", r.RowsSkipped)
		}
		if r.RowsIgnored > 0 {
			fmt.Fprintf(w, " ign %d", r.RowsIgnored)
		}
		if r.Error != "" {
			fmt.Fprintf(w, " error: %s", r.Error)
		}
		if r.Note != "" {
			fmt.Fprintf(w, " (%s)", r.Note)
		}
		fmt.Fprintln(w)
	}
	printMarkers(w, st.Partitions)
	if len(st.Stale) > 0 {
		fmt.Fprintf(w, "  stale:     %d %s built with an older logic than the spec's (%s): incrc backfill --stale %s rebuilds them\n",
			len(st.Stale), plural(len(st.Stale), "partition", "partitions"), rangeOf(st.Stale), st.Pipeline)
	}
}

// who names the person asking for a rewind, for the run log: the user and
// the host.
func who(e *env) string {
	user, _ := e.getenv("USER")
	if user == "" {
		user = "unknown user"
	}
	host, err := os.Hostname()
	if err != nil {
		return user
	}
	return user + "@" + host
}

// leaseExpired reports whether a lease that lasts until expires (state
// time: RFC 3339, UTC, microseconds) has run out at now, as the next run
// decides it: held through its last microsecond. An expiry that does not
// parse is not called expired: the lease is shown as stored.
func leaseExpired(expires string, now time.Time) bool {
	t, err := time.Parse(time.RFC3339Nano, expires)
	return err == nil && t.Before(now.Truncate(time.Microsecond))
}

// printMarkers summarizes backfill markers: per backfill, partitions by
// status, newest backfill first.
func printMarkers(w io.Writer, markers []runner.Marker) {
	if len(markers) == 0 {
		return
	}
	var order []string
	byID := map[string]map[string][]string{}
	for _, m := range markers {
		if byID[m.BackfillID] == nil {
			byID[m.BackfillID] = map[string][]string{}
			order = append(order, m.BackfillID)
		}
		byID[m.BackfillID][m.Status] = append(byID[m.BackfillID][m.Status], m.Partition)
	}
	fmt.Fprintf(w, "  backfill markers (latest %d):\n", len(markers))
	for _, id := range order {
		var parts []string
		for _, st := range []string{runner.PartDone, runner.PartFailed} {
			if ps := byID[id][st]; len(ps) > 0 {
				sort.Strings(ps)
				parts = append(parts, fmt.Sprintf("%d %s (%s)", len(ps), st, rangeOf(ps)))
			}
		}
		fmt.Fprintf(w, "    %s: %s\n", id, strings.Join(parts, ", "))
	}
}

func rangeOf(keys []string) string {
	if len(keys) == 1 {
		return keys[0]
	}
	return keys[0] + " .. " + keys[len(keys)-1]
}

// filesWord says how many files the next run of a files source loaded by
// file would load, and how many loaded ones were rewritten since.
func filesWord(n *int64, rewritten int64) string {
	if n == nil {
		return ""
	}
	s := fmt.Sprintf(": %d new file(s) for the next run", *n)
	if rewritten > 0 {
		s += fmt.Sprintf(", %d rewritten since loaded (--reload-rewritten loads them again)", rewritten)
	}
	return s
}
