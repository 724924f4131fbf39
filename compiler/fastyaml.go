package compiler

import (
	"bytes"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"
)

// fastYAML: document reads a file that keeps to plainYAML's subset
// without the YAML library (tests turn it off to compare).
var fastYAML = true

// plainYAML reads the YAML that specs are nearly always written in, and
// nothing else: block mappings of plain keys, nested by indentation;
// block sequences; one-line flow sequences and mappings of scalars;
// plain scalars and quoted ones without escapes; comments; ASCII only,
// no tabs, no carriage returns. It returns the same tree of nodes as the
// YAML library, in every field the parser reads (Kind, Style, Value,
// Line, Column, Content, and Tag as far as ShortTag tells it: a plain
// scalar's Tag is "!!null" for the null words and otherwise left for
// ShortTag to resolve), and false for anything outside the subset or in
// doubt: an empty value, a multi-line scalar, an anchor, a tag, a
// document marker, an escape. Then the library reads the file, and
// reports its errors; plainYAML reports none (TestPlainYAML compares the
// two on the repository's specs and on their mutations).
func plainYAML(src []byte) (*yaml.Node, bool) { return new(plainParser).read(src) }

// plainPool holds parsers whose tree is no longer used (see
// parser.document and parser.release): the next file's lines and nodes
// go in their slices rather than in new ones. A spec's tree is dropped
// once Parse has read it, and it is as big as the spec's text again.
var plainPool = sync.Pool{New: func() any { return new(plainParser) }}

// read is plainYAML, in y's slices when they have room: the tree it
// returns is y's until y is reused.
func (y *plainParser) read(src []byte) (*yaml.Node, bool) {
	for _, c := range src {
		if c != '\n' && (c < 0x20 || c > 0x7e) {
			return nil, false
		}
	}
	if n := bytes.Count(src, []byte("\n")) + 1; cap(y.lines) < n {
		y.lines = make([]plainLine, 0, n)
	}
	y.lines, y.i = y.lines[:0], 0
	text := string(src)
	for num := 1; text != ""; num++ {
		line, rest, _ := strings.Cut(text, "\n")
		text = rest
		if strings.HasPrefix(line, "---") || strings.HasPrefix(line, "...") || strings.HasPrefix(line, "%") {
			return nil, false
		}
		content := strings.TrimLeft(line, " ")
		if content == "" || content[0] == '#' {
			continue
		}
		y.lines = append(y.lines, plainLine{num: num, indent: len(line) - len(content), text: content})
	}
	if len(y.lines) == 0 || y.lines[0].indent != 0 {
		return nil, false
	}
	if n := 2*len(y.lines) + 8; cap(y.slab) < n { // a key and its value a line, and a few more
		y.slab = make([]yaml.Node, 0, n)
	}
	y.nodes = y.slab[:0]
	root, ok := y.mapping(0)
	if !ok || y.i != len(y.lines) {
		return nil, false
	}
	return root, true
}

type plainLine struct {
	num, indent int    // 1-based line number; spaces before the text
	text        string // from the first non-space, comments included
}

type plainParser struct {
	lines []plainLine // the lines with content: blank and comment lines are not
	i     int         // the next line to read
	nodes []yaml.Node // where node allocates
	slab  []yaml.Node // the first block of nodes, kept for the next file
}

// free empties y, which no one holds a node of, and puts it in the pool.
func (y *plainParser) free() {
	clear(y.slab[:cap(y.slab)]) // the nodes' Content, and their strings, go
	clear(y.lines)
	y.lines, y.nodes, y.i = y.lines[:0], nil, 0
	plainPool.Put(y)
}

// node allocates a node: a block of them at a time.
func (y *plainParser) node(kind yaml.Kind, tag, value string, line, col int) *yaml.Node {
	if len(y.nodes) == cap(y.nodes) {
		y.nodes = make([]yaml.Node, 0, 64)
	}
	y.nodes = append(y.nodes, yaml.Node{Kind: kind, Tag: tag, Value: value, Line: line, Column: col + 1})
	return &y.nodes[len(y.nodes)-1]
}

