package dialects

import (
	"github.com/incrc/incrc/compiler/ir"
)

// Writes on lake tables (Delta Lake and Iceberg through Spark) whose
// engine does not say how many rows they changed: open-source Delta's
// INSERT returns no count (Databricks' does), and on Spark an Iceberg
// table's INSERT, UPDATE, DELETE and MERGE return no rows at all
// (DataSource V2 writes have no output). A count the runner reads is then
// obtained in the same statement by parts that read it (Part.Reads), and
// the runner never takes a missing count for 0.

// CountedWrite spells a write as three parts: the table's rows counted,
// the write (spell), the rows counted again, signed so that the two
// reading parts add up to the rows the write added (removes: the rows it
// removed). It is exact while no one else writes the table, which a run's
// lease ensures for the tables it writes (a stage, its target, its
// quarantine).
func CountedWrite(w *Writer, t ir.Table, removes bool, spell func()) {
	before, after := "-", ""
	if removes {
		before, after = "", "-"
	}
	w.S("SELECT ", before, "COUNT(*) FROM ")
	w.Table(t)
	w.EndReading()
	spell()
	w.End()
	w.S("SELECT ", after, "COUNT(*) FROM ")
	w.Table(t)
	w.EndReading()
}

// ReadBackUpdate spells a compare-and-set UPDATE (the state row's lease
// and watermark) whose engine reports no count as the UPDATE and a read of
// the row back: the rows that now hold every value the UPDATE set, among
// those the conditions on the columns it did not set select. One row read
// back means the row holds what this run wrote: its lease (owners are
// unique per run) or its advance (which also requires its lease). An
// UPDATE that sets a column from another one cannot be read back: it is
// refused (Unsupported), never guessed.
func ReadBackUpdate(w *Writer, op ir.Update, spell func()) {
	set := map[string]bool{}
	for _, a := range op.Set {
		set[a.Column] = true
		if refersTo(a.Value, nil) {
			w.Fail(Unsupported(w.d, "reading back an UPDATE that sets "+a.Column+" from a column"))
			return
		}
	}
	spell()
	w.End()
	w.S("SELECT COUNT(*) FROM ")
	w.Table(op.Table)
	w.S("\nWHERE ")
	first := true
	and := func() {
		if !first {
			w.S("\n  AND ")
		}
		first = false
	}
	for _, c := range conjuncts(op.Where) {
		if refersTo(c, set) {
			continue
		}
		and()
		w.S("(")
		Expr(w, "", c)
		w.S(")")
	}
	for _, a := range op.Set {
		and()
		if isNull(a.Value) {
			w.Col("", a.Column)
			w.S(" IS NULL")
			continue
		}
		w.d.NullSafeEqual(w, func() { w.Col("", a.Column) }, func() { Expr(w, "", a.Value) })
	}
	w.EndReading()
}

// conjuncts splits an expression at its top-level ANDs.
func conjuncts(e ir.Expr) []ir.Expr {
	if b, ok := e.(ir.Binary); ok && b.Op == "AND" {
		return append(conjuncts(b.L), conjuncts(b.R)...)
	}
	if e == nil {
		return nil
	}
	return []ir.Expr{e}
}

func isNull(e ir.Expr) bool {
	l, ok := e.(ir.Lit)
	return ok && l.Text == "NULL"
}

// refersTo: e names a column of cols (nil: any column).
func refersTo(e ir.Expr, cols map[string]bool) bool {
	for _, c := range ir.Columns(e) {
		if cols == nil || cols[c] {
			return true
		}
	}
	return false
}

// Shared spells op the shared way, whatever the dialect's own spelling:
// for a dialect that wraps the shared statement (CountedWrite).
func Shared(w *Writer, op ir.Op) { renderOp(w, op) }

// ConflictTeller is implemented by dialects whose engines commit
// optimistically (Delta Lake, Iceberg): Conflict reports an error that
// says the statement lost a commit conflict with a concurrent one and
// committed nothing.
type ConflictTeller interface {
	Conflict(err error) bool
}
