package compiler

import (
	"slices"
	"testing"
)

// TestCheckTargetProbesTarget: the target's column check reads the target,
// also where tables beside it (a change log's tombstones and truncate
// marks) are created in the same setup.
func TestCheckTargetProbesTarget(t *testing.T) {
	files, err := SpecFiles([]string{"../specs", "../dialects/all/testdata/specs"})
	if err != nil {
		t.Fatal(err)
	}
	specs, diags := LoadSpecs(files)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	checked := 0
	for _, s := range specs {
		p, err := Lower(s)
		if err != nil {
			t.Fatalf("%s: %v", s.Pipeline.Value, err)
		}
		for _, st := range p.Statements {
			if st.Name != StmtCheckTarget {
				continue
			}
			checked++
			got := st.Op.(ProbeColumns).Source.Table
			if !slices.Equal(got.Parts, p.Target.Parts) {
				t.Errorf("%s: %s probes %v, not the target %v", s.Pipeline.Value, StmtCheckTarget, got.Parts, p.Target.Parts)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no spec has a target check")
	}
}
