// Package dialects spells the compiler's plans in each engine's SQL.
//
// The algorithm of every statement is written once, here, in Render: a
// dialect supplies small hooks (quoting, parameter markers, type names,
// NULL-safe equality) and, through the optional OpRenderer interface, its
// own spelling of the few operations engines disagree on (merge, "insert if
// absent", temporary tables). One package per engine lives below this one;
// package dialects/all looks them up by name.
//
// Dialects never open a database: rendering is pure, so golden files
// regenerate without one.
package dialects

import (
	"fmt"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler/sqllex"
)

// Name is a dialect's name as written on the command line and in specs.
type Name string

// Dialect is what an engine must supply.
type Dialect interface {
	Name() Name
	Caps() Caps
	// QuoteIdent quotes one identifier part (no dots).
	QuoteIdent(part string) string
	// Placeholder spells the marker of the n-th distinct parameter (1-based).
	Placeholder(n int) string
	// ColumnType maps a portable type to the engine's.
	ColumnType(t ir.Type) (string, error)
	// NullSafeEqual writes a comparison of a and b (each written by its
	// function) that is true when both sides are NULL.
	NullSafeEqual(w *Writer, a, b func())
	// BindTime turns a point in time into the value bound for a parameter
	// of a date or timestamp column of this engine.
	BindTime(t time.Time, kind ir.TypeKind) any
	// Lexer is how the engine splits SQL into tokens: every statement is
	// lexed back with it, and the source query is read with it.
	Lexer() *sqllex.Rules
}

// Caps are the facts about an engine that change what the runner does.
type Caps struct {
	// Transactions: the write, the run record and the watermark advance
	// commit together. Without it the write is idempotent and the advance
	// follows it.
	Transactions bool
	// ReusesParams: a marker may appear several times for one parameter
	// ($1 ... $1); otherwise every occurrence is bound on its own.
	ReusesParams bool
	// Heartbeat: a second session may update the state row while the
	// run's transaction is open (a server engine with row locks). The
	// runner then renews the lease from another connection during long
	// statements; otherwise (DuckDB's optimistic concurrency would abort
	// the run's own advance, SQLite has one writer) it renews between
	// steps only.
	Heartbeat bool
	// GroupState: each commit costs a write to the engine's log (DuckDB's
	// WAL), so the runner groups a run's bookkeeping: the setup DDL, the
	// lease and the run's start share one transaction, and after the
	// write the cleanup, the run's duration and the lease's release share
	// another. Elsewhere each statement commits on its own.
	GroupState bool
	// Note is said in each compiled file's header: what the user must know
	// about atomicity on this engine.
	Note string
	// FoldsNames: the engine compares table names without case, quoted or
	// not (DuckDB, SQLite, Redshift by default): HX.DST and hx.dst are one
	// table. Elsewhere a quoted name keeps its case, and they are two.
	FoldsNames bool
	// DefaultSchema is the schema an unqualified name means unless the
	// connection says otherwise (DuckDB main, PostgreSQL public): src and
	// main.src are one table. Empty when only the connection knows it
	// (MariaDB's current database).
	DefaultSchema string
	// SharedStage: the stage is a real table every session sees, one name
	// per pipeline (the engine has no temporary tables), so two sessions
	// of one pipeline would drop, fill and read each other's rows: a
	// backfill's partitions are rebuilt one at a time there.
	SharedStage bool
}

// OpRenderer is implemented by dialects that spell some operations their
// own way. RenderOp returns handled=false to take the shared spelling.
type OpRenderer interface {
	RenderOp(w *Writer, op ir.Op) (handled bool, err error)
}

// CountingMerger is implemented by dialects that count a merge's rows
// (ir.MergeRows with Count or Tally) their own way: in the write
// itself, one statement that writes and returns the counts, or in parts
// marked as read (Writer.EndReading) around the merge. Others get the
// shared spelling: the count (CountMatched) first, then their merge.
type CountingMerger interface {
	CountingMerge(w *Writer, op ir.MergeRows) (handled bool)
}

// Unsupported is the error a dialect returns for an operation it cannot
// spell (yet): it names the dialect, never emits wrong SQL.
func Unsupported(d Dialect, what string) error {
	return fmt.Errorf("%s: %s is not supported yet", d.Name(), what)
}

// StringQuoter is implemented by dialects whose string literals are not
// the standard ones (StringLit): where a backslash escapes (MySQL,
// Snowflake, Redshift: DoubledString; PostgreSQL, where a setting decides)
// or where a doubled quote is two literals (BigQuery, Spark:
// BackslashString). It spells the string s as a literal.
type StringQuoter interface {
	StringLit(s string) string
}

// TableNamer is implemented by dialects that name qualified tables their
// own way (SQLite, which has no schemas): TableParts are the identifier
// parts the Writer quotes, TableName the spelled name.
type TableNamer interface {
	TableName(t ir.Table) string
	TableParts(t ir.Table) []string
}

// IdentFolder is implemented by dialects that quote a name in another
// case than the spec writes it (Snowflake quotes upper case): FoldIdent is
// the name the quoted identifier holds.
type IdentFolder interface {
	FoldIdent(name string) string
}

// TimeTruncer is implemented by dialects that can spell the start of the
// hour, day or month a date or timestamp falls in (partitions other than
// days of a date column need it): TruncTime writes it around expr.
// Literals it writes go through w.String.
type TimeTruncer interface {
	TruncTime(w *Writer, expr func(), granularity string, t ir.Type)
}

// ExactTexter is implemented by dialects whose text comparisons follow a
// collation that may fold case or ignore trailing spaces (MariaDB, MySQL):
// ExactText writes expr so that it compares byte for byte.
type ExactTexter interface {
	ExactText(w *Writer, expr func())
}

// NullsLaster is implemented by dialects without ORDER BY ... NULLS LAST
// (MariaDB, MySQL), which spell it their own way.
type NullsLaster interface {
	NullsLast(w *Writer, expr func(), desc bool)
}

// ParamTyper is implemented by dialects whose drivers type a bound time
// value in a way the column it is compared with does not take (BigQuery's
// client sends TIMESTAMP, which does not coerce to DATETIME; Trino's, a
// timestamp with time zone; Snowflake's binds TIMESTAMP_NTZ and shifts it
// by the session's zone): TypedParam writes the marker of a parameter
// that stands for a value of type t (a watermark, partition or reconcile
// bound) with that type, so the SQL, not the driver, says what it is.
type ParamTyper interface {
	TypedParam(w *Writer, marker func(), t ir.Type)
}

// JSONOrderer is implemented by dialects whose json type has no order
// (BigQuery): OrderJSON writes a json column as a value an ORDER BY takes,
// its text form, for the tie-breaks of a dedupe.
type JSONOrderer interface {
	OrderJSON(w *Writer, expr func())
}

// ColumnInfo is what a database driver says of a column it read: the
// engine's type name and, where the driver knows them, the precision and
// scale of a decimal and the length of a string.
type ColumnInfo struct {
	Name             string
	TypeName         string
	Precision, Scale int64
	HasDecimal       bool
	Length           int64
	HasLength        bool
}

// SourceTyper is implemented by dialects that can read a driver's column
// types back into portable types, so that a source column narrower than
// nothing but its declaration is caught before a write rounds it (see
// ir.Fits). ok is false for a type it cannot place: that column is
// not checked.
type SourceTyper interface {
	SourceType(c ColumnInfo) (t ir.Type, ok bool)
}
