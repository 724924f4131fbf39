package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/spf13/pflag"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
	"github.com/incrc/incrc/dialects/script"
)

// projectFlags are the flags every command that reads specs shares: one
// way to choose specs and pipelines on every command.
type projectFlags struct {
	config  string
	specs   []string
	selects []string
	fs      *pflag.FlagSet
	// quiet: load returns diagnostics without printing them (a command
	// that prints them as JSON).
	quiet bool
}

func (p *projectFlags) register(fs *pflag.FlagSet) {
	p.fs = fs
	fs.StringArrayVar(&p.specs, "specs", nil, "a spec file or folder to read, instead of the project's specs folder (repeatable)")
	fs.StringVar(&p.config, "config", "incrc.yaml", "project file: specs folder, output folder, dialects, named targets (optional)")
	fs.StringArrayVar(&p.selects, "select", nil, "choose PIPELINE, PIPELINE+ (with every pipeline downstream of it), +PIPELINE (with every one upstream) (repeatable; also as arguments)")
}

// project is what a command reads: the project file, every spec read, and
// the pipelines chosen on the command line.
type project struct {
	cfg    *compiler.Config
	all    []*compiler.Spec // every spec read
	chosen []*compiler.Spec // the pipelines named, in the order named; all when none were
	// named: the command line chose specs or pipelines, so what it does
	// not name is not stale (compile removes nothing then).
	named bool
	diags compiler.Diagnostics
	// roots are the folders the files the project reads may resolve into
	// (compiler.FileRule): the project's, and those named on the command
	// line.
	roots []string
}

// keepSecrets masks the passwords of the project file's URLs in what the
// command prints.
func (e *env) keepSecrets(cfg *compiler.Config) {
	if e.scrub == nil {
		return
	}
	for _, u := range cfg.URLs() {
		e.scrub.Add(u)
	}
}

// readRoots are the folders a command reads files from: the project's
// folders (the working folder, and where incrc.yaml is, there or not), and each spec path named on
// the command line (a folder, or a file's folder). What the project file
// names (its specs: folder) is read only inside the project: a pull
// request that changes incrc.yaml cannot point a CI job at the machine's
// files, and neither can a symlink it commits.
func readRoots(cfg *compiler.Config, named []string) []string {
	// The working folder too: the project file's specs: and out: are
	// read from there.
	roots := []string{compiler.RealDir(".")}
	if cfg.Root != "" && cfg.Root != roots[0] {
		roots = append(roots, cfg.Root)
	}
	for _, p := range named {
		if info, err := os.Stat(p); err == nil && !info.IsDir() {
			p = filepath.Dir(p)
		}
		roots = append(roots, compiler.RealDir(p))
	}
	return roots
}

// isSpecPath reports whether a command-line argument names spec files
// rather than a pipeline: a path with a slash, a .yaml file, or a file or
// folder that is there. Pipeline names are [a-z][a-z0-9_]*, so a name
// with a slash or a .yaml suffix is never one.
func isSpecPath(arg string) bool {
	if strings.ContainsRune(arg, '/') || strings.ContainsRune(arg, filepath.Separator) || strings.HasSuffix(arg, ".yaml") || strings.HasSuffix(arg, ".yml") {
		return true
	}
	_, err := os.Stat(arg)
	return err == nil
}

// specPaths keeps the arguments that name spec files, not pipelines.
func specPaths(args []string) []string {
	var out []string
	for _, a := range args {
		if isSpecPath(a) {
			out = append(out, a)
		}
	}
	return out
}

