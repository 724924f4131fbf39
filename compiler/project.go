package compiler

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/incrc/incrc/compiler/ir"

	"go.yaml.in/yaml/v3"
)

// Config is the optional project file, incrc.yaml. Flags override it.
type Config struct {
	File string
	// Root is the project's folder, every symlink resolved: the folder of
	// the project file (there or not). Files the project names (its specs
	// folder, its test files) are read only from inside it.
	Root       string
	Specs      string   // folder of pipeline specs; default "specs"
	Out        string   // folder of compiled SQL; default "sql"
	Seeds      string   // folder of sample rows incrc seed loads, PIPELINE.yaml each; default "seeds"
	Dialects   []string // dialects compiled by default; default duckdb
	DialectPos []ir.Pos // where each of Dialects is written; empty for the default
	// Scripts: compile also writes each pipeline's engine-side scripts
	// (dialects/script) next to its compiled file.
	Scripts bool
	// Targets are the named targets whose ${ENV} references all expanded.
	// Use Target to look one up: it explains a name that is missing or a
	// variable that is not set.
	Targets map[string]string

	targets map[string]namedTarget
	// connections are the source databases of source.connection.
	connections map[string]namedTarget
}

type namedTarget struct {
	url string
	err error     // an unset ${ENV}, reported when the target is used
	raw ir.String // as written: its scheme says the dialect without expanding
}

// Connection returns the URL of the named source connection with ${ENV}
// expanded; an unset variable is an error naming its place in the file.
func (c *Config) Connection(name string) (string, error) {
	t, ok := c.connections[name]
	if !ok {
		where := "the project file names none"
		if c.File == "" {
			where = "there is no incrc.yaml"
		} else if len(c.connections) > 0 {
			names := make([]string, 0, len(c.connections))
			for n := range c.connections {
				names = append(names, n)
			}
			sort.Strings(names)
			where = c.File + " names: " + strings.Join(names, ", ")
		}
		return "", fmt.Errorf("no connection named %q (%s): add it to connections: in incrc.yaml, or give --source %s=URL", name, where, name)
	}
	return t.url, t.err
}

// URLs are the URLs of every target and connection the project file
// names, with their ${ENV} expanded: what holds the project's passwords.
func (c *Config) URLs() []string {
	var out []string
	for _, m := range []map[string]namedTarget{c.targets, c.connections} {
		for _, t := range m {
			if t.url != "" {
				out = append(out, t.url)
			}
		}
	}
	sort.Strings(out)
	return out
}

// ConnectionDialect returns the dialect the URL of a named connection
// says (its scheme), without expanding it: compiling needs no secret.
func (c *Config) ConnectionDialect(name string) (string, bool) {
	t, ok := c.connections[name]
	if !ok {
		return "", false
	}
	return ir.DialectOfURL(t.raw.Value)
}

// DefaultConfig is what a project without incrc.yaml gets.
func DefaultConfig() *Config {
	return &Config{Specs: "specs", Out: "sql", Seeds: "seeds", Dialects: []string{"duckdb"}, Targets: map[string]string{}, targets: map[string]namedTarget{}, connections: map[string]namedTarget{}}
}

// Target returns the URL of the named target with ${ENV} expanded. An
// unset variable is an error only here, when the target is used, so that
// validating and compiling never need a production secret.
func (c *Config) Target(name string) (string, error) {
	t, ok := c.targets[name]
	if !ok {
		names := make([]string, 0, len(c.targets))
		for n := range c.targets {
			names = append(names, n)
		}
		sort.Strings(names)
		if len(names) == 0 {
			return "", fmt.Errorf("no target named %q: the project file names none", name)
		}
		return "", fmt.Errorf("no target named %q (%s names: %s)", name, c.File, strings.Join(names, ", "))
	}
	return t.url, t.err
}

