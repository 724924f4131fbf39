package main

import (
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler"
)

// TestHelpExamples: the pipelines that the commands' --help examples name
// are the repository's own, and fit the command (a backfill's has
// partitions, a reconciliation's a reconcile section), so an example
// copied from --help runs on a fresh clone.
func TestHelpExamples(t *testing.T) {
	files, err := compiler.SpecFiles([]string{"../../specs"})
	if err != nil || len(files) == 0 {
		t.Fatalf("no specs: %v", err)
	}
	specs, diags := compiler.LoadSpecs(files)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	byName := map[string]*compiler.Spec{}
	for _, s := range specs {
		byName[s.Pipeline.Value] = s
	}
	checked := 0
	for _, c := range commands() {
		for _, line := range strings.Split(c.example, "\n") {
			fields := strings.Fields(line)
			if len(fields) < 2 || fields[0] != "incrc" {
				continue
			}
			for i, f := range fields[2:] {
				prev := fields[1+i]
				if !strings.HasPrefix(f, "dw_") || strings.HasPrefix(prev, "--") && prev != "--json" && prev != "--full-refresh" && prev != "--dry-run" {
					continue
				}
				s := byName[f]
				switch {
				case s == nil:
					t.Errorf("incrc %s --help: %q names pipeline %s, which specs/ does not hold", c.name, line, f)
				case c.name == "backfill" && s.Partition == nil:
					t.Errorf("incrc %s --help: %q: %s has no partitions to backfill", c.name, line, f)
				case c.name == "reconcile" && s.Reconcile == nil:
					t.Errorf("incrc %s --help: %q: %s has no reconcile section", c.name, line, f)
				}
				checked++
			}
		}
	}
	if checked < 5 {
		t.Errorf("only %d pipeline names found in the examples: the test reads them wrong", checked)
	}
}
