package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestSameFile: sameFile says a file holds exactly the bytes, and no
// more; not for a missing file, a folder, a shorter, longer or different
// file, across the size of its read buffer too.
func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	data := bytes.Repeat([]byte("-- incrc: pipeline p\n"), 10000) // more than one 64 KB block
	write := func(name string, b []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	changed := bytes.Clone(data)
	changed[len(changed)-2] = 'q'
	for _, c := range []struct {
		path string
		data []byte
		want bool
	}{
		{write("same.sql", data), data, true},
		{write("empty.sql", nil), nil, true},
		{write("empty2.sql", nil), []byte("x"), false},
		{write("short.sql", data[:len(data)-1]), data, false},
		{write("long.sql", append(bytes.Clone(data), '\n')), data, false},
		{write("changed.sql", changed), data, false},
		{filepath.Join(dir, "missing.sql"), data, false},
		{dir, data, false},
	} {
		if got := sameFile(c.path, c.data); got != c.want {
			t.Errorf("sameFile(%s) = %v, want %v", filepath.Base(c.path), got, c.want)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "same.sql"), filepath.Join(dir, "link.sql")); err == nil {
		if !sameFile(filepath.Join(dir, "link.sql"), data) {
			t.Error("sameFile does not follow a symlink to the same bytes")
		}
	}
}
