package ir

// Names of the columns the SCD2 session tables add, and the op codes of a
// change.
//
// A run's counts say what became of each row read (docs/runs.md): the
// change that stands for it is an add (inserted: the first version of its
// key), a follow (updated: a version after an earlier one of its key, which
// it ends) or a rewrite (updated: a correction in place); a staged row that
// makes no change is ignored. The changes no row read stands for, a close
// and a version without a row, are not counted as rows: a close is the
// consequence of the row that follows it, and the versions a snapshot adds
// or ends for keys that vanished are counted as deleted.
const (
	KindColumn = "incrc_kind" // timeline by time: KindHeld, KindCandidate, KindReopen, KindReopenAlso; from a change log see KindHeldVersion
	OpColumn   = "incrc_op"   // changes: one of the Op codes

	OpAdd     = "1" // a version the target does not hold, its key's first: a row read, inserted
	OpRewrite = "2" // a version of the target (same key and valid_from), rewritten whole by a row read: updated
	OpRemove  = "3" // a version of the target that goes
	OpClose   = "4" // a version of the target whose valid_to alone moves (updated in place): the next version's row counts
	OpFollow  = "5" // a version the target does not hold, after an earlier one of its key: a row read, updated
	OpNoRow   = "6" // a version added or rewritten that no row read stands for (a reopen, a deletion record)
)

// Kinds of the rows of a timeline by time. A reopen is a key back in a
// snapshot (ReopenVersions): its version at hi stands for the key's row
// when the target held that row unchanged (so the row is inserted, not
// ignored), and for no row when the row is a candidate of its own.
const (
	KindHeld       = "0" // a version of the target
	KindCandidate  = "1" // a staged row that is not a version of the target yet
	KindReopen     = "2" // a reopen at hi, standing for an unchanged row
	KindReopenAlso = "3" // a reopen at hi of a key whose row is a candidate
)

// Statement names of SCD2 pipelines.
const (
	StmtDropVersions      = "drop_timeline"
	StmtCreateVersions    = "create_timeline"
	StmtDropChanges       = "drop_changes"
	StmtCreateChanges     = "create_changes"
	StmtVersionCandidates = "timeline_candidates"
	StmtVersionHistory    = "timeline_history"
	StmtReopenVersions    = "timeline_reopen"
	StmtTimelineChanges   = "timeline_changes"
	StmtOpenChanged       = "open_changed"
	StmtCloseChanged      = "close_changed"
	StmtUpdateCurrent     = "update_current"
	StmtCloseVanished     = "close_vanished"
	StmtMarkVanished      = "mark_vanished"
	StmtCheckVersions     = "check_versions"
	StmtCountAdded        = "count_added_versions"
	StmtCountRewritten    = "count_rewritten_versions"
	StmtCountRemoved      = "count_removed_versions"
	StmtCountReopened     = "count_reopened"
	StmtApplyVersions     = "apply_versions"
)

// Versioning is what the SCD2 operations know of the target.
type Versioning struct {
	Target    Table
	Key       []string
	Columns   []string // the spec's columns, in the order of the file
	ValidFrom string
	ValidTo   string
	Type      Type   // of ValidFrom and ValidTo
	OpenEnd   string // the current version's ValidTo (canonical, see ParseWatermark); "" means NULL
	Deleted   string // new_record: the flag of a version that records a vanished key; "" otherwise
	// FirstStart, by time and by columns: scd2.open_start (canonical), the
	// ValidFrom of each key's earliest version when its own start (by
	// time its OwnStart column, by columns the run's hi) is later; ""
	// means every version starts at its own start. From a change log
	// MergeVersions carries open_start instead.
	FirstStart string
	// OwnStart, by time with FirstStart: the column that holds each
	// version's own start, which ValidFrom hides in a key's earliest
	// version (stored at FirstStart).
	OwnStart string
}

// Stored are the columns of a version: the spec's, the validity, the flag.
func (v Versioning) Stored() []string {
	out := append(append([]string(nil), v.Columns...), v.ValidFrom, v.ValidTo)
	if v.Deleted != "" {
		out = append(out, v.Deleted)
	}
	return out
}

type (
	// VersionCandidates puts the staged rows that are not a version of the
	// target already (same key, same start, the same Compare columns)
	// into the timeline Into, as candidates (kind 1) starting at Time.
	VersionCandidates struct {
		Versioning
		Into, Stage Table
		Time        string
		Compare     []string
	}

	// VersionHistory puts the target's versions of the staged keys into
	// the timeline Into (kind 0): of each key, the versions from the last
	// one starting at or before its earliest staged Time on (all of them
	// when none does), and with FirstStart its earliest. The versions
	// before those end before any staged row starts, so no change reads
	// them: a key whose staged rows all follow its current version puts
	// that version alone on the timeline, however long its history.
	VersionHistory struct {
		Versioning
		Into, Stage Table
		Time        string // the staged column each version starts at
	}

	// ReopenVersions puts a candidate starting at the parameter Hi into
	// the timeline for each staged key that has no current version and
	// whose newest staged row (by Time) is older than the end of one of
	// its closed versions: a key back in the snapshot whose own time
	// would not reopen it.
	//
	// Its kind is KindReopen when the target holds that newest row as a
	// version at its Time with the same Compare columns (no candidate
	// stands for it), KindReopenAlso otherwise.
	ReopenVersions struct {
		Versioning
		Into, Stage Table
		Time        string
		Hi          string
		Compare     []string
	}

	// TimelineChanges reads the timeline From and writes the changes Into:
	// each candidate, ending at the next start on its key's timeline or
	// at the end of the version it falls in (a rewrite when a version
	// starts at the same time, an add otherwise), and each version of the
	// target that a candidate starts inside, ending there (a rewrite).
	TimelineChanges struct {
		Versioning
		Into, From Table
	}

	// ColumnChanges compares each staged row (one per key) with its key's
	// current version and writes the changes Into. Part says which:
	// "open", a version starting at Hi for each key without a current
	// version or whose Tracked columns differ from it; "close", that
	// current version ended at Hi unless it started there (the new version
	// rewrites it then); "update", the
	// current version rewritten with the staged Other columns when only
	// those differ.
	ColumnChanges struct {
		Versioning
		Into, Stage    Table
		Tracked, Other []string
		Hi             string
		Part           string
	}

	// VanishedVersions writes the changes Into for the current versions
	// whose key no row of Source carries. Mark false: the version ends at
	// Hi (with Deleted set, unless it started at Hi; without, one that
	// started at Hi is removed). Mark true: a version starting at Hi
	// that records the deletion (Deleted true), rewriting one that
	// started at Hi.
	VanishedVersions struct {
		Versioning
		Into   Table
		Source Relation
		Hi     string
		Mark   bool
	}
)

// ApplyVersions applies the changes to the target: a change of op OpClose
// sets the valid_to of the version at its key and start, in place; every
// other version whose key and start a change names is replaced by it, or
// removed by a change of op OpRemove; the other changes are added. The
// shared spelling is an UPDATE of the closes, a DELETE, then an INSERT, in
// the write transaction; engines where each statement commits alone spell
// one MERGE, and so does DuckDB (one pass over the target).
type ApplyVersions struct {
	Versioning
	Changes Table
}

func (ApplyVersions) op() {}

func (VersionCandidates) op() {}

func (VersionHistory) op() {}

func (ReopenVersions) op() {}

func (TimelineChanges) op() {}

func (ColumnChanges) op() {}

func (VanishedVersions) op() {}
