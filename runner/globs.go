package runner

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/incrc/incrc/runner/transfer"
)

// MatchingFiles counts the files a files source's glob matches now, as a
// run loaded by file lists them, and says whether the folder the glob
// starts in (the part before its first pattern character) is there:
// incrc validate warns of a pattern that matches nothing in a folder that
// is, and leaves a folder this machine lacks (CI, a fresh clone) to the
// first run, which fails naming the pattern.
func MatchingFiles(glob string) (n int, folder bool, err error) {
	parts := strings.Split(filepath.ToSlash(glob), "/")
	i := 0
	for i < len(parts)-1 && !strings.ContainsAny(parts[i], "*?[{") {
		i++
	}
	root := strings.Join(parts[:i], "/")
	if root == "" && strings.HasPrefix(glob, "/") {
		root = "/"
	}
	if root == "" {
		root = "."
	}
	if info, err := os.Stat(root); err != nil || !info.IsDir() {
		return 0, false, nil
	}
	files, err := transfer.ListGlob(glob)
	return len(files), true, err
}
