package sqllex

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

var short = map[Kind]string{Word: "w", Quoted: "q", String: "s", Number: "n", Op: "o", Punct: "p", Param: "$", Comment: "c"}

// summary spells tokens as kind:value, space separated (comments by text).
func summary(toks []Token) string {
	var out []string
	for _, t := range toks {
		if t.Kind == EOF {
			continue
		}
		v := t.Value
		if t.Kind == Comment {
			v = t.Text
		}
		out = append(out, short[t.Kind]+":"+v)
	}
	return strings.Join(out, " ")
}

// TestLexExact is each engine's reading of the constructs engines read
// differently: where comments end, whether they nest, which quotes escape.
func TestLexExact(t *testing.T) {
	tests := []struct {
		r    *Rules
		src  string
		want string // the summary, or "error: part of the message"
	}{
		{Postgres, "SELECT 10 --1\n", "w:SELECT n:10 c:--1"},
		{MySQL, "SELECT 10 --1\n", "w:SELECT n:10 o:- o:- n:1"},
		{MySQL, "SELECT 10 --\t1\n", "w:SELECT n:10 c:--\t1"},
		{MySQL, "SELECT 10 --", "w:SELECT n:10 c:--"},
		{Postgres, "1 -- c\r+ 10", "n:1 c:-- c o:+ n:10"},
		{SQLite, "1 -- c\r+ 10", "n:1 c:-- c\r+ 10"},
		{MySQL, "1 -- c\r+ 10", "n:1 c:-- c\r+ 10"},
		{Postgres, "1 -- c\r\n+ 10", "n:1 c:-- c o:+ n:10"},
		{Spark, "1 -- c\\\n+ 10\n- 2", "n:1 c:-- c\\\n+ 10 o:- n:2"},
		{Trino, "1 -- c\\\n+ 10", "n:1 c:-- c\\ o:+ n:10"},
		{Postgres, "1 /* a /* b */ c */ + 10", "n:1 c:/* a /* b */ c */ o:+ n:10"},
		{DuckDB, "1 /* a /* b */ c */ + 10", "n:1 c:/* a /* b */ c */ o:+ n:10"},
		{Spark, "1 /* a /* b */ c */ + 10", "n:1 c:/* a /* b */ c */ o:+ n:10"},
		{SQLite, "1 /* a /* b */ + 10", "n:1 c:/* a /* b */ o:+ n:10"},
		{MySQL, "1 /* a /* b */ + 10", "n:1 c:/* a /* b */ o:+ n:10"},
		{Redshift, "1 /* a /* b */ c */", "error: whether comments nest is not known"},
		{Redshift, "1 -- a\rb", "error: whether a carriage return ends a comment is not known"},
		{SQLite, "1 /* open", "n:1 c:/* open"},
		{Postgres, "1 /* open", "error: unterminated /* comment"},
		{MySQL, "1 /*! + 10 */ + 100", "n:1 o:+ n:10 o:+ n:100"},
		{MySQL, "1 /*M!100100 + 10 */", "n:1 o:+ n:10"},
		{MySQL, "1 /*+ hint */", "n:1 c:/*+ hint */"},
		{Postgres, "1 /*! + 10 */", "n:1 c:/*! + 10 */"},
		{Spark, "SELECT /*+ BROADCAST(t) */ 1", "w:SELECT o:/*+ w:BROADCAST p:( w:t p:) o:* o:/ n:1"},
		{MySQL, "1 # c\n+ 10", "n:1 c:# c o:+ n:10"},
		{BigQuery, "1 # c\r+ 10", "n:1 c:# c o:+ n:10"},
		{Postgres, "5 # 3", "n:5 o:# n:3"},
		{DuckDB, "5 # 3", "error: unexpected character '#'"},
		{Snowflake, "1 // c\n+ 10", "n:1 c:// c o:+ n:10"},
		{Postgres, "'a\\' || 'b'", `s:a\ o:|| s:b`},
		{MySQL, "'a\\'' || 'b'", "s:a' o:|| s:b"},
		{MySQL, `"a""b" 'c''d'`, `s:a"b s:c'd`},
		{Postgres, `"a""b"`, `q:a"b`},
		{BigQuery, `'a''b'`, "s:a s:b"},
		{BigQuery, `'it\'s' "x\"y"`, `s:it's s:x"y`},
		{BigQuery, `'''a'b'''`, "s:a'b"},
		{BigQuery, `r'a\'b'`, `s:a\'b`},
		{BigQuery, "'a\nb'", "error: unterminated string literal"},
		{BigQuery, "`a\\`b`", "q:a`b"},
		{Spark, `R'a\' 'b'`, `s:a\ s:b`},
		{Spark, `'a''b'`, "s:a s:b"},
		{Spark, "s3://bucket/x", "error: spark reads s3:// and what follows as one name"},
		{Postgres, "E'a\\'b' e'c'", "s:a'b s:c"},
		{Postgres, "$t$a$$b$t$ $$x$$ $1", "s:a$$b s:x $:$1"},
		{Postgres, "a$$b$$", "w:a$$b$$"},
		{DuckDB, "$t$a$t$ $1 ? $name", "s:a $:$1 $:? $:$name"},
		{Snowflake, "$$a'b$$ a$b", "s:a'b w:a$b"},
		{Snowflake, "$1", "error: snowflake: unexpected character '$'"},
		{Trino, "$$a$$", "error: trino: unexpected character '$'"},
		{SQLite, "[a b] `c` \"d\" ?1 :x @y $z", "q:a b q:c q:d $:?1 $::x $:@y $:$z"},
		{Postgres, "[1]", "p:[ n:1 p:]"},
		{Trino, "`a`", "q:a"},
		{Snowflake, "`a`", "error: unexpected character '`'"},
		{Postgres, "a::int <> b", "w:a o::: w:int o:<> w:b"},
		{MySQL, "@a @@b ?", "$:@a $:@@b $:?"},
		{Postgres, "1e5 .5 1.5e-3", "n:1e5 n:.5 n:1.5e-3"},
		{Postgres, "x ≥ 1", "error: unexpected character '≥'"},
		{Postgres, "'a\xffb'", "error: invalid UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.r.Name+"/"+tt.src, func(t *testing.T) {
			toks, err := LexExact(tt.r, tt.src)
			if want, ok := strings.CutPrefix(tt.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %v (%s), want an error saying %q", err, summary(toks), want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(toks); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			for i, tok := range toks[:len(toks)-1] {
				if tt.src[tok.Off:tok.End()] != tok.Text || i > 0 && tok.Off < toks[i-1].End() {
					t.Errorf("token %d %+v is not a slice of the input in order", i, tok)
				}
			}
		})
	}
}

