package compiler

import (
	"fmt"

	"github.com/incrc/incrc/compiler/ir"

	"go.yaml.in/yaml/v3"
)

// invisibleName names the characters a reviewer cannot see that change
// what a line reads as: the bidirectional controls reorder the text
// around them on screen (a check, a query or a comment that displays
// otherwise than it compiles), and the zero-width characters make two
// values that look the same differ. A spec and incrc.yaml refuse them
// anywhere: in a value, a key or a comment, written as they are or as a
// YAML escape ("\u202e").
func invisibleName(r rune) string {
	switch r {
	case 0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069:
		return "a bidirectional control"
	case 0x200B, 0x200C, 0x200D, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0xFEFF, 0x00AD, 0x180E:
		return "a zero-width character"
	}
	return ""
}

// visible reports every invisible character of the file, where it is
// written, and the scalars of other lines that hold one through an escape.
func (p *parser) visible(root *yaml.Node) {
	raw := map[int]bool{} // lines that hold one as it is
	line, col := 1, 1
	for i, r := range string(p.src) {
		switch {
		case r == '\n':
			line, col = line+1, 1
			continue
		case r == 0xFEFF && i == 0:
			// A byte order mark starts the file: YAML reads past it.
		case invisibleName(r) != "":
			p.diags.add(ir.Pos{File: p.file, Line: line, Col: col}, "%s", invisibleMsg(r))
			raw[line] = true
		}
		col++
	}
	if root == nil {
		return
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.ScalarNode && !raw[n.Line] {
			for _, r := range n.Value {
				if invisibleName(r) != "" {
					p.diags.add(p.pos(n), "%s (written as an escape)", invisibleMsg(r))
					break
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
}

func invisibleMsg(r rune) string {
	return fmt.Sprintf("character %U, %s, which a reviewer cannot see: remove it", r, invisibleName(r))
}
