package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"

	"github.com/incrc/incrc/dialects/all"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/incrc/incrc/runner"
)

// TestMain lets scripts run "incrc" as a command: the test binary runs
// itself with run(...) as its main, so scripts test the real entry point,
// exit codes included.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"incrc": func() { os.Exit(run(signalContext(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScript runs testdata/script/*.txtar: the command line as users see
// it. `go test ./cmd/incrc -run TestScript -update` rewrites the
// expected output in the scripts after a reviewed change.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
		Cmds:          map[string]func(ts *testscript.TestScript, neg bool, args []string){"sql": sqlCmd, "silent": silentCmd},
	})
}

// sqlCmd is the scripts' way to set up and change source data:
//
//	sql TARGET FILE.sql|STATEMENT...
//
// executes each statement (a file holds several, separated by ";" at the
// end of a line) on the target, then closes it, so that the next incrc
// process can open an embedded database.
func sqlCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: sql TARGET FILE.sql|STATEMENT...")
	}
	ctx := context.Background()
	url := args[0]
	if path, ok := strings.CutPrefix(url, "duckdb:"); ok {
		url = "duckdb:" + ts.MkAbs(path) // scripts run in $WORK, the test binary elsewhere
	}
	tg, err := runner.Open(ctx, all.Lookup, url, "")
	ts.Check(err)
	defer tg.Close()
	for _, arg := range args[1:] {
		stmts := []string{arg}
		if strings.HasSuffix(arg, ".sql") {
			stmts = strings.Split(ts.ReadFile(arg), ";\n")
		}
		for _, st := range stmts {
			if strings.TrimSpace(st) == "" {
				continue
			}
			if _, err := tg.DB.ExecContext(ctx, st); err != nil {
				if neg {
					return
				}
				ts.Fatalf("%s: %v", st, err)
			}
		}
	}
	if neg {
		ts.Fatalf("sql: all statements succeeded")
	}
}

// silentCmd starts a server that accepts TCP connections and never
// answers, for the rest of the script:
//
//	silent VAR
//
// sets $VAR to its port.
func silentCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: silent VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	conns := make(chan net.Conn, 64)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			conns <- c // held open, never written to
		}
	}()
	ts.Defer(func() {
		ln.Close()
		for {
			select {
			case c := <-conns:
				c.Close()
			default:
				return
			}
		}
	})
	ts.Setenv(args[0], fmt.Sprint(ln.Addr().(*net.TCPAddr).Port))
}
