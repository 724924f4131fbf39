package sqllex

import (
	"sort"
	"strings"
)

// Fact is something about an engine that is true, false, or that this
// package could not verify; text that depends on an Unknown fact is
// refused.
type Fact int8

const (
	Unknown Fact = iota
	No
	Yes
)

// Dollar is how an engine reads "$...$" quoting.
type Dollar int8

const (
	NoDollar   Dollar = iota
	DollarTags        // $$...$$ and $tag$...$tag$ (PostgreSQL, DuckDB)
	DollarBare        // $$...$$ only (Snowflake)
)

// Backtick is how an engine reads `...`.
type Backtick int8

const (
	NoBacktick      Backtick = iota // an operator character, or unknown
	BacktickDoubled                 // a quoted name, `` for a backtick (MySQL, Spark, SQLite)
	BacktickEscaped                 // a quoted name with backslash escapes, one line (BigQuery)
)

// Raw is how an engine reads a prefix before a quote.
type Raw int8

const (
	NoRaw       Raw = iota
	RawPlain        // r'...': no escapes, ends at the first quote (Spark)
	RawPrefixes     // r, b, rb, br: an escaped quote does not end it, a raw one keeps its escapes (BigQuery)
)

// Params is the set of parameter markers an engine reads.
type Params uint8

const (
	ParamQuestion   Params = 1 << iota // ?
	ParamNumbered                      // ?NNN (SQLite)
	ParamDollar                        // $1
	ParamColon                         // :name
	ParamAt                            // @name, @@name
	ParamDollarName                    // $name (SQLite, DuckDB; Snowflake session variables)
)

// Rules are one engine's lexical rules. The zero value of a field is the
// standard SQL reading.
type Rules struct {
	Name string

	// DashSpace: "--" starts a comment only before a space, a control
	// character or the end of the input; otherwise it is two minus signs.
	DashSpace bool
	// Hash: "#" starts a line comment.
	Hash bool
	// SlashSlash: "//" starts a line comment.
	SlashSlash bool
	// CRLineEnd: a carriage return alone ends a line comment (all engines
	// end one at "\n").
	CRLineEnd Fact
	// Continued: a backslash right before "\n" continues a line comment.
	Continued bool
	// Nested: "/*" inside a block comment opens another one.
	Nested Fact
	// Executable: "/*! ... */" and "/*M! ... */" are code.
	Executable bool
	// Hints: "/*+ ... */" is code.
	Hints bool
	// OpenComment: an unclosed "/*" comments out the rest of the input
	// (else it is an error).
	OpenComment bool

	// DoubleQuoted: "..." is a string rather than a name.
	DoubleQuoted bool
	// Backslash: a backslash escapes the next character in a string.
	Backslash bool
	// NoDoubledQuotes: a doubled quote ends the string (and starts
	// another) instead of standing for one quote.
	NoDoubledQuotes bool
	// NoNewlineInQuotes: a single-quoted string or a quoted name cannot
	// hold a line end.
	NoNewlineInQuotes bool
	// EStrings: E'...' is a string with backslash escapes.
	EStrings bool
	Dollar   Dollar
	// Triple: '''...''' and """...""" are strings.
	Triple   bool
	Raw      Raw
	Backtick Backtick
	// Brackets: [...] is a quoted name.
	Brackets bool
	// DollarInNames: "$" continues an unquoted name.
	DollarInNames bool
	// PathNames: a name followed by "://" is a path token running on
	// (Spark); refused.
	PathNames bool
	Params    Params
	// OpChars are the engine's operator characters beyond + - * / % < > =
	// ! | & ^ ~; any other character outside quotes and comments is
	// refused.
	OpChars string

	// OneLineLiterals refuses control characters, line separators and
	// every other character that is not printable (bidirectional controls,
	// zero-width characters) in strings and quoted names (incrc's quality
	// checks).
	OneLineLiterals bool
	// Portable marks incrc's portable reading: its refusals name the
	// engines that disagree.
	Portable bool
	// PlainBackticks refuses a backtick-quoted name holding anything but a
	// plain name: engines without backtick quoting read it as code.
	PlainBackticks bool
	// GuardBrackets refuses "[...]" holding quotes, comments or ";":
	// SQLite reads it as a quoted name, the others as code.
	GuardBrackets bool
}

