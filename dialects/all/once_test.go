package all_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
)

// TestSharedSpelledOnce: a statement every plan holds alike
// (Statement.Shared) is spelled once a dialect and its parts handed to
// every plan's Render; they are the parts the statement spells on its own,
// where nothing is kept, for every golden spec and every dialect.
func TestSharedSpelledOnce(t *testing.T) {
	typed := func(st *compiler.Statement) bool {
		for _, p := range st.Params {
			switch p.Type {
			case compiler.PWatermark, compiler.PPartition, compiler.PBound:
				return true
			}
		}
		return false
	}
	for _, name := range all.Names() {
		d, _ := all.Lookup(name)
		first := map[*compiler.Statement]*dialects.Part{} // by Shared: the first plan's parts
		compared := 0
		for _, s := range goldenSpecs(t) {
			for _, r := range lowerAndRender(t, d, s) {
				key := r.Statement.Shared()
				if key == nil || r.On == compiler.OnSource || typed(r.Statement) {
					continue
				}
				alone, err := dialects.RenderStatement(d, r.Statement)
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(alone, r.Parts); diff != "" {
					t.Fatalf("%s: %s (%s): kept parts differ from the statement spelled alone:\n%s", name, r.Name, s.Pipeline.Value, diff)
				}
				if len(r.Parts) == 0 {
					continue
				}
				compared++
				if p, ok := first[key]; !ok {
					first[key] = &r.Parts[0]
				} else if p != &r.Parts[0] {
					t.Fatalf("%s: %s (%s): spelled again, not kept", name, r.Name, s.Pipeline.Value)
				}
			}
		}
		if compared == 0 {
			t.Fatalf("%s: no shared statement compared", name)
		}
	}
}
