package all_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
)

var update = flag.Bool("update", false, "update golden files")

// goldenSpecs are the project's example specs and the test-only cases.
func goldenSpecs(t *testing.T) []*compiler.Spec {
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

// TestGolden compiles every golden spec for every dialect and compares
// with golden/<dialect>/<pipeline>.sql. It never needs a database.
func TestGolden(t *testing.T) {
	specs := goldenSpecs(t)
	seen := map[string]bool{}
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
				got, err := dialects.File(d, plan, strings.TrimPrefix(filepath.ToSlash(s.File), "../../"), src)
				if err != nil {
					t.Fatal(err)
				}
				again, _ := dialects.File(d, plan, strings.TrimPrefix(filepath.ToSlash(s.File), "../../"), src)
				if string(again) != string(got) {
					t.Fatal("two renderings of one plan differ")
				}
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
			})
		}
	}
	// A golden file no spec produces any more is stale.
	stale, _ := filepath.Glob(filepath.Join("..", "..", "golden", "*", "*.sql"))
	for _, path := range stale {
		if !seen[path] {
			if *update {
				os.Remove(path)
				continue
			}
			t.Errorf("%s: no spec compiles to it (run -update to remove it)", path)
		}
	}
}

// sourceOf is the dialect of a plan's source outside the target, or nil.
func sourceOf(t *testing.T, plan *compiler.Plan) dialects.Dialect {
	t.Helper()
	src, err := all.Source(plan, nil)
	if err != nil {
		t.Fatal(err)
	}
	return src
}
