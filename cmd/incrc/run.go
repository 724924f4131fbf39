package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/incrc/incrc/runner"
)

// Exit codes shared by every command (docs/cli.md).
const (
	exitOK      = 0
	exitError   = 1
	exitChanges = 2 // plan: changes; reconcile and backfill: drift
	exitLocked  = 3 // run: another run holds the lease
	// exitCancelled: a signal (SIGTERM, SIGINT, SIGHUP) cancelled the
	// command; a run it cancelled rolled back, is recorded as cancelled and
	// freed its lease.
	exitCancelled = 4
)

// env is what a command may touch of the outside world: passed in, never
// read from globals, so that tests run commands in-process.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) (string, bool)
	now            func() time.Time // the clock that reads leases as held or expired
	// scrub masks the passwords of every URL the command knows (its
	// arguments, incrc.yaml's targets and connections) in what it prints.
	scrub *runner.Scrubber
	// flagSet, when set, is handed each flag set a command builds: the CLI
	// reference (docs/cli.md) is generated from the flags the commands
	// define, so the two cannot drift.
	flagSet func(*pflag.FlagSet)
}

// scrubWriter writes what it is given without the scrubber's secrets.
type scrubWriter struct {
	w     io.Writer
	scrub *runner.Scrubber
}

func (w scrubWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.w, w.scrub.Scrub(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

type command struct {
	name    string
	summary string
	usage   string // arguments after the command name
	example string
	run     func(ctx context.Context, e *env, args []string) int
}

func commands() []*command {
	return []*command{
		initCmd(),
		newCmd(),
		validateCmd(),
		compileCmd(),
		planCmd(),
		testCmd(),
		seedCmd(),
		runCmd(),
		stateCmd(),
		reconcileCmd(),
		backfillCmd(),
		migrateCmd(),
		schemaCmd(),
		versionCmd(),
		completionCmd(),
		demoCmd(),
	}
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	// Every password the command line or incrc.yaml holds is masked in
	// everything the command prints, whatever printed it: a driver's
	// message may quote a URL, or the password alone.
	scrub := &runner.Scrubber{}
	for _, a := range args {
		scrub.Add(a)
	}
	stdout, stderr = scrubWriter{stdout, scrub}, scrubWriter{stderr, scrub}
	defer func() {
		// A panic prints its value: masked too, with the stack (which
		// shows no strings), and the exit code of an error.
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "incrc: internal error (please report it): %v\n\n%s", r, debug.Stack())
			code = exitError
		}
	}()
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr, getenv: os.LookupEnv, now: time.Now, scrub: scrub}
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		w := stdout
		if len(args) == 0 {
			w = stderr
		}
		usage(w)
		if len(args) == 0 {
			return exitError
		}
		return exitOK
	}
	if args[0] == "--version" || args[0] == "-version" {
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands() {
		if c.name == args[0] {
			code := c.run(ctx, e, args[1:])
			if code != exitOK && ctx.Err() != nil {
				return exitCancelled
			}
			return code
		}
	}
	fmt.Fprintf(stderr, "incrc: unknown command %q (run incrc --help)\n", args[0])
	return exitError
}

func usage(w io.Writer) {
	fmt.Fprint(w, `incrc compiles YAML pipeline specs into reviewable SQL for incremental
pipelines (merge, append, partition overwrite, ...), and runs it.

Usage:
  incrc <command> [flags] [arguments]

Commands:
`)
	cmds := commands()
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].name < cmds[j].name })
	for _, c := range cmds {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprint(w, `
Every command reads the project's specs (incrc.yaml's specs:, else ./specs;
--specs PATH or --config FILE points elsewhere), takes PIPELINE names to
choose among them, and prints JSON with --json. Errors start with
"incrc COMMAND:", or are path:line:col: message for a spec.

Exit codes: 0 ok, 1 an error, 2 changes (plan) or drift (reconcile,
backfill), 3 locked by another run (retry later), 4 cancelled by SIGTERM,
SIGINT or SIGHUP (the run rolled back, is recorded as cancelled and freed
its lease; a second signal exits at once).

Example:
  incrc init && incrc validate && incrc test && incrc plan

Run "incrc <command> --help" for a command's flags; "incrc version" for the version.
`)
}

// flags builds a command's flag set; --help prints usage and example.
func (c *command) flags(e *env) *pflag.FlagSet {
	fs := pflag.NewFlagSet(c.name, pflag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.SortFlags = false
	if e.flagSet != nil {
		e.flagSet(fs)
	}
	fs.Usage = func() {
		fmt.Fprintf(e.stdout, "%s\n\nUsage:\n  incrc %s %s\n\nFlags:\n%s\nExample:\n%s\n", c.summary, c.name, c.usage, fs.FlagUsages(), indent(c.example))
	}
	return fs
}

// fail prints an error the way every command does, "incrc COMMAND:
// message" on stderr, and returns exitError.
func (c *command) fail(e *env, format string, args ...any) int {
	c.errorf(e, format, args...)
	return exitError
}

// errorf prints an error with the command's prefix and goes on.
func (c *command) errorf(e *env, format string, args ...any) {
	fmt.Fprintf(e.stderr, "incrc %s: %s\n", c.name, fmt.Sprintf(format, args...))
}

// notef prints what the user should know, with the command's prefix.
func (c *command) notef(e *env, format string, args ...any) {
	fmt.Fprintf(e.stderr, "incrc %s: note: %s\n", c.name, fmt.Sprintf(format, args...))
}

// parse parses flags; ok is false when the command must return code.
func (c *command) parse(e *env, fs *pflag.FlagSet, args []string) (code int, ok bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK, false
		}
		fmt.Fprintf(e.stderr, "incrc %s: %v\n", c.name, err)
		return exitError, false
	}
	return 0, true
}

func indent(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i := range lines {
		lines[i] = "  " + lines[i]
	}
	return strings.Join(lines, "\n")
}
