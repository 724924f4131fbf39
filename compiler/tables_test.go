package compiler

import (
	"slices"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"
)

// TestTablesAreWhatPlansCreate: the tables a spec says it writes
// (Spec.Tables, which the names' checks read) are exactly the permanent
// tables its plan creates, incrc's own aside: a new table a strategy
// writes cannot escape the checks.
func TestTablesAreWhatPlansCreate(t *testing.T) {
	for _, s := range repoSpecs(t) {
		p, err := Lower(s)
		if err != nil {
			t.Fatal(err)
		}
		var created, writes []string
		for _, st := range p.Statements {
			if ct, ok := st.Op.(ir.CreateTable); ok && !ct.Temporary && !strings.HasPrefix(ct.Table.Name(), "incrc_") {
				created = append(created, strings.Join(ct.Table.Parts, "."))
			}
		}
		for _, u := range p.Tables {
			if u.Role.Writes() {
				writes = append(writes, strings.Join(u.Table.Parts, "."))
			}
		}
		slices.Sort(created)
		slices.Sort(writes)
		if !slices.Equal(created, writes) {
			t.Errorf("%s: the plan creates %v, Tables says it writes %v", s.File, created, writes)
		}
	}
}
