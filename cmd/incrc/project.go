package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/pflag"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
)

// projectFlags are the flags every command that reads specs shares.
type projectFlags struct {
	config string
	fs     *pflag.FlagSet
}

func (p *projectFlags) register(fs *pflag.FlagSet) {
	p.fs = fs
	fs.StringVar(&p.config, "config", "incrc.yaml", "project file: specs folder, output folder, dialects, named targets (optional)")
}

// load reads the project file and the specs named by args (default: the
// project's specs folder). Diagnostics go to stderr; ok is false if any.
func (p *projectFlags) load(e *env, args []string) (*compiler.Config, []*compiler.Spec, bool) {
	// Without incrc.yaml a project has the defaults, but a file named on
	// the command line that is not there is a typo, not a default.
	if p.fs != nil && p.fs.Changed("config") {
		if _, err := os.Stat(p.config); err != nil {
			fmt.Fprintf(e.stderr, "incrc: --config: %v\n", err)
			return nil, nil, false
		}
	}
	cfg, err := compiler.LoadConfig(p.config, e.getenv)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		var diags compiler.Diagnostics
		if errors.As(err, &diags) {
			fmt.Fprintf(e.stderr, "%d error(s)\n", len(diags))
		}
		return nil, nil, false
	}
	paths := args
	if len(paths) == 0 {
		paths = []string{cfg.Specs}
	}
	files, err := compiler.SpecFiles(paths)
	if err != nil {
		fmt.Fprintf(e.stderr, "incrc: %v\n", err)
		return nil, nil, false
	}
	if len(files) == 0 {
		fmt.Fprintf(e.stderr, "incrc: no spec files (*.yaml) in %v\n", paths)
		return nil, nil, false
	}
	specs, diags := compiler.LoadSpecs(files)
	if len(diags) > 0 {
		for _, d := range diags {
			fmt.Fprintln(e.stderr, d)
		}
		fmt.Fprintf(e.stderr, "%d error(s)\n", len(diags))
		return nil, nil, false
	}
	return cfg, specs, true
}

// dialectsFor resolves --dialect, falling back to the project's list.
func dialectsFor(flag string, cfg *compiler.Config) ([]dialects.Dialect, error) {
	if flag == "" {
		var out []dialects.Dialect
		for i, n := range cfg.Dialects {
			d, err := all.Lookup(n)
			if err != nil {
				if i < len(cfg.DialectPos) {
					return nil, fmt.Errorf("%s: %w", cfg.DialectPos[i], err)
				}
				return nil, err
			}
			out = append(out, d)
		}
		if len(out) == 0 {
			return nil, fmt.Errorf("%s: dialects is empty: name at least one, or remove the key for the default (duckdb)", cfg.File)
		}
		return out, nil
	}
	ds, err := all.Parse(flag)
	if err != nil {
		return nil, fmt.Errorf("--dialect: %w", err)
	}
	return ds, nil
}

// compiled is one output file: its path under the output folder and bytes.
type compiled struct {
	path string // out/<dialect>/<pipeline>.sql
	data []byte
}

// compileAll lowers and renders every spec for every dialect, in memory.
// It fails as a whole: nothing is written when anything fails.
func compileAll(specs []*compiler.Spec, ds []dialects.Dialect, out string) ([]compiled, []error) {
	var (
		files []compiled
		errs  []error
	)
	for _, s := range specs {
		plan, err := compiler.Lower(s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, d := range ds {
			data, err := dialects.File(d, plan, specPath(s.File))
			var placed compiler.Diagnostics
			switch {
			case errors.As(err, &placed):
				// The engine's reading of the source query: already at
				// its place in the spec.
				errs = append(errs, err)
				continue
			case err != nil:
				// What a dialect cannot spell follows from the strategy:
				// point there, as every other error points at a line.
				errs = append(errs, fmt.Errorf("%s: %w", s.Strategy.Pos, err))
				continue
			}
			files = append(files, compiled{path: filepath.Join(out, string(d.Name()), s.Pipeline.Value+".sql"), data: data})
		}
	}
	return files, errs
}

// specPath is the spec's path as compiled files name it: relative to the
// working directory when possible, with forward slashes, so the bytes are
// the same on every machine.
func specPath(file string) string {
	if filepath.IsAbs(file) {
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, file); err == nil {
				file = rel
			}
		}
	}
	return filepath.ToSlash(filepath.Clean(file))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
