//go:build !unix

package main

import "os"

// openRead opens a file to read (see open_unix.go).
func openRead(path string) (*os.File, error) { return os.Open(path) }
