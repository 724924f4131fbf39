package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
		asJSON := format == "json"
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
			if freed {
				fmt.Fprintf(e.stdout, "%s: lease released\n", release)
			} else {
				fmt.Fprintf(e.stdout, "%s: no state yet\n", release)
			}
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
			fmt.Fprintf(e.stdout, "%s: watermark %s -> %s (run %s in the run log); the next run reads from %s\n",
				rewind, res.WatermarkBefore, res.WatermarkAfter, res.RunID, res.WatermarkAfter)
			return exitOK
		}
		for _, plan := range plans {
			st, err := tg.State(ctx, plan)
			if err != nil {
				c.errorf(e, "%s: %v", plan.Pipeline, err)
				return exitError
			}
			if asJSON {
				// One object per pipeline and line, as run --json prints.
				json.NewEncoder(e.stdout).Encode(st)
				continue
			}
			fmt.Fprintf(e.stdout, "%s\n", st.Pipeline)
			if st.Source != "" {
				fmt.Fprintf(e.stdout, "  source:    %s%s\n", st.Source, filesWord(st.NewFiles, st.Rewritten))
			}
			fmt.Fprintf(e.stdout, "  watermark: %s\n", orNone(st.Watermark))
			switch {
			case st.LeaseOwner != "" && leaseExpired(st.LeaseExpiresAt, e.now()):
				fmt.Fprintf(e.stdout, "  lease:     expired (was held by %s until %s)\n", st.LeaseOwner, st.LeaseExpiresAt)
			case st.LeaseOwner != "":
				fmt.Fprintf(e.stdout, "  lease:     held by %s until %s\n", st.LeaseOwner, st.LeaseExpiresAt)
			default:
				fmt.Fprintf(e.stdout, "  lease:     free\n")
			}
			if len(st.Runs) == 0 {
				fmt.Fprintf(e.stdout, "  runs:      none\n")
			}
			for i, r := range st.Runs {
				if i == 5 {
					fmt.Fprintf(e.stdout, "  ... %d more (--json shows the last 20)\n", len(st.Runs)-5)
					break
				}
				lo := r.WindowLo
				if lo == "" {
					lo = "-inf"
				}
				fmt.Fprintf(e.stdout, "  %s %-12s %-9s [%s, %s) read %d ins %d upd %d del %d quar %d", r.RunID, kindWord(r.Kind), r.Status, lo, r.WindowHi,
					r.RowsRead, r.RowsInserted, r.RowsUpdated, r.RowsDeleted, r.RowsQuarantined)
				if r.RowsSkipped > 0 {
					fmt.Fprintf(e.stdout, " skipped %d", r.RowsSkipped)
				}
				if r.RowsIgnored > 0 {
					fmt.Fprintf(e.stdout, " ign %d", r.RowsIgnored)
				}
				if r.Error != "" {
					fmt.Fprintf(e.stdout, " error: %s", r.Error)
				}
				if r.Note != "" {
					fmt.Fprintf(e.stdout, " (%s)", r.Note)
				}
				fmt.Fprintln(e.stdout)
			}
			printMarkers(e, st.Partitions)
			if len(st.Stale) > 0 {
				fmt.Fprintf(e.stdout, "  stale:     %d %s built with an older logic than the spec's (%s): incrc backfill --stale %s rebuilds them\n",
					len(st.Stale), plural(len(st.Stale), "partition", "partitions"), rangeOf(st.Stale), st.Pipeline)
			}
		}
		if !asJSON {
			printGraph(e.stdout, graphEdges(pr), false)
		}
		return exitOK
	}
	return c
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
func printMarkers(e *env, markers []runner.Marker) {
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
	fmt.Fprintf(e.stdout, "  backfill markers (latest %d):\n", len(markers))
	for _, id := range order {
		var parts []string
		for _, st := range []string{runner.PartDone, runner.PartFailed} {
			if ps := byID[id][st]; len(ps) > 0 {
				sort.Strings(ps)
				parts = append(parts, fmt.Sprintf("%d %s (%s)", len(ps), st, rangeOf(ps)))
			}
		}
		fmt.Fprintf(e.stdout, "    %s: %s\n", id, strings.Join(parts, ", "))
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
