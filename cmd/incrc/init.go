package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/incrc/incrc/compiler"
)

// scaffold is what incrc init writes: the project file, one commented
// example spec per strategy, a pipeline test, sample rows for each
// example's source (incrc seed), a .gitignore and a CI workflow. (gitignore is stored without its dot: a .gitignore in the
// source tree would apply to the tree itself.)
//
//go:embed all:scaffold
var scaffold embed.FS

var semverRe = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`)

func initCmd() *command {
	c := &command{
		name:    "init",
		summary: "Start a project: incrc.yaml, specs/ with an example per strategy and a test, their sample rows, JSON Schemas, .gitignore, a CI workflow.",
		usage:   "[--dir DIR]",
		example: "incrc init && incrc validate && incrc test\nincrc init --dir pipelines     # in another folder",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			dir    string
			output outputFlags
		)
		fs := c.flags(e)
		fs.StringVar(&dir, "dir", ".", "the folder of the project: created when missing")
		output.register(fs)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		format, ok := output.resolve(c, e)
		if !ok {
			return exitError
		}
		if fs.NArg() > 0 {
			return c.fail(e, "takes no arguments (got %q): --dir names the folder", fs.Args())
		}
		files, err := scaffoldFiles()
		if err != nil {
			return c.fail(e, "%v", err)
		}
		var written, kept []string
		// A specs folder that holds specs already is a project: examples
		// added to it would clash with its pipelines (names, targets).
		existing, _ := compiler.SpecFiles([]string{filepath.Join(dir, "specs")})
		if len(existing) > 0 {
			kept = append(kept, filepath.Join(dir, "specs")+string(filepath.Separator))
		}
		for _, f := range files {
			// Sample rows are the examples': they go where the examples go.
			if len(existing) > 0 && (strings.HasPrefix(f.path, "specs/") || strings.HasPrefix(f.path, "seeds/")) {
				continue
			}
			dst := filepath.Join(dir, filepath.FromSlash(f.path))
			// Never overwrite: a file that is there is the user's.
			if _, err := os.Lstat(dst); err == nil {
				kept = append(kept, dst)
				continue
			}
			if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
				return c.fail(e, "%v", err)
			}
			// O_EXCL: a file that appeared since is not overwritten either.
			out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
			if err != nil {
				return c.fail(e, "%v", err)
			}
			_, werr := out.Write(f.data)
			if cerr := out.Close(); werr == nil {
				werr = cerr
			}
			if werr != nil {
				return c.fail(e, "%s: %v", dst, werr)
			}
			written = append(written, dst)
		}
		show(e.stdout, format, initView{dir: dir, written: written, kept: kept, fresh: len(existing) == 0})
		return exitOK
	}
	return c
}

// initView is what incrc init prints: the files written and kept, and
// what to run next (the tour's commands only into a fresh folder).
type initView struct {
	dir           string
	written, kept []string
	fresh         bool
}

func (v initView) json() any {
	return map[string]any{"written": orEmpty(v.written), "kept": orEmpty(v.kept)}
}

func (v initView) text(w io.Writer) {
	for _, f := range v.written {
		fmt.Fprintf(w, "wrote %s\n", f)
	}
	for _, f := range v.kept {
		if strings.HasSuffix(f, string(filepath.Separator)) {
			fmt.Fprintf(w, "kept  %s (it holds specs: no examples added)\n", f)
			continue
		}
		fmt.Fprintf(w, "kept  %s (it exists: incrc init never overwrites)\n", f)
	}
	cd := ""
	if filepath.Clean(v.dir) != "." {
		cd = "  cd " + shellQuote(v.dir) + "\n"
	}
	next := "  incrc validate            # check the specs\n"
	if v.fresh {
		next += "  incrc test                # run specs/orders.test.yaml on an embedded DuckDB\n" +
			"  incrc seed --target dev   # load the sample rows of seeds/ into the dev target, wh.duckdb\n" +
			"  incrc run --target dev    # run every pipeline against it\n"
	}
	next += "  incrc compile             # write the SQL to review and check in\n"
	fmt.Fprintf(w, "\nNext:\n%s%s", cd, next)
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type scaffoldFile struct {
	path string // slash-separated, relative to the project
	data []byte
}

// scaffoldFiles are the files incrc init writes, in path order: the
// embedded ones, the JSON Schemas of this incrc, and the CI workflow with
// this incrc's version.
func scaffoldFiles() ([]scaffoldFile, error) {
	var files []scaffoldFile
	err := fs.WalkDir(scaffold, "scaffold", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := scaffold.ReadFile(p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(p, "scaffold/")
		if rel == "gitignore" {
			rel = ".gitignore"
		}
		if path.Ext(rel) == ".yml" {
			v := readBuildInfo().Version
			if !semverRe.MatchString(v) {
				v = "latest"
			}
			data = []byte(strings.ReplaceAll(string(data), "{{VERSION}}", v))
		}
		files = append(files, scaffoldFile{rel, data})
		return nil
	})
	files = append(files, scaffoldFile{"incrc.schema.json", compiler.Schema()}, scaffoldFile{"incrc.project.schema.json", compiler.ConfigSchema()})
	return files, err
}
