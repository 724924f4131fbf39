package ir

// Kinds of the rows of a change log's timeline (KindColumn). At one key
// and time, a held event sorts before the new one that replaces it.
const (
	KindHeldVersion = "0" // a version the target holds
	KindHeldDelete  = "1" // a delete the tombstones hold
	KindNewVersion  = "2" // a new version: an insert's or update's image
	KindNewDelete   = "3" // a new delete
)

// Statement names of an scd2 target fed by a change log, besides the scd2
// and cdc ones it shares.
const (
	StmtResolveVersions    = "resolve_versions"
	StmtTimelineTombstones = "timeline_tombstones"
	// With scd2.tracked.
	StmtCreateEvents   = "create_events"
	StmtMarkRebuilding = "mark_rebuilding"
	StmtRetractMerged  = "retract_merged"
	StmtMergeVersions  = "merge_versions"
	StmtClearEvents    = "clear_events"
)

// RegNew counts the new events a run of an scd2 target fed by a change log
// applies.
const RegNew = "new_events"

type (
	// ResolveVersions stages the new events of a change log: from From,
	// the valid changes, per key and Time the one with the greatest
	// sequence (by Order), when neither the target's version nor the
	// tombstone at that key and time holds a sequence as great. Into is
	// shaped as the timeline: the version's columns (the sequence, in
	// SequenceColumn, from Sequence), valid_from from Time, valid_to NULL,
	// and the kind: KindNewDelete where IsDelete, else KindNewVersion.
	ResolveVersions struct {
		Versioning
		Into, From, Tombstones Table
		Columns                []string // From's columns
		Time, Sequence         string
		Order                  []Order // a key's changes at one time, newest first
		IsDelete               Expr
	}
	// TombstoneHistory puts the tombstones of the staged keys onto the
	// timeline Into (KindHeldDelete): the key, the time, the sequence.
	TombstoneHistory struct {
		Versioning
		Into, Stage, Tombstones Table
	}
	// EventChanges reads a change log's timeline From and writes the
	// changes Into: each new version, ending at the next event of its key
	// (an add, or a rewrite of the version held at the same time); the
	// removal of a version held at the time of a new delete; and each held
	// version whose next event is a new one at a later time, ending there
	// (a rewrite).
	EventChanges struct {
		Versioning
		Into, From Table
	}
)

func (ResolveVersions) op() {}

func (TombstoneHistory) op() {}

func (EventChanges) op() {}

type (

	// MergeVersions inserts into Into (the target) the versions of the
	// Target (the events) of the keys Keys holds, merged: consecutive
	// versions of a key, the one ending where the next starts, whose
	// Tracked columns are equal (NULL equal to NULL) are one version, from
	// the first's ValidFrom to the last's ValidTo, with the last's image.
	//
	// Without Tracked no versions merge. With OpenStart (canonical, see
	// ParseWatermark) each key's earliest version starts there instead,
	// unless it starts earlier.
	MergeVersions struct {
		Versioning
		Into, Keys Table
		Tracked    []string
		OpenStart  string
	}
)

func (MergeVersions) op() {}
