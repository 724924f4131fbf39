package ir

import (
	"strings"
	"time"
	"unicode/utf8"
)

// String is a scalar from the spec and where it was written. A zero Pos
// (Line 0) means the key was absent.
type String struct {
	Value string
	Pos   Pos

	layout Layout // how offsets in Value map to the file (see At)
	shift  int
}

// Layout is how a scalar's text sits in the file (see String.At).
type Layout int8

const (
	LayoutUnknown Layout = iota // escapes or folding: only Pos is certain
	LayoutLine                  // one line; the text starts shift columns after Pos
	LayoutBlock                 // a literal block (|) indented by shift spaces
)

// Set reports whether the key was present in the file.
func (s String) Set() bool { return s.Pos.Line != 0 }

// SetLayout says how offsets in Value map to the file (see At): the
// parser knows, from the scalar's style, and sets it once.
func (s *String) SetLayout(l Layout, shift int) { s.layout, s.shift = l, shift }

// At returns the position of the byte at offset off of Value: the column
// inside the scalar where the parser could map it, else the scalar's start.
func (s String) At(off int) Pos {
	if off < 0 || off > len(s.Value) {
		return s.Pos
	}
	before := s.Value[:off]
	switch s.layout {
	case LayoutLine:
		p := s.Pos
		p.Col += s.shift + utf8.RuneCountInString(before)
		return p
	case LayoutBlock:
		p := s.Pos
		nl := strings.LastIndexByte(before, '\n')
		p.Line += 1 + strings.Count(before, "\n")
		p.Col = s.shift + 1 + utf8.RuneCountInString(before[nl+1:])
		return p
	}
	return s.Pos
}

// Duration is a duration written as 90s, 15m, 36h, 2d or 1w.
type Duration struct {
	Value   time.Duration
	Count   int64 // a plain number: only meaningful for an integer watermark's lookback
	IsCount bool
	Text    string
	Pos     Pos
}

// Set reports whether the key was present in the file.
func (d Duration) Set() bool { return d.Pos.Line != 0 }
