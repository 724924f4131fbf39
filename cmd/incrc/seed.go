package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/incrc/incrc/compiler"
)

func seedCmd() *command {
	c := &command{
		name:    "seed",
		summary: "Create a pipeline's source table from its columns and load rows from a YAML file: sample data to try a pipeline on.",
		usage:   "--target URL PIPELINE --rows FILE [flags]",
		example: "incrc seed --target duckdb:wh.duckdb dw_orders --rows examples/tour/orders.yaml\n# FILE is a list of rows, as in a test's given.source:\n#   - {order_id: 101, order_date: 2026-01-20, amount: 50.00, updated_at: \"2026-01-20 09:00:00\"}",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p      projectFlags
			tf     targetFlags
			rows   string
			output outputFlags
		)
		fs := c.flags(e)
		tf.register(fs, "the database to create the source table in (today incrc reads a pipeline's source from its target database)")
		fs.StringVar(&rows, "rows", "", "a YAML file: a list of rows, each a mapping of column to value")
		output.register(fs)
		p.register(fs)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		format, ok := output.resolve(c, e)
		if !ok {
			return exitError
		}
		if rows == "" {
			return c.fail(e, "--rows is required: a YAML file with a list of rows")
		}
		pr, ok := p.load(e, c, fs.Args())
		if !ok {
			return exitError
		}
		// The file named here is read from its folder, as a spec named on
		// the command line is, and through the same guards.
		data, err := compiler.ReadFile(rows, compiler.FileRule{What: "a file of rows", Max: compiler.MaxDataFile,
			Roots: append(slices.Clone(pr.roots), compiler.RealDir(filepath.Dir(rows)))})
		if err != nil {
			return c.fail(e, "--rows %v", err)
		}
		var list []testRow
		dec := yaml.NewDecoder(bytes.NewReader(data))
		if err := dec.Decode(&list); err != nil {
			return c.fail(e, "--rows %s: expected a list of rows, each a mapping of column to value: %s", rows, excerpt(err.Error()))
		}
		plan, ok := pr.one(c, e)
		if !ok {
			return exitError
		}
		if plan.Source.Query != "" {
			return c.fail(e, "%s reads a source.query: seed the tables it reads yourself", plan.Pipeline)
		}
		tg, code := c.open(ctx, e, pr.cfg, tf, "")
		if code != exitOK {
			return code
		}
		defer tg.Close()
		src, cols := plan.Source.Table, sourceColumns(plan)
		if s := src.Schema(); s != nil {
			if err := tg.ExecOp(ctx, compiler.CreateSchema{Schema: s}, nil); err != nil {
				return c.fail(e, "%v", err)
			}
		}
		if err := tg.ExecOp(ctx, compiler.CreateTable{Table: src, Columns: cols}, nil); err != nil {
			return c.fail(e, "%v", err)
		}
		if err := insertRows(ctx, tg, rows, src, cols, list); err != nil {
			return c.fail(e, "%v", err)
		}
		if format == "json" {
			json.NewEncoder(e.stdout).Encode(map[string]any{"pipeline": plan.Pipeline, "table": strings.Join(src.Parts, "."), "rows": len(list)})
			return exitOK
		}
		fmt.Fprintf(e.stdout, "%s: %d row(s) into %s\n", plan.Pipeline, len(list), strings.Join(src.Parts, "."))
		return exitOK
	}
	return c
}
