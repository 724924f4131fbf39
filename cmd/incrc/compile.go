package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/incrc/incrc/dialects"
)

func compileCmd() *command {
	c := &command{
		name:    "compile",
		summary: "Compile specs to SQL files, one per pipeline and dialect: OUT/<dialect>/<pipeline>.sql.",
		usage:   "[flags] [PIPELINE|SPEC|DIR...]",
		example: "incrc compile                     # the project's dialects (default duckdb) into sql/\nincrc compile --dialect all --out build/sql",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p       projectFlags
			dialect string
			out     string
			scripts bool
			output  outputFlags
		)
		fs := c.flags(e)
		fs.StringVar(&dialect, "dialect", "", "dialect to compile for: a name, a comma-separated list, or all (default: the project's)")
		fs.BoolVar(&scripts, "scripts", false, "also write each pipeline's engine-side scripts next to its compiled file, for the engines that have them (postgres, redshift, bigquery, snowflake, spark): PIPELINE.run.sql, PIPELINE.full_refresh.sql, PIPELINE.backfill.sql (incrc.yaml: scripts: true)")
		fs.StringVar(&out, "out", "", "output folder (default: the project's, sql)")
		p.register(fs)
		p.registerWarnings(fs, &dialect)
		output.register(fs)
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
		cfg, specs := pr.cfg, pr.chosen
		if out == "" {
			out = cfg.Out
		}
		ds, err := dialectsFor(dialect, cfg)
		if err != nil {
			return c.fail(e, "%v", err)
		}
		st := &stager{}
		files, errs := compileAll(specs, ds, out, cfg.ConnectionDialect, scripts || cfg.Scripts, st)
		if len(errs) > 0 {
			st.abort()
			for _, err := range errs {
				fmt.Fprintln(e.stderr, err)
			}
			fmt.Fprintln(e.stderr, "nothing written")
			return exitError
		}
		written, removed, err := writeFiles(files, dialectDirs(out, ds, !pr.named), pr.outRoots(fs, out))
		if err != nil {
			st.abort()
			return c.fail(e, "%v", err)
		}
		// The counts are of the pipelines' files; the bookkeeping files,
		// one a dialect, are listed apart.
		var bookkeeping []string
		for _, f := range files {
			if f.bookkeeping {
				bookkeeping = append(bookkeeping, filepath.ToSlash(f.path))
			}
		}
		var names []string
		for _, d := range ds {
			names = append(names, string(d.Name()))
		}
		show(e.stdout, format, compileView{pipelines: len(specs), dialects: names, out: out,
			written: written, unchanged: len(files) - len(bookkeeping) - written, removed: removed, bookkeeping: bookkeeping})
		return exitOK
	}
	return c
}

// compileView is what incrc compile prints: the counts are of the
// pipelines' files; the bookkeeping files, one a dialect, are listed apart.
type compileView struct {
	pipelines                   int
	dialects                    []string
	out                         string
	written, unchanged, removed int
	bookkeeping                 []string
}

func (v compileView) json() any {
	return map[string]any{"pipelines": v.pipelines, "dialects": v.dialects, "out": v.out,
		"written": v.written, "unchanged": v.unchanged, "removed": v.removed, "bookkeeping": v.bookkeeping}
}

func (v compileView) text(w io.Writer) {
	fmt.Fprintf(w, "compiled %d pipeline(s) for %d dialect(s) into %s: %d file(s) written, %d unchanged, %d removed\n",
		v.pipelines, len(v.dialects), v.out, v.written, v.unchanged, v.removed)
}

// compiledMarker starts every file incrc writes; only such files are ever
// removed as stale.
const compiledMarker = "-- incrc: pipeline "

// writeFiles makes each dialect folder hold exactly the compiled files:
// each staged file is renamed into place (a crash never leaves half a
// file), stale compiled files are removed (read from inside roots only).
// written counts the pipelines' files, not the bookkeeping.
func writeFiles(files []compiled, dirs, roots []string) (written, removed int, err error) {
	want := map[string]bool{}
	for _, f := range files {
		want[f.path] = true
	}
	for _, f := range files {
		if f.tmp == "" {
			continue
		}
		if err := os.Rename(f.tmp, f.path); err != nil {
			return written, removed, err
		}
		if !f.bookkeeping {
			written++
		}
	}
	for _, path := range staleFiles(dirs, want, roots) {
		if err := os.Remove(path); err != nil {
			return written, removed, err
		}
		removed++
	}
	return written, removed, nil
}

// dialectDirs are the folders whose stale files a whole-project compile
// removes. Compiling named specs removes nothing: the other pipelines'
// files are not stale, only not compiled this time.
func dialectDirs(out string, ds []dialects.Dialect, wholeProject bool) []string {
	if !wholeProject {
		return nil
	}
	var dirs []string
	for _, d := range ds {
		dirs = append(dirs, filepath.Join(out, string(d.Name())))
	}
	return dirs
}

// staleFiles lists compiled files in dirs that are not wanted any more.
// Each is read from inside roots only (readCompiled): a symlink that
// leaves the project is no compiled file.
func staleFiles(dirs []string, want map[string]bool, roots []string) []string {
	var stale []string
	for _, dir := range dirs {
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, en := range entries {
			path := filepath.Join(dir, en.Name())
			if en.IsDir() || !strings.HasSuffix(en.Name(), ".sql") || want[path] {
				continue
			}
			if data, err := readCompiled(path, roots); err == nil && bytes.HasPrefix(data, []byte(compiledMarker)) {
				stale = append(stale, path)
			}
		}
	}
	return stale
}
