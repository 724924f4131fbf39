package dialects

import (
	"fmt"
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
	r := d.Lexer()
	fail := func(off int, format string, args ...any) error {
		return fmt.Errorf("%s: lex-back: %s, at byte %d of:\n%s", d.Name(), fmt.Sprintf(format, args...), off, p.SQL)
	}
	toks, err := sqllex.LexExact(r, p.SQL)
	if err != nil {
		return fmt.Errorf("%s: lex-back: the engine's rules do not read the statement: %v:\n%s", d.Name(), err, p.SQL)
	}
	span := func(t sqllex.Token) (inside bool, err error) {
		for _, s := range p.Meant.Queries {
			switch {
			case t.Off >= s.Off && t.End() <= s.End:
				return true, nil
			case t.Off < s.End && t.End() > s.Off:
				return false, fail(t.Off, "%s %q runs across the edge of the embedded source query", t.Kind, t.Text)
			}
		}
		return false, nil
	}
	names, strs := map[string]bool{}, map[string]bool{}
	numbers := map[string]int{}
	var markers []string
	code := 0 // where the text outside literals and names resumes
	for _, t := range toks {
		if t.Kind == sqllex.EOF {
			break
		}
		inside, err := span(t)
		if err != nil {
			return err
		}
		switch {
		case t.Kind == sqllex.Comment:
			return fail(t.Off, "a comment %q", t.Text)
		case t.Kind == sqllex.Punct && t.Text == ";":
			return fail(t.Off, "a ';': more than one statement")
		case t.Kind == sqllex.String || t.Kind == sqllex.Quoted:
			if err := openers(p.SQL[code:t.Off], code, fail); err != nil {
				return err
			}
			code = t.End()
		}
		if inside {
			continue
		}
		switch t.Kind {
		case sqllex.Quoted:
			want, ok := p.Meant.Names[t.Text]
			if !ok || want != t.Value {
				return fail(t.Off, "the quoted name %s was not written as one", t.Text)
			}
			names[t.Text] = true
		case sqllex.String:
			want, ok := p.Meant.Strings[t.Text]
			if !ok || want != t.Value {
				return fail(t.Off, "the string literal %s was not written as one (it reads as %q)", t.Text, t.Value)
			}
			strs[t.Text] = true
		case sqllex.Number:
			numbers[t.Text]++
		case sqllex.Param:
			markers = append(markers, t.Text)
		}
	}
	if err := openers(p.SQL[code:], code, fail); err != nil {
		return err
	}
	for spelled := range p.Meant.Names {
		if !names[spelled] {
			return fail(0, "the quoted name %s does not read back as one token", spelled)
		}
	}
	for spelled := range p.Meant.Strings {
		if !strs[spelled] {
			return fail(0, "the string literal %s does not read back as one token", spelled)
		}
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

// openers refuses a comment opener in text that is outside literals and
// names: the Writer never writes one, so one there was formed by two
// pieces written side by side.
func openers(text string, off int, fail func(int, string, ...any) error) error {
	for _, o := range []string{"--", "/*", "*/", "//", "#"} {
		if i := strings.Index(text, o); i >= 0 {
			return fail(off+i, "%q outside a literal", o)
		}
	}
	return nil
}

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
	seen := map[int]bool{}
	for _, m := range markers {
		n, err := strconv.Atoi(strings.TrimPrefix(m, "$"))
		if err != nil || n < 1 || n > len(params) || d.Placeholder(n) != m {
			return fmt.Errorf("marker %q for %d parameters", m, len(params))
		}
		seen[n] = true
	}
	if len(seen) != len(params) {
		return fmt.Errorf("%d distinct markers for %d parameters", len(seen), len(params))
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
	var in []sqllex.Token
	for _, t := range toks {
		if t.Kind != sqllex.EOF && t.Off >= s.Off && t.End() <= s.End {
			in = append(in, t)
		}
	}
	alone = alone[:len(alone)-1]
	if len(in) != len(alone) {
		return fmt.Errorf("the embedded source query reads as %d tokens in place and %d alone", len(in), len(alone))
	}
	for i := range in {
		if in[i].Kind != alone[i].Kind || in[i].Text != alone[i].Text || in[i].Off-s.Off != alone[i].Off {
			return fmt.Errorf("the embedded source query reads differently in place: %s %q, alone %s %q", in[i].Kind, in[i].Text, alone[i].Kind, alone[i].Text)
		}
	}
	return nil
}
