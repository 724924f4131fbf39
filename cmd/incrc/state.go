package main

import (
	"context"
	"encoding/json"
	"fmt"
)

func stateCmd() *command {
	c := &command{
		name:    "state",
		summary: "Show watermarks, leases and recent runs; free a dead run's lease.",
		usage:   "--target URL [flags] [PIPELINE...]",
		example: "incrc state --target duckdb:wh.duckdb\nincrc state --target duckdb:wh.duckdb dw_orders --json\nincrc state --target postgres://etl@db/wh --release dw_orders",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p       projectFlags
			target  string
			release string
			asJSON  bool
		)
		fs := c.flags(e)
		fs.StringVar(&target, "target", "", "target database URL, or a target named in incrc.yaml")
		fs.StringVar(&release, "release", "", "free the lease of PIPELINE, whoever holds it (for a run that died)")
		fs.BoolVar(&asJSON, "json", false, "print JSON")
		p.register(fs)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		cfg, specs, ok := p.load(e, nil)
		if !ok {
			return exitError
		}
		names := fs.Args()
		if release != "" {
			names = []string{release}
		}
		plans, err := selectPlans(specs, names)
		if err != nil {
			fmt.Fprintf(e.stderr, "incrc state: %v\n", err)
			return exitError
		}
		tg, err := openTarget(ctx, cfg, target, "")
		if err != nil {
			fmt.Fprintf(e.stderr, "incrc state: %v\n", err)
			return exitError
		}
		defer tg.Close()
		if release != "" {
			freed, err := tg.Release(ctx, plans[0])
			if err != nil {
				fmt.Fprintf(e.stderr, "incrc state: %v\n", err)
				return exitError
			}
			if freed {
				fmt.Fprintf(e.stdout, "%s: lease released\n", release)
			} else {
				fmt.Fprintf(e.stdout, "%s: no state yet\n", release)
			}
			return exitOK
		}
		var all []any
		for _, plan := range plans {
			st, err := tg.State(ctx, plan)
			if err != nil {
				fmt.Fprintf(e.stderr, "incrc state: %s: %v\n", plan.Pipeline, err)
				return exitError
			}
			if asJSON {
				all = append(all, st)
				continue
			}
			fmt.Fprintf(e.stdout, "%s\n  watermark: %s\n", st.Pipeline, orNone(st.Watermark))
			if st.LeaseOwner != "" {
				fmt.Fprintf(e.stdout, "  lease:     held by %s until %s\n", st.LeaseOwner, st.LeaseExpiresAt)
			} else {
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
				if r.Error != "" {
					fmt.Fprintf(e.stdout, " error: %s", r.Error)
				}
				fmt.Fprintln(e.stdout)
			}
		}
		if asJSON {
			enc := json.NewEncoder(e.stdout)
			enc.SetIndent("", "  ")
			enc.Encode(all)
		}
		return exitOK
	}
	return c
}
