package main

import (
	"context"
	"fmt"
	"io"
	"slices"

	"github.com/incrc/incrc/compiler"
)

func validateCmd() *command {
	c := &command{
		name:    "validate",
		summary: "Parse and validate pipeline specs; report every error as path:line:col: message.",
		usage:   "[flags] [PIPELINE|SPEC|DIR...]",
		example: "incrc validate                    # every spec in the project's specs folder\nincrc validate specs/orders.yaml\nincrc validate --strict            # warnings fail too, as in CI\nincrc validate --json              # {\"valid\": [...], \"errors\": [{\"file\", \"line\", \"col\", \"message\"}], \"warnings\": [{..., \"code\"}]}",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p       projectFlags
			out     outputFlags
			dialect string
		)
		fs := c.flags(e)
		fs.StringVar(&dialect, "dialect", "", "the dialects whose reading of table names is checked: a name, a comma-separated list, or all (default: the project's)")
		p.register(fs)
		p.registerWarnings(fs, &dialect)
		out.register(fs)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		format, ok := out.resolve(c, e)
		if !ok {
			return exitError
		}
		p.quiet = format == "json"
		pr, ok := p.load(e, c, fs.Args())
		if pr != nil {
			show(e.stdout, format, validateView{pr: pr, ok: ok})
		}
		if !ok {
			return exitError
		}
		return exitOK
	}
	return c
}

// validateError is one diagnostic, as validate --json prints it.
type validateError struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Col     int    `json:"col,omitempty"`
	Code    string `json:"code,omitempty"` // a warning's
	Message string `json:"message"`
}

// validateView is what incrc validate prints: with --json every spec, its
// errors and warnings; as text, the count of valid specs (the
// diagnostics went to stderr as they were found).
type validateView struct {
	pr *project
	ok bool // no errors (or warnings, with --strict)
}

func (v validateView) indent() string { return "  " }

func (v validateView) text(w io.Writer) {
	// The diagnostics went to stderr as they were found; the JSON lists
	// them too.
	if !v.ok {
		return
	}
	fmt.Fprintf(w, "%d spec(s) valid\n", len(v.pr.chosen))
}

func (v validateView) json() any {
	pr := v.pr
	type spec struct {
		Pipeline string `json:"pipeline"`
		File     string `json:"file"`
		// Until: incrc run --until applies (a scheduler passes its
		// interval's end); an integer watermark's window ends at the
		// largest id present, and the run refuses --until.
		Until bool `json:"until"`
		// Upstream are the pipelines whose targets this one reads: a
		// scheduler runs them first.
		Upstream []string `json:"upstream"`
	}
	out := struct {
		Valid    []spec          `json:"valid"`
		Errors   []validateError `json:"errors"`
		Warnings []validateError `json:"warnings"`
	}{Valid: []spec{}, Errors: []validateError{}, Warnings: []validateError{}}
	specs := pr.chosen
	if len(pr.diags) > 0 {
		specs = pr.all
	}
	upstream := map[string][]string{}
	for _, ed := range compiler.Graph(pr.all) {
		if !slices.Contains(upstream[ed.To], ed.From) {
			upstream[ed.To] = append(upstream[ed.To], ed.From)
		}
	}
	for _, s := range specs {
		until := true
		if w := s.Watermark; w != nil {
			if c := s.Column(w.Column.Value); c != nil && c.Type.IsInteger() {
				until = false
			}
		}
		ups := upstream[s.Pipeline.Value]
		if ups == nil {
			ups = []string{}
		}
		out.Valid = append(out.Valid, spec{Pipeline: s.Pipeline.Value, File: s.File, Until: until, Upstream: ups})
	}
	for _, d := range pr.diags {
		out.Errors = append(out.Errors, diagJSON(d))
	}
	for _, d := range pr.warnings {
		out.Warnings = append(out.Warnings, diagJSON(d))
	}
	return out
}

func diagJSON(d compiler.Diagnostic) validateError {
	return validateError{File: d.Pos.File, Line: d.Pos.Line, Col: d.Pos.Col, Code: d.Code, Message: d.Msg}
}
