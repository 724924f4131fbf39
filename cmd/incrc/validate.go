package main

import (
	"context"
	"fmt"
)

func validateCmd() *command {
	c := &command{
		name:    "validate",
		summary: "Parse and validate pipeline specs; report every error as path:line:col: message.",
		usage:   "[flags] [SPEC|DIR...]",
		example: "incrc validate                    # every spec in the project's specs folder\nincrc validate specs/orders.yaml",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var p projectFlags
		fs := c.flags(e)
		p.register(fs)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		_, specs, ok := p.load(e, fs.Args())
		if !ok {
			return exitError
		}
		fmt.Fprintf(e.stdout, "%d spec(s) valid\n", len(specs))
		return exitOK
	}
	return c
}
