package all_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
	"github.com/incrc/incrc/dialects/script"
)

var update = flag.Bool("update", false, "update golden files")

// goldenSpecs are the project's example specs and the test-only cases.
func goldenSpecs(t testing.TB) []*compiler.Spec {
	t.Helper()
	files, err := compiler.SpecFiles([]string{"../../specs", "testdata/specs"})
	if err != nil {
		t.Fatal(err)
	}
	specs, diags := compiler.LoadSpecs(files)
	if len(diags) > 0 {
		t.Fatalf("golden specs must be valid:\n%v", diags)
	}
	return specs
}

// goldenVersion is the incrc version the golden files record: what a
// binary built from source (incrc version: devel) writes.
const goldenVersion = "devel"

// file is the compiled file incrc compile writes for plan and d.
func file(d dialects.Dialect, plan *ir.Plan, spec string, src dialects.Dialect) ([]byte, error) {
	f := dialects.NewFiler(plan, spec)
	f.Version = goldenVersion
	return f.File(d, src)
}

// checkGolden compares got with the golden file at path, or writes it
// with -update.
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./dialects/all -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
	}
}

// TestGolden compiles every golden spec for every dialect and compares
// with golden/<dialect>/<pipeline>.sql, and each dialect's bookkeeping
// with golden/<dialect>/_incrc.sql. It never needs a database.
func TestGolden(t *testing.T) {
	specs := goldenSpecs(t)
	seen := map[string]bool{}
	for _, name := range all.Names() {
		d, _ := all.Lookup(name)
		path := filepath.Join("..", "..", "golden", name, dialects.BookkeepingName)
		seen[path] = true
		t.Run(name+"/bookkeeping", func(t *testing.T) {
			got, err := dialects.BookkeepingFile(d, compiler.Bookkeeping(), goldenVersion)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, path, got)
		})
	}
	for _, s := range specs {
		plan, err := compiler.Lower(s)
		if err != nil {
			t.Errorf("%s: %v", s.File, err)
			continue
		}
		src, err := all.Source(plan, nil)
		if err != nil {
			t.Errorf("%s: %v", s.File, err)
			continue
		}
		for _, name := range all.Names() {
			d, _ := all.Lookup(name)
			path := filepath.Join("..", "..", "golden", name, s.Pipeline.Value+".sql")
			seen[path] = true
			t.Run(name+"/"+s.Pipeline.Value, func(t *testing.T) {
				got, err := file(d, plan, strings.TrimPrefix(filepath.ToSlash(s.File), "../../"), src)
				if err != nil {
					t.Fatal(err)
				}
				again, _ := file(d, plan, strings.TrimPrefix(filepath.ToSlash(s.File), "../../"), src)
				if string(again) != string(got) {
					t.Fatal("two renderings of one plan differ")
				}
				checkGolden(t, path, got)
			})
		}
	}
	// A golden file no spec produces any more is stale (scripts,
	// PIPELINE.MODE.sql, are TestGoldenScripts').
	stale, _ := filepath.Glob(filepath.Join("..", "..", "golden", "*", "*.sql"))
	for _, path := range stale {
		if strings.Count(filepath.Base(path), ".") > 1 {
			continue
		}
		if !seen[path] {
			if *update {
				os.Remove(path)
				continue
			}
			t.Errorf("%s: no spec compiles to it (run -update to remove it)", path)
		}
	}
}

// lowerAndRender lowers a golden spec and renders its plan for d, the
// source's statements for the source's dialect.
func lowerAndRender(t testing.TB, d dialects.Dialect, s *compiler.Spec) []dialects.Rendered {
	t.Helper()
	plan, err := compiler.Lower(s)
	if err != nil {
		t.Fatalf("%s: %v", s.File, err)
	}
	rendered, err := dialects.Render(d, plan, sourceOf(t, plan))
	if err != nil {
		t.Fatalf("%s: %s: %v", s.File, d.Name(), err)
	}
	return rendered
}

// sourceOf is the dialect of a plan's source outside the target, or nil.
func sourceOf(t testing.TB, plan *ir.Plan) dialects.Dialect {
	t.Helper()
	src, err := all.Source(plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// TestGoldenScripts renders every golden spec's scripts for every dialect
// that has them and compares with golden/<dialect>/<pipeline>.<mode>.sql:
// deterministic, and every one a reviewer can read.
func TestGoldenScripts(t *testing.T) {
	specs := goldenSpecs(t)
	seen := map[string]bool{}
	for _, s := range specs {
		plan, err := compiler.Lower(s)
		if err != nil {
			t.Fatalf("%s: %v", s.File, err)
		}
		for _, name := range all.Names() {
			d, _ := all.Lookup(name)
			if !script.Supported(d) {
				continue
			}
			spec := strings.TrimPrefix(filepath.ToSlash(s.File), "../../")
			files, err := script.Render(d, plan, spec)
			if plan.From != nil {
				// The engine cannot reach a source outside it: no script.
				if !errors.Is(err, script.ErrSourceOutside) {
					t.Errorf("%s/%s: a source outside the target rendered a script (err %v)", name, s.Pipeline.Value, err)
				}
				continue
			}
			if pt := plan.Partition; pt != nil && pt.Zone != "" {
				if !errors.Is(err, script.ErrZone) {
					t.Errorf("%s/%s: partitions in a time zone rendered a script (err %v)", name, s.Pipeline.Value, err)
				}
				continue
			}
			if wm := plan.Watermark; wm != nil && wm.Tiebreak != "" {
				// A bound of a time and an id: the runner keeps both.
				if !errors.Is(err, script.ErrTiebreak) {
					t.Errorf("%s/%s: a tiebreak watermark rendered a script (err %v)", name, s.Pipeline.Value, err)
				}
				continue
			}
			if errors.Is(err, script.ErrDelimiter) {
				continue // a check's literal holds the body's delimiter: TestScriptsHostile
			}
			if err != nil {
				t.Errorf("%s/%s: %v", name, s.Pipeline.Value, err)
				continue
			}
			again, _ := script.Render(d, plan, spec)
			for i, f := range files {
				path := filepath.Join("..", "..", "golden", name, s.Pipeline.Value+"."+f.Suffix+".sql")
				seen[path] = true
				if string(again[i].Data) != string(f.Data) {
					t.Errorf("%s: two renderings of one plan differ", path)
				}
				if *update {
					if err := os.WriteFile(path, f.Data, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Errorf("%v (run go test ./dialects/all -update to create it)", err)
					continue
				}
				if diff := cmp.Diff(string(want), string(f.Data)); diff != "" {
					t.Errorf("%s mismatch (-want +got):\n%s", path, diff)
				}
			}
		}
	}
	scripts, _ := filepath.Glob(filepath.Join("..", "..", "golden", "*", "*.*.sql"))
	for _, path := range scripts {
		if !seen[path] {
			if *update {
				os.Remove(path)
				continue
			}
			t.Errorf("%s: no spec renders it (run -update to remove it)", path)
		}
	}
}