// strictRefusals are read differently by engines, so the strict reading
// refuses each of them with every engine's rules, and with incrc's own.
var strictRefusals = []struct{ src, msg string }{
	{"SELECT 10 --1", "'--' directly followed by '1'"},
	{"SELECT 1 /* a /* b */ */", "a comment inside a comment"},
	{"SELECT 1 /*! , 2 */", "MySQL executes the text of /*! ... */ comments"},
	{"SELECT 1 /*M! , 2 */", "MySQL executes the text of /*! ... */ comments"},
	{"SELECT /*+ hint */ 1", "optimizer hints"},
	{"SELECT 1 -- a\r, 2", "a carriage return alone ends a comment"},
	{"SELECT 1 -- a \\\n, 2", "a backslash at the end of a comment line"},
	{"SELECT 1 -- a\v, 2", "line separator '\\v' inside a comment"},
	{"SELECT 1 -- a\u2028, 2", "line separator '\\u2028' inside a comment"},
	{"SELECT 1 /* a", "unterminated /* comment"},
	{`SELECT 'it\'s'`, "backslash in a string literal"},
	{"SELECT 'a\x00b'", "control character"},
	{"SELECT 1x", "malformed number"},
	{"SELECT 2 */ 1", "'*/' outside a comment"},
}

func TestLexStrictRefuses(t *testing.T) {
	for _, r := range append([]*Rules{Portable, Check}, Engines...) {
		for _, tt := range strictRefusals {
			t.Run(r.Name+"/"+tt.src, func(t *testing.T) {
				_, err := Lex(r, tt.src)
				var le *Error
				if !errors.As(err, &le) || !strings.Contains(le.Msg, tt.msg) {
					t.Fatalf("got %v, want an error saying %q", err, tt.msg)
				}
			})
		}
	}
}

