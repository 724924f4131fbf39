package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/runner"
)

// targetFlags are the flags of every command that opens --target.
type targetFlags struct {
	target         string
	connectTimeout time.Duration
	timeout        time.Duration
}

// register adds --target, described by usage, --connect-timeout and
// --timeout.
func (t *targetFlags) register(fs *pflag.FlagSet, usage string) {
	fs.StringVar(&t.target, "target", "", usage)
	fs.DurationVar(&t.connectTimeout, "connect-timeout", runner.DefaultConnectTimeout,
		"give up connecting to a PostgreSQL or MariaDB/MySQL target after this long (0: wait forever); a connect_timeout or timeout in the URL wins")
	fs.DurationVar(&t.timeout, "timeout", runner.DefaultStatementTimeout,
		"give up on any one statement after this long (0: wait forever); the run fails, is recorded and frees its lease")
}

// open resolves and opens --target for command c, printing what went
// wrong; code is not 0 when it failed: exitLocked when another process
// holds the target (DuckDB's one writer), exitError otherwise.
func (c *command) open(ctx context.Context, e *env, cfg *compiler.Config, tf targetFlags, dialect string) (tg *runner.Target, code int) {
	tg, err := openTarget(ctx, cfg, tf, dialect)
	if err != nil {
		fmt.Fprintf(e.stderr, "incrc %s: %v\n", c.name, err)
		if errors.As(err, new(*runner.LockedError)) {
			return nil, exitLocked
		}
		return nil, exitError
	}
	return tg, exitOK
}

// openTarget resolves --target (a URL, or a target named in incrc.yaml)
// and opens it.
func openTarget(ctx context.Context, cfg *compiler.Config, tf targetFlags, dialect string) (*runner.Target, error) {
	target := tf.target
	if tf.connectTimeout < 0 {
		return nil, fmt.Errorf("--connect-timeout %s: expected a positive duration, or 0 to wait forever", tf.connectTimeout)
	}
	if tf.timeout < 0 {
		return nil, fmt.Errorf("--timeout %s: expected a positive duration, or 0 to wait forever", tf.timeout)
	}
	if target == "" {
		return nil, fmt.Errorf("--target is required: a URL such as duckdb:wh.duckdb, sqlite:wh.db, postgres://user@host/db, mysql://user@host/db, or a target named in incrc.yaml")
	}
	// A URL always has a scheme and a colon; a target's name never does.
	if !strings.Contains(target, ":") {
		url, err := cfg.Target(target)
		if err != nil {
			return nil, fmt.Errorf("--target %s: %w", target, err)
		}
		target = url
	}
	tg, err := runner.Open(ctx, target, dialect, runner.ConnectTimeout(tf.connectTimeout))
	if err != nil {
		return nil, err
	}
	tg.StatementTimeout = tf.timeout
	return tg, nil
}

// selectPlans lowers the specs of the named pipelines (all when names is
// empty), in the order given.
func selectPlans(specs []*compiler.Spec, names []string) ([]*compiler.Plan, error) {
	byName := map[string]*compiler.Spec{}
	var known []string
	for _, s := range specs {
		byName[s.Pipeline.Value] = s
		known = append(known, s.Pipeline.Value)
	}
	if len(names) == 0 {
		names = known
	}
	var plans []*compiler.Plan
	for _, n := range names {
		s, ok := byName[n]
		if !ok {
			return nil, fmt.Errorf("unknown pipeline %q (known: %s)", n, strings.Join(known, ", "))
		}
		p, err := compiler.Lower(s)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// parseDay reads --from/--to: a date or RFC 3339, UTC.
func parseDay(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, fmt.Errorf("%s is required (a date such as 2026-01-03, or RFC 3339)", flag)
	}
	t, err := compiler.ParseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", flag, err)
	}
	return t, nil
}