var (
	envRe        = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)
	targetNameRe = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_-]*$`)
)

var configKeys = keysAt(ConfigKeys, "") // the key table (keys.go)

// LoadConfig reads an incrc.yaml. A missing file gives the defaults (the
// caller decides whether a missing file is an error). lookupEnv expands
// ${NAME} in target URLs.
func LoadConfig(path string, lookupEnv func(string) (string, bool)) (*Config, error) {
	cfg := DefaultConfig()
	cfg.Root = RealDir(filepath.Dir(path))
	data, err := readSpecFile(path, "a project file", []string{cfg.Root})
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return nil, err
	}
	cfg.File = path
	p := &parser{file: path, src: data}
	root, ok := p.document(data, "incrc.yaml holds one YAML document: found a second one")
	if !ok || root == nil {
		return cfg, p.diags.Err()
	}
	before := len(p.diags)
	if p.visible(root); len(p.diags) > before {
		return nil, p.diags.Err()
	}
	p.mapping(root, "incrc.yaml", configKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "specs":
			cfg.Specs = p.path(key, v)
		case "out":
			cfg.Out = p.path(key, v)
		case "seeds":
			cfg.Seeds = p.path(key, v)
		case "dialects":
			cfg.Dialects, cfg.DialectPos = nil, nil
			for _, d := range p.strList(key, v) {
				if d.Value != "" {
					cfg.Dialects = append(cfg.Dialects, d.Value)
					cfg.DialectPos = append(cfg.DialectPos, d.Pos)
				}
			}
		case "scripts":
			b := p.str(key, v)
			switch b.Value {
			case "true":
				cfg.Scripts = true
			case "false", "":
			default:
				p.diags.add(b.Pos, "scripts must be true or false, got %s", quote(b.Value))
			}
		case "targets":
			p.targets(cfg, v, lookupEnv)
		case "connections":
			p.urls("connection", "connections", cfg.connections, nil, v, lookupEnv)
		default:
			p.unread(key)
		}
	})
	if err := p.diags.Err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// path reads a folder; str already reports an empty one.
func (p *parser) path(what string, n *yaml.Node) string {
	return p.str(what, n).Value
}

func (p *parser) targets(cfg *Config, n *yaml.Node, lookupEnv func(string) (string, bool)) {
	p.urls("target", "targets", cfg.targets, cfg.Targets, n, lookupEnv)
}

// urls reads a mapping of names to database URLs (targets, connections):
// into holds each, with an unset ${ENV} as its error; expanded, when not
// nil, gets the URLs that expanded.
func (p *parser) urls(what, key string, into map[string]namedTarget, expanded map[string]string, n *yaml.Node, lookupEnv func(string) (string, bool)) {
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		p.diags.add(p.pos(n), "%s must be a mapping of name to URL, as in  prod: postgres://${PGUSER}@db/wh, got %s", key, kindName(n))
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		name := k.Value
		if k.Kind != yaml.ScalarNode || !targetNameRe.MatchString(name) {
			p.diags.add(p.pos(k), "%s name %s: use letters, digits, _ and -, starting with a letter", what, quote(name))
			continue
		}
		if line, ok := seen[name]; ok {
			p.diags.add(p.pos(k), "%s %q is repeated (first on line %d): keep one", what, name, line)
			continue
		}
		seen[name] = k.Line
		url := p.str(what+" "+name, n.Content[i+1])
		if url.Value == "" {
			continue
		}
		var missing []string
		firstMissing := -1
		for _, m := range envRe.FindAllStringSubmatchIndex(url.Value, -1) {
			v := url.Value[m[2]:m[3]]
			if _, ok := lookupEnv(v); !ok && !contains(missing, v) {
				missing = append(missing, v)
				if firstMissing < 0 {
					firstMissing = m[0]
				}
			}
		}
		t := namedTarget{raw: url}
		if len(missing) > 0 {
			t.err = Diagnostics{{Pos: url.At(firstMissing), Msg: fmt.Sprintf("%s %q: environment variable %s is not set: export it, or use another %s", what, name, strings.Join(missing, ", "), what)}}
		} else if expandedURL, off, err := ExpandURL(url.Value, lookupEnv); err != nil {
			t.err = Diagnostics{{Pos: url.At(off), Msg: fmt.Sprintf("%s %q: %v", what, name, err)}}
		} else {
			t.url = expandedURL
			if expanded != nil {
				expanded[name] = t.url
			}
		}
		into[name] = t
	}
}

// ExpandURL expands each ${NAME} of a database URL with the variable's
// value, as one component of the URL, escaped for where it stands: in the
// user or the password, the query, or a server's path (the database), a
// value is percent-escaped, so that a password holding "@host/db?x#" stays
// a password and never names another host or database. Where escaping
// would change what the value means (the host and port, a file path of an
// embedded engine), a value that would change the URL's structure is
// refused, as is a variable in the scheme or a fragment. The structure is
// the one the URL as written has, read with no value in it. On error, off
// is the offset in template of the variable at fault.
func ExpandURL(template string, lookupEnv func(string) (string, bool)) (expanded string, off int, err error) {
	matches := envRe.FindAllStringSubmatchIndex(template, -1)
	if len(matches) == 0 {
		return template, 0, nil
	}
	// The parts of the URL as written: each variable stands for a letter,
	// which changes no part's bounds.
	shape := []byte(template)
	for _, m := range matches {
		for k := m[0]; k < m[1]; k++ {
			shape[k] = 'x'
		}
	}
	part := urlParts(string(shape))
	var out strings.Builder
	last := 0
	for _, m := range matches {
		name := template[m[2]:m[3]]
		v, _ := lookupEnv(name)
		var esc string
		switch where := part(m[0]); where {
		case "user":
			esc = url.User(v).String()
		case "password":
			esc = strings.TrimPrefix(url.UserPassword("", v).String(), ":")
		case "query":
			esc = url.QueryEscape(v)
		case "database":
			esc = url.PathEscape(v)
		case "host":
			if v == "" || strings.Trim(v, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_:[]") != "" {
				return "", m[0], fmt.Errorf("${%s} stands in the host, and its value is not a host name, an address or a port: a value there cannot hold @ / ? # %% or spaces, which would make the URL name another place", name)
			}
			esc = v
		case "path":
			if strings.ContainsAny(v, "?#") || strings.IndexFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
				return "", m[0], fmt.Errorf("${%s} stands in a file path, and its value holds a ?, a # or a control character, which would change what the URL says", name)
			}
			esc = v
		default:
			return "", m[0], fmt.Errorf("${%s} stands in the %s, where no value may: write scheme://user:${PASSWORD}@host/db", name, where)
		}
		out.WriteString(template[last:m[0]])
		out.WriteString(esc)
		last = m[1]
	}
	out.WriteString(template[last:])
	return out.String(), 0, nil
}

// urlParts reads the structure of a URL as written, without decoding it,
// and says which part each offset is in: scheme, user, password, host,
// database (a server's path), path (an embedded engine's file), query,
// fragment.
func urlParts(s string) func(off int) string {
	type span struct {
		end  int
		name string
	}
	var spans []span
	end := func(from int, stops string) int {
		if i := strings.IndexAny(s[from:], stops); i >= 0 {
			return from + i
		}
		return len(s)
	}
	colon := strings.IndexByte(s, ':')
	pos := 0
	if colon >= 0 && !strings.ContainsAny(s[:colon], "/?#@") {
		spans = append(spans, span{colon + 1, "scheme"})
		pos = colon + 1
	}
	pathName := "path"
	if strings.HasPrefix(s[pos:], "//") {
		pos += 2
		authEnd := end(pos, "/?#")
		if at := strings.LastIndexByte(s[pos:authEnd], '@'); at >= 0 {
			info := s[pos : pos+at]
			if c := strings.IndexByte(info, ':'); c >= 0 {
				spans = append(spans, span{pos + c + 1, "user"}, span{pos + at + 1, "password"})
			} else {
				spans = append(spans, span{pos + at + 1, "user"})
			}
			pos += at + 1
		}
		spans = append(spans, span{authEnd, "host"})
		if authEnd > pos {
			pathName = "database"
		}
		pos = authEnd
	}
	q := end(pos, "?#")
	spans = append(spans, span{q, pathName})
	if q < len(s) && s[q] == '?' {
		q = end(q+1, "#")
		spans = append(spans, span{q, "query"})
	}
	spans = append(spans, span{len(s) + 1, "fragment"})
	return func(off int) string {
		for _, sp := range spans {
			if off < sp.end {
				return sp.name
			}
		}
		return "fragment"
	}
}

// SpecFiles expands paths (files or folders) into the spec files they
// name, sorted, so that every command sees the same order.
func SpecFiles(paths []string) ([]string, error) {
	var files []string
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			if !IsTestFile(path) {
				files = append(files, path)
			}
			continue
		}
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) && !IsTestFile(p) {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	return files, nil
}

// IsTestFile reports whether a file in a specs folder holds pipeline
// tests (incrc test) rather than a spec: NAME.test.yaml, next to the
// specs it tests.
func IsTestFile(path string) bool {
	base := filepath.Base(path)
	return strings.HasSuffix(base, ".test.yaml") || strings.HasSuffix(base, ".test.yml")
}

// TestFiles expands paths (files or folders) into the pipeline test files
// they hold, sorted.
func TestFiles(paths []string) ([]string, error) {
	var files []string
	for _, path := range paths {
		info, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if !info.IsDir() {
			if IsTestFile(path) {
				files = append(files, path)
			}
			continue
		}
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && IsTestFile(p) {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(files)
	return files, nil
}

// LoadSpecs parses and validates every file and checks the project as a
// whole (pipeline names and targets are unique). It returns the specs that
// are valid and every diagnostic of all files.
//
// Each file's real path must lie in one of roots (FileRule.Roots); without
// roots, in the folder it is named in.
func LoadSpecs(files []string, roots ...string) ([]*Spec, Diagnostics) {
	l := Load(files, roots...)
	return l.Specs, l.Diags
}

// Loaded is what Load read of a project's spec files.
type Loaded struct {
	Specs []*Spec     // the valid specs, in the order of the files
	Diags Diagnostics // every diagnostic of all files, sorted
	// Broken are the files with errors, with what Parse could read of
	// each: which pipelines need one is decided from it (Blockers).
	Broken []Broken
}

// Broken is a spec file with errors.
type Broken struct {
	File string
	// Spec is what Parse read, never valid; nil when the file could not
	// be read, or was not a YAML mapping.
	Spec *Spec
}

// Load parses and validates every file and checks the project as a whole,
// as LoadSpecs does, and keeps what it could read of the broken files.
//
// The files are read, parsed and validated in parallel, one worker per CPU:
// each is on its own until checkProject, which sees them in files' order.
//
// Each file's real path must lie in one of roots (FileRule.Roots); without
// roots, in the folder it is named in.
func Load(files []string, roots ...string) *Loaded {
	type loaded struct {
		spec   *Spec // what Parse read, valid or not
		diags  Diagnostics
		broken bool
	}
	results := make([]loaded, len(files))
	Parallel(len(files), func(i int) {
		r := &results[i]
		r.spec, r.diags = loadSpec(files[i], roots)
		r.broken = r.spec == nil || len(r.diags) > 0
	})
	out := &Loaded{}
	var specs []*Spec
	for i, r := range results {
		out.Diags = append(out.Diags, r.diags...)
		if r.broken {
			b := Broken{File: files[i]}
			if r.spec != nil && r.spec.Pos.Line != 0 {
				b.Spec = r.spec
			}
			out.Broken = append(out.Broken, b)
			specs = append(specs, nil) // a nil keeps cross-file checks from blaming a broken file
			continue
		}
		specs = append(specs, r.spec)
	}
	out.Diags = append(out.Diags, checkProject(specs)...)
	for _, s := range specs {
		if s != nil {
			out.Specs = append(out.Specs, s)
		}
	}
	out.Diags.Sort()
	return out
}

// Parallel calls f for each i from 0 to n-1, on one worker per CPU, and
// returns when every call has: for work on many specs, each on its own,
// whose results f stores at i.
//
// Each worker takes the next i from a counter (the caller is one of
// them): no goroutine hands the work out, and none is woken for each i.
func Parallel(n int, f func(i int)) {
	var next atomic.Int64
	work := func() {
		for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
			f(i)
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}

// loadSpec reads, parses and validates one spec file: the spec and what is
// wrong with it (nil when the file could not be read).
func loadSpec(f string, roots []string) (*Spec, Diagnostics) {
	var diags Diagnostics
	data, err := readSpecFile(f, "a pipeline spec", roots)
	if err != nil {
		var fe *fileError
		if errors.As(err, &fe) {
			diags.add(ir.Pos{File: f}, "%s", fe.Msg)
		} else {
			diags.add(ir.Pos{File: f}, "%v", err)
		}
		return nil, diags
	}
	s, err := Parse(f, data)
	if err != nil {
		diags = append(diags, err.(Diagnostics)...)
	}
	return s, append(diags, Validate(s)...)
}

// CheckProject checks specs as one project, as LoadSpecs does: unique
// pipelines and targets, lookups of the project's targets, and the graph
// of pipelines that feed each other (each spec learns its upstreams).
func CheckProject(specs []*Spec) Diagnostics { return checkProject(specs) }

func checkProject(specs []*Spec) Diagnostics {
	var diags Diagnostics
	pipelines := make(map[string]*Spec, len(specs))
	targets := make(map[string]*Spec, len(specs))
	for _, s := range specs {
		if s == nil {
			continue
		}
		if first, ok := pipelines[s.Pipeline.Value]; ok {
			diags.addFor([]string{s.Pipeline.Value}, s.Pipeline.Pos, "pipeline %q is also defined at %s", s.Pipeline.Value, first.Pipeline.Pos)
		} else {
			pipelines[s.Pipeline.Value] = s
		}
		t := strings.ToLower(s.Target.Table.Value)
		if first, ok := targets[t]; ok {
			diags.addFor([]string{first.Pipeline.Value, s.Pipeline.Value}, s.Target.Table.Pos, "target %q is also written by pipeline %q (%s): two pipelines must not write one table", s.Target.Table.Value, first.Pipeline.Value, first.Target.Table.Pos)
		} else {
			targets[t] = s
		}
	}
	diags = append(diags, checkLookups(specs)...)
	return append(diags, linkUpstreams(specs)...)
}

// LoadSpec reads one spec file and validates it on its own.
func LoadSpec(file string) (*Spec, error) {
	specs, diags := LoadSpecs([]string{file})
	if len(diags) > 0 {
		return nil, diags
	}
	if len(specs) != 1 {
		return nil, fmt.Errorf("%s: not loaded", file)
	}
	return specs[0], nil
}
