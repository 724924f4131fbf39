package ir

// Reserved columns of a cdc pipeline's target and tombstones.
const (
	// SequenceColumn is the sequence of the change a target row or a
	// tombstone holds.
	SequenceColumn = "incrc_sequence"
	// DeletedAtColumn is a tombstone's commit time (cdc.at), when the spec
	// names one.
	DeletedAtColumn = "incrc_deleted_at"
)

// Statements of a cdc pipeline (besides the shared ones).
const (
	StmtCreateTombstones  = "create_tombstones"
	StmtDropDeletes       = "drop_deletes"
	StmtCreateDeletes     = "create_deletes"
	StmtCountChanges      = "count_changes"
	StmtResolveUpserts    = "resolve_upserts"
	StmtResolveDeletes    = "resolve_deletes"
	StmtCountDeletes      = "count_deletes"
	StmtRetractTombstones = "retract_tombstones"
	StmtWriteTombstones   = "write_tombstones"
	StmtApplyDeletes      = "apply_deletes"
	StmtClearTombstones   = "clear_tombstones"

	// With truncate codes.
	StmtCreateTruncated    = "create_truncated"
	StmtDropTruncate       = "drop_truncate"
	StmtCreateTruncate     = "create_truncate"
	StmtResolveTruncate    = "resolve_truncate"
	StmtCountTruncate      = "count_truncate"
	StmtTruncateTarget     = "truncate_target"
	StmtTruncateTombstones = "truncate_tombstones"
	StmtClearTruncated     = "clear_truncated"
	StmtWriteTruncated     = "write_truncated"
	StmtDropTruncates      = "drop_truncates"
	StmtDropTruncated      = "drop_truncated"
)

// Registers of a cdc program: the valid changes read, and the inserts and
// updates a run applies.
const (
	RegChanges = "changes"
	RegUpserts = "upserts"
	// RegTruncate is 1 when a run applies a truncate.
	RegTruncate = "truncate"
)

type (
	// NewTruncate stages into Into (one column, SequenceColumn) the
	// greatest Sequence of From's rows where IsTruncate, when no row of
	// Marks (the truncates applied) holds one as great: the truncate a
	// run applies, or nothing.
	NewTruncate struct {
		Into, From, Marks Table
		Sequence          string
		IsTruncate        Expr
	}

	// DeleteThrough deletes the rows of Table whose Column is not greater
	// than the greatest SequenceColumn of Bound: the rows a truncate
	// empties. An empty Bound deletes nothing.
	DeleteThrough struct {
		Table  Table
		Column string
		Bound  Table
	}
)

func (NewTruncate) op()   {}
func (DeleteThrough) op() {}

// Exact is X compared as exact text: case and trailing spaces count. An op
// code is a code, not a word: "U" is not "u" on any engine, whatever the
// column's collation (MariaDB's default one folds case and pads).
type Exact struct{ X Expr }

func (Exact) exprNode() {}
