//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// secret is what a file outside the project holds: no command may print it.
const secret = "root:$6$SECRETHASH$abcdefghijklmnop:19000:0:99999:7:::\n"

// readerProject is a project with one valid spec, and a file outside it.
func readerProject(t *testing.T) (outside string) {
	t.Helper()
	base := t.TempDir()
	outside = filepath.Join(base, "shadow")
	writeFile(t, outside, secret)
	dir := filepath.Join(base, "project")
	os.MkdirAll(filepath.Join(dir, "specs"), 0o755)
	t.Chdir(dir)
	writeFile(t, "specs/o.yaml", `pipeline: dw_o
source: {table: app.o}
target: {table: dw.o}
columns: {id: bigint, updated_at: timestamp}
strategy: merge
unique_key: [id]
watermark: {column: updated_at, start: 2026-01-01}
`)
	return outside
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestSymlinkOutsideProject: a spec, a test file or a compiled file that
// is a symlink to a file outside the project is refused, naming it, and
// nothing of that file reaches the output.
func TestSymlinkOutsideProject(t *testing.T) {
	tests := []struct {
		name  string
		link  string
		args  []string
		setup func(t *testing.T)
	}{
		{"spec", "specs/d.yaml", []string{"validate"}, nil},
		{"test file", "specs/o.test.yaml", []string{"test"}, nil},
		{"compiled file", "sql/duckdb/dw_o.sql", []string{"plan"}, nil},
		{"specs folder of incrc.yaml", "linked", []string{"validate"}, func(t *testing.T) {
			writeFile(t, "incrc.yaml", "specs: linked\n")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			outside := readerProject(t)
			if tt.setup != nil {
				tt.setup(t)
			}
			target := outside
			if tt.name == "specs folder of incrc.yaml" {
				target = filepath.Dir(outside)
				writeFile(t, filepath.Join(target, "d.yaml"), secret)
			}
			os.MkdirAll(filepath.Dir(tt.link), 0o755)
			symlink(t, target, tt.link)
			code, stdout, stderr := cmdOut(t, tt.args...)
			if code != exitError {
				t.Errorf("exit %d, want 1\n%s%s", code, stdout, stderr)
			}
			if strings.Contains(stdout+stderr, "SECRET") || strings.Contains(stdout+stderr, "19000") {
				t.Errorf("the file outside the project is printed:\n%s%s", stdout, stderr)
			}
			if !strings.Contains(stderr, "outside the project") {
				t.Errorf("the error does not say why:\n%s", stderr)
			}
		})
	}
	t.Run("inside the project", func(t *testing.T) {
		readerProject(t)
		os.MkdirAll("shared", 0o755)
		data, _ := os.ReadFile("specs/o.yaml")
		writeFile(t, "shared/p.yaml", strings.NewReplacer("dw_o", "dw_p", "dw.o", "dw.p").Replace(string(data)))
		symlink(t, "../shared/p.yaml", "specs/p.yaml")
		if code, stdout, stderr := cmdOut(t, "validate"); code != exitOK {
			t.Errorf("a symlink inside the project: exit %d\n%s%s", code, stdout, stderr)
		}
	})
	t.Run("named on the command line", func(t *testing.T) {
		readerProject(t)
		elsewhere := t.TempDir()
		data, _ := os.ReadFile("specs/o.yaml")
		writeFile(t, filepath.Join(elsewhere, "o.yaml"), string(data))
		if code, stdout, stderr := cmdOut(t, "validate", filepath.Join(elsewhere, "o.yaml")); code != exitOK {
			t.Errorf("a spec named outside the project: exit %d\n%s%s", code, stdout, stderr)
		}
	})
}

// TestNotASpecIsNotEchoed: a file of the specs folder that is YAML but no
// spec (a credentials file) gets one error, with a short excerpt, instead
// of one "unknown key" per line.
func TestNotASpecIsNotEchoed(t *testing.T) {
	readerProject(t)
	writeFile(t, "specs/creds.yaml", secret+"admin: hunter2-very-long-password-value\n")
	code, stdout, stderr := cmdOut(t, "validate")
	if code != exitError {
		t.Errorf("exit %d, want 1", code)
	}
	if strings.Contains(stdout+stderr, "SECRETHASH") || strings.Contains(stdout+stderr, "hunter2") {
		t.Errorf("the file is echoed:\n%s%s", stdout, stderr)
	}
	if !strings.Contains(stderr, "specs/creds.yaml:1:1: not a pipeline spec: none of its 2 key(s) is a key of a spec") {
		t.Errorf("got:\n%s", stderr)
	}
}

// TestReadersRefuseSpecialFiles: the test-file and seed --rows readers
// have the spec reader's guards: a device, a named pipe, a file of /proc,
// a sparse file larger than the limit are refused at once, naming the
// path, and never read.
func TestReadersRefuseSpecialFiles(t *testing.T) {
	fifo := func(t *testing.T, path string) {
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Skipf("cannot make a named pipe here: %v", err)
		}
		t.Cleanup(func() { // releases a reader a broken implementation left blocked
			if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				w.Close()
			}
		})
	}
	sparse := func(t *testing.T, path string) {
		writeFile(t, path, "")
		if err := os.Truncate(path, 1<<30); err != nil {
			t.Fatal(err)
		}
	}
	zero := func(t *testing.T, path string) { symlink(t, "/dev/zero", path) }
	proc := func(t *testing.T, path string) {
		if _, err := os.Stat("/proc/self/environ"); err != nil {
			t.Skip("no /proc here")
		}
		symlink(t, "/proc/self/environ", path)
	}
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string
	}{
		{"device", zero, "not a regular file (a character device)"},
		{"named pipe", fifo, "not a regular file (a named pipe)"},
		{"sparse", sparse, "the file is 1073741824 bytes, more than the 16777216 bytes"},
		{"proc", proc, "is in /proc"},
	}
	for _, tt := range tests {
		t.Run("test file/"+tt.name, func(t *testing.T) {
			readerProject(t)
			tt.setup(t, "specs/o.test.yaml")
			code, _, stderr := cmdOut(t, "test")
			if code != exitError || !strings.Contains(stderr, "specs/o.test.yaml: "+tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant specs/o.test.yaml: %s", code, stderr, tt.want)
			}
		})
		t.Run("seed rows/"+tt.name, func(t *testing.T) {
			readerProject(t)
			tt.setup(t, "rows.yaml")
			code, _, stderr := cmdOut(t, "seed", "--target", "duckdb:wh.duckdb", "dw_o", "--rows", "rows.yaml")
			if code != exitError || !strings.Contains(stderr, "rows.yaml: "+tt.want) {
				t.Errorf("exit %d, stderr:\n%s\nwant rows.yaml: %s", code, stderr, tt.want)
			}
			if _, err := os.Stat("wh.duckdb"); err == nil {
				t.Errorf("the target was opened before the rows were read")
			}
		})
	}
	t.Run("seed rows/named device", func(t *testing.T) {
		readerProject(t)
		code, _, stderr := cmdOut(t, "seed", "--target", "duckdb:wh.duckdb", "dw_o", "--rows", "/dev/zero")
		if code != exitError || !strings.Contains(stderr, "/dev/zero: not a regular file (a character device)") {
			t.Errorf("exit %d, stderr:\n%s", code, stderr)
		}
	})
}