// load reads the project file and the specs, and chooses the pipelines
// named by args: pipeline names, or spec files and folders (read instead
// of the project's specs folder, as --specs). Diagnostics go to stderr
// (unless quiet); ok is false when anything is wrong.
func (p *projectFlags) load(e *env, c *command, args []string) (*project, bool) {
	// Without incrc.yaml a project has the defaults, but a file named on
	// the command line that is not there is a typo, not a default.
	if p.fs != nil && p.fs.Changed("config") {
		if _, err := os.Stat(p.config); err != nil {
			c.errorf(e, "--config: %v", err)
			return nil, false
		}
	}
	cfg, err := compiler.LoadConfig(p.config, e.getenv)
	if err != nil {
		fmt.Fprintln(e.stderr, err)
		var diags compiler.Diagnostics
		if errors.As(err, &diags) {
			fmt.Fprintf(e.stderr, "%d error(s)\n", len(diags))
		}
		return nil, false
	}
	e.keepSecrets(cfg)
	paths := append([]string(nil), p.specs...)
	names := append([]string(nil), p.selects...)
	for _, a := range args {
		if isSpecPath(a) {
			paths = append(paths, a)
		} else {
			names = append(names, a)
		}
	}
	pr := &project{cfg: cfg, named: len(paths) > 0 || len(names) > 0, roots: readRoots(cfg, paths)}
	if len(paths) == 0 {
		if _, err := os.Stat(cfg.Specs); errors.Is(err, fs.ErrNotExist) {
			where := "the default, as there is no " + p.config
			if cfg.File != "" {
				where = "specs: in " + cfg.File
			}
			wd, _ := os.Getwd()
			c.errorf(e, "no specs here: looked for the folder %s (%s) in %s; run incrc init to start a project, or point elsewhere with --specs PATH or --config FILE", cfg.Specs, where, wd)
			return nil, false
		}
		if real := compiler.RealDir(cfg.Specs); !compiler.Inside(real, pr.roots) {
			c.errorf(e, "the specs folder %s resolves to %s, outside the project (%s): incrc reads the project's own specs only; name a folder elsewhere with --specs PATH", cfg.Specs, real, strings.Join(pr.roots, ", "))
			return nil, false
		}
		paths = []string{cfg.Specs}
	}
	files, err := compiler.SpecFiles(paths)
	if err != nil {
		c.errorf(e, "%v", err)
		return nil, false
	}
	if len(files) == 0 {
		c.errorf(e, "no spec files (*.yaml) in %s", strings.Join(paths, ", "))
		return nil, false
	}
	specs, diags := compiler.LoadSpecs(files, pr.roots...)
	pr.all, pr.diags = specs, diags
	if len(diags) > 0 {
		if !p.quiet {
			for _, d := range diags {
				fmt.Fprintln(e.stderr, d)
			}
			fmt.Fprintf(e.stderr, "%d error(s)\n", len(diags))
		}
		return pr, false
	}
	if pr.chosen, err = choose(specs, names); err != nil {
		c.errorf(e, "%v", err)
		return nil, false
	}
	return pr, true
}

// choose returns the specs of the named pipelines (all when names is
// empty), a pipeline after the pipelines it reads from (compiler.RunOrder),
// otherwise in the order named. A name may be a selector: NAME+ adds every
// pipeline downstream of it, +NAME every one upstream.
func choose(specs []*compiler.Spec, names []string) ([]*compiler.Spec, error) {
	if len(names) == 0 {
		return compiler.RunOrder(specs), nil
	}
	return compiler.Select(specs, names)
}

// plans lowers the chosen specs.
func (pr *project) plans() ([]*compiler.Plan, error) {
	var plans []*compiler.Plan
	for _, s := range pr.chosen {
		p, err := compiler.Lower(s)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
	}
	return plans, nil
}

// one returns the one chosen pipeline of a command that works on one.
func (pr *project) one(c *command, e *env) (*compiler.Plan, bool) {
	if len(pr.chosen) != 1 {
		var names []string
		for _, s := range pr.chosen {
			names = append(names, s.Pipeline.Value)
		}
		c.errorf(e, "name one pipeline (the project has %d: %s)", len(pr.chosen), strings.Join(names, ", "))
		return nil, false
	}
	plans, err := pr.plans()
	if err != nil {
		c.errorf(e, "%v", err)
		return nil, false
	}
	return plans[0], true
}

