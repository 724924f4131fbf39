package dialects

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/incrc/incrc/compiler/sqllex"
)

// CheckPart lexes a rendered statement back with the engine's rules and
// fails unless the engine reads exactly what the Writer meant:
//
//   - one statement: no ';' outside literals, and it lexes to the end;
//   - no comment anywhere: comments live only in the compiled file's
//     header and doc lines, and an embedded source query has had its own
//     removed;
//   - no comment opener ("--", "/*", "*/", "//", "#") formed by adjacent
//     characters outside literals and names, whatever this engine makes
//     of it;
//   - every quoted name and string literal the Writer spelled comes back
//     as one token with the value it meant, and no other quoted name or
//     string literal is there;
//   - the numbers it re-spelled are there, each one token;
//   - the parameter markers are exactly the ones it bound;
//   - each embedded source query lexes in place exactly as on its own:
//     nothing around it changes how it reads.
func CheckPart(d Dialect, p Part) error {
	var l lexScratch
	return l.check(d, p)
}

// lexScratch is the lex-back's space, reused from one statement to the
// next by a Writer: the tokens and the tables of what was meant.
type lexScratch struct {
	toks        []sqllex.Token
	names, strs spellings
	numbers     map[string]int
}

// check is CheckPart, in l's space.
func (l *lexScratch) check(d Dialect, p Part) error {
	// A token every few bytes: grown once, not doubled along the way.
	toks, err := sqllex.AppendExact(slices.Grow(l.toks[:0], len(p.SQL)/4), d.Lexer(), p.SQL)
	l.toks = toks
	if err != nil {
		return fmt.Errorf("%s: lex-back: the engine's rules do not read the statement: %v:\n%s", d.Name(), err, p.SQL)
	}
	return l.readsAsMeant(d, p, toks)
}

// readsAsMeant is the lex-back's reading of the tokens of p.
func (l *lexScratch) readsAsMeant(d Dialect, p Part, toks []sqllex.Token) error {
	r := d.Lexer()
	fail := func(off int, format string, args ...any) error {
		return lexBackError(d, p.SQL, off, format, args...)
	}
	names, strs := &l.names, &l.strs
	names.reset(p.Meant.Names)
	strs.reset(p.Meant.Strings)
	if l.numbers == nil {
		l.numbers = map[string]int{}
	}
	clear(l.numbers)
	numbers := l.numbers
	var markers []string
	code := 0 // where the text outside literals and names resumes
	queries := len(p.Meant.Queries) > 0
	for i := range toks {
		t := &toks[i]
		switch t.Kind {
		case sqllex.EOF:
		case sqllex.Word, sqllex.Op:
			// Nothing to check in a word or an operator, but whether it is
			// inside an embedded query.
			if !queries {
				continue
			}
		case sqllex.Punct:
			if !queries && t.Text != ";" {
				continue
			}
		}
		if t.Kind == sqllex.EOF {
			break
		}
		inside := false
		for _, s := range p.Meant.Queries {
			switch {
			case t.Off >= s.Off && t.End() <= s.End:
				inside = true
			case t.Off < s.End && t.End() > s.Off:
				return fail(t.Off, "%s %q runs across the edge of the embedded source query", t.Kind, t.Text)
			default:
				continue
			}
			break
		}
		switch {
		case t.Kind == sqllex.Comment:
			return fail(t.Off, "a comment %q", t.Text)
		case t.Kind == sqllex.Punct && t.Text == ";":
			return fail(t.Off, "a ';': more than one statement")
		case t.Kind == sqllex.String || t.Kind == sqllex.Quoted:
			if i, o := openers(p.SQL[code:t.Off]); i >= 0 {
				return fail(code+i, "%q outside a literal", o)
			}
			code = t.End()
		}
		if inside {
			continue
		}
		switch t.Kind {
		case sqllex.Quoted:
			if !names.read(t.Text, t.Value) {
				return fail(t.Off, "the quoted name %s was not written as one", t.Text)
			}
		case sqllex.String:
			if !strs.read(t.Text, t.Value) {
				return fail(t.Off, "the string literal %s was not written as one (it reads as %q)", t.Text, t.Value)
			}
		case sqllex.Number:
			numbers[t.Text]++
		case sqllex.Param:
			markers = append(markers, t.Text)
		}
	}
	if i, o := openers(p.SQL[code:]); i >= 0 {
		return fail(code+i, "%q outside a literal", o)
	}
	if spelled, ok := names.missing(); ok {
		return fail(0, "the quoted name %s does not read back as one token", spelled)
	}
	if spelled, ok := strs.missing(); ok {
		return fail(0, "the string literal %s does not read back as one token", spelled)
	}
	for _, n := range p.Meant.Numbers {
		if numbers[n]--; numbers[n] < 0 {
			return fail(0, "the number %s does not read back as one token", n)
		}
	}
	if err := checkMarkers(d, markers, p.Params); err != nil {
		return fail(0, "%v", err)
	}
	for _, s := range p.Meant.Queries {
		if err := sameReading(r, p.SQL, toks, s); err != nil {
			return fail(s.Off, "%v", err)
		}
	}
	return nil
}