// plain is a plain scalar: its Tag is "!!null" for the words YAML reads
// as null; any other is resolved by ShortTag when asked.
func (y *plainParser) plain(value string, line, col int) *yaml.Node {
	tag := ""
	switch value {
	case "~", "null", "Null", "NULL":
		tag = "!!null"
	}
	return y.node(yaml.ScalarNode, tag, value, line, col)
}

// key reads a plain key and its colon at the start of text: the key, and
// the rest of the text after the colon; false when text does not start
// with one (letters, digits, _, - and ., then a colon and a space or the
// end of the line).
func plainKey(text string) (key, rest string, ok bool) {
	i := 0
	for i < len(text) && i < 128 {
		c := text[i]
		if isLower(c) || 'A' <= c && c <= 'Z' || isDigit(c) || c == '_' || i > 0 && (c == '-' || c == '.') {
			i++
			continue
		}
		break
	}
	if i == 0 || i >= len(text) || text[i] != ':' || i+1 < len(text) && text[i+1] != ' ' {
		return "", "", false
	}
	return text[:i], text[i+1:], true
}

// mapping reads a block mapping whose keys are at indent, from the
// current line.
func (y *plainParser) mapping(indent int) (*yaml.Node, bool) {
	first := y.lines[y.i]
	m := y.node(yaml.MappingNode, "!!map", "", first.num, indent)
	for y.i < len(y.lines) {
		l := y.lines[y.i]
		if l.indent < indent {
			break
		}
		if l.indent > indent {
			return nil, false
		}
		key, rest, ok := plainKey(l.text)
		if !ok {
			return nil, false
		}
		k := y.plain(key, l.num, indent)
		value := strings.TrimLeft(rest, " ")
		var v *yaml.Node
		if value == "" || value[0] == '#' {
			// The value is the block below: more indented, or a list at
			// the key's own indent.
			y.i++
			if y.i == len(y.lines) {
				return nil, false
			}
			next := y.lines[y.i]
			switch {
			case next.indent > indent && isItem(next.text):
				v, ok = y.sequence(next.indent)
			case next.indent > indent:
				v, ok = y.mapping(next.indent)
			case next.indent == indent && isItem(next.text):
				v, ok = y.sequence(indent)
			default:
				return nil, false // an empty value
			}
		} else {
			v, ok = y.inline(value, l.num, indent+len(l.text)-len(value))
			y.i++
			if ok && y.i < len(y.lines) && y.lines[y.i].indent > indent {
				return nil, false // a scalar on more than one line
			}
		}
		if !ok {
			return nil, false
		}
		m.Content = append(m.Content, k, v)
	}
	return m, true
}

// isItem: the text is an entry of a block sequence.
func isItem(text string) bool { return strings.HasPrefix(text, "- ") }

// sequence reads a block sequence whose dashes are at indent.
func (y *plainParser) sequence(indent int) (*yaml.Node, bool) {
	first := y.lines[y.i]
	s := y.node(yaml.SequenceNode, "!!seq", "", first.num, indent)
	for y.i < len(y.lines) {
		l := y.lines[y.i]
		if l.indent < indent || l.indent == indent && !isItem(l.text) {
			break
		}
		if l.indent > indent {
			return nil, false
		}
		item := strings.TrimLeft(l.text[2:], " ")
		col := indent + len(l.text) - len(item)
		if item == "" || item[0] == '#' || item[0] == '-' {
			return nil, false
		}
		var v *yaml.Node
		var ok bool
		if _, _, isMap := plainKey(item); isMap {
			// A mapping in the entry: its keys at the first key's column.
			y.lines[y.i] = plainLine{num: l.num, indent: col, text: item}
			v, ok = y.mapping(col)
		} else {
			v, ok = y.inline(item, l.num, col)
			y.i++
			if ok && y.i < len(y.lines) && y.lines[y.i].indent > indent {
				return nil, false
			}
		}
		if !ok {
			return nil, false
		}
		s.Content = append(s.Content, v)
	}
	return s, true
}

