package compiler

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary bytes through Parse, Validate and Lower. None
// may panic, every diagnostic must have a position inside the file, and a
// spec that validates must lower (or say it is not supported yet). Plain
// `go test` runs only the seeds: the corpus of broken specs, the example
// specs and testdata/fuzz; `go test -fuzz FuzzParse ./compiler` explores.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"testdata/invalid/*.yaml", "testdata/project_duplicates/*.yaml", "../specs/*.yaml", "../dialects/all/testdata/specs/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data)
		if s == nil {
			t.Fatal("Parse returned no spec")
		}
		diags := Validate(s)
		var pd Diagnostics
		if err != nil && !errors.As(err, &pd) {
			t.Fatalf("Parse error %T is not Diagnostics", err)
		}
		for _, d := range append(pd, diags...) {
			if d.Pos.File != "fuzz.yaml" || d.Pos.Line < 1 || d.Pos.Col < 1 || d.Msg == "" {
				t.Fatalf("diagnostic without a position or message: %q", d)
			}
		}
		if err != nil || len(diags) > 0 {
			return
		}
		p, err := Lower(s)
		switch {
		case err != nil:
			t.Fatalf("a valid spec does not lower: %v", err)
		case p == nil || len(p.Statements) == 0:
			t.Fatal("a valid spec lowers to no statements")
		}
	})
}