// TestPortable is the reading validation applies to source.query: what it
// accepts, and what it refuses because engines disagree.
func TestPortable(t *testing.T) {
	tests := []struct {
		src  string
		want string // summary, or "error: part of the message"
	}{
		{"SELECT a -- the a\nFROM t /* why */ WHERE b = 'it''s'", "w:SELECT w:a c:-- the a w:FROM w:t c:/* why */ w:WHERE w:b o:= s:it's"},
		{"SELECT `proj-1.ds.t` AS x", "w:SELECT q:proj-1.ds.t w:AS w:x"},
		{"SELECT a[1] FROM t", "w:SELECT w:a p:[ n:1 p:] w:FROM w:t"},
		{"SELECT \"x\"\"y\"", `w:SELECT q:x"y`},
		{"SELECT 1 # 2", "error: '#' starts a comment on MySQL and BigQuery"},
		{"SELECT 1 // 2", "error: '//' starts a comment on Snowflake"},
		{"SELECT $$a$$", "error: '$' starts a dollar-quoted string"},
		{"SELECT a$b FROM t", "error: '$' starts a dollar-quoted string"},
		{"SELECT `a;b`", "error: backtick-quoted name"},
		{"SELECT `a--b`", "error: backtick-quoted name"},
		{"SELECT [']; DROP TABLE t; --']", "error: SQLite reads [...] as a quoted name"},
		{"SELECT $1, ?, :a, @b", "w:SELECT $:$1 p:, $:? p:, $::a p:, $:@b"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			toks, err := Lex(Portable, tt.src)
			if want, ok := strings.CutPrefix(tt.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("got %v (%s), want an error saying %q", err, summary(toks), want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := summary(toks); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// structure is what decides a statement's reach: where its comments are,
// and where its ';', parameters and parentheses are.
func structure(toks []Token) string {
	var b strings.Builder
	for _, t := range toks {
		switch {
		case t.Kind == Comment, t.Kind == Param, t.Kind == Punct && strings.Contains(";()", t.Text):
			fmt.Fprintf(&b, "%s@%d-%d ", t.Kind, t.Off, t.End())
		}
	}
	return b.String()
}

// agree checks the promise of the Portable reading: an engine whose own
// strict reading accepts a query Portable accepts without parameters
// finds the comments, the ';', the parameters and the parentheses where
// Portable does.
func agree(t *testing.T, src string) {
	t.Helper()
	want, err := Lex(Portable, src)
	if err != nil {
		return
	}
	for _, tok := range want {
		if tok.Kind == Param {
			return // refused by validation, whatever an engine reads
		}
	}
	for _, r := range Engines {
		got, err := Lex(r, src)
		if err != nil {
			continue // refused at compile time for that engine
		}
		if structure(got) != structure(want) {
			t.Errorf("%s reads %q as\n  %s\nportable as\n  %s", r.Name, src, structure(got), structure(want))
		}
	}
}

func TestPortableAgrees(t *testing.T) {
	for _, src := range portableSeeds {
		agree(t, src)
	}
}

var portableSeeds = []string{
	"SELECT a -- c ; d\nFROM t",
	"SELECT '--', \"/*\", `x` FROM t /* ; */",
	"SELECT '''a''' , 'a''b' FROM t",
	"SELECT E'ab' , r'x', X'00' FROM t",
	"SELECT a[1] FROM t WHERE b IN (1, 2)",
	"SELECT \"a;b\" FROM t",
	"SELECT 1 -- x\r\nFROM t",
	"SELECT ?, $1 FROM t",
}

// FuzzPortable looks for text that Portable accepts and an engine reads
// with comments, ';', parameters or parentheses elsewhere.
func FuzzPortable(f *testing.F) {
	for _, s := range portableSeeds {
		f.Add(s)
	}
	for _, tt := range strictRefusals {
		f.Add(tt.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		agree(t, src)
	})
}

// TestMultiCharOpsSecond: every operator of more than one character has a
// second character op looks for before it tries them.
func TestMultiCharOpsSecond(t *testing.T) {
	for _, op := range multiCharOps {
		if !strings.ContainsRune("=><:|", rune(op[1])) {
			t.Errorf("%q: its second character is not one op looks for", op)
		}
		toks, err := LexExact(Postgres, "a "+op+" b")
		if err != nil || len(toks) != 4 || toks[1].Kind != Op || toks[1].Text != op {
			t.Errorf("%q: %v %v", op, toks, err)
		}
	}
}
