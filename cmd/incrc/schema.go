package main

import (
	"context"
	"fmt"
	"os"

	"github.com/incrc/incrc/compiler"
)

func schemaCmd() *command {
	c := &command{
		name:    "schema",
		summary: "Print the JSON Schema of a spec (or of incrc.yaml): completion and hover docs in editors.",
		usage:   "[--project] [--out FILE]",
		example: "incrc schema --out incrc.schema.json\n# then, as the first line of a spec in specs/:\n# yaml-language-server: $schema=../incrc.schema.json",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			project bool
			out     string
		)
		fs := c.flags(e)
		fs.BoolVar(&project, "project", false, "the schema of the project file, incrc.yaml, instead of a spec's")
		fs.StringVar(&out, "out", "", "write the schema to FILE instead of stdout")
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		if fs.NArg() > 0 {
			return c.fail(e, "takes no arguments (got %q)", fs.Args())
		}
		data := compiler.Schema()
		if project {
			data = compiler.ConfigSchema()
		}
		if out == "" {
			e.stdout.Write(data)
			return exitOK
		}
		if err := os.WriteFile(out, data, 0o644); err != nil {
			return c.fail(e, "--out: %v", err)
		}
		fmt.Fprintf(e.stdout, "wrote %s\n", out)
		return exitOK
	}
	return c
}
