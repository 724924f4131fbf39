package compiler

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// fileError is a spec or project file that incrc refuses or fails to
// read. Msg does not repeat the path: a diagnostic puts it in front.
type fileError struct {
	Path string
	Msg  string
	Err  error // the cause from the file system, if any
}

func (e *fileError) Error() string { return e.Path + ": " + e.Msg }
func (e *fileError) Unwrap() error { return e.Err }

// readSpecFile reads a spec or the project file (what names it in
// messages). Only a regular file is read, through a symlink too: a named
// pipe would block the read until some writer came, and a device such as
// /dev/zero never ends. The size limit applies while reading, so an
// oversized or endless file is refused after at most MaxSpecSize+1 bytes.
func readSpecFile(path, what string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, cannotRead(path, err)
	}
	if err := checkFile(path, what, info); err != nil {
		return nil, err
	}
	// O_NONBLOCK: should the path have become a named pipe since the stat,
	// the open returns at once instead of waiting for a writer, and the
	// check below refuses it. A regular file reads as without it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, cannotRead(path, err)
	}
	defer f.Close()
	if info, err = f.Stat(); err != nil {
		return nil, cannotRead(path, err)
	}
	if err := checkFile(path, what, info); err != nil {
		return nil, err
	}
	data, err := readAll(io.LimitReader(f, MaxSpecSize+1), info.Size())
	if err != nil {
		return nil, cannotRead(path, err)
	}
	if len(data) > MaxSpecSize {
		// The stat said it fit: the file grew, or reports no size.
		return nil, &fileError{Path: path, Msg: fmt.Sprintf("the file is more than %d bytes, the most %s can be", MaxSpecSize, what)}
	}
	return data, nil
}

// checkFile refuses what readSpecFile must not read, from its stat.
func checkFile(path, what string, info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return &fileError{Path: path, Msg: fmt.Sprintf("not a regular file (%s): %s is read from a regular file, or a symlink to one", fileKind(info.Mode()), what)}
	}
	if info.Size() > MaxSpecSize {
		return &fileError{Path: path, Msg: fmt.Sprintf("the file is %d bytes, more than the %d bytes %s can be", info.Size(), MaxSpecSize, what)}
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

// readAll is io.ReadAll into a buffer of the size the stat said, and a
// byte more to meet the end: one allocation for a file that did not
// change since.
func readAll(r io.Reader, size int64) ([]byte, error) {
	data := make([]byte, 0, min(max(size, 0), MaxSpecSize)+1)
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