// The engines' rules. Each fact says how it was checked: "engine" facts
// are checked against the real engine by runner/hostile_test.go (DuckDB
// 1.4 through duckdb-go, SQLite through modernc.org/sqlite, PostgreSQL 15,
// MariaDB 10.11); the others come from the engine's grammar or manual, and
// what neither says is Unknown.
var (
	// Postgres is PostgreSQL 15 with its defaults. Engine: "--" always
	// starts a comment, which a lone \r ends; comments nest; E'...' strings
	// and $tag$ quoting; '$' continues a name; a backslash in '...' is
	// itself (standard_conforming_strings on: the strict reading refuses
	// backslashes, whose meaning that setting changes).
	Postgres = &Rules{Name: "postgres", CRLineEnd: Yes, Nested: Yes, EStrings: true, Dollar: DollarTags,
		DollarInNames: true, Params: ParamDollar, OpChars: "~!@#^&|`?"}

	// DuckDB is DuckDB 1.4 (a PostgreSQL-derived scanner). Engine: as
	// PostgreSQL for comments (nested, \r ends a line comment), E'...' and
	// $tag$ strings, '$' in names; '#' and backticks are syntax errors.
	DuckDB = &Rules{Name: "duckdb", CRLineEnd: Yes, Nested: Yes, EStrings: true, Dollar: DollarTags,
		DollarInNames: true, Params: ParamQuestion | ParamDollar | ParamDollarName}

	// SQLite is SQLite 3. Engine: only \n ends a "--" comment; comments do
	// not nest, and an unclosed one runs to the end of the input; [name]
	// and `name` are quoted names; '$' continues a name. Manual
	// (lang_comment): "Comments do not nest".
	SQLite = &Rules{Name: "sqlite", CRLineEnd: No, Nested: No, OpenComment: true, Backtick: BacktickDoubled,
		Brackets: true, DollarInNames: true, Params: ParamQuestion | ParamNumbered | ParamColon | ParamAt | ParamDollarName}

	// MySQL is MariaDB 10.11 and MySQL 8 with the default sql_mode.
	// Engine (MariaDB): "--" is a comment only before a space or a control
	// character (--x is minus minus x); '#' comments; only \n ends a line
	// comment; comments do not nest; /*! */ and /*M! */ are executed;
	// "..." is a string; backslash escapes. MySQL manual (Comments):
	// "Nested comments are not supported"; /*+ */ is an optimizer hint on
	// MySQL 8 and a comment on MariaDB 10.11 (engine), so Hints is off:
	// either way it ends at */. ANSI_QUOTES and NO_BACKSLASH_ESCAPES change
	// what "..." and '\' mean; the strict reading refuses both.
	MySQL = &Rules{Name: "mysql", DashSpace: true, Hash: true, CRLineEnd: No, Nested: No, Executable: true,
		DoubleQuoted: true, Backslash: true, Backtick: BacktickDoubled, DollarInNames: true, Params: ParamQuestion | ParamAt}

	// BigQuery is GoogleSQL, as its open-source tokenizer
	// (google/zetasql, parser/flex_tokenizer.l) reads it: "--" and "#"
	// comments end at \r or \n; /* */ ends at the first */ (no nesting);
	// '...' and "..." strings with backslash escapes and no raw line end;
	// '''...''' and """...""" strings; r, b, rb, br prefixes (an escaped
	// quote does not end a raw string either); `name` with backslash
	// escapes, on one line.
	BigQuery = &Rules{Name: "bigquery", Hash: true, CRLineEnd: Yes, Nested: No, DoubleQuoted: true, Backslash: true,
		NoDoubledQuotes: true, NoNewlineInQuotes: true, Triple: true, Raw: RawPrefixes, Backtick: BacktickEscaped,
		Params: ParamQuestion | ParamAt}

	// Spark is Spark SQL, as its grammar (apache/spark, SqlBaseLexer.g4)
	// reads it: "--" comments end at \r or \n but continue after a
	// backslash before \n; bracketed comments nest; /*+ starts a hint;
	// '...' and "..." strings with backslash escapes, adjacent literals
	// (a doubled quote) concatenated; r'...' raw strings end at the first
	// quote; `name` with `` for a backtick; a name followed by :// is a
	// path.
	Spark = &Rules{Name: "spark", CRLineEnd: Yes, Continued: true, Nested: Yes, Hints: true, DoubleQuoted: true,
		Backslash: true, NoDoubledQuotes: true, Raw: RawPlain, Backtick: BacktickDoubled, PathNames: true,
		Params: ParamQuestion | ParamColon}

	// Trino is Trino, as its grammar (trinodb/trino, SqlBase.g4) reads it:
	// "--" comments end at \r or \n; /* */ ends at the first */; '...'
	// with a doubled quote and no escapes; "name"; `name` is a token (the
	// parser rejects it).
	Trino = &Rules{Name: "trino", CRLineEnd: Yes, Nested: No, Backtick: BacktickDoubled, Params: ParamQuestion}

	// Snowflake is Snowflake, from its manual: "--" and "//" comments;
	// '...' with backslash escapes or a doubled quote; $$...$$ strings;
	// '$' in names. Whether comments nest and whether \r ends a line
	// comment is not known here.
	Snowflake = &Rules{Name: "snowflake", SlashSlash: true, Backslash: true, Dollar: DollarBare, DollarInNames: true,
		Params: ParamQuestion | ParamColon}

	// Redshift is Amazon Redshift, from its manual: QUOTE_LITERAL doubles
	// backslashes, so a backslash escapes in '...'. Its PostgreSQL 8
	// ancestry suggests more ($$ bodies, nesting) that is not verified
	// here: '$', nesting and \r in comments are refused.
	Redshift = &Rules{Name: "redshift", Backslash: true, Params: ParamDollar, OpChars: "~!@#^&|`?"}
)

