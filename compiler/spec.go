package compiler

import (
	"github.com/incrc/incrc/compiler/ir"
)

// Spec is one pipeline file, as written. Every field that came from the
// file keeps its position so that validation can point at it.
type Spec struct {
	File string // the path the spec was read from, as given
	Hash string // hex sha256 of the file's bytes: changes when the spec does

	Pipeline    ir.String
	Description ir.String
	Source      Source
	Target      Target
	Columns     []Column
	Strategy    ir.String
	UniqueKey   []ir.String
	Watermark   *Watermark
	DedupeBy    ir.String
	Partition   *Partition
	Quality     *Quality
	Reconcile   *Reconcile
	CDC         *CDC
	SCD2        *SCD2
	MergeOpts   *MergeOpts
	Lookups     []Lookup
	Silence     []Silenced // warnings the spec silences, with the reason

	Pos ir.Pos // the document's top-level mapping

	// upstream: the pipelines of the project whose target this one reads
	// (graph.go); set by the project's check.
	upstream []ir.Upstream

	// reported holds the keys ("source", "watermark.start") whose value
	// Parse found of the wrong shape or empty, or that it found misspelled
	// ("did you mean"): Validate does not report them again as missing.
	reported map[string]bool
}

type Source struct {
	Table ir.String // schema.table, or empty when Query is set
	Query ir.String // a SELECT whose rows are filtered by the window outside it
	// Connection names a database other than the target's (incrc.yaml's
	// connections, or --source NAME=URL); Dialect is its dialect when the
	// URL does not say it at compile time.
	Connection ir.String
	Dialect    ir.String
	// Files is a local glob of files read through the embedded DuckDB
	// reader; Format is parquet, csv or json (default from the extension).
	Files  ir.String
	Format ir.String
	// ByFile is watermark.files ("new"): each run loads the files not
	// loaded before. Parse moves it here when the watermark says nothing
	// else (no column).
	ByFile ir.String
	// Unique is "true" when the spec declares that the source holds one
	// row per unique_key: no run dedupes, and reconcile checks it.
	Unique ir.String
	Pos    ir.Pos
}

// UniqueSource: the spec declares that the source holds one row per key.
func (s *Spec) UniqueSource() bool { return s.Source.Unique.Value == "true" }

type Target struct {
	Table ir.String
	Pos   ir.Pos
}

// Column is one declared column of the source and target.
type Column struct {
	Name     ir.String
	Type     ir.Type
	TypeText ir.String
	// Nullable is false for unique-key columns unless the spec says
	// "nullable: true"; every other column may hold NULL.
	Nullable    bool
	NullableSet bool
}

type Watermark struct {
	Column ir.String
	// Tiebreak is an integer column (a monotonic id) that orders the rows
	// sharing one Column value, and the rows whose Column is NULL.
	Tiebreak ir.String
	Files    ir.String // "new": a files source loads each file once (the bookmark)
	Start    ir.String
	Lookback ir.Duration
	Lag      ir.Duration
	// Batch splits a run's window into windows of this size, each run,
	// advanced and recorded on its own: a duration, or a count of ids.
	Batch ir.Duration
	Pos   ir.Pos
}

type Partition struct {
	Column        ir.String
	Granularity   ir.String
	FinalizeAfter ir.Duration
	// Timezone names the IANA zone whose days and months the partitions
	// are (Europe/Berlin); absent: UTC.
	Timezone ir.String
	Pos      ir.Pos
}

type Quality struct {
	NotNull   []ir.String
	Checks    []ir.String
	OnInvalid ir.String
	Pos       ir.Pos
}

type Reconcile struct {
	By          ir.String
	Granularity ir.String
	Measures    []ir.String
	Pos         ir.Pos
}

// MergeOpts narrows what a merge's update writes: the columns a matched
// row gets (UpdateColumns), or those it keeps (ExcludeColumns). The other
// columns are written when a key is inserted and never again.
type MergeOpts struct {
	UpdateColumns  []ir.String
	ExcludeColumns []ir.String
	Pos            ir.Pos
}