// outputFlags are how every command that prints results chooses their
// form: --format text|json (plan: also markdown), --json for short.
type outputFlags struct {
	format  string
	json    bool
	formats []string
}

func (o *outputFlags) register(fs *pflag.FlagSet, formats ...string) {
	o.formats = append([]string{"text", "json"}, formats...)
	fs.StringVar(&o.format, "format", "text", "output: "+strings.Join(o.formats, ", "))
	fs.BoolVar(&o.json, "json", false, "print JSON: the same as --format json")
}

// resolve checks --format and folds --json into it.
func (o *outputFlags) resolve(c *command, e *env) (string, bool) {
	found := false
	for _, f := range o.formats {
		found = found || f == o.format
	}
	switch {
	case !found:
		c.errorf(e, "--format %q: expected %s", o.format, strings.Join(o.formats, ", "))
		return "", false
	case o.json && o.format != "text" && o.format != "json":
		c.errorf(e, "--json and --format %s: choose one", o.format)
		return "", false
	case o.json:
		o.format = "json"
	}
	return o.format, true
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
	data []byte // nil when same and the compile asked only for changed bytes
	same bool   // the file there holds these bytes already
}

// compileAll lowers and renders every spec for every dialect, in memory.
// It fails as a whole: nothing is written when anything fails.
//
// A source outside the target is spelled in its own dialect: the spec's
// source.dialect, or the one dialectOf says of its connection (the scheme
// of its URL in incrc.yaml). With scripts, each pipeline whose source is in
// its target also gets its engine-side scripts, for the engines that have
// them.
// Specs are compiled in parallel, one worker per CPU; the files and errors
// come back in the order of the specs and dialects, as a sequential
// compile would list them, and each file's bytes depend only on its spec
// and dialect.
//
// With changedOnly, a file whose bytes are there already comes back
// without them (what is the same is not written): a compile of a large
// project that changed little holds little in memory.
func compileAll(specs []*compiler.Spec, ds []dialects.Dialect, out string, dialectOf func(string) (string, bool), scripts, changedOnly bool) ([]compiled, []error) {
	type result struct {
		files []compiled
		errs  []error
	}
	results := make([]result, len(specs))
	wd, wdErr := os.Getwd() // once, not for every absolute spec path
	compiler.Parallel(len(specs), func(i int) {
		shown := specPathIn(wd, wdErr, specs[i].File)
		results[i].files, results[i].errs = compileSpec(specs[i], shown, ds, out, dialectOf, scripts, changedOnly)
	})
	var (
		files []compiled
		errs  []error
	)
	for _, r := range results {
		files = append(files, r.files...)
		errs = append(errs, r.errs...)
	}
	return files, errs
}

// compileSpec lowers one spec and renders it for every dialect, with its
// scripts when asked. shown is the spec's path as the files name it
// (specPath).
func compileSpec(s *compiler.Spec, shown string, ds []dialects.Dialect, out string, dialectOf func(string) (string, bool), scripts, changedOnly bool) (files []compiled, errs []error) {
	plan, err := compiler.Lower(s)
	if err != nil {
		return nil, []error{err}
	}
	// The files are bytes of their own (and errors, text): nothing of the
	// plan is used once they are made.
	defer plan.Release()
	src, err := all.Source(plan, dialectOf)
	if err != nil {
		return nil, []error{fmt.Errorf("%s: %w", s.Source.Connection.Pos, err)}
	}
	filer := dialects.NewFiler(plan, shown)
	// The file's bytes until they are known to be new: a buffer the specs
	// share, as no file keeps it (a new file's bytes are cloned).
	bp := filePool.Get().(*[]byte)
	buf := *bp
	defer func() { *bp = buf[:0]; filePool.Put(bp) }()
	for _, d := range ds {
		data, err := filer.AppendFile(buf[:0], d, src)
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
		path := filepath.Join(out, string(d.Name()), s.Pipeline.Value+".sql")
		f := compiled{path: path, data: data, same: sameFile(path, data)}
		if buf = data; f.same && changedOnly {
			f.data = nil
		} else {
			f.data = bytes.Clone(data)
		}
		files = append(files, f)
		if !scripts || !script.Supported(d) {
			continue
		}
		sc, err := script.Render(d, plan, shown)
		if errors.Is(err, script.ErrSourceOutside) {
			continue // the engine cannot reach the source: incrc run streams it in
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.Strategy.Pos, err))
			continue
		}
		for _, f := range sc {
			path := filepath.Join(out, string(d.Name()), s.Pipeline.Value+"."+f.Suffix+".sql")
			files = append(files, compiled{path: path, data: f.Data, same: sameFile(path, f.Data)})
		}
	}
	return files, errs
}

