package compiler

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Config is the optional project file, incrc.yaml. Flags override it.
type Config struct {
	File     string
	Specs    string            // folder of pipeline specs; default "specs"
	Out      string            // folder of compiled SQL; default "sql"
	Dialects []string          // dialects compiled by default; default duckdb
	Targets  map[string]string // named targets, ${ENV} already expanded
}

// DefaultConfig is what a project without incrc.yaml gets.
func DefaultConfig() *Config {
	return &Config{Specs: "specs", Out: "sql", Dialects: []string{"duckdb"}, Targets: map[string]string{}}
}

var envRe = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// LoadConfig reads an incrc.yaml. A missing file gives the defaults.
// lookupEnv expands ${NAME} in target URLs; an unset variable is an error.
func LoadConfig(path string, lookupEnv func(string) (string, bool)) (*Config, error) {
	cfg := DefaultConfig()
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return cfg, nil
	}
	if err != nil {
		return nil, err
	}
	cfg.File = path
	p := &parser{file: path}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		p.diags.add(Pos{File: path, Line: max(yamlErrLine(err), 1), Col: 1}, "invalid YAML: %s", yamlErrMsg(err))
		return nil, p.diags.Err()
	}
	if len(doc.Content) == 0 {
		return cfg, nil
	}
	p.mapping(doc.Content[0], "incrc.yaml", []string{"specs", "out", "dialects", "targets"}, func(key string, _, v *yaml.Node) {
		switch key {
		case "specs":
			cfg.Specs = p.str(key, v).Value
		case "out":
			cfg.Out = p.str(key, v).Value
		case "dialects":
			cfg.Dialects = values(p.strList(key, v))
		case "targets":
			if v.Kind != yaml.MappingNode {
				p.diags.add(p.pos(v), "targets must be a mapping of name to URL")
				return
			}
			for i := 0; i+1 < len(v.Content); i += 2 {
				name, url := v.Content[i].Value, p.str("target "+v.Content[i].Value, v.Content[i+1])
				expanded := envRe.ReplaceAllStringFunc(url.Value, func(m string) string {
					key := envRe.FindStringSubmatch(m)[1]
					val, ok := lookupEnv(key)
					if !ok {
						p.diags.add(url.Pos, "target %q: environment variable %s is not set", name, key)
					}
					return val
				})
				cfg.Targets[name] = expanded
			}
		}
	})
	if err := p.diags.Err(); err != nil {
		return nil, err
	}
	return cfg, nil
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
			files = append(files, path)
			continue
		}
		err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
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

// LoadSpecs parses and validates every file and checks the project as a
// whole (pipeline names and targets are unique). It returns the specs that
// are valid and every diagnostic of all files.
func LoadSpecs(files []string) ([]*Spec, Diagnostics) {
	var (
		specs []*Spec
		diags Diagnostics
	)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			diags.add(Pos{File: f}, "%v", err)
			continue
		}
		s, err := Parse(f, data)
		if err != nil {
			diags = append(diags, err.(Diagnostics)...)
		}
		if vd := Validate(s); len(vd) > 0 || err != nil {
			diags = append(diags, vd...)
			specs = append(specs, nil) // keep cross-file checks from blaming a broken file
			continue
		}
		specs = append(specs, s)
	}
	diags = append(diags, checkProject(specs)...)
	var ok []*Spec
	for _, s := range specs {
		if s != nil {
			ok = append(ok, s)
		}
	}
	diags.Sort()
	return ok, diags
}

func checkProject(specs []*Spec) Diagnostics {
	var diags Diagnostics
	pipelines := map[string]*Spec{}
	targets := map[string]*Spec{}
	for _, s := range specs {
		if s == nil {
			continue
		}
		if first, ok := pipelines[s.Pipeline.Value]; ok {
			diags.add(s.Pipeline.Pos, "pipeline %q is also defined at %s", s.Pipeline.Value, first.Pipeline.Pos)
		} else {
			pipelines[s.Pipeline.Value] = s
		}
		t := strings.ToLower(s.Target.Table.Value)
		if first, ok := targets[t]; ok {
			diags.add(s.Target.Table.Pos, "target %q is also written by pipeline %q (%s): two pipelines must not write one table", s.Target.Table.Value, first.Pipeline.Value, first.Target.Table.Pos)
		} else {
			targets[t] = s
		}
	}
	return diags
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
