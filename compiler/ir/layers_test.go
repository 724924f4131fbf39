package ir_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/incrc/incrc"

// TestSpecModelOutOfReach: the dialects and the runner, and every package
// of this module they import, import nothing of the compiler but the plan
// (compiler/ir) and the lexer (compiler/sqllex). They are handed plans;
// reaching the spec model from there would let a renderer or the runner
// decide what a spec means. Every file counts, whatever its build tags;
// tests are free to import the compiler.
func TestSpecModelOutOfReach(t *testing.T) {
	root := filepath.Join("..", "..")
	allowed := map[string]bool{module + "/compiler/ir": true, module + "/compiler/sqllex": true}
	by := map[string]string{} // package: the package that imports it ("" for a root)
	var queue []string
	for _, top := range []string{"dialects", "runner"} {
		err := filepath.WalkDir(filepath.Join(root, top), func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if d.IsDir() {
				rel, _ := filepath.Rel(root, path)
				pkg := module + "/" + filepath.ToSlash(rel)
				if _, seen := by[pkg]; !seen {
					by[pkg] = ""
					queue = append(queue, pkg)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	checked := 0
	for len(queue) > 0 {
		pkg := queue[0]
		queue = queue[1:]
		dir := filepath.Join(root, filepath.FromSlash(strings.TrimPrefix(pkg, module+"/")))
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			name := e.Name()
			if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, name), nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			checked++
			for _, spec := range f.Imports {
				imp, _ := strconv.Unquote(spec.Path.Value)
				if !strings.HasPrefix(imp, module+"/") || allowed[imp] {
					continue
				}
				if imp == module+"/compiler" || strings.HasPrefix(imp, module+"/compiler/") {
					chain := []string{imp, pkg + " (" + name + ")"}
					for p := by[pkg]; p != ""; p = by[p] {
						chain = append(chain, p)
					}
					t.Errorf("%s imports %s: the plan the dialects and the runner need belongs in compiler/ir (chain: %s)", pkg, imp, strings.Join(chain, " <- "))
					continue
				}
				if _, seen := by[imp]; !seen {
					by[imp] = pkg
					queue = append(queue, imp)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatalf("no Go file read under %s: the walk is broken", root)
	}
}
