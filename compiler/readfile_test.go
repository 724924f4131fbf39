//go:build unix

package compiler

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/iotest"
	"time"
)

const okSpec = `pipeline: p
source: {table: app.t}
target: {table: dw.t}
columns: {id: bigint}
strategy: full_refresh
`

// within runs f and fails the test if it has not returned after d: a read
// that blocks on a pipe must fail the test, not hang it.
func within(t *testing.T, d time.Duration, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("still reading after %s", d)
	}
}

// mkfifo makes a named pipe; the cleanup opens it for writing, which
// releases a reader that a broken implementation left blocked on it.
func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("cannot make a named pipe here: %v", err)
	}
	t.Cleanup(func() {
		if w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			w.Close()
		}
	})
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSpecFilesOnlyRegular: a spec path that is a named pipe, a symlink
// to a device, a directory or an oversized file is refused at once, with
// an error naming the path; a symlink to a spec is read.
func TestSpecFilesOnlyRegular(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string // the start of the diagnostic after the path and ": "; "" for none
	}{
		{"named pipe", func(t *testing.T, p string) { mkfifo(t, p) },
			"not a regular file (a named pipe): a pipeline spec is read from a regular file, or a symlink to one"},
		{"symlink to /dev/zero", func(t *testing.T, p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file (a character device)"},
		{"directory", func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o755); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file (a directory)"},
		{"oversized", func(t *testing.T, p string) {
			write(t, p, "")
			if err := os.Truncate(p, MaxSpecSize+1); err != nil {
				t.Fatal(err)
			}
		}, "the file is 1048577 bytes, more than the 1048576 bytes a pipeline spec can be"},
		{"missing", func(t *testing.T, p string) {}, "cannot read: no such file or directory"},
		{"symlink to a spec", func(t *testing.T, p string) {
			real := filepath.Join(filepath.Dir(p), "real.txt")
			write(t, real, okSpec)
			if err := os.Symlink(real, p); err != nil {
				t.Fatal(err)
			}
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.yaml")
			tt.setup(t, path)
			var (
				specs []*Spec
				diags Diagnostics
			)
			within(t, 5*time.Second, func() { specs, diags = LoadSpecs([]string{path}) })
			if tt.want == "" {
				if len(diags) > 0 || len(specs) != 1 {
					t.Fatalf("want the spec loaded, got %d specs and %v", len(specs), diags)
				}
				return
			}
			if len(diags) != 1 || !strings.HasPrefix(diags[0].String(), path+": "+tt.want) {
				t.Errorf("got  %v\nwant %s: %s", diags, path, tt.want)
			}
		})
	}
}

// TestSpecDirWithPipe: a named pipe called *.yaml in a specs folder is
// reported like a file named on the command line, and the folder's other
// specs still load.
func TestSpecDirWithPipe(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "a.yaml"), okSpec)
	pipe := filepath.Join(dir, "b.yaml")
	mkfifo(t, pipe)
	var (
		specs []*Spec
		diags Diagnostics
	)
	within(t, 5*time.Second, func() {
		files, err := SpecFiles([]string{dir})
		if err != nil {
			t.Error(err)
			return
		}
		specs, diags = LoadSpecs(files)
	})
	if len(specs) != 1 || specs[0].Pipeline.Value != "p" {
		t.Errorf("a.yaml must load: %v", specs)
	}
	if len(diags) != 1 || !strings.HasPrefix(diags[0].String(), pipe+": not a regular file (a named pipe)") {
		t.Errorf("got %v, want b.yaml refused as a named pipe", diags)
	}
}

// TestConfigOnlyRegular: incrc.yaml goes through the same rules.
func TestConfigOnlyRegular(t *testing.T) {
	noEnv := func(string) (string, bool) { return "", false }
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		want  string
	}{
		{"named pipe", func(t *testing.T, p string) { mkfifo(t, p) }, "not a regular file (a named pipe): a project file is read from a regular file, or a symlink to one"},
		{"symlink to /dev/zero", func(t *testing.T, p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		}, "not a regular file (a character device)"},
		{"oversized", func(t *testing.T, p string) {
			write(t, p, "")
			if err := os.Truncate(p, 2*MaxSpecSize); err != nil {
				t.Fatal(err)
			}
		}, "the file is 2097152 bytes, more than the 1048576 bytes a project file can be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "incrc.yaml")
			tt.setup(t, path)
			var err error
			within(t, 5*time.Second, func() { _, err = LoadConfig(path, noEnv) })
			if err == nil || !strings.HasPrefix(err.Error(), path+": "+tt.want) {
				t.Errorf("got  %v\nwant %s: %s", err, path, tt.want)
			}
		})
	}
}

// TestReadAllAsIOReadAll: readAll reads what io.ReadAll does, whatever size
// the stat claimed, through readers that return little at a time, the end
// with the last bytes, or an error.
func TestReadAllAsIOReadAll(t *testing.T) {
	for _, n := range []int{0, 1, 511, 512, 513, 1000, 4096, 70000} {
		data := bytes.Repeat([]byte("spec: x\n"), n/8+1)[:n]
		for _, size := range []int64{-1, 0, 1, int64(n) - 1, int64(n), int64(n) + 1, 10 * int64(n), MaxSpecSize * 2} {
			readers := map[string]func() io.Reader{
				"plain":    func() io.Reader { return bytes.NewReader(data) },
				"one byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data)) },
				"half":     func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
				"data+EOF": func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data)) },
				"error":    func() io.Reader { return io.MultiReader(bytes.NewReader(data), iotest.ErrReader(errors.New("broken"))) },
			}
			for name, r := range readers {
				want, wantErr := io.ReadAll(r())
				got, err := readAll(r(), size, MaxSpecSize)
				if !bytes.Equal(got, want) || fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Errorf("%d bytes, stat %d, %s reader: readAll read %d bytes, %v; io.ReadAll %d, %v", n, size, name, len(got), err, len(want), wantErr)
				}
			}
		}
	}
}
