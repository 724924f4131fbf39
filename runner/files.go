package runner

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler"
)

// landedFile is one file of a files source: its path relative to the
// glob's folder (what incrc_files records, so that the folder may move),
// its path to read, its size and modification time.
type landedFile struct {
	rel, full string
	size      int64
	mtime     string
}

// globRoot splits a glob into the folder before its first pattern
// character and the pattern below it.
func globRoot(glob string) (root, pattern string) {
	glob = filepath.ToSlash(glob)
	parts := strings.Split(glob, "/")
	i := 0
	for i < len(parts)-1 && !strings.ContainsAny(parts[i], "*?[{") {
		i++
	}
	root = strings.Join(parts[:i], "/")
	if root == "" && strings.HasPrefix(glob, "/") {
		root = "/"
	}
	if root == "" {
		root = "."
	}
	return root, strings.Join(parts[i:], "/")
}

// matchGlob matches a slash-separated relative path against a pattern
// whose "**" segment matches any number of folders.
func matchGlob(pattern, name string) bool {
	ps, ns := strings.Split(pattern, "/"), strings.Split(name, "/")
	var match func(i, j int) bool
	match = func(i, j int) bool {
		for i < len(ps) {
			if ps[i] == "**" {
				for k := j; k <= len(ns); k++ {
					if match(i+1, k) {
						return true
					}
				}
				return false
			}
			if j >= len(ns) {
				return false
			}
			if ok, _ := path.Match(ps[i], ns[j]); !ok {
				return false
			}
			i, j = i+1, j+1
		}
		return j == len(ns)
	}
	return match(0, 0)
}

// listGlob lists the regular files a glob matches, sorted by path.
func listGlob(glob string) ([]landedFile, error) {
	root, pattern := globRoot(glob)
	var out []landedFile
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == root {
				return err
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if !matchGlob(pattern, rel) {
			return nil
		}
		info, err := d.Info()
		if err != nil || !info.Mode().IsRegular() {
			return nil
		}
		out = append(out, landedFile{rel: rel, full: p, size: info.Size(), mtime: info.ModTime().UTC().Format(time.RFC3339Nano)})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("source.files %s: %w", glob, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out, nil
}

// listFiles is a ReadNewFiles or ReadAllFiles step: the files of the glob,
// less (for new files) the ones incrc_files says this pipeline loaded. A
// loaded file whose size or time changed was rewritten in place: it is
// reported, and loaded again only when the run asks for it.
func (m *machine) listFiles(ctx context.Context, q querier, s compiler.Step) error {
	f := m.c.plan.From
	files, err := listGlob(f.Files)
	if err != nil {
		return err
	}
	m.files, m.rewritten = nil, nil
	if s.Read == compiler.ReadNewFiles {
		rows, err := m.c.query(ctx, q, s.Stmt, m.vals)
		if err != nil && !missingTable(err) {
			return err
		}
		loaded := map[string][2]string{}
		for _, r := range rows {
			p, _ := text(r[0])
			size, _ := text(r[1])
			mtime, _ := text(r[2])
			loaded[p] = [2]string{size, mtime}
		}
		for _, lf := range files {
			was, ok := loaded[lf.rel]
			switch {
			case !ok:
				m.files = append(m.files, lf)
			case was != [2]string{fmt.Sprint(lf.size), lf.mtime}:
				m.rewritten = append(m.rewritten, lf)
				if m.reloadRewritten {
					m.files = append(m.files, lf)
				}
			}
		}
	} else {
		m.files = files
	}
	paths := make([]string, len(m.files))
	for i, lf := range m.files {
		paths[i] = lf.full
	}
	m.vals[compiler.RegFiles] = int64(len(m.files))
	m.vals["file_list"] = paths
	if note := m.filesNote(); note != "" && m.vals["note"] == nil {
		m.vals["note"] = note
	}
	for _, r := range s.Into {
		if r != compiler.RegFiles {
			m.add(r, int64(len(m.files)))
		}
	}
	return nil
}

// filesNote is what a run's summary says of the files it loaded and of
// the rewritten ones.
func (m *machine) filesNote() string {
	if m.c.plan.From == nil || !m.c.plan.From.ByFile {
		return ""
	}
	note := fmt.Sprintf("%d new file(s) loaded", len(m.files))
	if n := len(m.rewritten); n > 0 {
		names := make([]string, 0, 3)
		for i, lf := range m.rewritten {
			if i == 3 {
				names = append(names, "...")
				break
			}
			names = append(names, lf.rel)
		}
		if m.reloadRewritten {
			note += fmt.Sprintf("; %d of them rewritten in place since loaded, loaded again (%s)", n, strings.Join(names, ", "))
		} else {
			note += fmt.Sprintf("; %d file(s) rewritten in place since loaded, not loaded again (%s): pass --reload-rewritten to load them again", n, strings.Join(names, ", "))
		}
	}
	return note
}

// missingTable reports an error of a table that is not there: a target
// never set up has no incrc_files, and everything is new.
func missingTable(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "does not exist") || strings.Contains(s, "no such table") || strings.Contains(s, "doesn't exist")
}
