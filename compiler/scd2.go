package compiler

import (
	"fmt"
	"strings"
	"time"
)

// SCD2: a target that keeps every version of a key, each valid over the
// half-open [valid_from, valid_to), the current one open-ended (NULL, or
// the sentinel scd2.open_end).
//
// Every change a run makes to the target is one of three: a version is
// added, an existing version is rewritten (closed, split by a late
// version, corrected in place), or an existing version is removed (one
// that would last no time at all). The run computes those changes into a
// session table (the changes), each row a whole version with its op, and
// applies them by key and valid_from (ApplyVersions): delete the target's
// versions the changes name, insert the changes that are not removals, in
// the write transaction; engines where each statement commits alone spell
// it as one MERGE, so that a failure never leaves the versions half
// applied. Counts come from the changes table, the same on every engine.
//
// How the changes are computed depends on the source:
//
//   - by time: each staged row is a version starting at its watermark
//     value. Staged versions and the target's versions of the same keys
//     are laid out on one timeline (a second session table); window
//     functions over it give each new version its end (the next start,
//     or the end of the version it falls in) and each version it splits
//     its new end. A late version is therefore inserted where it belongs,
//     and the incremental target equals a rebuild from the whole source.
//   - by columns: each staged row is the key's current state; when a
//     tracked column differs from the current version (or the key has
//     none), the current version closes at the run's hi and a new one
//     opens there.
//   - snapshot (every run reads the whole source): a key with a current
//     version that no source row carries any more has vanished; deletes:
//     close ends its version at hi, new_record also opens a version that
//     records the deletion (the flag column true). A key that comes back
//     opens a new version.
//
// The plan never reads a staged or changes table twice in one statement:
// MySQL cannot open a temporary table twice in one query.

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
	OpClose   = "4" // a version of the target whose valid_to alone moves: the next version's row counts
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

