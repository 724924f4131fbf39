package dialects

import (
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/compiler/sqllex"
)

// pg is the least of a dialect: PostgreSQL's quoting and rules.
type pg struct{ name Name }

func (d *pg) Name() Name                                  { return d.name }
func (*pg) Caps() Caps                                    { return Caps{ReusesParams: true} }
func (*pg) QuoteIdent(s string) string                    { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func (*pg) Placeholder(n int) string                      { return Dollar(n) }
func (*pg) ColumnType(compiler.Type) (string, error)      { return "TEXT", nil }
func (*pg) NullSafeEqual(a, b string) string              { return a + " IS NOT DISTINCT FROM " + b }
func (*pg) BindTime(t time.Time, _ compiler.TypeKind) any { return t }
func (*pg) Lexer() *sqllex.Rules                          { return sqllex.Postgres }

// TestPassedIsTheSamePart holds the memory of passed statements to what
// the lex-back reads: a statement written again as it passed is not lexed
// again, one that differs in what it meant is.
func TestPassedIsTheSamePart(t *testing.T) {
	d := &pg{name: "fake"}
	sh := &shared{names: map[string]int{}}
	good := func() error {
		w := &Writer{d: d, shared: sh}
		w.S("SELECT ")
		w.Ident("a")
		w.S(" FROM ")
		w.Ident("t")
		w.S(" WHERE ", w.String("x"), " = ", w.Number("1"))
		w.End()
		return w.err
	}
	for i := 0; i < 3; i++ {
		if err := good(); err != nil {
			t.Fatalf("written %d times: %v", i+1, err)
		}
	}
	pt := passedFor(d)
	pt.mu.Lock()
	n := len(pt.parts)
	pt.mu.Unlock()
	if n != 1 {
		t.Fatalf("%d statements remembered after one passed three times, want 1", n)
	}
	// The same text, but "a" spelled as text rather than as a name: the
	// lex-back refuses it, remembered or not.
	w := &Writer{d: d, shared: sh}
	w.S(`SELECT "a" FROM `)
	w.Ident("t")
	w.S(" WHERE ", w.String("x"), " = ", w.Number("1"))
	w.End()
	if w.err == nil || !strings.Contains(w.err.Error(), `the quoted name "a" was not written as one`) {
		t.Fatalf("a name written as text, the same bytes as a statement that passed: %v", w.err)
	}
	// A dialect that is not a pointer is never remembered.
	if passedFor(pgValue{&pg{}}) != nil {
		t.Fatalf("a dialect value was remembered")
	}
}

// pgValue is a dialect that is a value, not a pointer.
type pgValue struct{ *pg }

func (pgValue) Name() Name { return "value" }
