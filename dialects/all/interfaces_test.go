package all_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
)

// optionalInterfaces reads the interfaces package dialects declares, but
// Dialect itself: name and methods.
func optionalInterfaces(t *testing.T) map[string][]string {
	pkgs, err := parser.ParseDir(token.NewFileSet(), "..", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok || ts.Name.Name == "Dialect" {
					return true
				}
				if it, ok := ts.Type.(*ast.InterfaceType); ok {
					for _, m := range it.Methods.List {
						for _, name := range m.Names {
							out[ts.Name.Name] = append(out[ts.Name.Name], name.Name)
						}
					}
				}
				return true
			})
		}
	}
	if len(out) < 5 {
		t.Fatalf("found %d optional interfaces: the test no longer reads package dialects", len(out))
	}
	return out
}

// TestOptionalInterfacesAsserted: every optional interface a dialect
// implements is asserted in its package (var _ dialects.X = ...), so a
// method that stops matching its interface fails to compile instead of
// silently falling back to the shared spelling.
func TestOptionalInterfacesAsserted(t *testing.T) {
	optional := optionalInterfaces(t)
	checked := 0
	for _, name := range all.Names() {
		d, _ := all.Lookup(name)
		typ := reflect.TypeOf(d)
		dir := filepath.Join("..", filepath.Base(typ.Elem().PkgPath()))
		var src strings.Builder
		files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") {
				b, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				src.Write(b)
			}
		}
		if src.Len() == 0 {
			t.Fatalf("%s: no source in %s", name, dir)
		}
		for iface, methods := range optional {
			implements := true
			for _, m := range methods {
				_, has := typ.MethodByName(m)
				implements = implements && has
			}
			if implements && !strings.Contains(src.String(), "_ dialects."+iface) {
				t.Errorf("%s implements dialects.%s but %s does not assert it (var _ dialects.%s = (*Dialect)(nil))", name, iface, dir, iface)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}

// TestReading: a count reads its first part unless a part is marked read,
// and then only the marked ones (DuckDB's direct merge reads the parts
// before and after its MERGE).
func TestReading(t *testing.T) {
	for _, c := range []struct {
		marks []bool
		want  []bool
	}{
		{[]bool{false}, []bool{true}},
		{[]bool{false, false}, []bool{true, false}},
		{[]bool{false, true}, []bool{false, true}},
		{[]bool{true, false, true}, []bool{true, false, true}},
	} {
		parts := make([]dialects.Part, len(c.marks))
		for i, m := range c.marks {
			parts[i].Reads = m
		}
		for i := range parts {
			if got := dialects.Reading(parts, i); got != c.want[i] {
				t.Errorf("marks %v: part %d read = %v, want %v", c.marks, i, got, c.want[i])
			}
		}
	}
}
