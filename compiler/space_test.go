package compiler

import (
	"reflect"
	"testing"
)

// TestReleaseLeavesOtherPlansAlone lowers the repository's specs one after
// the other, releasing each plan once read, so that each plan's statements
// and steps go in the blocks of the one before: every plan must equal the
// same spec's plan lowered on its own and never released, which must not
// change either.
func TestReleaseLeavesOtherPlansAlone(t *testing.T) {
	specs := repoSpecs(t)
	// What a plan holds in the blocks: its statements and programs, by value.
	type held struct {
		stmts    []Statement
		programs []Program
	}
	hold := func(p *Plan) held {
		var h held
		for _, st := range p.Statements {
			h.stmts = append(h.stmts, *st)
		}
		for _, pr := range p.Programs {
			h.programs = append(h.programs, *pr)
		}
		return h
	}
	kept := make([]*Plan, len(specs)) // never released
	want := make([]held, len(specs))
	for i, s := range specs {
		p, err := Lower(s)
		if err != nil {
			t.Fatal(err)
		}
		kept[i], want[i] = p, hold(p)
	}
	for round := range 2 {
		for i, s := range specs {
			p, err := Lower(s)
			if err != nil {
				t.Fatal(err)
			}
			if got := hold(p); !reflect.DeepEqual(got, want[i]) {
				t.Fatalf("round %d, %s: the plan lowered after others were released differs from the plan lowered on its own", round, s.File)
			}
			p.Release()
			if p.Statements != nil || p.Programs != nil {
				t.Fatalf("%s: a released plan still lists its statements or programs", s.File)
			}
			p.Release() // a second time does nothing
		}
	}
	for i, p := range kept {
		if !reflect.DeepEqual(hold(p), want[i]) {
			t.Fatalf("%s: a plan never released changed while others were released", specs[i].File)
		}
	}
}
