package runner

import (
	"database/sql/driver"
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
)

// inline puts each argument of query in place of its marker, as the
// literal the dialect spells for it (dialects.Literaler): for the engines
// whose clients bind no parameters. The markers are found by lexing query
// with the engine's rules, never by searching the text, and the result is
// lexed back: it must read as query did, token for token, with each
// marker replaced by exactly the tokens its literal lexes to alone, and
// each string literal holding the value it was spelled from. A value can
// change what one literal holds, never the statement's shape.
func inline(d dialects.Dialect, query string, args []driver.NamedValue) (string, error) {
	if len(args) == 0 {
		return query, nil
	}
	lit, ok := d.(dialects.Literaler)
	if !ok {
		return "", fmt.Errorf("%s spells no literals: cannot run a statement with parameters", d.Name())
	}
	rules := d.Lexer()
	toks, err := sqllex.LexExact(rules, query)
	if err != nil {
		return "", fmt.Errorf("lex the statement: %w", err)
	}
	var b strings.Builder
	var want []sqllex.Token // what the result must lex to
	pos, n := 0, 0
	for _, t := range toks {
		if t.Kind != sqllex.Param {
			if t.Kind != sqllex.EOF {
				want = append(want, t)
			}
			continue
		}
		if t.Text != "?" {
			return "", fmt.Errorf("marker %q at offset %d: only ? is bound here", t.Text, t.Off)
		}
		if n >= len(args) {
			return "", fmt.Errorf("the statement has more markers than its %d argument(s)", len(args))
		}
		s, err := lit.Literal(args[n].Value)
		if err != nil {
			return "", fmt.Errorf("argument %d: %w", n+1, err)
		}
		alone, err := sqllex.LexExact(rules, s)
		if err != nil {
			return "", fmt.Errorf("argument %d: the literal %q does not lex: %w", n+1, s, err)
		}
		if err := plainValue(alone, args[n].Value); err != nil {
			return "", fmt.Errorf("argument %d: %w", n+1, err)
		}
		want = append(want, alone[:len(alone)-1]...)
		// Spaces around the literal: nothing next to it can join one of its
		// tokens (a "-" before a "-" would open a comment).
		b.WriteString(query[pos:t.Off])
		b.WriteString(" ")
		b.WriteString(s)
		b.WriteString(" ")
		pos = t.End()
		n++
	}
	if n != len(args) {
		return "", fmt.Errorf("the statement has %d marker(s) for %d argument(s)", n, len(args))
	}
	b.WriteString(query[pos:])
	out := b.String()
	got, err := sqllex.LexExact(rules, out)
	if err != nil {
		return "", fmt.Errorf("lex the statement with its literals back: %w", err)
	}
	got = got[:len(got)-1]
	if len(got) != len(want) {
		return "", fmt.Errorf("the statement with its literals reads as %d tokens, not %d", len(got), len(want))
	}
	for i := range got {
		if got[i].Kind != want[i].Kind || got[i].Text != want[i].Text || got[i].Value != want[i].Value {
			return "", fmt.Errorf("the statement with its literals reads %s %q at offset %d, not %s %q", got[i].Kind, got[i].Text, got[i].Off, want[i].Kind, want[i].Text)
		}
	}
	return out, nil
}

// plainValue checks a literal's tokens: no comment, no marker, no ';',
// and a string value's one string token holding exactly the value.
func plainValue(toks []sqllex.Token, v any) error {
	strs := 0
	for _, t := range toks {
		switch {
		case t.Kind == sqllex.Comment || t.Kind == sqllex.Param || t.Kind == sqllex.Punct && t.Text == ";":
			return fmt.Errorf("the literal holds a %s %q", t.Kind, t.Text)
		case t.Kind == sqllex.String:
			strs++
			if s, ok := v.(string); ok && t.Value != s {
				return fmt.Errorf("the literal reads back as %q, not the value", t.Value)
			}
		}
	}
	if _, ok := v.(string); ok && strs != 1 {
		return fmt.Errorf("a text value spelled as %d string literals", strs)
	}
	return nil
}
