package compiler

import (
	"fmt"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"
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
// applies them by key and valid_from (ApplyVersions): update the valid_to
// of the versions that only close (the common change: a new version ends
// the current one), in place, delete the target's other versions the
// changes name, insert the changes that are neither closes nor removals,
// in the write transaction; engines where each statement commits alone
// spell it as one MERGE, so that a failure never leaves the versions half
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
//     Of the target's versions only those a staged one can change go onto
//     the timeline, from the one the key's earliest staged row starts in
//     (VersionHistory): the versions before it end before every staged
//     row, and the common key, whose new versions follow its current one,
//     brings that version alone.
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

// Defaults of the scd2 block.
const (
	DefaultValidFrom = "valid_from"
	DefaultValidTo   = "valid_to"
	DefaultDeleted   = "is_deleted"
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

// scd2Lowering is how one scd2 spec lowers.
type scd2Lowering struct {
	v        ir.Versioning
	byTime   bool
	snapshot bool   // every run reads the whole source
	deletes  string // ignore | close | new_record
	time     string // by time: the watermark column, each version's start
	compare  []string
	tracked  []string // by columns
	other    []string
	timeline ir.Table // by time and from a change log: the session table of the timeline
	changes  ir.Table // the session table of the changes
	// cols are a version's columns with their types: the declared ones,
	// or from a change log the image and the sequence (changeColumns).
	cols []ir.Col
	// fromCDC: the source is a change log (scd2cdc.go); time is cdc.at.
	fromCDC    bool
	tombstones ir.Table // from a change log: every delete
	// events, from a change log with tracked columns: every change as a
	// version (what the target holds without tracked), which the target's
	// versions are merged from (scd2cdc.go); also with openStart, whose
	// target differs from the events in each key's earliest start.
	events    ir.Table
	openStart string // from a change log: scd2.open_start, canonical
}

// newSCD2 is nil for other strategies.
func newSCD2(s *Spec, p *ir.Plan) *scd2Lowering {
	if p.Strategy != ir.SCD2Strategy {
		return nil
	}
	c := scd2Block(s)
	x := &scd2Lowering{byTime: c.By.Value == "time", snapshot: scd2Snapshot(s), deletes: orDefault(c.Deletes.Value, "ignore"), cols: p.Columns}
	if fromChanges(s) {
		x.fromCDC, x.cols = true, changeColumns(s, p)
	}
	x.v = ir.Versioning{Target: p.Target, Key: p.Key, Columns: columnNames(x.cols),
		ValidFrom: orDefault(c.ValidFrom.Value, DefaultValidFrom), ValidTo: orDefault(c.ValidTo.Value, DefaultValidTo), Type: scd2ValidType(s)}
	if c.OpenEnd.Value != "" {
		x.v.OpenEnd, _ = ir.ParseWatermark(x.v.Type, c.OpenEnd.Value) // Validate checked it
	}
	if x.fromCDC {
		t := p.Target
		x.time = s.CDC.At.Value
		if x.time == "" {
			x.time = s.CDC.Sequence.Value // versions by the sequence alone
		}
		x.timeline = ir.Table{Parts: []string{timelinePrefix + p.Pipeline}}
		x.changes = ir.Table{Parts: []string{changesPrefix + p.Pipeline}}
		x.tombstones = ir.Table{Parts: append(append([]string(nil), t.Schema()...), t.Name()+tombstonesSuffix)}
		if c.OpenStart.Value != "" {
			x.openStart, _ = ir.ParseWatermark(x.v.Type, c.OpenStart.Value) // Validate checked it
		}
		if tracked := values(c.Tracked); len(tracked) > 0 || x.openStart != "" {
			x.tracked = tracked
			x.events = ir.Table{Parts: append(append([]string(nil), t.Schema()...), t.Name()+eventsSuffix)}
			x.v.Target = x.events
		}
		return x
	}
	if x.deletes == "new_record" {
		x.v.Deleted = orDefault(c.Deleted.Value, DefaultDeleted)
	}
	if c.OpenStart.Value != "" {
		x.v.FirstStart, _ = ir.ParseWatermark(x.v.Type, c.OpenStart.Value) // Validate checked it
	}
	comparable := func(name string) bool {
		col := s.Column(name)
		// json has no equality on every engine (BigQuery): a change that is
		// only in a json column is not seen.
		return col != nil && col.Type.Kind != ir.JSON && !contains(p.Key, name)
	}
	if x.byTime {
		x.time = p.Watermark.Name
		if x.v.FirstStart != "" {
			x.v.OwnStart = x.time
		}
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
		x.timeline = ir.Table{Parts: []string{timelinePrefix + p.Pipeline}}
	}
	x.changes = ir.Table{Parts: []string{changesPrefix + p.Pipeline}}
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
func scd2ValidType(s *Spec) ir.Type {
	if fromChanges(s) {
		if c := s.Column(s.CDC.At.Value); c != nil && c.Type.IsTime() {
			return c.Type
		}
		// Without a commit time the versions are numbered by the
		// sequence (Databricks' __START_AT and __END_AT).
		if c := s.Column(s.CDC.Sequence.Value); !s.CDC.At.Set() && c != nil {
			return c.Type
		}
	}
	if w := s.Watermark; w != nil {
		if c := s.Column(w.Column.Value); c != nil && c.Type.IsTime() {
			return c.Type
		}
	}
	return ir.Type{Kind: ir.Timestamp}
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
func scd2Names(c *SCD2) []ir.String {
	names := []ir.String{c.ValidFrom, c.ValidTo}
	if c.ValidFrom.Value == "" {
		names[0] = ir.String{Value: DefaultValidFrom, Pos: c.Pos}
	}
	if c.ValidTo.Value == "" {
		names[1] = ir.String{Value: DefaultValidTo, Pos: c.Pos}
	}
	if c.Deletes.Value == "new_record" {
		d := c.Deleted
		if d.Value == "" {
			d = ir.String{Value: DefaultDeleted, Pos: c.Pos}
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
	s := v.s
	const what = "does not apply to scd2 from a change log (a cdc block)"
	if c.By.Set() {
		v.errf(c.By.Pos, "scd2.by %s: every change is a version from its %s, and a delete the end of one; remove by", what, versionTime(s))
	}
	v.scd2TrackedChanges(c)
	if c.Snapshot.Set() {
		v.errf(c.Snapshot.Pos, "scd2.snapshot %s: the log is read through its window, and a key ends with its delete, not by missing from a snapshot; remove snapshot", what)
	}
	if c.Deletes.Set() {
		v.errf(c.Deletes.Pos, "scd2.deletes %s: the log's deletes end the key's current version at their %s; remove deletes", what, versionTime(s))
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
			case col.Type.Kind == ir.JSON:
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
		case n.Value == "" || !ir.IsIdent(n.Value):
			continue // reported with the plain-name check
		case s.Column(n.Value) != nil || declaredFold(s, n.Value):
			v.errf(n.Pos, "the target adds column %q for its versions, and %q is also a declared column: name it otherwise (scd2.valid_from, scd2.valid_to, scd2.deleted)", n.Value, n.Value)
		case names[low]:
			v.errf(n.Pos, "scd2 names column %q twice: the validity columns and the flag need a name each", n.Value)
		}
		names[low] = true
	}
	v.scd2OpenStart(c)
	if c.OpenEnd.Value != "" {
		t := scd2ValidType(s)
		canon, err := ir.ParseWatermark(t, c.OpenEnd.Value)
		switch {
		case !t.IsTime():
			v.errf(c.OpenEnd.Pos, "scd2.open_end: without cdc.at the versions are numbered by cdc.sequence (%s values), and the current one ends NULL, as a sequence has no sentinel every engine holds; remove open_end, or add cdc.at to version by commit time", t)
		case err != nil:
			v.errf(c.OpenEnd.Pos, "scd2.open_end: %v (a sentinel such as 9999-12-31)", err)
		case w != nil && wm != nil && w.Start.Value != "":
			if start, err := ir.ParseWatermark(t, w.Start.Value); err == nil {
				ct, _ := ir.ParseTime(canon)
				st, _ := ir.ParseTime(start)
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
func (x *scd2Lowering) createTarget(p *ir.Plan) ir.CreateTable {
	cols := append([]ir.Col(nil), x.cols...)
	cols = append(cols, ir.Col{Name: x.v.ValidFrom, Type: x.v.Type, NotNull: true}, ir.Col{Name: x.v.ValidTo, Type: x.v.Type})
	if x.v.Deleted != "" {
		cols = append(cols, ir.Col{Name: x.v.Deleted, Type: ir.Type{Kind: ir.Boolean}, NotNull: true})
	}
	return ir.CreateTable{Table: p.Target, Columns: cols, PrimaryKey: append(append([]string(nil), p.Key...), x.v.ValidFrom)}
}

// sessionColumns are the columns of a session table of versions: a
// version's, and the kind or op column.
func (x *scd2Lowering) sessionColumns(p *ir.Plan, extra string) []ir.Col {
	var cols []ir.Col
	for _, c := range x.cols {
		cols = append(cols, ir.Col{Name: c.Name, Type: c.Type})
	}
	cols = append(cols, ir.Col{Name: x.v.ValidFrom, Type: x.v.Type}, ir.Col{Name: x.v.ValidTo, Type: x.v.Type})
	if x.v.Deleted != "" {
		cols = append(cols, ir.Col{Name: x.v.Deleted, Type: ir.Type{Kind: ir.Boolean}})
	}
	return append(cols, ir.Col{Name: extra, Type: ir.Type{Kind: ir.Smallint}})
}

// stage adds the session tables of the timeline and the changes.
func (x *scd2Lowering) stage(l *lowerer) {
	p := l.p
	if x.byTime {
		l.add(ir.StmtDropVersions, ir.PhaseStage, "The timeline: the staged versions and the target's versions of their keys, in one table.",
			ir.DropTable{Table: x.timeline, Temporary: true})
		l.add(ir.StmtCreateVersions, ir.PhaseStage, "The timeline: the staged versions and the target's versions of their keys, in one table.",
			ir.CreateTable{Table: x.timeline, Columns: x.sessionColumns(p, ir.KindColumn), Temporary: true})
	}
	l.add(ir.StmtDropChanges, ir.PhaseStage, "The changes: whole versions to add, rewrite or remove, each with its op (1, 2, 3).",
		ir.DropTable{Table: x.changes, Temporary: true})
	l.add(ir.StmtCreateChanges, ir.PhaseStage, "The changes: whole versions to add, rewrite or remove, each with its op (1, 2, 3).",
		ir.CreateTable{Table: x.changes, Columns: x.sessionColumns(p, ir.OpColumn), Temporary: true})
}

// write adds the statements that find and apply the changes.
func (x *scd2Lowering) write(l *lowerer) {
	p := l.p
	hi := ir.Param{Name: "hi", Type: ir.PWatermark}
	if x.byTime {
		l.add(ir.StmtVersionCandidates, ir.PhaseWrite, "Staged versions that the target does not hold yet, or holds with other values (a correction), onto the timeline.",
			ir.VersionCandidates{Versioning: x.v, Into: x.timeline, Stage: p.Stage, Time: x.time, Compare: x.compare})
		l.add(ir.StmtVersionHistory, ir.PhaseWrite, "The target's versions of the staged keys that a staged version can change, onto the timeline: from the last one starting at or before the key's earliest staged "+x.time+" on.",
			ir.VersionHistory{Versioning: x.v, Into: x.timeline, Stage: p.Stage, Time: x.time})
		if x.snapshot && x.deletes != "ignore" {
			l.add(ir.StmtReopenVersions, ir.PhaseWrite, "A key back in the snapshot whose time is older than its close (the source kept the old time) opens a new version at hi.",
				ir.ReopenVersions{Versioning: x.v, Into: x.timeline, Stage: p.Stage, Time: x.time, Hi: hi.Name, Compare: x.compare}, hi)
			l.add(ir.StmtCountReopened, ir.PhaseWrite, "Reopened keys whose row the target held unchanged: the reopen is that row's version (inserted, not ignored).",
				ir.CountRows{Table: x.timeline, Where: eq(col(ir.KindColumn), ir.Lit{Text: ir.KindReopen})})
		}
		l.add(ir.StmtTimelineChanges, ir.PhaseWrite, "Each new version ends at the next start of its key, or where the version it falls in ended; a version a new one starts inside now ends there.",
			ir.TimelineChanges{Versioning: x.v, Into: x.changes, From: x.timeline})
	} else {
		l.add(ir.StmtOpenChanged, ir.PhaseWrite, "A version opens at hi for each staged key without a current version, or whose tracked columns ("+strings.Join(x.tracked, ", ")+") changed.",
			ir.ColumnChanges{Versioning: x.v, Into: x.changes, Stage: p.Stage, Tracked: x.tracked, Other: x.other, Hi: hi.Name, Part: "open"}, hi)
		l.add(ir.StmtCloseChanged, ir.PhaseWrite, "The current version of those keys ends at hi.",
			ir.ColumnChanges{Versioning: x.v, Into: x.changes, Stage: p.Stage, Tracked: x.tracked, Other: x.other, Hi: hi.Name, Part: "close"}, hi)
		if len(x.other) > 0 {
			l.add(ir.StmtUpdateCurrent, ir.PhaseWrite, "Columns that are not tracked ("+strings.Join(x.other, ", ")+") are overwritten in the current version: no new version for them.",
				ir.ColumnChanges{Versioning: x.v, Into: x.changes, Stage: p.Stage, Tracked: x.tracked, Other: x.other, Part: "update"})
		}
	}
	if x.snapshot && x.deletes != "ignore" {
		bare := p.Source
		bare.Columns, bare.Lookups = nil, nil
		doc := "A key no source row carries any more has vanished: its current version ends at hi (removed if it started at hi)."
		if x.deletes == "new_record" {
			doc = "A key no source row carries any more has vanished: its current version ends at hi."
		}
		l.add(ir.StmtCloseVanished, ir.PhaseWrite, doc, ir.VanishedVersions{Versioning: x.v, Into: x.changes, Source: bare, Hi: hi.Name}, hi)
		if x.deletes == "new_record" {
			l.add(ir.StmtMarkVanished, ir.PhaseWrite, "And a version starting at hi records the deletion: the last values, "+x.v.Deleted+" true.",
				ir.VanishedVersions{Versioning: x.v, Into: x.changes, Source: bare, Hi: hi.Name, Mark: true}, hi)
		}
	}
	op := col(ir.OpColumn)
	l.add(ir.StmtCheckVersions, ir.PhaseWrite, "A version that would end before it starts: the run's hi is before versions already written (a rewind, an --until in the past).",
		ir.CountRows{Table: x.changes, Where: and(ir.Binary{Op: "<>", L: op, R: ir.Lit{Text: ir.OpRemove}}, ir.Binary{Op: "<=", L: col(x.v.ValidTo), R: col(x.v.ValidFrom)})})
	l.add(ir.StmtCountAdded, ir.PhaseWrite, "Rows read that open their key's first version (inserted).", ir.CountRows{Table: x.changes, Where: eq(op, ir.Lit{Text: ir.OpAdd})})
	l.add(ir.StmtCountRewritten, ir.PhaseWrite, "Rows read that open a later version of their key, ending the one before it, or correct a version in place (updated).",
		ir.CountRows{Table: x.changes, Where: or(eq(op, ir.Lit{Text: ir.OpFollow}), eq(op, ir.Lit{Text: ir.OpRewrite}))})
	l.add(ir.StmtApplyVersions, ir.PhaseWrite, x.applyDoc(), ir.ApplyVersions{Versioning: x.v, Changes: x.changes})
}

// applyDoc is apply_versions' comment in the compiled file.
func (x *scd2Lowering) applyDoc() string {
	return "The changes, by key and " + x.v.ValidFrom + ": the versions they close take their new " + x.v.ValidTo +
		" in place, the versions they rewrite or remove go, the ones they add or rewrite come (in the write transaction, or as one statement)."
}

// sessionSteps create the session tables, under guard.
func (x *scd2Lowering) sessionSteps(guard string) []ir.Step {
	var steps []ir.Step
	if x.byTime {
		steps = append(steps, ir.Step{Stmt: ir.StmtDropVersions, If: guard}, ir.Step{Stmt: ir.StmtCreateVersions, If: guard})
	}
	return append(steps, ir.Step{Stmt: ir.StmtDropChanges, If: guard}, ir.Step{Stmt: ir.StmtCreateChanges, If: guard})
}

func (x *scd2Lowering) cleanup() []string {
	if x.byTime {
		return []string{ir.StmtDropVersions, ir.StmtDropChanges}
	}
	return []string{ir.StmtDropChanges}
}

// writeSteps find the changes (read, when staged rows were read) and
// apply them (window, when the window holds anything), in the write
// transaction. vanished: the program looks for keys that vanished (a run,
// not a full refresh, whose target starts empty).
func (x *scd2Lowering) writeSteps(read, window string, vanished bool) []ir.Step {
	// Every row read counts as ignored until a step says what became of
	// it (see the Op codes): the candidates, the versions opened and
	// updated, the reopens that stand for a row.
	unignore := []string{"-" + ir.RegIgnored}
	var steps []ir.Step
	if x.byTime {
		steps = append(steps, ir.Step{Stmt: ir.StmtVersionCandidates, Tx: true, If: read, Read: ir.ReadAffected, Into: unignore}, ir.Step{Stmt: ir.StmtVersionHistory, Tx: true, If: read})
		if x.snapshot && x.deletes != "ignore" && vanished {
			steps = append(steps, ir.Step{Stmt: ir.StmtReopenVersions, Tx: true, If: read},
				ir.Step{Stmt: ir.StmtCountReopened, Tx: true, If: read, Read: ir.ReadCount, Into: unignore})
		}
		steps = append(steps, ir.Step{Stmt: ir.StmtTimelineChanges, Tx: true, If: read})
	} else {
		steps = append(steps, ir.Step{Stmt: ir.StmtOpenChanged, Tx: true, If: read, Read: ir.ReadAffected, Into: unignore}, ir.Step{Stmt: ir.StmtCloseChanged, Tx: true, If: read})
		if len(x.other) > 0 {
			steps = append(steps, ir.Step{Stmt: ir.StmtUpdateCurrent, Tx: true, If: read, Read: ir.ReadAffected, Into: unignore})
		}
	}
	if x.snapshot && x.deletes != "ignore" && vanished {
		// A vanished key is deleted: no row read stands for it.
		steps = append(steps, ir.Step{Stmt: ir.StmtCloseVanished, Tx: true, If: window, Read: ir.ReadAffected, Into: []string{ir.RegDeleted}})
		if x.deletes == "new_record" {
			steps = append(steps, ir.Step{Stmt: ir.StmtMarkVanished, Tx: true, If: window})
		}
	}
	return append(steps,
		ir.Step{Stmt: ir.StmtCheckVersions, Tx: true, If: window, Read: ir.ReadCount, Fail: x.checkVersionsFail()},
		ir.Step{Stmt: ir.StmtCountAdded, Tx: true, If: window, Read: ir.ReadCount, Into: []string{ir.RegInserted}},
		ir.Step{Stmt: ir.StmtCountRewritten, Tx: true, If: window, Read: ir.ReadCount, Into: []string{ir.RegUpdated}},
		ir.Step{Stmt: ir.StmtApplyVersions, Tx: true, If: window})
}

// checkVersionsFail is check_versions' message: a version that would end
// before it starts, and why it can.
func (x *scd2Lowering) checkVersionsFail() string {
	const head = "%d version(s) would end before they start: "
	if x.fromCDC {
		if x.v.OpenEnd == "" {
			// Without an open end a version ends at the next event of its
			// key, which is later: the check guards the plan itself.
			return head + "each version ends at its key's next " + x.time + ", which is later, so none should; report this with the change log's rows of those keys"
		}
		return head + "a change's " + x.time + " is at or after scd2.open_end " + x.openEndText() + "; fix the change log, or set a later open_end"
	}
	msg := head + "this run's hi is before versions already written (a rewind, or an --until in the past); run with a later --until"
	if x.v.OpenEnd != "" {
		what := "a row's " + x.time
		if !x.byTime {
			what = "the run's hi"
		}
		msg += "; or " + what + " is at or after scd2.open_end " + x.openEndText() + ": set a later open_end"
	}
	return msg
}

// openEndText is scd2.open_end as messages print it.
func (x *scd2Lowering) openEndText() string { return timeText(x.v.OpenEnd, x.v.Type) }

// timeText is a canonical validity value as messages and the compiled
// file print it: a day alone when it is one.
func timeText(canonical string, t ir.Type) string {
	if tm, err := ir.ParseTime(canonical); err == nil {
		if t.Kind == ir.Date || tm.Equal(tm.Truncate(24*time.Hour)) {
			return tm.Format("2006-01-02")
		}
		return tm.Format("2006-01-02 15:04:05")
	}
	return canonical
}

// scd2ForceReason is why a full refresh of a snapshot-fed scd2 target
// needs --force: the runner says it, the compiled file lists it.
const scd2ForceReason = "a full refresh rebuilds the versions from the source alone, and a snapshot holds only each key's current row: the history of every key, which no source holds any more, would be lost"

// versioning is strategy scd2: the target keeps every version of a key,
// each valid over [valid_from, valid_to).
type versioning struct{}

func (versioning) validate(v *validator) {
	s := v.s
	v.needsKey()
	switch {
	case s.CDC != nil && !v.reported("cdc") && s.Watermark == nil && !v.reported("watermark"):
		v.errf(s.Strategy.Pos, "strategy scd2 with a cdc block reads the change log through a window and needs watermark: {column: COLUMN, start: DATE}, the column the log grows by (such as the time a change was ingested)")
	case s.SCD2 == nil && s.CDC == nil && !v.reported("scd2"):
		v.errf(s.Strategy.Pos, "strategy scd2 needs scd2: {by: time} (each version starts at its watermark value), {by: columns} (a version starts at the run's hi when a tracked column changes), or a cdc block (each change of a change log is a version from its commit time)")
	}
}

func (versioning) prepare(l *lowerer) {
	l.scd = newSCD2(l.spec, l.p)
	l.p.Versions = l.scd.String()
}

func (versioning) createTarget(l *lowerer) {
	p, x := l.p, l.scd
	if x.fromCDC {
		l.add(ir.StmtCreateTarget, ir.PhaseSetup, "The target: the versions, each the image of the declared columns but the excluded ones and the sequence of its change, valid over ["+x.v.ValidFrom+", "+x.v.ValidTo+").", x.createTarget(p))
		return
	}
	l.add(ir.StmtCreateTarget, ir.PhaseSetup, "The target, from the declared columns.", x.createTarget(p))
}

func (versioning) besideTarget(l *lowerer) {
	if l.scd.fromCDC {
		l.scd.cdcSetup(l)
	}
}

func (versioning) stage(l *lowerer) {
	if l.scd.fromCDC {
		l.scd.cdcStatements(l) // see scd2cdc.go
		return
	}
	l.stage()
}

func (versioning) write(l *lowerer) {
	if l.scd.fromCDC {
		return // cdcStatements added the write with the stage
	}
	l.scd.write(l)
	l.endWrite()
}

func (versioning) programs(l *lowerer) (run, full *ir.Program) { return l.scd.programs(l) }

// programs are the run and full refresh of an scd2 pipeline.
func (x *scd2Lowering) programs(l *lowerer) (run, full *ir.Program) {
	if x.fromCDC {
		return x.cdcPrograms(l) // see scd2cdc.go
	}
	lo, stage := ir.LoWatermark, ir.StmtStageWindow
	if x.snapshot {
		lo, stage = ir.LoStart, ir.StmtStageAll
	}
	run = l.program(ir.ModeRun, "run", lo, ir.HiNow)
	how := "versions by time (each staged row starts a version at its " + x.time + ")"
	if !x.byTime {
		how = "versions by columns (a tracked change opens a version at hi)"
	}
	read := "the window's rows"
	if x.snapshot {
		read = "the whole snapshot"
	}
	run.Doc = "An incremental run: " + read + ", written as " + how + "."
	run.Steps = append(run.Steps, l.stageSteps(ir.RegWindow)...)
	run.Steps = append(run.Steps, x.sessionSteps(ir.RegWindow)...)
	before, inTx := l.nullStaged(ir.RegRead)
	run.Steps = append(run.Steps, ir.Step{Stmt: stage, If: ir.RegWindow, Read: ir.ReadAffected, Into: []string{ir.RegRead, ir.RegIgnored}})
	run.Steps = append(run.Steps, before...)
	run.Steps = append(run.Steps, ir.Step{Stmt: ir.StmtDedupeStage, If: ir.RegRead})
	run.Steps = append(run.Steps, unignored(inTx)...)
	run.Steps = append(run.Steps, unignored(l.quality(ir.RegRead, false, failInvalid))...)
	run.Steps = append(run.Steps, x.writeSteps(ir.RegRead, ir.RegWindow, true)...)
	run.Steps = append(run.Steps, l.finish()...)
	run.Cleanup = append(l.cleanup(), x.cleanup()...)

	full = l.program(ir.ModeFullRefresh, "full_refresh", ir.LoStart, ir.HiNow)
	full.Doc = "A full refresh: the versions rebuilt from the whole source, in one transaction."
	if x.snapshot {
		full.Force = scd2ForceReason
	}
	full.Steps = append(full.Steps, l.stageSteps("")...)
	full.Steps = append(full.Steps, x.sessionSteps("")...)
	before, inTx = l.nullStaged("")
	full.Steps = append(full.Steps, ir.Step{Stmt: ir.StmtStageAll, Read: ir.ReadAffected, Into: []string{ir.RegRead, ir.RegIgnored}})
	full.Steps = append(full.Steps, before...)
	full.Steps = append(full.Steps, ir.Step{Stmt: ir.StmtDedupeStage})
	full.Steps = append(full.Steps, unignored(inTx)...)
	full.Steps = append(full.Steps, unignored(l.quality("", false, failInvalid))...)
	full.Steps = append(full.Steps, ir.Step{Stmt: ir.StmtClearTarget, Tx: true, Read: ir.ReadAffected, Into: []string{ir.RegDeleted}})
	full.Steps = append(full.Steps, x.writeSteps("", "", false)...)
	full.Steps = append(full.Steps, l.finish()...)
	full.Cleanup = append(l.cleanup(), x.cleanup()...)
	return run, full
}

// unignored makes the steps that quarantine rows take them out of the
// ignored ones, where every row read starts (nullStaged does so already
// when the rows were read before a dedupe).
func unignored(steps []ir.Step) []ir.Step {
	out := make([]ir.Step, len(steps))
	for i, s := range steps {
		if contains(s.Into, ir.RegQuarantined) && !contains(s.Into, "-"+ir.RegIgnored) {
			s.Into = append(append([]string(nil), s.Into...), "-"+ir.RegIgnored)
		}
		out[i] = s
	}
	return out
}

// String names the scd2 shape for the compiled file's header.
func (x *scd2Lowering) String() string {
	open := "NULL"
	if t, err := ir.ParseTime(x.v.OpenEnd); err == nil {
		open = t.Format("2006-01-02 15:04:05")
		if x.v.Type.Kind == ir.Date || t.Equal(t.Truncate(24*time.Hour)) {
			open = t.Format("2006-01-02")
		}
	}
	s := fmt.Sprintf("versions [%s, %s), open end %s", x.v.ValidFrom, x.v.ValidTo, open)
	if x.v.FirstStart != "" {
		s += ", each key's earliest version from " + timeText(x.v.FirstStart, x.v.Type)
	}
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