// Engines are the rules of every engine incrc compiles for.
var Engines = []*Rules{Postgres, DuckDB, SQLite, MySQL, BigQuery, Spark, Trino, Snowflake, Redshift}

// Portable is how incrc reads a spec's source.query before it knows the
// engine: standard quoting ('...' with a doubled quote for a quote, "..."
// and `...` names), "--" and /* */ comments, every parameter marker (to
// refuse them), and a refusal for everything engines read differently
// (see the package comment). Facts engines disagree on are Unknown, so
// text depending on them is refused even by LexExact.
var Portable = &Rules{Name: "portable", Backtick: BacktickDoubled, Params: ParamQuestion | ParamDollar | ParamColon | ParamAt,
	Portable: true, PlainBackticks: true, GuardBrackets: true}

// Check is how incrc reads its own quality-check and measure expressions:
// as Portable, but every comment form is a comment (which the parser
// refuses), and literals are one line of printable text.
var Check = &Rules{Name: "check", Hash: true, SlashSlash: true, Backtick: BacktickDoubled,
	Params: ParamQuestion | ParamDollar | ParamColon | ParamAt | ParamDollarName, OneLineLiterals: true}

// engineFunctions are functions (table functions most of all) that some
// engines have and the others lack, by lower-case name: a source query
// calling one runs on an engine that has it, or fails there at run time.
// Compiling for a dialect refuses the call instead (see OnlyIn). Each
// entry names every engine incrc executes that has it (DuckDB 1.4,
// PostgreSQL 15, MariaDB 10.11, SQLite 3), from their manuals; the
// engines incrc only compiles for are not listed, so a call is refused
// there too: incrc cannot say they have it.
var engineFunctions = map[string][]string{
	// DuckDB's readers of files and its list and struct builders.
	"read_csv":         {"duckdb"},
	"read_csv_auto":    {"duckdb"},
	"read_parquet":     {"duckdb"},
	"parquet_scan":     {"duckdb"},
	"read_json":        {"duckdb"},
	"read_json_auto":   {"duckdb"},
	"read_ndjson":      {"duckdb"},
	"read_ndjson_auto": {"duckdb"},
	"read_text":        {"duckdb"},
	"read_blob":        {"duckdb"},
	"list_value":       {"duckdb"},
	"struct_pack":      {"duckdb"},
	"epoch_ms":         {"duckdb"},
	// PostgreSQL's (and DuckDB's) set-returning series.
	"generate_series": {"postgres", "duckdb"},
	// PostgreSQL's jsonb set-returning functions and text search.
	"jsonb_array_elements": {"postgres"},
	"jsonb_each":           {"postgres"},
	"jsonb_object_keys":    {"postgres"},
	"to_tsvector":          {"postgres"},
	// MariaDB's and MySQL's.
	"json_table":     {"mysql"},
	"str_to_date":    {"mysql"},
	"date_format":    {"mysql"},
	"unix_timestamp": {"mysql"},
	"from_unixtime":  {"mysql"},
	// SQLite's.
	"julianday": {"sqlite"},
}

// OnlyIn reports, for a function name, the engines that have it when not
// every engine does (nil for a function this table does not list).
func OnlyIn(name string) []string {
	return append([]string(nil), engineFunctions[strings.ToLower(name)]...)
}

// HasFunction reports whether the engine of rules r has the function
// name: false only for a function the table lists without r's engine.
func (r *Rules) HasFunction(name string) bool {
	engines, listed := engineFunctions[strings.ToLower(name)]
	if !listed {
		return true
	}
	for _, e := range engines {
		if e == r.Name {
			return true
		}
	}
	return false
}

// EngineFunctions lists the functions of the table, sorted: the engines'
// tests check each against the engines incrc executes.
func EngineFunctions() []string {
	out := make([]string, 0, len(engineFunctions))
	for name := range engineFunctions {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
