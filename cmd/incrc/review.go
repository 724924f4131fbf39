package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
)

// reviewFlag is --allow-unreviewed, which run, backfill, reconcile and
// migrate share.
func reviewFlag(fs *pflag.FlagSet, allow *bool) {
	fs.BoolVar(allow, "allow-unreviewed", false, "run even when the SQL differs from the compiled files checked in for the target's dialect (the run log records it)")
}

// unreviewed is what a run found of the compiled files of its pipelines:
// per pipeline, why the SQL it runs is not the reviewed file's (empty when
// it is).
type unreviewed map[string]string

// reviewed checks the SQL the chosen pipelines would run on a target of
// dialect d against the compiled files in the project's output folder,
// before anything runs: it renders each pipeline's file as incrc compile
// would and compares it with the file there, byte for byte but for the
// line of the incrc version that wrote it, and the bookkeeping file too.
// The runner executes exactly what that rendering holds (it renders the
// same plan with the same dialect), so equal files mean the statements run
// are the statements reviewed. A pipeline's engine-side scripts are
// compared where they are checked in.
//
// A file that differs refuses the command (false), naming the pipeline,
// the file and the first statement that differs, unless allow is set: then
// it warns, and the returned notes say why for the run log. Pipelines
// without a compiled file for d are said once, on stderr.
func (c *command) reviewed(e *env, pr *project, specs []*compiler.Spec, d dialects.Dialect, allow bool) (unreviewed, bool) {
	out := pr.cfg.Out
	notes := unreviewed{}
	var missing, refused []string
	anyFile := false
	wd, wdErr := os.Getwd()
	for _, s := range specs {
		files, errs := compileSpec(s, specPathIn(wd, wdErr, s.File), []dialects.Dialect{d}, out, pr.cfg.ConnectionDialect, true, nil)
		if len(errs) > 0 {
			continue // the run itself fails on the same error, at its place
		}
		pipeline := s.Pipeline.Value
		for i, f := range files {
			old, err := readCompiled(f.path, pr.roots)
			switch {
			case errors.Is(err, fs.ErrNotExist) && i == 0:
				missing = append(missing, pipeline)
			case errors.Is(err, fs.ErrNotExist):
				// A script that is not checked in: nothing to compare.
			case err != nil:
				refused = append(refused, fmt.Sprintf("%s: %v", pipeline, err))
			default:
				anyFile = true
				if where, same := sameCompiled(old, f.data); !same {
					msg := fmt.Sprintf("%s: %s is not the SQL this incrc would run: %s differs", pipeline, filepath.ToSlash(f.path), where)
					refused = append(refused, msg)
					notes[pipeline] = "unreviewed: " + filepath.ToSlash(f.path) + ": " + where + " differs (--allow-unreviewed)"
				}
			}
			if notes[pipeline] != "" || i == 0 && len(missing) > 0 && missing[len(missing)-1] == pipeline {
				break
			}
		}
	}
	if anyFile {
		// The bookkeeping every pipeline calls: reviewed once for all.
		path := filepath.Join(out, string(d.Name()), dialects.BookkeepingName)
		want, err := dialects.BookkeepingFile(d, compiler.Bookkeeping(), compiledVersion())
		if err != nil {
			c.errorf(e, "%v", err)
			return nil, false
		}
		old, rerr := readCompiled(path, pr.roots)
		where, same := "", false
		switch {
		case errors.Is(rerr, fs.ErrNotExist):
			where = "the file is missing, and"
		case rerr != nil:
			c.errorf(e, "%v", rerr)
			return nil, false
		default:
			where, same = sameCompiled(old, want)
		}
		if !same {
			refused = append(refused, fmt.Sprintf("the bookkeeping every pipeline calls: %s is not the SQL this incrc would run: %s differs", filepath.ToSlash(path), where))
			for _, s := range specs {
				if notes[s.Pipeline.Value] == "" {
					notes[s.Pipeline.Value] = "unreviewed: " + filepath.ToSlash(path) + ": " + where + " differs (--allow-unreviewed)"
				}
			}
		}
	}
	for _, msg := range refused {
		if allow {
			c.errorf(e, "warning: %s; running it anyway (--allow-unreviewed), and the run log says so", msg)
		} else {
			c.errorf(e, "%s", msg)
		}
	}
	if len(refused) > 0 && !allow {
		c.errorf(e, "refused: what runs must be what was reviewed. Run incrc compile --dialect %s, review the diff of %s and commit it; or pass --allow-unreviewed", d.Name(), filepath.ToSlash(out))
		return nil, false
	}
	if len(missing) > 0 {
		c.errorf(e, "note: no compiled file for %s in %s for %s: running SQL nobody reviewed (incrc compile --dialect %s writes it, to check in)",
			d.Name(), filepath.ToSlash(out), strings.Join(missing, ", "), d.Name())
	}
	return notes, true
}

// sameCompiled compares a compiled file on disk with the bytes this incrc
// writes, but for the line that records the incrc version: it says where
// they first differ, a statement by name or the header (the spec, the
// programs), when they do.
func sameCompiled(old, want []byte) (string, bool) {
	a, b := withoutVersion(old), withoutVersion(want)
	if bytes.Equal(a, b) {
		return "", true
	}
	// The first statement that differs says most; the header (the spec's
	// hash and parameters, the programs) only when no statement does.
	ab, bb := statementBlocks(a), statementBlocks(b)
	for i := 1; i < max(len(ab), len(bb)); i++ {
		switch {
		case i >= len(ab):
			return "statement " + bb[i].name + " (not in the file)", false
		case i >= len(bb):
			return "statement " + ab[i].name + " (in the file, not in what would run)", false
		case ab[i].name != bb[i].name && !hasBlock(ab, bb[i].name):
			return "statement " + bb[i].name + " (not in the file)", false
		case ab[i].name != bb[i].name && !hasBlock(bb, ab[i].name):
			return "statement " + ab[i].name + " (in the file, not in what would run)", false
		case ab[i].name != bb[i].name || !bytes.Equal(ab[i].text, bb[i].text):
			return "statement " + bb[i].name, false
		}
	}
	return "the header (the spec's hash and parameters, or the programs)", false
}

func hasBlock(bs []block, name string) bool {
	for _, b := range bs {
		if b.name == name {
			return true
		}
	}
	return false
}

// withoutVersion is a compiled file without its line of the incrc
// version.
func withoutVersion(data []byte) []byte {
	line := []byte("\n" + dialects.VersionLine)
	i := bytes.Index(data, line)
	if i < 0 {
		return data
	}
	end := bytes.IndexByte(data[i+1:], '\n')
	if end < 0 {
		return data[:i+1]
	}
	return append(data[:i:i], data[i+1+end:]...)
}

// block is a compiled file's header (name "") or one of its statements.
type block struct {
	name string
	text []byte
}

// statementBlocks cuts a compiled file at its "-- name:" lines.
func statementBlocks(data []byte) []block {
	const marker = "\n-- name: "
	var out []block
	name := ""
	for {
		i := bytes.Index(data, []byte(marker))
		if i < 0 {
			return append(out, block{name: name, text: data})
		}
		out = append(out, block{name: name, text: data[:i]})
		data = data[i+len(marker):]
		n := bytes.IndexByte(data, '\n')
		if n < 0 {
			n = len(data)
		}
		name = string(data[:n])
	}
}
