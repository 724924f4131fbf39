package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"go.yaml.in/yaml/v3"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/runner"
)

func seedCmd() *command {
	c := &command{
		name:    "seed",
		summary: "Create pipelines' source tables from their columns and load sample rows: the project's seeds/PIPELINE.yaml, or --rows FILE.",
		usage:   "--target URL [PIPELINE...] [--rows FILE] [flags]",
		example: "incrc seed --target dev                     # every pipeline with a seeds/PIPELINE.yaml, into empty tables\n" +
			"incrc seed --target duckdb:wh.duckdb dw_orders --rows examples/tour/orders.yaml\n# FILE is a list of rows, as in a test's given.source:\n#   - {order_id: 101, order_date: 2026-01-20, amount: 50.00, updated_at: \"2026-01-20 09:00:00\"}",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p      projectFlags
			tf     targetFlags
			rows   string
			output outputFlags
		)
		fs := c.flags(e)
		tf.register(fs, "the database to create the source tables in (incrc reads a pipeline's source from its target database)")
		fs.StringVar(&rows, "rows", "", "a YAML file of rows for the one pipeline named, each a mapping of column to value (default: the project's seeds/PIPELINE.yaml)")
		output.register(fs)
		p.register(fs)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		format, ok := output.resolve(c, e)
		if !ok {
			return exitError
		}
		pr, ok := p.load(e, c, fs.Args())
		if !ok {
			return exitError
		}
		var seeds []seedFile
		if rows != "" {
			plan, ok := pr.one(c, e)
			if !ok {
				return exitError
			}
			seeds = []seedFile{{plan: plan, path: rows, rows: true, named: true}}
		} else {
			plans, err := pr.plans()
			if err != nil {
				return c.fail(e, "%v", err)
			}
			for _, plan := range plans {
				seeds = append(seeds, seedFile{plan: plan, path: filepath.Join(pr.cfg.Seeds, plan.Pipeline+".yaml"), named: pr.named})
			}
		}
		for i := range seeds {
			if err := seeds[i].read(pr); err != nil {
				return c.fail(e, "%s: %v", seeds[i].plan.Pipeline, err)
			}
		}
		tg, code := c.open(ctx, e, pr.cfg, tf, "")
		if code != exitOK {
			return code
		}
		defer tg.Close()
		var results []seedResult
		found := 0 // pipelines with sample rows, loaded or not
		for _, sd := range seeds {
			n, table, skipped, err := sd.load(ctx, tg)
			switch {
			case err != nil && sd.rows:
				c.errorf(e, "%v", err) // the one pipeline named: the file is the subject
				code = exitError
				continue
			case err != nil:
				c.errorf(e, "%s: %v", sd.plan.Pipeline, err)
				code = exitError
				continue
			}
			if !strings.HasPrefix(skipped, noSampleRows) {
				found++
			}
			results = append(results, seedResult{Pipeline: sd.plan.Pipeline, Table: table, Rows: n, Skipped: skipped})
		}
		if rows == "" && found == 0 && code == exitOK && !pr.named {
			c.errorf(e, "no sample rows in %s: write %s/PIPELINE.yaml (a list of rows), or name a file with --rows", pr.cfg.Seeds, pr.cfg.Seeds)
			code = exitError
		}
		show(e.stdout, format, seedView(results))
		return code
	}
	return c
}

// seedResult is one pipeline's seeding.
type seedResult struct {
	Pipeline string `json:"pipeline"`
	Table    string `json:"table,omitempty"`
	Rows     int    `json:"rows"`
	Skipped  string `json:"skipped,omitempty"`
}

// seedView is what incrc seed prints: a line per pipeline.
type seedView []seedResult

func (v seedView) json() any {
	if v == nil {
		return []seedResult{}
	}
	return []seedResult(v)
}

func (v seedView) text(w io.Writer) {
	for _, r := range v {
		if r.Skipped != "" {
			fmt.Fprintf(w, "%s: not seeded: %s\n", r.Pipeline, r.Skipped)
			continue
		}
		fmt.Fprintf(w, "%s: %d row(s) into %s\n", r.Pipeline, r.Rows, r.Table)
	}
}

const noSampleRows = "no sample rows"

// seedFile is one pipeline's sample rows: a file named on the command
// line, or the project's seeds/PIPELINE.yaml.
type seedFile struct {
	plan    *ir.Plan
	path    string
	rows    bool // --rows: appended to whatever the table holds
	named   bool // the pipeline was named on the command line: a missing file is an error
	list    []testRow
	skipped string // why the pipeline is passed over
}

// read reads and decodes the rows, before any database is opened (a file
// that is not a plain file is refused without touching the target), or
// says why the pipeline is passed over.
func (sd *seedFile) read(pr *project) error {
	plan := sd.plan
	if _, serr := os.Stat(sd.path); serr != nil && !sd.rows {
		if sd.named {
			return fmt.Errorf("no sample rows: %s is not there (write a list of rows there, or name a file with --rows)", sd.path)
		}
		sd.skipped = noSampleRows + " (" + sd.path + ")"
		return nil
	}
	why := ""
	switch {
	case plan.Source.Query != "":
		why = "it reads a source.query: seed the tables it reads yourself"
	case plan.From != nil:
		why = "its source is not in the target database (source.connection or source.files)"
	}
	switch {
	case why != "" && sd.named:
		return errors.New(why)
	case why != "":
		sd.skipped = why
		return nil
	}
	// The file named here is read from its folder, as a spec named on the
	// command line is, and through the same guards.
	data, err := compiler.ReadFile(sd.path, compiler.FileRule{What: "a file of rows", Max: compiler.MaxDataFile,
		Roots: append(slices.Clone(pr.roots), compiler.RealDir(filepath.Dir(sd.path)))})
	if err != nil {
		return fmt.Errorf("--rows %v", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&sd.list); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("%s: expected a list of rows, each a mapping of column to value: %s", sd.path, excerpt(err.Error()))
	}
	return nil
}

// load creates the pipeline's source table and inserts the rows. Rows of
// the seeds folder go only into a table that holds none: seeding twice
// does not double them, and a table with real rows is never added to.
// skipped says why nothing was loaded.
func (sd *seedFile) load(ctx context.Context, tg *runner.Target) (n int, table, skipped string, err error) {
	if sd.skipped != "" {
		return 0, "", sd.skipped, nil
	}
	plan := sd.plan
	src, cols := plan.Source.Table, sourceColumns(plan)
	table = strings.Join(src.Parts, ".")
	if s := src.Schema(); s != nil {
		if err := tg.ExecOp(ctx, ir.CreateSchema{Schema: s}, nil); err != nil {
			return 0, "", "", err
		}
	}
	if err := tg.ExecOp(ctx, ir.CreateTable{Table: src, Columns: cols}, nil); err != nil {
		return 0, "", "", err
	}
	if !sd.rows {
		got, err := tg.QueryOp(ctx, ir.CountRows{Table: src}, nil)
		if err != nil {
			return 0, "", "", err
		}
		if len(got) == 1 && len(got[0]) == 1 && got[0][0] != "0" {
			return 0, table, fmt.Sprintf("%s holds %s row(s) already (sample rows go into an empty table only)", table, got[0][0]), nil
		}
	}
	if err := insertRows(ctx, tg, sd.path, src, cols, sd.list); err != nil {
		return 0, "", "", err
	}
	return len(sd.list), table, "", nil
}
