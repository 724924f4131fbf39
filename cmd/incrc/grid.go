package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// cell is how the partition grid shows one status.
type cell struct {
	status string
	glyph  string
	color  string // ANSI SGR
	means  string
}

// cells are the grid's legend, in the order it is printed.
var cells = []cell{
	{"ok", "■", "32", "ok"},
	{"drifted", "✗", "31", "drifted"},
	{"rebuilt", "↻", "36", "rebuilt"},
	{"done", "✓", "32", "done earlier (resumed)"},
	{"pending", "·", "2", "pending"},
	{"failed", "!", "1;31", "failed"},
	{"finalized", "#", "90", "finalized (--restate)"},
	{"empty", " ", "", "no rows"},
}

func cellFor(status string) cell {
	for _, c := range cells {
		if c.status == status {
			return c
		}
	}
	return cell{status, "?", "", status}
}

// useColor: colour on a terminal, plain when NO_COLOR is set or the output
// is not a terminal.
func useColor(e *env, w io.Writer) bool {
	if _, set := e.getenv("NO_COLOR"); set {
		return false
	}
	return isTerminal(w)
}

func isTerminal(w io.Writer) bool {
	if sw, ok := w.(scrubWriter); ok {
		w = sw.w // the mask every command's output goes through
	}
	// A character device is not enough: /dev/null is one, and a run
	// redirected there must not get colour or progress lines.
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// printGrid prints one cell per partition, a line per month of days (a
// day of hours, a year of months), then a legend of the statuses present.
// keys are partition keys in order: 2006-01-02, 2006-01-02T15 or 2006-01.
func printGrid(w io.Writer, color bool, keys []string, status map[string]string) {
	if len(keys) == 0 {
		return
	}
	line := func(k string) (label string, slot int) {
		switch len(k) {
		case len("2006-01-02T15"):
			fmt.Sscan(k[11:], &slot)
			return k[:10], slot
		case len("2006-01"):
			fmt.Sscan(k[5:], &slot)
			return k[:4], slot - 1
		}
		fmt.Sscan(strings.TrimLeft(k[8:], "0"), &slot)
		return k[:7], slot - 1
	}
	width := map[int]int{len("2006-01-02T15"): 24, len("2006-01"): 12}[len(keys[0])]
	if width == 0 {
		width = 31
	}
	first := 1
	if width == 24 {
		first = 0
	}
	label0, _ := line(keys[0])
	header := strings.Repeat(" ", len(label0)+2)
	for i := 0; i < width; i++ {
		n := i + first
		if n%5 == 0 || i == 0 {
			header += fmt.Sprintf("%-2d", n)
		} else {
			header += "  "
		}
	}
	fmt.Fprintln(w, strings.TrimRight(header, " "))
	present := map[string]bool{}
	var cur string
	var row []string
	flush := func() {
		if cur != "" {
			fmt.Fprintln(w, strings.TrimRight(cur+"  "+strings.Join(row, " "), " "))
		}
	}
	for _, k := range keys {
		label, slot := line(k)
		if label != cur {
			flush()
			cur, row = label, make([]string, width)
			for i := range row {
				row[i] = " "
			}
		}
		c := cellFor(status[k])
		present[c.status] = true
		g := c.glyph
		if color && c.color != "" {
			g = "\x1b[" + c.color + "m" + g + "\x1b[0m"
		}
		if slot >= 0 && slot < width {
			row[slot] = g
		}
	}
	flush()
	var legend []string
	for _, c := range cells {
		if present[c.status] && c.status != "empty" {
			g := c.glyph
			if color && c.color != "" {
				g = "\x1b[" + c.color + "m" + g + "\x1b[0m"
			}
			legend = append(legend, g+" "+c.means)
		}
	}
	if present["empty"] {
		legend = append(legend, "blank: no rows")
	}
	fmt.Fprintln(w, "\n"+strings.Join(legend, "   "))
}
