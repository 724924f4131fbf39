package runner

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"
)

// TestRunnerKnowsNoStrategy keeps the runner a walker of programs: no
// file of the package (tests aside) names a strategy or reads the raw
// spec. What differs between strategies belongs in the compiler's
// programs, where the compiled file shows it to a reviewer.
func TestRunnerKnowsNoStrategy(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	strategies := map[string]bool{"Append": true, "Merge": true, "OverwritePartitions": true, "FullRefresh": true, "CDCApply": true, "SCD2Strategy": true}
	fset := token.NewFileSet()
	checked := 0
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			pkg, isPkg := sel.X.(*ast.Ident)
			switch {
			case isPkg && pkg.Name == "compiler" && strategies[sel.Sel.Name]:
				t.Errorf("%s: the runner names the strategy compiler.%s", fset.Position(sel.Pos()), sel.Sel.Name)
			case sel.Sel.Name == "Strategy" || sel.Sel.Name == "Spec":
				t.Errorf("%s: the runner reads .%s: what it needs belongs in the plan", fset.Position(sel.Pos()), sel.Sel.Name)
			}
			return true
		})
	}
	if checked < 5 {
		t.Fatalf("checked %d files: the test no longer sees the package", checked)
	}
}

// TestUnknownStatementFails: executing a name the plan does not hold is
// an error, never a silent skip; a statement the dialect spells as
// nothing is known and does nothing.
func TestUnknownStatementFails(t *testing.T) {
	e := newEnv(t, engines()[0])
	p := e.spec(strings.ReplaceAll(orders("", amountCheck), "{target}", "inc"))
	c, err := compile(e.tg.Dialect, p, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.exec(e.ctx, e.tg.DB, "no_such_statement", params{}); err == nil || !strings.Contains(err.Error(), `has no statement "no_such_statement"`) {
		t.Errorf("exec of an unknown name: %v", err)
	}
	if _, err := c.query(e.ctx, e.tg.DB, "no_such_statement", params{}); err == nil {
		t.Error("query of an unknown name did not fail")
	}
	bad := *p
	bad.Programs = []*ir.Program{{Mode: ir.ModeSetup, Steps: []ir.Step{{Stmt: "no_such_statement"}}}}
	if _, err := e.tg.Release(e.ctx, &bad); err == nil || !strings.Contains(err.Error(), "no_such_statement") {
		t.Errorf("a program naming an unknown statement: %v", err)
	}
}

// TestProgramsCheckedAtLowering: Lower refuses a plan whose programs name
// what it does not hold, so a compiled file never lists a step it cannot
// show.
func TestProgramsCheckedAtLowering(t *testing.T) {
	e := &env{t: t, id: "x"}
	p := e.spec(strings.ReplaceAll(orders("", amountCheck), "{target}", "inc"))
	for _, pr := range p.Programs {
		for _, s := range pr.Steps {
			if p.Statement(s.Stmt) == nil {
				t.Errorf("program %s names %s, which the plan does not hold", pr.Mode, s.Stmt)
			}
		}
	}
	for _, m := range []ir.Mode{ir.ModeSetup, ir.ModeRun, ir.ModeFullRefresh, ir.ModeReconcile, ir.ModePreview, ir.ModeRewind} {
		if p.Program(m) == nil {
			t.Errorf("the orders plan has no %s program", m)
		}
	}
	if p.Program(ir.ModeBackfill) != nil {
		t.Error("a pipeline without partitions has a backfill program")
	}
}
