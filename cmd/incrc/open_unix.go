//go:build unix

package main

import (
	"io"
	"os"
	"syscall"
)

// readFile is a file opened to read, by its descriptor alone: os.Open
// offers every descriptor it opens to the poller (on Linux four fcntl
// calls and an epoll_ctl that a regular file refuses), and os.NewFile
// asks for the descriptor's flags and registers a cleanup, none of which
// a file read once and closed needs. The descriptor is blocking, as
// os.Open leaves a regular file's.
type readFile struct{ fd int }

// openRead opens a file to read.
func openRead(path string) (readFile, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return readFile{}, &os.PathError{Op: "open", Path: path, Err: err}
		}
		return readFile{fd: fd}, nil
	}
}

// Read reads as os.File's Read does: io.EOF at the end.
func (f readFile) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	for {
		n, err := syscall.Read(f.fd, b)
		switch {
		case err == syscall.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// regularSize is the file's size, and whether it is a regular file.
func (f readFile) regularSize() (int64, bool) {
	var st syscall.Stat_t
	for {
		err := syscall.Fstat(f.fd, &st)
		if err == syscall.EINTR {
			continue
		}
		return st.Size, err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG
	}
}

func (f readFile) Close() error { return syscall.Close(f.fd) }
