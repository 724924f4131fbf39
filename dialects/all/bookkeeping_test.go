package all_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
)

// TestBookkeepingIsWhatPlansRun: every statement a plan holds alike
// (Statement.Shared) is in the dialect's bookkeeping file, spelled as the
// plan's Render spells it, for every golden spec and every dialect; and no
// pipeline's file holds one.
func TestBookkeepingIsWhatPlansRun(t *testing.T) {
	for _, name := range all.Names() {
		d, _ := all.Lookup(name)
		want := map[string][]dialects.Part{}
		for _, st := range compiler.Bookkeeping() {
			parts, err := dialects.RenderStatement(d, st)
			if err != nil {
				t.Fatal(err)
			}
			want[st.Name] = parts
		}
		file, err := dialects.BookkeepingFile(d, compiler.Bookkeeping(), "")
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range goldenSpecs(t) {
			plan, err := compiler.Lower(s)
			if err != nil {
				t.Fatal(err)
			}
			own, err := dialects.File(d, plan, "spec.yaml", sourceOf(t, plan))
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range lowerAndRender(t, d, s) {
				if r.Statement.Shared() == nil {
					continue
				}
				parts, ok := want[r.Name]
				if !ok {
					t.Fatalf("%s: %s (%s) is shared and not in the bookkeeping", name, r.Name, s.Pipeline.Value)
				}
				if diff := cmp.Diff(parts, r.Parts); diff != "" {
					t.Fatalf("%s: %s (%s): the bookkeeping file's differs from the plan's:\n%s", name, r.Name, s.Pipeline.Value, diff)
				}
				if !bytes.Contains(file, []byte("\n-- name: "+r.Name+"\n")) {
					t.Fatalf("%s: %s is not in the bookkeeping file", name, r.Name)
				}
				if bytes.Contains(own, []byte("\n-- name: "+r.Name+"\n")) {
					t.Fatalf("%s: %s's file holds the shared %s", name, s.Pipeline.Value, r.Name)
				}
			}
		}
	}
}
