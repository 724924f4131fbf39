package compiler

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// MaxDataFile bounds a file of rows: a test file (NAME.test.yaml) or the
// rows incrc seed loads. Both are decoded whole, so a file far larger than
// any fixture is a mistake (a data export, a device) to refuse before
// reading it.
const MaxDataFile = 16 << 20

// FileRule says what a file incrc reads is and where it may be: the one
// reader, ReadFile, reads specs, the project file, test files, seed rows
// and compiled files alike.
type FileRule struct {
	What string // names the file in messages: "a pipeline spec"
	Max  int64  // the most bytes it may hold
	// Roots are the folders the file's real path (every symlink resolved)
	// must lie in. None: the folder the path names it in.
	Roots []string
}

// fileError is a file that incrc refuses or fails to read. Msg does not
// repeat the path: a diagnostic puts it in front.
type fileError struct {
	Path string
	Msg  string
	Err  error // the cause from the file system, if any
}

func (e *fileError) Error() string { return e.Path + ": " + e.Msg }
func (e *fileError) Unwrap() error { return e.Err }

// ReadFile reads a file for incrc, refusing what it must not read: only a
// regular file is read, through a symlink too, so a named pipe (which
// would block the read until some writer came) or a device such as
// /dev/zero (which never ends) is refused from its stat; a file of /proc,
// /sys or /dev (sizes that lie, contents of the machine) too; and a file
// whose real path leaves rule.Roots, so that a symlink committed to a
// repository cannot make a CI job print a file of the machine it runs on.
// The size limit applies while reading, so an oversized or endless file is
// refused after at most rule.Max+1 bytes, and a sparse file's size is its
// stat's.
func ReadFile(path string, rule FileRule) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, cannotRead(path, err)
	}
	if err := checkFile(path, rule, info); err != nil {
		return nil, err
	}
	real, err := realPath(path)
	if err != nil {
		return nil, cannotRead(path, err)
	}
	if err := checkPlace(path, real, rule); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should the path have become a named pipe since the stat,
	// the open returns at once instead of waiting for a writer, and the
	// check below refuses it. A regular file reads as without it. The real
	// path is opened, so what is read is what was checked.
	f, err := os.OpenFile(real, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, cannotRead(path, err)
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil {
		return nil, cannotRead(path, err)
	}
	if err := checkFile(path, rule, info); err != nil {
		return nil, err
	}
	data, err := readAll(io.LimitReader(f, rule.Max+1), info.Size(), rule.Max)
	if err != nil {
		return nil, cannotRead(path, err)
	}
	if int64(len(data)) > rule.Max {
		// The stat said it fit: the file grew, or reports no size.
		return nil, &fileError{Path: path, Msg: fmt.Sprintf("the file is more than %d bytes, the most %s can be", rule.Max, rule.What)}
	}
	return data, nil
}

// readSpecFile reads a spec or the project file (what names it in
// messages), inside roots.
func readSpecFile(path, what string, roots []string) ([]byte, error) {
	return ReadFile(path, FileRule{What: what, Max: MaxSpecSize, Roots: roots})
}

// RealDir is the real path of a folder (every symlink resolved, absolute):
// a root of FileRule. A folder that is not there is taken as written.
func RealDir(dir string) string {
	if real, err := realPath(dir); err == nil {
		return real
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	return abs
}

func realPath(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// machineDirs hold files that describe the machine rather than a project:
// their sizes lie (a /proc file says 0 and reads on), and what they hold is
// not for a log.
var machineDirs = []string{"/proc", "/sys", "/dev"}

// checkPlace refuses a file whose real path is in a folder of the machine,
// or outside the roots of its rule.
func checkPlace(path, real string, rule FileRule) error {
	if runtime.GOOS != "windows" {
		for _, d := range machineDirs {
			if inside(real, d) {
				return &fileError{Path: path, Msg: fmt.Sprintf("is in %s (%s): %s is read from a file of the project", d, real, rule.What)}
			}
		}
	}
	roots := rule.Roots
	if len(roots) == 0 {
		roots = []string{RealDir(filepath.Dir(path))}
	}
	if Inside(real, roots) {
		return nil
	}
	return &fileError{Path: path, Msg: fmt.Sprintf("resolves to %s, outside the project (%s): %s is read only from inside it (a symlink must point inside; name a file elsewhere on the command line)", real, strings.Join(roots, ", "), rule.What)}
}

// Inside reports whether the real path real (RealDir) is one of roots or
// below one.
func Inside(real string, roots []string) bool {
	for _, r := range roots {
		if inside(real, r) {
			return true
		}
	}
	return false
}

// inside: path is dir or below it (both absolute and clean).
func inside(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// checkFile refuses what ReadFile must not read, from its stat.
func checkFile(path string, rule FileRule, info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return &fileError{Path: path, Msg: fmt.Sprintf("not a regular file (%s): %s is read from a regular file, or a symlink to one", fileKind(info.Mode()), rule.What)}
	}
	if info.Size() > rule.Max {
		return &fileError{Path: path, Msg: fmt.Sprintf("the file is %d bytes, more than the %d bytes %s can be", info.Size(), rule.Max, rule.What)}
	}
	return nil
}

func cannotRead(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fileError{Path: path, Msg: "cannot read: " + pe.Err.Error(), Err: err}
	}
	return &fileError{Path: path, Msg: "cannot read: " + err.Error(), Err: err}
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeIrregular != 0:
		return "an irregular file"
	}
	return "a special file"
}

// readAll is io.ReadAll into a buffer of the size the stat said (at most
// limit), and a byte more to meet the end: one allocation for a file that
// did not change since.
func readAll(r io.Reader, size, limit int64) ([]byte, error) {
	data := make([]byte, 0, min(max(size, 0), limit)+1)
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // grow
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return data, err
		}
	}
}
