package compiler

import (
	"fmt"
	"sort"
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// Diagnostic is one problem found in a spec, at the node that causes it.
type Diagnostic struct {
	Pos ir.Pos
	Msg string
	// Pipelines names the pipelines a problem of the project as a whole
	// involves (two that write one table, a cycle): besides the one whose
	// file it is in, it keeps them from running. Empty for a problem of
	// one file.
	Pipelines []string
	// Code names a warning (Warning true): a spec that validates but likely
	// does not do what its author means. A spec silences one code with a
	// reason (silence:); incrc validate --strict fails on the others.
	Code    string
	Warning bool
}

func (d Diagnostic) String() string {
	if d.Warning {
		return d.Pos.String() + ": warning: " + d.Msg + " [" + d.Code + "]"
	}
	return d.Pos.String() + ": " + d.Msg
}

// Diagnostics is every problem found, reported together. It is an error
// when it holds at least one diagnostic.
type Diagnostics []Diagnostic

func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Err returns ds sorted by position as an error, or nil when ds is empty.
func (ds Diagnostics) Err() error {
	if len(ds) == 0 {
		return nil
	}
	ds.Sort()
	return ds
}

// Sort orders diagnostics by file, line and column, keeping the order in
// which they were found for diagnostics at the same position.
func (ds Diagnostics) Sort() {
	sort.SliceStable(ds, func(i, j int) bool {
		a, b := ds[i].Pos, ds[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

func (ds *Diagnostics) add(p ir.Pos, format string, args ...any) {
	*ds = append(*ds, Diagnostic{Pos: p, Msg: fmt.Sprintf(format, args...)})
}

// addFor adds a problem of the project that involves pipelines.
func (ds *Diagnostics) addFor(pipelines []string, p ir.Pos, format string, args ...any) {
	*ds = append(*ds, Diagnostic{Pos: p, Msg: fmt.Sprintf(format, args...), Pipelines: pipelines})
}

// suggest returns ` (did you mean "x"?)` for the known word closest to
// word, or a list of what is expected when nothing is close.
func suggest(word string, known []string) string {
	if best := closest(word, known); best != "" {
		return fmt.Sprintf(", did you mean %q?", best)
	}
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	return " (expected one of: " + strings.Join(sorted, ", ") + ")"
}

// closest returns the known word within two edits of word, or "".
func closest(word string, known []string) string {
	if len(word) > 64 {
		return "" // no known word is that long; spare the quadratic distance
	}
	best, bestDist := "", 3
	for _, k := range known {
		if d := editDistance(word, k); d < bestDist {
			best, bestDist = k, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