// Defaults of the scd2 block.
const (
	DefaultValidFrom = "valid_from"
	DefaultValidTo   = "valid_to"
	DefaultDeleted   = "is_deleted"
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

const (
	timelinePrefix = "incrc_timeline_"
	changesPrefix  = "incrc_changes_"
)

var (
	scd2Keys    = keysAt(SpecKeys, "scd2") // the key table (keys.go)
	scd2By      = []string{"time", "columns"}
	scd2Deletes = []string{"ignore", "close", "new_record"}
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
	// the timeline Into (kind 0).
	VersionHistory struct {
		Versioning
		Into, Stage Table
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

// ApplyVersions applies the changes to the target: every version whose
// key and start a change names is replaced by it, or removed by a change of
// op OpRemove; the other changes are added. The shared spelling is a
// DELETE then an INSERT, in the write transaction; engines where each
// statement commits alone spell one MERGE.
type ApplyVersions struct {
	Versioning
	Changes Table
}

func (ApplyVersions) op()     {}
func (VersionCandidates) op() {}
func (VersionHistory) op()    {}
func (ReopenVersions) op()    {}
func (TimelineChanges) op()   {}
func (ColumnChanges) op()     {}
func (VanishedVersions) op()  {}

// scd2Lowering is how one scd2 spec lowers.
type scd2Lowering struct {
	v        Versioning
	byTime   bool
	snapshot bool   // every run reads the whole source
	deletes  string // ignore | close | new_record
	time     string // by time: the watermark column, each version's start
	compare  []string
	tracked  []string // by columns
	other    []string
	timeline Table // by time and from a change log: the session table of the timeline
	changes  Table // the session table of the changes
	// cols are a version's columns with their types: the declared ones,
	// or from a change log the image and the sequence (changeColumns).
	cols []Col
	// fromCDC: the source is a change log (scd2cdc.go); time is cdc.at.
	fromCDC    bool
	tombstones Table // from a change log: every delete
	// events, from a change log with tracked columns: every change as a
	// version (what the target holds without tracked), which the target's
	// versions are merged from (scd2cdc.go).
	events Table
}

// newSCD2 is nil for other strategies.
func newSCD2(s *Spec, p *Plan) *scd2Lowering {
	if p.Strategy != SCD2Strategy {
		return nil
	}
	c := scd2Block(s)
	x := &scd2Lowering{byTime: c.By.Value == "time", snapshot: scd2Snapshot(s), deletes: orDefault(c.Deletes.Value, "ignore"), cols: p.Columns}
	if fromChanges(s) {
		x.fromCDC, x.cols = true, changeColumns(s, p)
	}
	x.v = Versioning{Target: p.Target, Key: p.Key, Columns: columnNames(x.cols),
		ValidFrom: orDefault(c.ValidFrom.Value, DefaultValidFrom), ValidTo: orDefault(c.ValidTo.Value, DefaultValidTo), Type: scd2ValidType(s)}
	if c.OpenEnd.Value != "" {
		x.v.OpenEnd, _ = ParseWatermark(x.v.Type, c.OpenEnd.Value) // Validate checked it
	}
	if x.fromCDC {
		t := p.Target
		x.time = s.CDC.At.Value
		x.timeline = Table{Parts: []string{timelinePrefix + p.Pipeline}}
		x.changes = Table{Parts: []string{changesPrefix + p.Pipeline}}
		x.tombstones = Table{Parts: append(append([]string(nil), t.Schema()...), t.Name()+tombstonesSuffix)}
		if tracked := values(c.Tracked); len(tracked) > 0 {
			x.tracked = tracked
			x.events = Table{Parts: append(append([]string(nil), t.Schema()...), t.Name()+eventsSuffix)}
			x.v.Target = x.events
		}
		return x
	}
	if x.deletes == "new_record" {
		x.v.Deleted = orDefault(c.Deleted.Value, DefaultDeleted)
	}
	comparable := func(name string) bool {
		col := s.Column(name)
		// json has no equality on every engine (BigQuery): a change that is
		// only in a json column is not seen.
		return col != nil && col.Type.Kind != JSON && !contains(p.Key, name)
	}
	if x.byTime {
		x.time = p.Watermark.Name
		for _, name := range x.v.Columns {
			if comparable(name) && name != x.time {
				x.compare = append(x.compare, name)
			}
		}
	} else {
		tracked := values(c.Tracked)
		if len(tracked) == 0 {
			for _, name := range x.v.Columns {
				if p.Watermark == nil || name != p.Watermark.Name {
					tracked = append(tracked, name)
				}
			}
		}
		for _, name := range x.v.Columns {
			switch {
			case !comparable(name):
			case contains(tracked, name):
				x.tracked = append(x.tracked, name)
			default:
				x.other = append(x.other, name)
			}
		}
	}
	if x.byTime {
		x.timeline = Table{Parts: []string{timelinePrefix + p.Pipeline}}
	}
	x.changes = Table{Parts: []string{changesPrefix + p.Pipeline}}
	return x
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// scd2Snapshot reports whether every run of an scd2 spec reads the whole
// source: scd2.snapshot says so, or there is no watermark to window by.
func scd2Snapshot(s *Spec) bool {
	if s.SCD2 == nil {
		return false
	}
	switch s.SCD2.Snapshot.Value {
	case "true":
		return true
	case "false":
		return false
	}
	return s.Watermark == nil
}

// scd2ValidType is the type of an scd2 target's validity columns: the
// watermark's by time; by columns the watermark's when it is a time (hi
// is then one of its values), a timestamp without one; from a change log
// cdc.at's.
func scd2ValidType(s *Spec) Type {
	if fromChanges(s) {
		if c := s.Column(s.CDC.At.Value); c != nil && c.Type.IsTime() {
			return c.Type
		}
	}
	if w := s.Watermark; w != nil {
		if c := s.Column(w.Column.Value); c != nil && c.Type.IsTime() {
			return c.Type
		}
	}
	return Type{Kind: Timestamp}
}

// scd2VersionTable reports whether an scd2 spec reads a table of versions
// (or a change log) through a window: by time, not a snapshot. Each row
// there is a version (a change) that was created when it became true, so a
// creation time is the right watermark.
func scd2VersionTable(s *Spec) bool {
	return fromChanges(s) || s.SCD2 != nil && s.SCD2.By.Value == "time" && !scd2Snapshot(s)
}

// scd2Names are the validity and flag columns an scd2 target adds, as
// the spec names them or by default.
func scd2Names(c *SCD2) []String {
	names := []String{c.ValidFrom, c.ValidTo}
	if c.ValidFrom.Value == "" {
		names[0] = String{Value: DefaultValidFrom, Pos: c.Pos}
	}
	if c.ValidTo.Value == "" {
		names[1] = String{Value: DefaultValidTo, Pos: c.Pos}
	}
	if c.Deletes.Value == "new_record" {
		d := c.Deleted
		if d.Value == "" {
			d = String{Value: DefaultDeleted, Pos: c.Pos}
		}
		names = append(names, d)
	}
	return names
}

// scd2Rules checks an scd2 block of a spec whose strategy is scd2.
func (v *validator) scd2Rules(c *SCD2) {
	s := v.s
	if fromChanges(s) {
		v.scd2ChangeRules(c)
	} else {
		v.scd2SourceRules(c)
	}
	v.scd2Names(c)
	for _, k := range s.UniqueKey {
		if col := s.Column(k.Value); col != nil && col.Nullable {
			v.errf(k.Pos, "unique_key column %q is declared nullable: an scd2 target keys its versions by unique_key and valid_from, which cannot hold a NULL", k.Value)
		}
	}
	if s.Partition != nil && !v.reported("partition") {
		v.errf(s.Partition.Pos, "partition: an scd2 target holds the versions of each key, which a partition rewrite or a backfill would replace wholesale: remove partition")
	}
	if s.Reconcile != nil && !v.reported("reconcile") {
		v.errf(s.Reconcile.Pos, "reconcile compares the source with the target row for row, and an scd2 target holds one row per version: remove reconcile")
	}
}

// scd2ChangeRules checks the scd2 block of a target fed by a change log:
// the change's commit time (cdc.at) says when each version starts, so
// nothing of how a source of rows opens versions applies.
func (v *validator) scd2ChangeRules(c *SCD2) {
	const what = "does not apply to scd2 from a change log (a cdc block)"
	if c.By.Set() {
		v.errf(c.By.Pos, "scd2.by %s: every change is a version from its cdc.at, and a delete the end of one; remove by", what)
	}
	v.scd2TrackedChanges(c)
	if c.Snapshot.Set() {
		v.errf(c.Snapshot.Pos, "scd2.snapshot %s: the log is read through its window, and a key ends with its delete, not by missing from a snapshot; remove snapshot", what)
	}
	if c.Deletes.Set() {
		v.errf(c.Deletes.Pos, "scd2.deletes %s: the log's deletes end the key's current version at their cdc.at; remove deletes", what)
	}
	if c.Deleted.Set() {
		v.errf(c.Deleted.Pos, "scd2.deleted %s: a deleted key has no version until it comes back, so there is no flag to name; remove deleted", what)
	}
}

// scd2SourceRules checks the scd2 block of a target fed by a table of
// rows: by time or by columns, windowed or a snapshot.
func (v *validator) scd2SourceRules(c *SCD2) {
	s := v.s
	by := c.By.Value
	switch {
	case !c.By.Set():
		if !v.reported("scd2.by") {
			v.errf(c.Pos, `scd2: missing required key "by": time (the watermark column says when each version became true) or columns (a version opens at the run's hi when a tracked column changes)`)
		}
	case by == "":
	case !contains(scd2By, by):
		v.errf(c.By.Pos, "unknown scd2.by %s%s", quote(by), suggest(by, scd2By))
		by = ""
	}
	w := s.Watermark
	var wm *Column
	if w != nil && !v.reported("watermark") {
		if col := s.Column(w.Column.Value); col != nil && col.Type.Kind != "" {
			wm = col
		}
	}
	switch by {
	case "time":
		if w == nil && !v.reported("watermark") {
			v.errf(c.By.Pos, "scd2.by time takes each version's valid_from from the watermark column: add watermark: {column: COLUMN, start: DATE}, the column that says when a row's values became true")
		}
		if wm != nil && wm.Type.IsInteger() {
			v.errf(w.Column.Pos, "scd2.by time: the watermark %q is an integer, which says nothing of when a version became true: use a date or timestamp column", wm.Name.Value)
		}
		if len(c.Tracked) > 0 {
			v.errf(c.Tracked[0].Pos, "scd2.tracked applies to by: columns; by: time makes every new watermark value of a key a version: use by: columns to open versions only when a tracked column changes")
		}
	case "columns":
		if wm != nil && wm.Type.IsInteger() {
			v.errf(w.Column.Pos, "scd2.by columns opens versions at the run's hi, a time, and the watermark %q is an integer, whose hi is an id: use a date or timestamp watermark, or none (every run then reads the whole snapshot)", wm.Name.Value)
		}
		seen := map[string]bool{}
		for _, t := range c.Tracked {
			col := s.Column(t.Value)
			switch {
			case t.Value == "" || col == nil:
			case seen[t.Value]:
				v.errf(t.Pos, "scd2.tracked lists %q twice: keep one", t.Value)
			case contains(s.Key(), t.Value):
				v.errf(t.Pos, "scd2.tracked column %q is part of unique_key: a key's versions all have the same key, so it never changes; track the other columns", t.Value)
			case col.Type.Kind == JSON:
				v.errf(t.Pos, "scd2.tracked column %q is json, which engines cannot compare reliably: track the columns it is derived from", t.Value)
			}
			seen[t.Value] = true
		}
		nonKey := 0
		for _, col := range s.Columns {
			if !contains(s.Key(), col.Name.Value) {
				nonKey++
			}
		}
		if nonKey == 0 && len(s.UniqueKey) > 0 {
			v.errf(c.By.Pos, "scd2.by columns has nothing to track: every declared column is part of unique_key")
		}
	}
	switch c.Snapshot.Value {
	case "", "true", "false":
	default:
		v.errf(c.Snapshot.Pos, "scd2.snapshot must be true or false, got %s", quote(c.Snapshot.Value))
	}
	if c.Snapshot.Value == "false" && w == nil && !v.reported("watermark") {
		v.errf(c.Snapshot.Pos, "scd2.snapshot false reads a window of the source, and there is no watermark to window it by: without a watermark every run reads the whole source (remove snapshot, or add watermark)")
	}
	snapshot := scd2Snapshot(s)
	if snapshot && w != nil && w.Lookback.Set() {
		v.errf(w.Lookback.Pos, "watermark.lookback widens a run's window, and scd2.snapshot reads the whole source [start, hi) on every run: remove the lookback")
	}
	switch d := c.Deletes.Value; {
	case d == "":
	case !contains(scd2Deletes, d):
		v.errf(c.Deletes.Pos, "unknown scd2.deletes %s%s", quote(d), suggest(d, scd2Deletes))
	case d != "ignore" && !snapshot:
		v.errf(c.Deletes.Pos, "scd2.deletes %s acts on keys missing from the source, which only a run that reads the whole snapshot can tell: this source is read through the window [watermark - lookback, hi), where every key that did not change is missing too; set scd2.snapshot: true (every run reads [start, hi)), or keep deletes: ignore", d)
	}
	if c.Deleted.Set() && c.Deletes.Value != "new_record" {
		v.errf(c.Deleted.Pos, "scd2.deleted names the flag of the version that records a vanished key, which only deletes: new_record writes: remove it, or set deletes: new_record")
	}
}

// scd2Names checks the names of the columns an scd2 target adds and its
// open end.
func (v *validator) scd2Names(c *SCD2) {
	s := v.s
	w := s.Watermark
	var wm *Column
	if w != nil && !v.reported("watermark") {
		if col := s.Column(w.Column.Value); col != nil && col.Type.Kind != "" {
			wm = col
		}
	}
	names := map[string]bool{}
	for _, n := range scd2Names(c) {
		low := strings.ToLower(n.Value)
		switch {
		case n.Value == "" || !isIdent(n.Value):
			continue // reported with the plain-name check
		case s.Column(n.Value) != nil || declaredFold(s, n.Value):
			v.errf(n.Pos, "the target adds column %q for its versions, and %q is also a declared column: name it otherwise (scd2.valid_from, scd2.valid_to, scd2.deleted)", n.Value, n.Value)
		case names[low]:
			v.errf(n.Pos, "scd2 names column %q twice: the validity columns and the flag need a name each", n.Value)
		}
		names[low] = true
	}
	if c.OpenEnd.Value != "" {
		t := scd2ValidType(s)
		canon, err := ParseWatermark(t, c.OpenEnd.Value)
		switch {
		case err != nil:
			v.errf(c.OpenEnd.Pos, "scd2.open_end: %v (a sentinel such as 9999-12-31)", err)
		case w != nil && wm != nil && w.Start.Value != "":
			if start, err := ParseWatermark(t, w.Start.Value); err == nil {
				ct, _ := ParseTime(canon)
				st, _ := ParseTime(start)
				if !ct.After(st) {
					v.errf(c.OpenEnd.Pos, "scd2.open_end %s is not after watermark.start %s: the open end must be later than every version's start (as in 9999-12-31)", c.OpenEnd.Value, w.Start.Value)
				}
			}
		}
	}
}

// declaredFold reports whether a declared column has name in another case:
// engines that fold names would see one column twice.
func declaredFold(s *Spec, name string) bool {
	for _, c := range s.Columns {
		if strings.EqualFold(c.Name.Value, name) {
			return true
		}
	}
	return false
}

// createTarget is the scd2 target: the spec's columns, then the validity
// columns and the flag; its key is unique_key and valid_from, so that two
// versions can never start at one time.
func (x *scd2Lowering) createTarget(p *Plan) CreateTable {
	cols := append([]Col(nil), x.cols...)
	cols = append(cols, Col{Name: x.v.ValidFrom, Type: x.v.Type, NotNull: true}, Col{Name: x.v.ValidTo, Type: x.v.Type})
	if x.v.Deleted != "" {
		cols = append(cols, Col{Name: x.v.Deleted, Type: Type{Kind: Boolean}, NotNull: true})
	}
	return CreateTable{Table: p.Target, Columns: cols, PrimaryKey: append(append([]string(nil), p.Key...), x.v.ValidFrom)}
}

// sessionColumns are the columns of a session table of versions: a
// version's, and the kind or op column.
func (x *scd2Lowering) sessionColumns(p *Plan, extra string) []Col {
	var cols []Col
	for _, c := range x.cols {
		cols = append(cols, Col{Name: c.Name, Type: c.Type})
	}
	cols = append(cols, Col{Name: x.v.ValidFrom, Type: x.v.Type}, Col{Name: x.v.ValidTo, Type: x.v.Type})
	if x.v.Deleted != "" {
		cols = append(cols, Col{Name: x.v.Deleted, Type: Type{Kind: Boolean}})
	}
	return append(cols, Col{Name: extra, Type: Type{Kind: Smallint}})
}

// stage adds the session tables of the timeline and the changes.
func (x *scd2Lowering) stage(l *lowerer) {
	p := l.p
	if x.byTime {
		l.add(StmtDropVersions, PhaseStage, "The timeline: the staged versions and the target's versions of their keys, in one table.",
			DropTable{Table: x.timeline, Temporary: true})
		l.add(StmtCreateVersions, PhaseStage, "The timeline: the staged versions and the target's versions of their keys, in one table.",
			CreateTable{Table: x.timeline, Columns: x.sessionColumns(p, KindColumn), Temporary: true})
	}
	l.add(StmtDropChanges, PhaseStage, "The changes: whole versions to add, rewrite or remove, each with its op (1, 2, 3).",
		DropTable{Table: x.changes, Temporary: true})
	l.add(StmtCreateChanges, PhaseStage, "The changes: whole versions to add, rewrite or remove, each with its op (1, 2, 3).",
		CreateTable{Table: x.changes, Columns: x.sessionColumns(p, OpColumn), Temporary: true})
}

// write adds the statements that find and apply the changes.
func (x *scd2Lowering) write(l *lowerer) {
	p := l.p
	hi := Param{"hi", PWatermark}
	if x.byTime {
		l.add(StmtVersionCandidates, PhaseWrite, "Staged versions that the target does not hold yet, or holds with other values (a correction), onto the timeline.",
			VersionCandidates{Versioning: x.v, Into: x.timeline, Stage: p.Stage, Time: x.time, Compare: x.compare})
		l.add(StmtVersionHistory, PhaseWrite, "The target's versions of the staged keys, onto the timeline.",
			VersionHistory{Versioning: x.v, Into: x.timeline, Stage: p.Stage})
		if x.snapshot && x.deletes != "ignore" {
			l.add(StmtReopenVersions, PhaseWrite, "A key back in the snapshot whose time is older than its close (the source kept the old time) opens a new version at hi.",
				ReopenVersions{Versioning: x.v, Into: x.timeline, Stage: p.Stage, Time: x.time, Hi: hi.Name, Compare: x.compare}, hi)
			l.add(StmtCountReopened, PhaseWrite, "Reopened keys whose row the target held unchanged: the reopen is that row's version (inserted, not ignored).",
				CountRows{Table: x.timeline, Where: eq(col(KindColumn), Lit{KindReopen})})
		}
		l.add(StmtTimelineChanges, PhaseWrite, "Each new version ends at the next start of its key, or where the version it falls in ended; a version a new one starts inside now ends there.",
			TimelineChanges{Versioning: x.v, Into: x.changes, From: x.timeline})
	} else {
		l.add(StmtOpenChanged, PhaseWrite, "A version opens at hi for each staged key without a current version, or whose tracked columns ("+strings.Join(x.tracked, ", ")+") changed.",
			ColumnChanges{Versioning: x.v, Into: x.changes, Stage: p.Stage, Tracked: x.tracked, Other: x.other, Hi: hi.Name, Part: "open"}, hi)
		l.add(StmtCloseChanged, PhaseWrite, "The current version of those keys ends at hi.",
			ColumnChanges{Versioning: x.v, Into: x.changes, Stage: p.Stage, Tracked: x.tracked, Other: x.other, Hi: hi.Name, Part: "close"}, hi)
		if len(x.other) > 0 {
			l.add(StmtUpdateCurrent, PhaseWrite, "Columns that are not tracked ("+strings.Join(x.other, ", ")+") are overwritten in the current version: no new version for them.",
				ColumnChanges{Versioning: x.v, Into: x.changes, Stage: p.Stage, Tracked: x.tracked, Other: x.other, Part: "update"})
		}
	}
	if x.snapshot && x.deletes != "ignore" {
		bare := p.Source
		bare.Columns, bare.Lookups = nil, nil
		doc := "A key no source row carries any more has vanished: its current version ends at hi (removed if it started at hi)."
		if x.deletes == "new_record" {
			doc = "A key no source row carries any more has vanished: its current version ends at hi."
		}
		l.add(StmtCloseVanished, PhaseWrite, doc, VanishedVersions{Versioning: x.v, Into: x.changes, Source: bare, Hi: hi.Name}, hi)
		if x.deletes == "new_record" {
			l.add(StmtMarkVanished, PhaseWrite, "And a version starting at hi records the deletion: the last values, "+x.v.Deleted+" true.",
				VanishedVersions{Versioning: x.v, Into: x.changes, Source: bare, Hi: hi.Name, Mark: true}, hi)
		}
	}
	op := col(OpColumn)
	l.add(StmtCheckVersions, PhaseWrite, "A version that would end before it starts: the run's hi is before versions already written (a rewind, an --until in the past).",
		CountRows{Table: x.changes, Where: and(Binary{"<>", op, Lit{OpRemove}}, Binary{"<=", col(x.v.ValidTo), col(x.v.ValidFrom)})})
	l.add(StmtCountAdded, PhaseWrite, "Rows read that open their key's first version (inserted).", CountRows{Table: x.changes, Where: eq(op, Lit{OpAdd})})
	l.add(StmtCountRewritten, PhaseWrite, "Rows read that open a later version of their key, ending the one before it, or correct a version in place (updated).",
		CountRows{Table: x.changes, Where: or(eq(op, Lit{OpFollow}), eq(op, Lit{OpRewrite}))})
	l.add(StmtApplyVersions, PhaseWrite, "The changes, by key and "+x.v.ValidFrom+": the versions they rewrite or remove go, the ones they add or rewrite come (in the write transaction, or as one statement).",
		ApplyVersions{Versioning: x.v, Changes: x.changes})
}

// sessionSteps create the session tables, under guard.
func (x *scd2Lowering) sessionSteps(guard string) []Step {
	var steps []Step
	if x.byTime {
		steps = append(steps, Step{Stmt: StmtDropVersions, If: guard}, Step{Stmt: StmtCreateVersions, If: guard})
	}
	return append(steps, Step{Stmt: StmtDropChanges, If: guard}, Step{Stmt: StmtCreateChanges, If: guard})
}

func (x *scd2Lowering) cleanup() []string {
	if x.byTime {
		return []string{StmtDropVersions, StmtDropChanges}
	}
	return []string{StmtDropChanges}
}

// writeSteps find the changes (read, when staged rows were read) and
// apply them (window, when the window holds anything), in the write
// transaction. vanished: the program looks for keys that vanished (a run,
// not a full refresh, whose target starts empty).
func (x *scd2Lowering) writeSteps(read, window string, vanished bool) []Step {
	// Every row read counts as ignored until a step says what became of
	// it (see the Op codes): the candidates, the versions opened and
	// updated, the reopens that stand for a row.
	unignore := []string{"-" + RegIgnored}
	var steps []Step
	if x.byTime {
		steps = append(steps, Step{Stmt: StmtVersionCandidates, Tx: true, If: read, Read: ReadAffected, Into: unignore}, Step{Stmt: StmtVersionHistory, Tx: true, If: read})
		if x.snapshot && x.deletes != "ignore" && vanished {
			steps = append(steps, Step{Stmt: StmtReopenVersions, Tx: true, If: read},
				Step{Stmt: StmtCountReopened, Tx: true, If: read, Read: ReadCount, Into: unignore})
		}
		steps = append(steps, Step{Stmt: StmtTimelineChanges, Tx: true, If: read})
	} else {
		steps = append(steps, Step{Stmt: StmtOpenChanged, Tx: true, If: read, Read: ReadAffected, Into: unignore}, Step{Stmt: StmtCloseChanged, Tx: true, If: read})
		if len(x.other) > 0 {
			steps = append(steps, Step{Stmt: StmtUpdateCurrent, Tx: true, If: read, Read: ReadAffected, Into: unignore})
		}
	}
	if x.snapshot && x.deletes != "ignore" && vanished {
		// A vanished key is deleted: no row read stands for it.
		steps = append(steps, Step{Stmt: StmtCloseVanished, Tx: true, If: window, Read: ReadAffected, Into: []string{RegDeleted}})
		if x.deletes == "new_record" {
			steps = append(steps, Step{Stmt: StmtMarkVanished, Tx: true, If: window})
		}
	}
	return append(steps,
		Step{Stmt: StmtCheckVersions, Tx: true, If: window, Read: ReadCount,
			Fail: "%d version(s) would end before they start: this run's hi is before versions already written (a rewind, or an --until in the past); run with a later --until"},
		Step{Stmt: StmtCountAdded, Tx: true, If: window, Read: ReadCount, Into: []string{RegInserted}},
		Step{Stmt: StmtCountRewritten, Tx: true, If: window, Read: ReadCount, Into: []string{RegUpdated}},
		Step{Stmt: StmtApplyVersions, Tx: true, If: window})
}

// scd2ForceReason is why a full refresh of a snapshot-fed scd2 target
// needs --force: the runner says it, the compiled file lists it.
const scd2ForceReason = "a full refresh rebuilds the versions from the source alone, and a snapshot holds only each key's current row: the history of every key, which no source holds any more, would be lost"

// programs are the run and full refresh of an scd2 pipeline.
func (x *scd2Lowering) programs(l *lowerer) (run, full *Program) {
	if x.fromCDC {
		return x.cdcPrograms(l) // see scd2cdc.go
	}
	lo, stage := LoWatermark, StmtStageWindow
	if x.snapshot {
		lo, stage = LoStart, StmtStageAll
	}
	run = l.program(ModeRun, "run", lo, HiNow)
	how := "versions by time (each staged row starts a version at its " + x.time + ")"
	if !x.byTime {
		how = "versions by columns (a tracked change opens a version at hi)"
	}
	read := "the window's rows"
	if x.snapshot {
		read = "the whole snapshot"
	}
	run.Doc = "An incremental run: " + read + ", written as " + how + "."
	run.Steps = append(run.Steps, l.stageSteps(RegWindow)...)
	run.Steps = append(run.Steps, x.sessionSteps(RegWindow)...)
	before, inTx := l.nullStaged(RegRead)
	run.Steps = append(run.Steps, Step{Stmt: stage, If: RegWindow, Read: ReadAffected, Into: []string{RegRead, RegIgnored}})
	run.Steps = append(run.Steps, before...)
	run.Steps = append(run.Steps, Step{Stmt: StmtDedupeStage, If: RegRead})
	run.Steps = append(run.Steps, unignored(inTx)...)
	run.Steps = append(run.Steps, unignored(l.quality(RegRead, false, failInvalid))...)
	run.Steps = append(run.Steps, x.writeSteps(RegRead, RegWindow, true)...)
	run.Steps = append(run.Steps, l.finish()...)
	run.Cleanup = append(l.cleanup(), x.cleanup()...)

	full = l.program(ModeFullRefresh, "full_refresh", LoStart, HiNow)
	full.Doc = "A full refresh: the versions rebuilt from the whole source, in one transaction."
	if x.snapshot {
		full.Force = scd2ForceReason
	}
	full.Steps = append(full.Steps, l.stageSteps("")...)
	full.Steps = append(full.Steps, x.sessionSteps("")...)
	before, inTx = l.nullStaged("")
	full.Steps = append(full.Steps, Step{Stmt: StmtStageAll, Read: ReadAffected, Into: []string{RegRead, RegIgnored}})
	full.Steps = append(full.Steps, before...)
	full.Steps = append(full.Steps, Step{Stmt: StmtDedupeStage})
	full.Steps = append(full.Steps, unignored(inTx)...)
	full.Steps = append(full.Steps, unignored(l.quality("", false, failInvalid))...)
	full.Steps = append(full.Steps, Step{Stmt: StmtClearTarget, Tx: true, Read: ReadAffected, Into: []string{RegDeleted}})
	full.Steps = append(full.Steps, x.writeSteps("", "", false)...)
	full.Steps = append(full.Steps, l.finish()...)
	full.Cleanup = append(l.cleanup(), x.cleanup()...)
	return run, full
}

// unignored makes the steps that quarantine rows take them out of the
// ignored ones, where every row read starts (nullStaged does so already
// when the rows were read before a dedupe).
func unignored(steps []Step) []Step {
	out := make([]Step, len(steps))
	for i, s := range steps {
		if contains(s.Into, RegQuarantined) && !contains(s.Into, "-"+RegIgnored) {
			s.Into = append(append([]string(nil), s.Into...), "-"+RegIgnored)
		}
		out[i] = s
	}
	return out
}

// String names the scd2 shape for the compiled file's header.
func (x *scd2Lowering) String() string {
	open := "NULL"
	if t, err := ParseTime(x.v.OpenEnd); err == nil {
		open = t.Format("2006-01-02 15:04:05")
		if x.v.Type.Kind == Date || t.Equal(t.Truncate(24*time.Hour)) {
			open = t.Format("2006-01-02")
		}
	}
	s := fmt.Sprintf("versions [%s, %s), open end %s", x.v.ValidFrom, x.v.ValidTo, open)
	if x.snapshot {
		s += ", snapshot, deletes " + x.deletes
	}
	if x.fromCDC {
		s += ", from a change log: each change an event at its " + x.time
	}
	return s
}

// snapshot reports whether every run reads the whole source.
func (l *lowerer) snapshot() bool { return l.scd != nil && l.scd.snapshot }
