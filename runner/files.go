package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/bmatcuk/doublestar/v4"
)

// landedFile is one file of a files source: its path relative to the
// glob's folder (what incrc_files records, so that the folder may move),
// its path to read, its size, modification time and, once a run has
// hashed it, the SHA-256 of its content.
type landedFile struct {
	rel, full string
	size      int64
	mtime     string
	hash      string
}

// listGlob lists the regular files a glob matches, sorted by path. The
// pattern is doublestar's (`**` crosses folders, `{a,b}` is either, `[...]`
// a class); the walk follows symbolic links, to folders and to files, the
// glob's folder itself included, and enters each real folder once, so a
// link that loops back is not followed again. A file reached through two
// paths (a link to it beside it, two links to one folder) is listed once,
// under the first of its paths.
func listGlob(glob string) ([]landedFile, error) {
	base, pattern := doublestar.SplitPattern(filepath.ToSlash(glob))
	if !doublestar.ValidatePattern(pattern) {
		return nil, fmt.Errorf("source.files %s: not a valid glob (an unclosed [ or {)", glob)
	}
	root := filepath.FromSlash(base)
	info, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("source.files %s: the folder %s: %w", glob, base, err)
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("source.files %s: %s is not a folder", glob, base)
	}
	var out []landedFile
	folders, files := map[string]bool{}, map[string]bool{}
	var walk func(dir, rel string) error
	walk = func(dir, rel string) error {
		real, err := filepath.EvalSymlinks(dir)
		if err != nil || folders[real] {
			return nil // a dangling link, or a folder entered already
		}
		folders[real] = true
		entries, err := os.ReadDir(dir)
		if err != nil {
			if rel == "" {
				return err
			}
			return nil
		}
		for _, d := range entries {
			p, r := filepath.Join(dir, d.Name()), path.Join(rel, d.Name())
			fi, err := os.Stat(p) // follows a link
			if err != nil {
				continue // a dangling link, or gone since the listing
			}
			if fi.IsDir() {
				if err := walk(p, r); err != nil {
					return err
				}
				continue
			}
			if !fi.Mode().IsRegular() {
				continue
			}
			if ok, _ := doublestar.Match(pattern, r); !ok {
				continue
			}
			if real, err := filepath.EvalSymlinks(p); err == nil {
				if files[real] {
					continue
				}
				files[real] = true
			}
			out = append(out, landedFile{rel: r, full: p, size: fi.Size(), mtime: fi.ModTime().UTC().Format(time.RFC3339Nano)})
		}
		return nil
	}
	if err := walk(root, ""); err != nil {
		return nil, fmt.Errorf("source.files %s: %w", glob, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out, nil
}

// hashFile is the SHA-256 of a file's content: what a file is, whatever its
// name.
func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// exactPath is a path as DuckDB's readers take it to mean exactly that
// file: they read a path holding *, ? or [ as a glob, so each of those is
// written as a class of itself ([*], [?], [[]). DuckDB's globs read a
// backslash their own way: a path holding one and a glob character cannot
// be spelled exactly, and is refused rather than read as a pattern.
func exactPath(p string) (string, error) {
	if !strings.ContainsAny(p, "*?[") {
		return p, nil
	}
	if strings.Contains(p, `\`) {
		return "", fmt.Errorf("file %s: its name holds a backslash and one of * ? [, which DuckDB's reader would take as a pattern: rename it", p)
	}
	var b strings.Builder
	for _, r := range p {
		switch r {
		case '*', '?', '[':
			b.WriteString("[" + string(r) + "]")
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), nil
}

// listFiles is a ReadNewFiles or ReadAllFiles step: the files of the glob,
// less (for new files) the ones incrc_files says this pipeline loaded. A
// loaded file whose size or time changed was rewritten in place: it is
// reported, and loaded again only when the run asks for it. A file new by
// its path whose size and content are those of a file loaded before
// (renamed, or delivered again under another name) is not loaded again:
// it is recorded under its new path and reported; a full refresh loads
// each content once too. A glob that matches no file fails a run that has
// loaded none before: a folder that is not mounted, or a pattern that
// means something else than its writer thought, must not load nothing,
// forever, with success.
func (m *machine) listFiles(ctx context.Context, q querier, s ir.Step) error {
	f := m.c.plan.From
	files, err := listGlob(f.Files)
	if err != nil {
		return err
	}
	m.files, m.rewritten, m.known, m.loadedBefore = nil, nil, nil, 0
	content := map[string]bool{} // size/hash of the files loaded, or to be
	key := func(lf landedFile) string { return fmt.Sprint(lf.size) + "/" + lf.hash }
	hash := func(lf *landedFile) error {
		if m.readOnly || lf.hash != "" {
			return nil
		}
		h, err := hashFile(lf.full)
		if err != nil {
			return fmt.Errorf("source.files %s: %w", f.Files, err)
		}
		lf.hash = h
		return nil
	}
	if s.Read == ir.ReadNewFiles {
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
			if len(r) > 3 {
				if h, _ := text(r[3]); h != "" {
					content[size+"/"+h] = true
				}
			}
		}
		m.loadedBefore = len(loaded)
		for _, lf := range files {
			was, ok := loaded[lf.rel]
			switch {
			case !ok:
				if err := hash(&lf); err != nil {
					return err
				}
				if !m.readOnly && content[key(lf)] {
					m.known = append(m.known, lf)
					continue
				}
				content[key(lf)] = true
				m.files = append(m.files, lf)
			case was != [2]string{fmt.Sprint(lf.size), lf.mtime}:
				m.rewritten = append(m.rewritten, lf)
				if m.reloadRewritten {
					if err := hash(&lf); err != nil {
						return err
					}
					m.files = append(m.files, lf)
				}
			}
		}
	} else {
		for _, lf := range files {
			if err := hash(&lf); err != nil {
				return err
			}
			if !m.readOnly && content[key(lf)] {
				m.known = append(m.known, lf)
				continue
			}
			content[key(lf)] = true
			m.files = append(m.files, lf)
		}
	}
	if len(files) == 0 && m.loadedBefore == 0 && !m.readOnly {
		return fmt.Errorf("source.files %s matches no file, and this pipeline has loaded none before: check the folder (is it mounted?) and the pattern", f.Files)
	}
	paths := make([]string, len(m.files))
	for i, lf := range m.files {
		if paths[i], err = exactPath(lf.full); err != nil {
			return fmt.Errorf("source.files %s: %w", f.Files, err)
		}
	}
	m.vals[ir.RegFiles] = int64(len(m.files))
	m.vals["file_list"] = paths
	if note := m.filesNote(); note != "" && m.vals["note"] == nil {
		m.vals["note"] = note
		m.filesNoted = note
	}
	for _, r := range s.Into {
		if r != ir.RegFiles {
			m.add(r, int64(len(m.files)))
		}
	}
	return nil
}

// recorded are the files a run records in incrc_files: those it loaded,
// and those it recognised as loaded before under another name.
func (m *machine) recorded() []landedFile {
	return append(append([]landedFile(nil), m.files...), m.known...)
}

// filesNote is what a run's summary says of the files it loaded, of the
// rewritten ones and of the ones recognised by their content.
func (m *machine) filesNote() string {
	if m.c.plan.From == nil || !m.c.plan.From.ByFile {
		return ""
	}
	var note string
	if len(m.files) == 0 {
		note = fmt.Sprintf("no new file in %s (%d loaded before)", m.c.plan.From.Files, m.loadedBefore)
	} else {
		note = fmt.Sprintf("%d new file(s) loaded", len(m.files))
	}
	if n := len(m.rewritten); n > 0 {
		if m.reloadRewritten {
			note += fmt.Sprintf("; %d of them rewritten in place since loaded, loaded again (%s)", n, someFiles(m.rewritten))
		} else {
			note += fmt.Sprintf("; %d file(s) rewritten in place since loaded, not loaded again (%s): pass --reload-rewritten to load them again", n, someFiles(m.rewritten))
		}
	}
	if n := len(m.known); n > 0 {
		note += fmt.Sprintf("; %d file(s) with the size and content of a file loaded before (renamed, or delivered again), not loaded again (%s)", n, someFiles(m.known))
	}
	return note
}

// failedFilesNote is what a failed run's summary says instead of
// filesNote: it loaded nothing.
func (m *machine) failedFilesNote() string {
	return fmt.Sprintf("%d new file(s) found, none loaded: the run failed", len(m.files))
}

// someFiles names up to three files.
func someFiles(files []landedFile) string {
	names := make([]string, 0, 4)
	for i, lf := range files {
		if i == 3 {
			names = append(names, "...")
			break
		}
		names = append(names, lf.rel)
	}
	return strings.Join(names, ", ")
}

// missingTable reports an error of a table that is not there: a target
// never set up has no incrc_files, and everything is new.
func missingTable(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "does not exist") || strings.Contains(s, "no such table") || strings.Contains(s, "doesn't exist")
}
