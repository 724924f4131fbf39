package all_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
)

// FuzzRenderSafe renders random specs and random expressions through every
// dialect and fails on any statement that does not lex back as meant: more
// than one statement, a comment, a literal or a name other than the ones
// written (dialects.CheckPart).
//
// check and query become a spec's quality check and source query (and check
// a cdc spec's op code, see renderCDC); a spec
// that validates must compile for every dialect, or be refused at its
// place in the spec by that engine's reading of the query. tree drives a
// small stack machine that builds an expression no parser produced, whose
// string literals are pieces of check and query: it must render and lex
// back, or be refused for a value no literal rule can spell.
//
// Plain `go test` runs the seeds (the hostile table, the golden specs'
// checks and queries, testdata/fuzz/FuzzRenderSafe); CI fuzzes for a
// bounded time (.ci/run).
func FuzzRenderSafe(f *testing.F) {
	for _, c := range hostileCases {
		f.Add(c.check, c.query, []byte("\x00\x02\x07\x05\x0c"))
	}
	files, _ := filepath.Glob("testdata/specs/*.yaml")
	more, _ := filepath.Glob("../../specs/*.yaml")
	for _, file := range append(files, more...) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		s, _ := compiler.Parse(file, data)
		if s == nil || s.Quality == nil {
			continue
		}
		for _, c := range s.Quality.Checks {
			f.Add(c.Value, s.Source.Query.Value, []byte("\x01\x02\x03\x09\x0a"))
		}
	}
	f.Fuzz(func(t *testing.T, check, query string, tree []byte) {
		if len(check)+len(query) > 1024 {
			return // long texts find nothing short ones do not, at a hundred times the cost
		}
		renderSpec(t, check, query)
		renderTree(t, check, query, tree)
		renderCDC(t, check)
	})
}

func renderSpec(t *testing.T, check, query string) {
	s, err := compiler.Parse("fuzz.yaml", []byte(hostileSpec(check, query)))
	if err != nil || len(compiler.Validate(s)) > 0 {
		return
	}
	plan, err := compiler.Lower(s)
	if err != nil {
		t.Fatalf("a valid spec does not lower: %v", err)
	}
	for _, name := range all.Names() {
		d, _ := all.Lookup(name)
		rendered, err := dialects.Render(d, plan)
		var placed *dialects.QueryError
		switch {
		case errors.As(err, &placed):
			if !strings.Contains(err.Error(), "source.query, as "+string(d.Name())+" reads it") {
				t.Fatalf("%s: a refusal that is not the engine's reading of the query: %v", name, err)
			}
			continue
		case err != nil:
			t.Fatalf("%s: a valid spec does not render: %v\ncheck %q\nquery %q", name, err, check, query)
		}
		for _, r := range rendered {
			for _, p := range r.Parts {
				if err := dialects.CheckPart(d, p); err != nil {
					t.Fatalf("%s: %s: %v", name, r.Name, err)
				}
			}
		}
	}
}

// renderTree builds an expression from ops and renders it, as a condition
// and as a quarantine reason, for every dialect.
func renderTree(t *testing.T, check, query string, ops []byte) {
	e := buildExpr(ops, []string{check, query, check + query, strings.ToUpper(check)})
	if e == nil {
		return
	}
	for _, name := range all.Names() {
		d, _ := all.Lookup(name)
		for _, op := range []ir.Op{
			ir.CountRows{Table: ir.Table{Parts: []string{"dw", "t"}}, Where: e},
			ir.QuarantineRows{Into: ir.Table{Parts: []string{"dw", "q"}}, From: ir.Relation{Table: ir.Table{Parts: []string{"s"}}},
				Columns: []string{"amount", "note"}, Rules: []ir.Rule{{Reason: "check: " + check, Invalid: e}}},
		} {
			parts, err := dialects.RenderStatement(d, &ir.Statement{Name: "fuzz", Op: op, Params: []ir.Param{{Name: "p"}, {Name: "run_id"}}})
			if err != nil {
				if strings.Contains(err.Error(), "cannot spell") || strings.Contains(err.Error(), "is not a number") {
					continue // a value with a NUL or a control character, a Lit that is no number
				}
				t.Fatalf("%s: %v\nexpr %#v", name, err, e)
			}
			for _, p := range parts {
				if err := dialects.CheckPart(d, p); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
		}
	}
}

// buildExpr runs a stack machine: each byte pushes a leaf or combines the
// top of the stack. Literals are cut from texts; numbers are valid or not
// (a Lit that is no number must be refused, never copied).
func buildExpr(ops []byte, texts []string) ir.Expr {
	if len(ops) > 64 {
		ops = ops[:64]
	}
	numbers := []string{"0", "1", "1.5", "1e-5", ".5", "5.", "1E+3", "12345678901234567890"}
	var stack []ir.Expr
	pop := func() ir.Expr {
		e := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		return e
	}
	binary := []string{"=", "<>", "<", "<=", ">", ">=", "+", "-", "*", "/", "AND", "OR"}
	for i, b := range ops {
		switch n := len(stack); {
		case b%13 == 0 || n == 0:
			stack = append(stack, ir.ColRef{Name: []string{"amount", "note"}[int(b)%2]})
		case b%13 == 1:
			stack = append(stack, ir.Lit{Text: numbers[int(b/13)%len(numbers)]})
		case b%13 == 2:
			text := texts[int(b/13)%len(texts)]
			cut := min(len(text), i%7*5+int(b)%11)
			stack = append(stack, ir.Str{Value: text[:cut]})
		case b%13 == 3:
			stack = append(stack, ir.ParamRef{Name: "p"})
		case b%13 == 4:
			stack = append(stack, ir.Lit{Text: []string{"TRUE", "FALSE", "NULL"}[int(b)%3]})
		case b%13 == 5:
			stack = append(stack, ir.Unary{Op: "-", X: pop()})
		case b%13 == 6:
			stack = append(stack, ir.Unary{Op: "NOT", X: pop()})
		case b%13 == 7 && n >= 2:
			r, l := pop(), pop()
			stack = append(stack, ir.Binary{Op: binary[int(b/13)%len(binary)], L: l, R: r})
		case b%13 == 8:
			stack = append(stack, ir.IsNull{X: pop(), Not: b&1 == 0})
		case b%13 == 9 && n >= 2:
			r, l := pop(), pop()
			stack = append(stack, ir.In{X: l, List: []ir.Expr{r, ir.Str{Value: "x"}}, Not: b&1 == 0})
		case b%13 == 10:
			stack = append(stack, ir.Call{Fn: []string{"coalesce", "abs", "lower", "upper"}[int(b)%4], Args: []ir.Expr{pop()}})
		case b%13 == 11:
			stack = append(stack, ir.Lit{Text: texts[int(b)%len(texts)]}) // never a keyword or a number: refused
		default:
			stack = append(stack, ir.Str{Value: texts[int(b)%len(texts)]})
		}
	}
	if len(stack) == 0 {
		return nil
	}
	e := stack[0]
	for _, x := range stack[1:] {
		e = ir.Binary{Op: "OR", L: e, R: x}
	}
	return e
}
