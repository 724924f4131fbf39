package main

import (
	"context"
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestMain lets scripts run "incrc" as a command: the test binary runs
// itself with run(...) as its main, so scripts test the real entry point,
// exit codes included.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"incrc": func() { os.Exit(run(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScript runs testdata/script/*.txtar: the command line as users see
// it. `go test ./cmd/incrc -run TestScript -update` rewrites the
// expected output in the scripts after a reviewed change.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:           "testdata/script",
		UpdateScripts: *update,
	})
}