// spellings is what a statement was meant to hold of one kind (quoted
// names, string literals), by spelling: what each must read back as, and
// whether it did.
type spellings struct {
	index map[string]int // by spelling, in order
	order []Spelled      // each spelling once, with what it is listed with last
	found []bool
}

// reset lists what was meant, in s's space; a spelling listed twice
// means what it is listed with last.
func (s *spellings) reset(list []Spelled) {
	if s.index == nil {
		s.index = make(map[string]int, len(list))
	}
	clear(s.index)
	s.order = s.order[:0]
	for _, sp := range list {
		if i, ok := s.index[sp.Text]; ok {
			s.order[i].Value = sp.Value
			continue
		}
		s.index[sp.Text] = len(s.order)
		s.order = append(s.order, sp)
	}
	s.found = append(s.found[:0], make([]bool, len(s.order))...)
}

// read records a token spelled text that reads as value: false unless it
// was meant, as that.
func (s *spellings) read(text, value string) bool {
	i, ok := s.index[text]
	if !ok || s.order[i].Value != value {
		return false
	}
	s.found[i] = true
	return true
}

// missing is the first spelling meant that was not read, if any.
func (s *spellings) missing() (string, bool) {
	for i, sp := range s.order {
		if !s.found[i] {
			return sp.Text, true
		}
	}
	return "", false
}

// lexBackError is a lex-back refusal: what is wrong, where, and the
// whole statement.
func lexBackError(d Dialect, sql string, off int, format string, args ...any) error {
	return fmt.Errorf("%s: lex-back: %s, at byte %d of:\n%s", d.Name(), fmt.Sprintf(format, args...), off, sql)
}

// openers finds a comment opener in text that is outside literals and
// names (-1 when there is none): the Writer never writes one, so one there
// was formed by two pieces written side by side.
func openers(text string) (int, string) {
	// One pass finds whether there is any; the search in the list's order
	// then names the same one as always.
	for i := 0; i < len(text); i++ {
		if !openerStart[text[i]] {
			continue
		}
		if pair := text[i:min(i+2, len(text))]; text[i] == '#' || pair == "--" || pair == "/*" || pair == "*/" || pair == "//" {
			for _, o := range [...]string{"--", "/*", "*/", "//", "#"} {
				if i := strings.Index(text, o); i >= 0 {
					return i, o
				}
			}
		}
	}
	return -1, ""
}

// openerStart are the bytes a comment opener starts with.
var openerStart = [256]bool{'-': true, '/': true, '*': true, '#': true}

// checkMarkers compares the parameter markers read with the parameters
// bound: one marker per bound parameter in order, or for engines that
// reuse markers ($1 ... $1), every $n for n up to the number bound.
func checkMarkers(d Dialect, markers, params []string) error {
	if !d.Caps().ReusesParams {
		if len(markers) != len(params) {
			return fmt.Errorf("%d parameter markers for %d parameters", len(markers), len(params))
		}
		for i, m := range markers {
			if m != d.Placeholder(i+1) {
				return fmt.Errorf("marker %q where %q was written", m, d.Placeholder(i+1))
			}
		}
		return nil
	}
	seen := make([]bool, len(params)) // seen[n-1]: $n was read
	distinct := 0
	for _, m := range markers {
		n, err := strconv.Atoi(strings.TrimPrefix(m, "$"))
		if err != nil || n < 1 || n > len(params) || d.Placeholder(n) != m {
			return fmt.Errorf("marker %q for %d parameters", m, len(params))
		}
		if !seen[n-1] {
			seen[n-1] = true
			distinct++
		}
	}
	if distinct != len(params) {
		return fmt.Errorf("%d distinct markers for %d parameters", distinct, len(params))
	}
	return nil
}

// sameReading checks that the tokens of sql inside s are the tokens of the
// embedded text read on its own.
func sameReading(r *sqllex.Rules, sql string, toks []sqllex.Token, s Span) error {
	alone, err := sqllex.LexExact(r, sql[s.Off:s.End])
	if err != nil {
		return fmt.Errorf("the embedded source query does not lex on its own: %v", err)
	}
	alone = alone[:len(alone)-1]
	inside := func(t sqllex.Token) bool { return t.Kind != sqllex.EOF && t.Off >= s.Off && t.End() <= s.End }
	n := 0 // the tokens of sql inside s
	for _, t := range toks {
		if inside(t) {
			n++
		}
	}
	if n != len(alone) {
		return fmt.Errorf("the embedded source query reads as %d tokens in place and %d alone", n, len(alone))
	}
	n = 0
	for _, t := range toks {
		if !inside(t) {
			continue
		}
		if a := alone[n]; t.Kind != a.Kind || t.Text != a.Text || t.Off-s.Off != a.Off {
			return fmt.Errorf("the embedded source query reads differently in place: %s %q, alone %s %q", t.Kind, t.Text, a.Kind, a.Text)
		}
		n++
	}
	return nil
}
