package main

import (
	"bytes"
	"context"
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

	"github.com/incrc/incrc/compiler/ir"

	"github.com/spf13/pflag"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
	"github.com/incrc/incrc/dialects/script"
	"github.com/incrc/incrc/runner"
)

// projectFlags are the flags every command that reads specs shares: one
// way to choose specs and pipelines on every command.
type projectFlags struct {
	config   string
	specs    []string
	selects  []string
	excludes []string
	fs       *pflag.FlagSet
	// quiet: load returns diagnostics without printing them (a command
	// that prints them as JSON).
	quiet bool
	// warnings: the command reports the specs' warnings (validate, compile,
	// plan), with the names of tables checked for the dialects *dialect
	// says (the project's when empty); strict: a warning fails it.
	warnings bool
	dialect  *string
	strict   bool
}

// registerWarnings adds --strict, for a command that reports warnings;
// dialect is its --dialect, which chooses the dialects whose reading of
// table names is checked.
func (p *projectFlags) registerWarnings(fs *pflag.FlagSet, dialect *string) {
	p.warnings, p.dialect = true, dialect
	fs.BoolVar(&p.strict, "strict", false, "fail on warnings too (exit 1), as CI should; a spec silences one with silence: {CODE: REASON}")
}

func (p *projectFlags) register(fs *pflag.FlagSet) {
	p.fs = fs
	fs.StringArrayVar(&p.specs, "specs", nil, "a spec file or folder to read, instead of the project's specs folder (repeatable)")
	fs.StringVar(&p.config, "config", "incrc.yaml", "project file: specs folder, output folder, dialects, named targets (optional)")
	fs.StringArrayVar(&p.selects, "select", nil, "choose PIPELINE, PIPELINE+ (with every pipeline downstream of it), +PIPELINE (with every one upstream) (repeatable; also as arguments)")
	fs.StringArrayVar(&p.excludes, "exclude", nil, "leave out PIPELINE, PIPELINE+ or +PIPELINE from what is chosen (every pipeline when none is) (repeatable)")
}

// project is what a command reads: the project file, every spec read, and
// the pipelines chosen on the command line.
type project struct {
	cfg    *compiler.Config
	all    []*compiler.Spec // every spec read
	chosen []*compiler.Spec // the pipelines named, in the order named; all when none were
	// named: the command line chose specs or pipelines, so what it does
	// not name is not stale (compile removes nothing then).
	named    bool
	diags    compiler.Diagnostics
	warnings compiler.Diagnostics // of the chosen pipelines, silenced ones left out
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
	filesNamed := len(paths) > len(p.specs) // spec files on the command line, not only --specs folders
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
	ld := compiler.Load(files, pr.roots...)
	var warnings compiler.Diagnostics
	if p.warnings {
		dialect := ""
		if p.dialect != nil {
			dialect = *p.dialect
		}
		ds, err := dialectsFor(dialect, cfg)
		if err != nil {
			c.errorf(e, "%v", err)
			return nil, false
		}
		// The names of tables as the dialects compiled read them: what
		// the spelling decides (incrc run asks the catalog the rest).
		nameErrs, nameWarnings := checkNames(ds, ld.Specs)
		ld.Diags = append(ld.Diags, nameErrs...)
		ld.Diags.Sort()
		warnings = append(compiler.Warnings(ld.Specs), nameWarnings...)
		warnings = append(warnings, globWarnings(ld.Specs)...)
		warnings = compiler.Silence(ld.Specs, warnings)
	}
	pr.all, pr.diags = ld.Specs, ld.Diags
	if len(ld.Diags) == 0 || len(names) == 0 || filesNamed {
		// Every spec is asked for (no pipeline named, or spec files named
		// on the command line): every one must be valid.
		pr.warnings = warnings
		if len(ld.Diags) > 0 {
			p.printDiags(e, ld.Diags, warnings)
			return pr, false
		}
		if pr.chosen, err = choose(ld.Specs, names); err != nil {
			c.errorf(e, "%v", err)
			return nil, false
		}
		if !p.exclude(e, c, pr) {
			return nil, false
		}
		pr.warnings = warningsOf(warnings, pr.chosen, len(names) > 0 || len(p.excludes) > 0)
		return pr, p.printDiags(e, nil, pr.warnings)
	}
	// Pipelines named: they need their own specs, their upstreams' and the
	// project file valid; another spec's errors do not stop them.
	chosen, err := choose(ld.Specs, names)
	if err != nil {
		if blocking, _, _ := ld.Blockers(nil, selectorNames(names)); len(blocking) > 0 {
			p.printDiags(e, blocking, nil) // a named pipeline whose spec is broken
		} else {
			c.errorf(e, "%v", err)
		}
		return nil, false
	}
	pr.warnings = warningsOf(warnings, chosen, true)
	blocking, waits, leftOut := ld.Blockers(chosen, selectorNames(names))
	if len(blocking) > 0 {
		pr.diags = blocking
		p.printDiags(e, blocking, pr.warnings)
		if !p.quiet && len(waits) > 0 {
			c.notef(e, "%s %s these spec(s) valid first: %s", strings.Join(pipelineNames(chosen), ", "), plural(len(chosen), "needs", "need"), strings.Join(waits, "; "))
		}
		return pr, false
	}
	pr.chosen, pr.diags = chosen, nil
	if !p.exclude(e, c, pr) {
		return nil, false
	}
	if !p.quiet && len(leftOut) > 0 {
		c.notef(e, "left out %d spec(s) with errors that %s %s not need: %s (incrc validate lists the errors)",
			len(leftOut), strings.Join(pipelineNames(chosen), ", "), plural(len(chosen), "does", "do"), strings.Join(leftOut, ", "))
	}
	return pr, p.printDiags(e, nil, pr.warnings)
}

