package main

import (
	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/compiler/ir"
	"github.com/incrc/incrc/dialects"
)

// checkNames checks the tables of a project's valid specs as each dialect
// of ds reads their names (dialects.CheckNames), as diagnostics. It sits
// here, where the specs and the dialects are both seen: the dialects know
// how each engine reads a name and nothing of specs, and the compiler
// knows no dialect.
func checkNames(ds []dialects.Dialect, specs []*compiler.Spec) (errs, warnings compiler.Diagnostics) {
	var uses []ir.TableUse
	for _, s := range specs {
		uses = append(uses, s.Tables()...)
	}
	es, ws := dialects.CheckNames(ds, uses)
	for _, p := range es {
		errs = append(errs, compiler.Diagnostic{Pos: p.Pos, Pipelines: p.Pipelines, Msg: p.Msg})
	}
	for _, p := range ws {
		warnings = append(warnings, compiler.Diagnostic{Pos: p.Pos, Pipelines: p.Pipelines, Msg: p.Msg, Code: p.Code, Warning: true})
	}
	return errs, warnings
}