// InsertOnly returns the columns a merge writes when it inserts a key and
// leaves alone when it updates one, in the order of the columns: none
// without a merge block.
func (s *Spec) InsertOnly() []string {
	m := s.MergeOpts
	if m == nil || ir.Strategy(s.Strategy.Value) != ir.Merge {
		return nil
	}
	keys := values(s.UniqueKey)
	var out []string
	for _, c := range s.Columns {
		n := c.Name.Value
		if contains(keys, n) {
			continue
		}
		switch {
		case len(m.ExcludeColumns) > 0 && contains(values(m.ExcludeColumns), n),
			len(m.UpdateColumns) > 0 && !contains(values(m.UpdateColumns), n):
			out = append(out, n)
		}
	}
	return out
}

// CDC describes a change-log source: one row per change with an operation
// code, a sequence ordering a key's changes, and the row's image after the
// change.
type CDC struct {
	Op         ir.String   // column holding the operation code
	Sequence   ir.String   // column ordering the changes of one key (an LSN)
	At         ir.String   // optional: column holding the change's commit time
	Deletes    ir.String   // hard | soft; default hard
	SoftDelete *SoftDelete // with deletes: soft, the names of the mark's columns
	Ops        *CDCOps     // the op codes of each kind; default Debezium's
	Exclude    []ir.String // change-log columns not written to the target
	Pos        ir.Pos
}

// SoftDelete names the target columns a soft delete sets: a boolean flag
// and the time the key was deleted.
type SoftDelete struct {
	Flag ir.String
	At   ir.String
	Pos  ir.Pos
}

// CDCOps lists the op codes of each kind of change.
type CDCOps struct {
	Insert, Update, Delete []ir.String
	// Truncate codes empty the whole target at their point of the
	// sequence (Debezium's t); no default lists one.
	Truncate []ir.String
	Pos      ir.Pos
}

// SCD2 describes a type-2 slowly changing dimension target: the target
// holds versions of each key, valid over [ValidFrom, ValidTo).
type SCD2 struct {
	By        ir.String   // time: versions start at the watermark; columns: at the run's hi when a tracked column changes
	Tracked   []ir.String // by columns: the columns whose change opens a version
	Snapshot  ir.String   // "true": every run reads the whole source, and a key missing from it has vanished
	Deletes   ir.String   // ignore | close | new_record: what a vanished key does to its current version
	ValidFrom ir.String   // the target's column names
	ValidTo   ir.String
	OpenEnd   ir.String // the current version's valid_to; absent: NULL
	OpenStart ir.String // the valid_from of a key's earliest version, when its own start is later; absent: its own start
	Deleted   ir.String // new_record: the flag column of the version that records a vanished key
	Pos       ir.Pos
}

// Lookup joins each source row with a row of another table: with AsOf,
// the version of the key valid at that time ([valid_from, valid_to)).
// Pairs are written left: right, the left side always this pipeline's
// column, the right side the lookup table's.
type Lookup struct {
	Table     ir.String
	On        []Pair    // this pipeline's column: the lookup table's column
	AsOf      ir.String // a date or timestamp column of this pipeline
	Columns   []Pair    // the target column it fills: the lookup table's column
	ValidFrom ir.String // the lookup table's validity columns and open end, when it is no
	ValidTo   ir.String // scd2 target of this project (which says them itself)
	OpenEnd   ir.String
	Pos       ir.Pos

	// writer is the pipeline of the project whose target the lookup reads,
	// when there is one and the lookup fits it: checkProject sets it, and
	// Lower reads the validity columns, open end and types of an scd2 one.
	writer *Spec
}

// Pair is one entry of a mapping of names, as written.
type Pair struct {
	Left, Right ir.String
}

// Column returns the declared column called name, or nil.
func (s *Spec) Column(name string) *Column {
	for i := range s.Columns {
		if s.Columns[i].Name.Value == name {
			return &s.Columns[i]
		}
	}
	return nil
}

// ColumnNames returns the declared columns in the order of the file.
func (s *Spec) ColumnNames() []string {
	names := make([]string, len(s.Columns))
	for i, c := range s.Columns {
		names[i] = c.Name.Value
	}
	return names
}

// Key returns the unique key's column names.
func (s *Spec) Key() []string {
	return values(s.UniqueKey)
}

func values(ss []ir.String) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = s.Value
	}
	return out
}