// exclude drops the pipelines --exclude names (selectors, as --select
// takes them) from the chosen ones. A name that is no pipeline is an error,
// as it is for --select; so is excluding everything. What is left out is
// not stale: compile then removes no file of it.
func (p *projectFlags) exclude(e *env, c *command, pr *project) bool {
	if len(p.excludes) == 0 {
		return true
	}
	out, err := compiler.Select(pr.all, p.excludes)
	if err != nil {
		c.errorf(e, "--exclude: %v", err)
		return false
	}
	drop := map[string]bool{}
	for _, s := range out {
		drop[s.Pipeline.Value] = true
	}
	var kept []*compiler.Spec
	for _, s := range pr.chosen {
		if !drop[s.Pipeline.Value] {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		c.errorf(e, "--exclude %s leaves no pipeline", strings.Join(p.excludes, ", "))
		return false
	}
	pr.chosen, pr.named = kept, true
	return true
}

// printDiags prints errors and warnings in the order of their places, and
// their count, unless quiet. ok is false when there are errors, or
// warnings and --strict.
func (p *projectFlags) printDiags(e *env, errs, warnings compiler.Diagnostics) (ok bool) {
	ok = len(errs) == 0 && (len(warnings) == 0 || !p.strict)
	if p.quiet || len(errs)+len(warnings) == 0 {
		return ok
	}
	all := append(append(compiler.Diagnostics(nil), errs...), warnings...)
	all.Sort()
	for _, d := range all {
		fmt.Fprintln(e.stderr, d)
	}
	var counts []string
	if len(errs) > 0 {
		counts = append(counts, fmt.Sprintf("%d error(s)", len(errs)))
	}
	if len(warnings) > 0 {
		w := fmt.Sprintf("%d warning(s)", len(warnings))
		if p.strict {
			w += " (--strict fails on them)"
		}
		counts = append(counts, w)
	}
	fmt.Fprintln(e.stderr, strings.Join(counts, ", "))
	return ok
}

// warningsOf keeps the warnings of the chosen pipelines, when pipelines
// were named; all of them otherwise.
func warningsOf(warnings compiler.Diagnostics, chosen []*compiler.Spec, named bool) compiler.Diagnostics {
	if !named {
		return warnings
	}
	var out compiler.Diagnostics
	for _, w := range warnings {
		for _, s := range chosen {
			if slices.Contains(w.Pipelines, s.Pipeline.Value) {
				out = append(out, w)
				break
			}
		}
	}
	return out
}

// globWarnings warns of each files source whose glob matches no file now
// in a folder that is there, relative to the working directory as incrc
// run reads it.
func globWarnings(specs []*compiler.Spec) compiler.Diagnostics {
	var out compiler.Diagnostics
	for _, s := range specs {
		f := s.Source.Files
		if !f.Set() {
			continue
		}
		if n, folder, err := runner.MatchingFiles(f.Value); err == nil && folder && n == 0 {
			out = append(out, compiler.Diagnostic{Pos: f.Pos, Code: "files-match-nothing", Warning: true, Pipelines: []string{s.Pipeline.Value},
				Msg: fmt.Sprintf("source.files %q matches no file in its folder now: a pattern that means something else than its author thought (an extension, a folder level, a brace), or a folder not filled yet; a first run that finds no file fails, naming it", f.Value)})
		}
	}
	return out
}

// selectorNames are the pipelines selectors name (NAME, NAME+, +NAME).
func selectorNames(selectors []string) []string {
	out := make([]string, len(selectors))
	for i, s := range selectors {
		out[i] = strings.TrimSuffix(strings.TrimPrefix(s, "+"), "+")
	}
	return out
}

func pipelineNames(specs []*compiler.Spec) []string {
	out := make([]string, len(specs))
	for i, s := range specs {
		out[i] = s.Pipeline.Value
	}
	return out
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
func (pr *project) plans() ([]*ir.Plan, error) {
	var plans []*ir.Plan
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
func (pr *project) one(c *command, e *env) (*ir.Plan, bool) {
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

// clashes returns, for each chosen pipeline, why it must not write: a
// table it writes is one another pipeline of the project writes, as the
// target's catalog resolves their names (validate compares what the
// spelling decides for the dialects compiled; the target may be another).
func (pr *project) clashes(ctx context.Context, tg *runner.Target) (map[string]string, error) {
	var uses []ir.TableUse
	for _, s := range pr.all {
		uses = append(uses, s.Tables()...)
	}
	found, err := tg.CheckTables(ctx, uses)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, c := range found {
		for _, p := range c.Pipelines {
			if _, ok := out[p]; !ok {
				out[p] = c.Msg
			}
		}
	}
	return out, nil
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
	data []byte // nil when staged, or same and the compile asked only for changed bytes
	same bool   // the file there holds these bytes already
	tmp  string // the temporary file holding the new bytes, when staged
	// bookkeeping: the dialect's file of the statements every pipeline
	// shares (dialects.BookkeepingFile), not a pipeline's.
	bookkeeping bool
}

// compileAll lowers and renders every spec for every dialect. It fails as
// a whole: nothing is written when anything fails.
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
// With a stager (incrc compile), a file whose bytes are new is written to
// a temporary file beside its place as soon as it is rendered, and comes
// back without its bytes, and a file whose bytes are there already comes
// back without them too: a compile holds no more than the files being
// rendered, however large the project. The caller renames the staged files
// into place (writeFiles) or, on any error, removes them (stager.abort).
// Without one (incrc plan), every file comes back with its bytes.
func compileAll(specs []*compiler.Spec, ds []dialects.Dialect, out string, dialectOf func(string) (string, bool), scripts bool, st *stager) ([]compiled, []error) {
	type result struct {
		files []compiled
		errs  []error
	}
	results := make([]result, len(specs))
	wd, wdErr := os.Getwd() // once, not for every absolute spec path
	compiler.Parallel(len(specs), func(i int) {
		shown := specPathIn(wd, wdErr, specs[i].File)
		results[i].files, results[i].errs = compileSpec(specs[i], shown, ds, out, dialectOf, scripts, st)
	})
	var (
		files []compiled
		errs  []error
	)
	for _, r := range results {
		files = append(files, r.files...)
		errs = append(errs, r.errs...)
	}
	// The bookkeeping every pipeline shares, once per dialect.
	for _, d := range ds {
		data, err := dialects.BookkeepingFile(d, compiler.Bookkeeping(), compiledVersion())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		f := compiled{path: filepath.Join(out, string(d.Name()), dialects.BookkeepingName), data: data, bookkeeping: true}
		f.same = sameFile(f.path, data)
		if st != nil {
			if !f.same {
				if err := st.stage(&f); err != nil {
					errs = append(errs, err)
					continue
				}
			}
			f.data = nil
		}
		files = append(files, f)
	}
	return files, errs
}

// compiledVersion is the incrc version the compiled files record: the
// binary's, read once.
var compiledVersion = sync.OnceValue(func() string { return readBuildInfo().Version })

// compileSpec lowers one spec and renders it for every dialect, with its
// scripts when asked. shown is the spec's path as the files name it
// (specPath).
func compileSpec(s *compiler.Spec, shown string, ds []dialects.Dialect, out string, dialectOf func(string) (string, bool), scripts bool, st *stager) (files []compiled, errs []error) {
	plan, err := compiler.Lower(s)
	if err != nil {
		return nil, []error{err}
	}
	src, err := all.Source(plan, dialectOf)
	if err != nil {
		return nil, []error{fmt.Errorf("%s: %w", s.Source.Connection.Pos, err)}
	}
	add := func(path string, data []byte) {
		f := compiled{path: path, data: data, same: sameFile(path, data)}
		if st != nil {
			if !f.same {
				if err := st.stage(&f); err != nil {
					errs = append(errs, err)
					return
				}
			}
			f.data = nil
		}
		files = append(files, f)
	}
	filer := dialects.NewFiler(plan, shown)
	filer.Version = compiledVersion()
	for _, d := range ds {
		data, err := filer.File(d, src)
		var placed *dialects.QueryError
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
		add(filepath.Join(out, string(d.Name()), s.Pipeline.Value+".sql"), data)
		if !scripts || !script.Supported(d) {
			continue
		}
		sc, err := script.Render(d, plan, shown)
		if errors.Is(err, script.ErrSourceOutside) || errors.Is(err, script.ErrTiebreak) || errors.Is(err, script.ErrZone) {
			continue // bounds or rows only incrc run has: it streams the source in, keeps both bounds of a tiebreak, reads the zone database
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.Strategy.Pos, err))
			continue
		}
		for _, f := range sc {
			add(filepath.Join(out, string(d.Name()), s.Pipeline.Value+"."+f.Suffix+".sql"), f.Data)
		}
	}
	return files, errs
}

// stager writes the new files of a compile to temporary files beside
// their places while the compile goes on, and remembers the folders it had
// to make, so that a compile that fails leaves the output folder as it
// found it.
type stager struct {
	mu    sync.Mutex
	made  []string // folders made, parents first
	temps []string
}

// stage writes f's bytes to a temporary file in f's folder.
func (st *stager) stage(f *compiled) error {
	dir := filepath.Dir(f.path)
	if err := st.mkdir(dir); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".incrc-*.tmp")
	if err != nil {
		return err
	}
	st.mu.Lock()
	st.temps = append(st.temps, tmp.Name())
	st.mu.Unlock()
	_, werr := tmp.Write(f.data)
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("%s: %w", f.path, werr)
	}
	f.tmp = tmp.Name()
	return nil
}

// mkdir makes dir and its missing parents, noting each it made.
func (st *stager) mkdir(dir string) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil || d == filepath.Dir(d) {
			break
		}
		missing = append(missing, d)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := len(missing) - 1; i >= 0; i-- {
		st.made = append(st.made, missing[i])
	}
	return nil
}

// abort removes what the compile staged: the temporary files, then the
// folders it made, the deepest first (one that holds anything else
// stays).
func (st *stager) abort() {
	st.mu.Lock()
	defer st.mu.Unlock()
	for _, t := range st.temps {
		os.Remove(t)
	}
	for i := len(st.made) - 1; i >= 0; i-- {
		os.Remove(st.made[i])
	}
	st.temps, st.made = nil, nil
}

// sameFile: the file at path is a regular file holding exactly data (a
// compile that changed nothing leaves it untouched).
func sameFile(path string, data []byte) bool {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() || info.Size() != int64(len(data)) {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	// One byte more than data: a file that grew since the Stat differs.
	got := make([]byte, len(data)+1)
	n, err := io.ReadFull(f, got)
	return (err == io.ErrUnexpectedEOF || err == io.EOF) && n == len(data) && bytes.Equal(got[:n], data)
}

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
