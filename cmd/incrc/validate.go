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
		example: "incrc validate                    # every spec in the project's specs folder\nincrc validate specs/orders.yaml\nincrc validate --json              # {\"valid\": [...], \"errors\": [{\"file\", \"line\", \"col\", \"message\"}]}",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p   projectFlags
			out outputFlags
		)
		fs := c.flags(e)
		p.register(fs)
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
	Message string `json:"message"`
}

func printValidateJSON(e *env, pr *project) {
	type spec struct {
		Pipeline string `json:"pipeline"`
		File     string `json:"file"`
	}
	out := struct {
		Valid  []spec          `json:"valid"`
		Errors []validateError `json:"errors"`
	}{Valid: []spec{}, Errors: []validateError{}}
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
	enc := json.NewEncoder(e.stdout)
	enc.SetIndent("", "  ")
	enc.Encode(out)
}

func diagJSON(d compiler.Diagnostic) validateError {
	return validateError{File: d.Pos.File, Line: d.Pos.Line, Col: d.Pos.Col, Message: d.Msg}
}
