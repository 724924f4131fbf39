package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/incrc/incrc/runner"
)

func migrateCmd() *command {
	c := &command{
		name:    "migrate",
		summary: "Bring a pipeline's target and quarantine tables to its spec's columns: the DDL a run does not apply on its own.",
		usage:   "--target URL PIPELINE [--dry-run]",
		example: "incrc migrate --target postgres://etl@db/wh dw_orders --dry-run   # print the DDL\nincrc migrate --target postgres://etl@db/wh dw_orders             # apply it, holding the lease",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p        projectFlags
			tf       targetFlags
			dryRun   bool
			leaseTTL time.Duration
			output   outputFlags
			allow    bool
		)
		fs := c.flags(e)
		tf.register(fs, "target database URL, or a target named in incrc.yaml")
		fs.BoolVar(&dryRun, "dry-run", false, "print the DDL; change nothing")
		fs.DurationVar(&leaseTTL, "lease-ttl", runner.DefaultLeaseTTL, "how long the lease outlives a migration that dies")
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
		if err := checkLeaseTTL(leaseTTL); err != nil {
			return c.fail(e, "%v", err)
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
		if clashes, err := pr.clashes(ctx, tg); err != nil {
			return c.fail(e, "%v", err)
		} else if msg, ok := clashes[plan.Pipeline]; ok {
			return c.fail(e, "%s: refused: %s", plan.Pipeline, msg)
		}
		changes, err := tg.Migrate(ctx, plan, runner.MigrateOptions{DryRun: dryRun, LeaseTTL: leaseTTL, Now: e.now})
		var locked *runner.LockedError
		switch {
		case errors.As(err, &locked):
			locked.Target = targetArg(tf.target, tg.URL)
			c.errorf(e, "%v", err)
			return exitLocked
		case err != nil:
			return c.fail(e, "%s: %v", plan.Pipeline, err)
		}
		show(e.stdout, format, migrateView{pipeline: plan.Pipeline, dryRun: dryRun, changes: changes})
		return exitOK
	}
	return c
}

// migrateView is what incrc migrate prints: the schema changes pending
// (--dry-run) or applied.
type migrateView struct {
	pipeline string
	dryRun   bool
	changes  []runner.SchemaChange
}

func (v migrateView) json() any {
	changes := v.changes
	if changes == nil {
		changes = []runner.SchemaChange{}
	}
	return map[string]any{"pipeline": v.pipeline, "dry_run": v.dryRun, "changes": changes}
}

func (v migrateView) text(w io.Writer) {
	switch {
	case len(v.changes) == 0:
		fmt.Fprintf(w, "%s: the tables match the spec; nothing to do\n", v.pipeline)
	case v.dryRun:
		fmt.Fprintf(w, "%s: %d change(s) pending; the DDL incrc migrate would run:\n", v.pipeline, len(v.changes))
		printChanges(w, v.changes)
	default:
		fmt.Fprintf(w, "%s: %d change(s) applied:\n", v.pipeline, len(v.changes))
		printChanges(w, v.changes)
	}
}

// printChanges lists schema changes and their DDL, one statement a line.
func printChanges(w io.Writer, changes []runner.SchemaChange) {
	for _, ch := range changes {
		auto := ""
		if ch.Automatic() {
			auto = " (a run applies it too)"
		}
		fmt.Fprintf(w, "  -- %s%s\n", ch, auto)
		for _, ddl := range ch.DDL {
			fmt.Fprintf(w, "  %s;\n", strings.ReplaceAll(ddl, "\n", "\n  "))
		}
	}
}
