//go:build !unix

package main

import "os"

// readFile is a file opened to read (see open_unix.go).
type readFile struct{ *os.File }

// openRead opens a file to read.
func openRead(path string) (readFile, error) {
	f, err := os.Open(path)
	return readFile{f}, err
}

// regularSize is the file's size, and whether it is a regular file.
func (f readFile) regularSize() (int64, bool) {
	info, err := f.Stat()
	if err != nil {
		return 0, false
	}
	return info.Size(), info.Mode().IsRegular()
}
