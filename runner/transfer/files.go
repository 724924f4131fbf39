package transfer

import (
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

	"github.com/bmatcuk/doublestar/v4"
)

// File is one file of a files source: its path relative to the glob's
// folder (what incrc_files records, so that the folder may move), its
// path to read, its size, modification time and, once a run has hashed
// it, the SHA-256 of its content.
type File struct {
	Rel, Full string
	Size      int64
	Mtime     string
	Hash      string
}

// ListGlob lists the regular files a glob matches, sorted by path. The
// pattern is doublestar's (`**` crosses folders, `{a,b}` is either, `[...]`
// a class); the walk follows symbolic links, to folders and to files, the
// glob's folder itself included, and enters each real folder once, so a
// link that loops back is not followed again. A file reached through two
// paths (a link to it beside it, two links to one folder) is listed once,
// under the first of its paths.
func ListGlob(glob string) ([]File, error) {
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
	var out []File
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
			out = append(out, File{Rel: r, Full: p, Size: fi.Size(), Mtime: fi.ModTime().UTC().Format(time.RFC3339Nano)})
		}
		return nil
	}
	if err := walk(root, ""); err != nil {
		return nil, fmt.Errorf("source.files %s: %w", glob, err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	return out, nil
}

// HashFile is the SHA-256 of a file's content: what a file is, whatever its
// name.
func HashFile(p string) (string, error) {
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

// ExactPath is a path as DuckDB's readers take it to mean exactly that
// file: they read a path holding *, ? or [ as a glob, so each of those is
// written as a class of itself ([*], [?], [[]). DuckDB's globs read a
// backslash their own way: a path holding one and a glob character cannot
// be spelled exactly, and is refused rather than read as a pattern.
func ExactPath(p string) (string, error) {
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
