package ir

// LookupJoin is one lookup of a relation.
type LookupJoin struct {
	Table Table
	On    []JoinPair // Source: the relation's column; Lookup: the lookup table's
	// Columns: Source is the column the lookup fills, Lookup the lookup
	// table's column it is read from.
	Columns []JoinPair
	AsOf    *AsOf // nil: the lookup table holds one row per key
	// Trusted: a pipeline of the project writes the lookup table and keeps
	// it one row per key (merge) or one version per key and time (scd2),
	// so no run checks it (see LookupOverlaps).
	Trusted bool
}

// LookupOverlaps counts the rows of the lookup tables that would make a
// source row match more than once, and be written once per match: two rows
// of one key (a lookup without as_of); two versions of one key that start
// at one time, or whose intervals overlap.
type LookupOverlaps struct {
	Lookups []LookupJoin
}

func (LookupOverlaps) op() {}

// StmtCheckLookups is the statement of LookupOverlaps.
const StmtCheckLookups = "check_lookups"

// JoinPair names a column of the relation and one of the lookup table.
type JoinPair struct {
	Source, Lookup string
}

// AsOf is the time a lookup finds the valid version at.
type AsOf struct {
	Column string // of the relation
	Type   Type   // the column's type
	// Valid is the type of the lookup table's validity columns: the
	// column is converted to it when they differ (a date and a timestamp).
	Valid              Type
	ValidFrom, ValidTo string
	OpenEnd            string // canonical (ParseWatermark); "" means NULL
}

// Derived reports whether the relation is read as a derived table named
// src: a query, or a table or query joined with its lookups.
func (r Relation) Derived() bool { return r.Query != "" || len(r.Lookups) > 0 || r.Files != nil }