// inline reads a value written on its key's line, starting at column col:
// a scalar or a flow collection, then at most a comment.
func (y *plainParser) inline(text string, line, col int) (*yaml.Node, bool) {
	var (
		n    *yaml.Node
		end  int // where the value ends in text
		ok   bool
		tail string
	)
	switch text[0] {
	case '[', '{':
		n, end, ok = y.flow(text, line, col)
	case '"', '\'':
		n, end, ok = y.quoted(text, line, col)
	default:
		if !plainStart(text[0]) {
			return nil, false
		}
		end = len(text)
		if i := strings.Index(text, " #"); i >= 0 {
			end = i
		}
		value := strings.TrimRight(text[:end], " ")
		if strings.Contains(value, ": ") || strings.HasSuffix(value, ":") || strings.HasPrefix(value, "<<") {
			return nil, false
		}
		return y.plain(value, line, col), true
	}
	if !ok {
		return nil, false
	}
	// After a quoted scalar or a flow collection: spaces, then a comment
	// after at least one of them, or nothing.
	tail = text[end:]
	if rest := strings.TrimLeft(tail, " "); rest != "" && (rest[0] != '#' || len(rest) == len(tail)) {
		return nil, false
	}
	return n, true
}

// plainStart: c may start a plain scalar of the subset (not an indicator).
func plainStart(c byte) bool {
	return !strings.ContainsRune("-?:,[]{}#&*!|>'\"%@`<", rune(c))
}

// quoted reads a quoted scalar at the start of text that ends on this
// line and has no escape.
func (y *plainParser) quoted(text string, line, col int) (*yaml.Node, int, bool) {
	q := text[0]
	i := strings.IndexByte(text[1:], q) + 1
	if i == 0 {
		return nil, 0, false
	}
	value := text[1:i]
	if q == '"' && strings.IndexByte(value, '\\') >= 0 || q == '\'' && i+1 < len(text) && text[i+1] == '\'' {
		return nil, 0, false
	}
	n := y.node(yaml.ScalarNode, "!!str", value, line, col)
	n.Style = yaml.DoubleQuotedStyle
	if q == '\'' {
		n.Style = yaml.SingleQuotedStyle
	}
	return n, i + 1, true
}

// flow reads a flow sequence or mapping of scalars that closes on this
// line: the node and where it ends in text.
func (y *plainParser) flow(text string, line, col int) (*yaml.Node, int, bool) {
	isMap := text[0] == '{'
	closer := byte(']')
	n := y.node(yaml.SequenceNode, "!!seq", "", line, col)
	if isMap {
		closer = '}'
		n.Kind, n.Tag = yaml.MappingNode, "!!map"
	}
	n.Style = yaml.FlowStyle
	i := 1
	skip := func() {
		for i < len(text) && text[i] == ' ' {
			i++
		}
	}
	// scalar reads one scalar of the collection at i; key: a mapping's
	// key, which ends at its colon.
	scalar := func(key bool) (*yaml.Node, bool) {
		if i >= len(text) {
			return nil, false
		}
		if c := text[i]; c == '"' || c == '\'' {
			if key {
				return nil, false
			}
			s, end, ok := y.quoted(text[i:], line, col+i)
			i += end
			return s, ok
		}
		if !plainStart(text[i]) {
			return nil, false
		}
		start := i
		// Any of these ends the scalar, or is best left to the library
		// ("? " does end one in a flow, "#" may start a comment).
		for i < len(text) && !strings.ContainsRune(",[]{}:#?", rune(text[i])) {
			i++
		}
		if i == len(text) || text[i] == '#' || text[i] == '?' || text[i] == ':' && !key {
			return nil, false
		}
		value := strings.TrimRight(text[start:i], " ")
		if key && (text[i] != ':' || i+1 >= len(text) || text[i+1] != ' ') {
			return nil, false
		}
		if key {
			i++ // the colon
		}
		return y.plain(value, line, col+start), true
	}
	skip()
	if i < len(text) && text[i] == closer {
		return n, i + 1, true
	}
	for {
		skip()
		if isMap {
			k, ok := scalar(true)
			if !ok {
				return nil, 0, false
			}
			skip()
			v, ok := scalar(false)
			if !ok {
				return nil, 0, false
			}
			n.Content = append(n.Content, k, v)
		} else {
			v, ok := scalar(false)
			if !ok {
				return nil, 0, false
			}
			n.Content = append(n.Content, v)
		}
		skip()
		switch {
		case i < len(text) && text[i] == closer:
			return n, i + 1, true
		case i < len(text) && text[i] == ',':
			i++
		default:
			return nil, 0, false
		}
	}
}
