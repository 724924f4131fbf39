package ir

import "fmt"

// Pos is a position in a spec file. Line and Col are 1-based; a zero Line
// means the position is the file as a whole.
type Pos struct {
	File string
	Line int
	Col  int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}
