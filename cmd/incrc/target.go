package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/spf13/pflag"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/runner"
)

// targetFlags are the flags of every command that opens --target.
type targetFlags struct {
	target         string
	connectTimeout time.Duration
	timeout        time.Duration
	sources        []string // --source NAME=URL
	// log is where a driver's own log lines go, passwords masked: the
	// command's standard error.
	log io.Writer
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

// registerSources adds --source NAME=URL, for the commands that read a
// pipeline's source.
func (t *targetFlags) registerSources(fs *pflag.FlagSet) {
	fs.StringArrayVar(&t.sources, "source", nil,
		"NAME=URL: the database of a spec's source.connection NAME, instead of (or besides) incrc.yaml's connections (repeatable)")
}

// sourceURLs resolves the source connections: --source NAME=URL first,
// then incrc.yaml's connections, whose unset ${ENV} is an error naming its
// place (only when a spec uses that connection).
func sourceURLs(cfg *compiler.Config, flags []string) (func(string) (string, error), error) {
	given := map[string]string{}
	for _, f := range flags {
		name, url, ok := strings.Cut(f, "=")
		if !ok || name == "" || url == "" || !strings.Contains(url, ":") {
			return nil, fmt.Errorf("--source %q: expected NAME=URL, as in --source app=postgres://etl@app-db/app", runner.Redact(f))
		}
		if _, twice := given[name]; twice {
			return nil, fmt.Errorf("--source %s is given twice: keep one", name)
		}
		given[name] = url
	}
	return func(name string) (string, error) {
		if url, ok := given[name]; ok {
			return url, nil
		}
		return cfg.Connection(name)
	}, nil
}

// open resolves and opens --target for command c, printing what went
// wrong; code is not 0 when it failed: exitLocked when another process
// holds the target (DuckDB's one writer), exitError otherwise.
func (c *command) open(ctx context.Context, e *env, cfg *compiler.Config, tf targetFlags, dialect string) (tg *runner.Target, code int) {
	tf.log = e.stderr
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
			return nil, fmt.Errorf("--target %s: %w%s", target, err, schemeHint(target))
		}
		target = url
	}
	sources, err := sourceURLs(cfg, tf.sources)
	if err != nil {
		return nil, err
	}
	tg, err := runner.Open(ctx, all.Lookup, target, dialect, runner.ConnectTimeout(tf.connectTimeout), runner.DriverLog(tf.log))
	if err != nil {
		return nil, err
	}
	tg.StatementTimeout = tf.timeout
	tg.SourceURL = sources
	return tg, nil
}

// checkLeaseTTL refuses a --lease-ttl too short to hold a pipeline.
func checkLeaseTTL(d time.Duration) error {
	if d < runner.MinLeaseTTL {
		return fmt.Errorf("--lease-ttl %s: the lease is renewed while the command runs, and one shorter than %s can expire under it and let a second run in: give %s or more (default %s)", d, runner.MinLeaseTTL, runner.MinLeaseTTL, runner.DefaultLeaseTTL)
	}
	return nil
}

// parseDay reads --from/--to: a date or RFC 3339, UTC.
func parseDay(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, fmt.Errorf("%s is required (a date such as 2026-01-03, or RFC 3339)", flag)
	}
	t, err := ir.ParseTime(s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s: %w", flag, err)
	}
	return t, nil
}

// schemeHint completes the error for a --target that is neither a URL nor
// a named target: a file name is most likely a URL without its scheme.
func schemeHint(target string) string {
	ext := strings.ToLower(filepath.Ext(target))
	switch {
	case ext == ".duckdb" || ext == ".ddb":
		return fmt.Sprintf("; a URL needs its scheme: did you mean duckdb:%s?", target)
	case ext == ".db" || ext == ".sqlite" || ext == ".sqlite3":
		return fmt.Sprintf("; a URL needs its scheme: did you mean sqlite:%s (or duckdb:%s)?", target, target)
	case strings.ContainsAny(target, "./@"):
		return "; a URL needs its scheme: duckdb:PATH, sqlite:PATH, postgres://user@host/db or mysql://user@host/db"
	}
	return ""
}
