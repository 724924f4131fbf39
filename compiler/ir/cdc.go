package ir

// Reserved columns of a cdc pipeline's target and tombstones.
const (
	// SequenceColumn is the sequence of the change a target row or a
	// tombstone holds.
	SequenceColumn = "incrc_sequence"
	// DeletedAtColumn is a tombstone's commit time (cdc.at), when the spec
	// names one.
	DeletedAtColumn = "incrc_deleted_at"

	// Columns of the ranked changes (RankChanges) besides the change's
	// own: what the target and the tombstones held for its key before
	// the run wrote, NULL where they held nothing.
	TargetSequenceColumn    = "incrc_target_sequence"
	TombstoneSequenceColumn = "incrc_tombstone_sequence"
	TombstoneAtColumn       = "incrc_tombstone_at"
)

// Statements of a cdc pipeline (besides the shared ones).
const (
	StmtCreateTombstones  = "create_tombstones"
	StmtDropDeletes       = "drop_deletes"
	StmtCreateDeletes     = "create_deletes"
	StmtDropRanked        = "drop_ranked"
	StmtCreateRanked      = "create_ranked"
	StmtCountChanges      = "count_changes"
	StmtRankChanges       = "rank_changes"
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
	// RankChanges ranks a change log's valid changes (From) once, into
	// Into: per key the newest change (by Order), and with Soft also the
	// key's newest insert or update when a delete is newer, each kept only
	// when it is newer than the sequence (SequenceColumn) the target holds
	// for the key, and than the tombstone's too but for a soft delete's
	// image (which a newer tombstone marks rather than stops). Into has
	// Columns, then TargetSequenceColumn and TombstoneSequenceColumn (the
	// sequences its key held), and with Soft TombstoneAtColumn (the
	// tombstone's DeletedAtColumn, the mark's time). What is left is what
	// the run applies: ResolveChanges splits it by kind, and no later step
	// ranks or joins the target again.
	RankChanges struct {
		Into, From         Table
		Target, Tombstones Table
		Columns            []string // From's columns
		Key                []string
		Sequence           string
		Order              []Order // a key's changes, newest first
		IsDelete           Expr    // true for a delete change
		Soft               bool
	}

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

func (RankChanges) op()   {}
func (NewTruncate) op()   {}
func (DeleteThrough) op() {}

// Exact is X compared as exact text: case and trailing spaces count. An op
// code is a code, not a word: "U" is not "u" on any engine, whatever the
// column's collation (MariaDB's default one folds case and pads).
type Exact struct{ X Expr }

func (Exact) exprNode() {}
