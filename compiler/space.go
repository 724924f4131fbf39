package compiler

import "sync"

// planSpace is where Lower allocates a plan's statements and the steps its
// run programs start with, a block at a time: a plan has dozens of each.
// A caller done with a plan gives the space back (Plan.Release), and the
// next plan's statements and steps go in the same blocks.
type planSpace struct {
	stmts  [][]Statement // the blocks handed out (the first n) and kept
	steps  [][]Step
	nStmts int
	nSteps int
}

var planSpaces = sync.Pool{New: func() any { return new(planSpace) }}

// statements is an empty block of statements; a new one from no space
// (the shared statements', kept: see shared).
func (sp *planSpace) statements() []Statement {
	if sp == nil {
		return make([]Statement, 0, 32)
	}
	if sp.nStmts == len(sp.stmts) {
		sp.stmts = append(sp.stmts, make([]Statement, 0, 32))
	}
	sp.nStmts++
	return sp.stmts[sp.nStmts-1][:0]
}

// stepList is an empty list of steps with room for n, and for most runs'.
// A plan asks for its lists in the same order as the plan before: the
// block kept for each has the room it needed then.
func (sp *planSpace) stepList(n int) []Step {
	n = max(n, 24)
	if sp == nil {
		return make([]Step, 0, n)
	}
	if sp.nSteps == len(sp.steps) {
		sp.steps = append(sp.steps, nil)
	}
	if cap(sp.steps[sp.nSteps]) < n {
		sp.steps[sp.nSteps] = make([]Step, 0, n)
	}
	sp.nSteps++
	return sp.steps[sp.nSteps-1][:0]
}

// free empties the blocks handed out (what they point to goes) and puts
// sp in the pool.
func (sp *planSpace) free() {
	for _, b := range sp.stmts[:sp.nStmts] {
		clear(b[:cap(b)])
	}
	for _, b := range sp.steps[:sp.nSteps] {
		clear(b[:cap(b)])
	}
	sp.nStmts, sp.nSteps = 0, 0
	planSpaces.Put(sp)
}

// Release gives back the space Lower allocated p's statements and its
// programs' steps in, for the next plan to use. Call it only when nothing
// read from p is used any more, by the caller or by anything it handed
// p's parts to: the statements, the programs and their steps are
// overwritten. p is empty after. A plan never released is only collected.
func (p *Plan) Release() {
	if p.space == nil {
		return
	}
	p.space.free()
	p.space = nil
	p.Statements, p.Programs = nil, nil
}