// sameFile: the file at path holds exactly data (a compile that changed
// nothing leaves it untouched). The size is compared before the bytes,
// which are read a block at a time into a reused buffer.
func sameFile(path string, data []byte) bool {
	f, err := openRead(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if size, regular := f.regularSize(); !regular || size != int64(len(data)) {
		return false
	}
	bp := blockPool.Get().(*[]byte)
	defer blockPool.Put(bp)
	for block := *bp; ; {
		n, err := io.ReadFull(f, block[:min(len(block), len(data))])
		if !bytes.Equal(block[:n], data[:n]) {
			return false
		}
		data = data[n:]
		switch {
		case len(data) == 0:
			// The end, unless the file grew since the stat.
			n, _ := f.Read(block[:1])
			return n == 0
		case err != nil:
			return false
		}
	}
}

// filePool holds the buffers compileSpec renders files into.
var filePool = sync.Pool{New: func() any { return new([]byte) }}

// blockPool holds the buffers sameFile reads into.
var blockPool = sync.Pool{New: func() any { b := make([]byte, 64<<10); return &b }}

// specPath is the spec's path as compiled files name it: relative to the
// working directory when possible, with forward slashes, so the bytes are
// the same on every machine.
func specPath(file string) string {
	if !filepath.IsAbs(file) {
		return specPathIn("", nil, file)
	}
	wd, err := os.Getwd()
	return specPathIn(wd, err, file)
}

// specPathIn is specPath with the working directory given: os.Getwd's
// answer.
func specPathIn(wd string, wdErr error, file string) string {
	if filepath.IsAbs(file) && wdErr == nil {
		if rel, err := filepath.Rel(wd, file); err == nil {
			file = rel
		}
	}
	return filepath.ToSlash(filepath.Clean(file))
}

// outRoots are the folders compiled files are read from: the project's,
// and the --out folder when the command line names it.
func (pr *project) outRoots(fs *pflag.FlagSet, out string) []string {
	if fs.Changed("out") {
		return append(slices.Clone(pr.roots), compiler.RealDir(out))
	}
	return pr.roots
}

// readCompiled reads a compiled file (to compare it, or to know it for
// one incrc wrote) through the guards of every file incrc reads, from
// inside roots.
func readCompiled(path string, roots []string) ([]byte, error) {
	return compiler.ReadFile(path, compiler.FileRule{What: "a compiled file", Max: compiler.MaxDataFile, Roots: roots})
}

// excerpt is text from a file or a database for a message: control,
// bidirectional and other invisible characters escaped as Go escapes them,
// and at most excerptRunes of it, so a message never prints a file it was
// not meant to (a line of a file that is not YAML) nor hides what it says.
func excerpt(s string) string {
	const excerptRunes = 120
	r := []rune(s)
	cut := len(r) > excerptRunes
	if cut {
		r = r[:excerptRunes]
	}
	q := strconv.Quote(string(r))
	q = q[1 : len(q)-1]
	if cut {
		q += "..."
	}
	return q
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
