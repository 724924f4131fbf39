package main

import (
	"context"
	"encoding/json"
	"fmt"

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
		if format == "json" && pr != nil {
			printValidateJSON(e, pr)
		}
		if !ok {
			return exitError
		}
		if format != "json" {
			fmt.Fprintf(e.stdout, "%d spec(s) valid\n", len(pr.chosen))
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

func printValidateJSON(e *env, pr *project) {
	type spec struct {
		Pipeline string `json:"pipeline"`
		File     string `json:"file"`
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
	for _, s := range specs {
		out.Valid = append(out.Valid, spec{s.Pipeline.Value, s.File})
	}
	for _, d := range pr.diags {
		out.Errors = append(out.Errors, diagJSON(d))
	}
	for _, d := range pr.warnings {
		out.Warnings = append(out.Warnings, diagJSON(d))
	}
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.Encode(out)
}

func diagJSON(d compiler.Diagnostic) validateError {
	return validateError{File: d.Pos.File, Line: d.Pos.Line, Col: d.Pos.Col, Code: d.Code, Message: d.Msg}
}
