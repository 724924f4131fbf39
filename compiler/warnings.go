package compiler

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// Warnings are the mistakes that validate: a spec that compiles and runs,
// and likely does not do what its author means (a watermark that never
// sees an update, ids that commit out of order). Each has a code and a
// position; incrc validate, compile and plan print them without failing
// unless --strict, and a spec silences one code with a reason:
//
//	silence:
//	  no-lag: the source is a replica; its rows are committed when they appear
//
// Errors are for what cannot be right; a warning is for what is right only
// if the author knows something incrc cannot see.

// WarningCode names a kind of warning.
type WarningCode struct {
	Code string
	Doc  string // what it warns of, for the docs and the silence key's hover text
}

// WarningCodes are every warning incrc reports: these, the ones about the
// names of tables (dialects.CheckNames) and the files a glob matches now
// (incrc validate reads the folder).
var WarningCodes = []WarningCode{
	{"watermark-misses-updates", "A merge or cdc watermark on a column that records a creation or a business date (order_date, created_*, a date that is also the partition): a row updated later keeps its value, and no window reads the update."},
	{"sequence-not-commit-order", "A cdc sequence that is the watermark column or an ingestion time: it orders a key's changes by when they were loaded, not by when they happened."},
	{"lookup-current-values", "A lookup without as_of from a pipeline that is backfilled by partition, or to a table that looks like it keeps versions: every row gets the lookup table's values of today."},
	{"id-commit-order", "An integer watermark read from a database without a lookback: ids are taken when a row is written and become visible when its transaction commits, so a row that commits after a larger id was read is never read."},
	{"no-lag", "A time watermark read from a database with neither lag nor lookback: a row whose transaction is still committing when a run reads has a time before the run's hi, and no later window reads it."},
	{"files-match-nothing", "A files glob that matches no file now in a folder that is there: a pattern that means something else than its author thought. (A folder this machine lacks is left to the first run, which fails naming the pattern.)"},
	{"name-case", "Two table names that differ only in case, which every dialect compiled reads as two tables: a quoted name keeps its case there."},
	{"silence-unused", "A silence entry for a code that no warning of the spec raises: it would hide the next one."},
}

func warningCodes() []string {
	out := make([]string, len(WarningCodes))
	for i, c := range WarningCodes {
		out[i] = c.Code
	}
	return out
}

// Silenced is one entry of a spec's silence mapping.
type Silenced struct {
	Code   ir.String
	Reason ir.String
}

func (v *validator) silence() {
	seen := map[string]bool{}
	for _, e := range v.s.Silence {
		code := e.Code.Value
		switch {
		case !contains(warningCodes(), code):
			v.errf(e.Code.Pos, "silence: unknown warning code %s%s", quote(code), suggest(code, warningCodes()))
		case code == "silence-unused":
			v.errf(e.Code.Pos, "silence: silence-unused cannot be silenced: remove the entry that no warning needs")
		case seen[code]:
			v.errf(e.Code.Pos, "silence lists %s twice: keep one", quote(code))
		case strings.TrimSpace(e.Reason.Value) == "" && !v.reported("silence."+code):
			v.errf(e.Code.Pos, "silence.%s needs a reason: why the warning does not apply here, for the next reader (as in %s: the source's rows are committed before they are visible)", code, code)
		}
		seen[code] = true
	}
}

type warner struct {
	s     *Spec
	diags Diagnostics
}

func (w *warner) warn(code string, p ir.Pos, format string, args ...any) {
	w.diags = append(w.diags, Diagnostic{Pos: p, Msg: fmt.Sprintf(format, args...), Code: code, Warning: true, Pipelines: []string{w.s.Pipeline.Value}})
}

// Warnings returns the warnings of valid specs checked as one project
// (CheckProject, or LoadSpecs), before any is silenced (Silence).
func Warnings(specs []*Spec) Diagnostics {
	var out Diagnostics
	for _, s := range specs {
		w := &warner{s: s}
		w.watermark()
		w.sequence()
		w.lookups()
		w.commitOrder()
		out = append(out, w.diags...)
	}
	out.Sort()
	return out
}

// businessDate matches names of the date a row is about, which an update
// does not move: order_date, event_day, dt.
var businessDate = regexp.MustCompile(`(?i)(^|_)(date|day|dt)$`)

// updateLike matches names of a time that every update sets (updated_at,
// last_modified_date, load_date): not a business date.
var updateLike = regexp.MustCompile(`(?i)updat|modif|chang|sync|load|ingest|commit|extract|refresh|last|touch|write|written|seen`)

// ingestLike matches names of the time a row was loaded: when a change
// reached the log, not when it happened.
var ingestLike = regexp.MustCompile(`(?i)(^|_)(ingest|ingested|ingestion|loaded|load|received|arrived|imported|landed|inserted|insert|etl)(_|$)`)

func (w *warner) database() bool {
	return w.s.Source.Table.Set() || w.s.Source.Query.Set()
}

func (w *warner) watermark() {
	s := w.s
	strategy := ir.Strategy(s.Strategy.Value)
	if s.Watermark == nil || (strategy != ir.Merge && strategy != ir.CDCApply) {
		return
	}
	c := s.Column(s.Watermark.Column.Value)
	if c == nil {
		return
	}
	name, pos := c.Name.Value, s.Watermark.Column.Pos
	var why string
	switch {
	case strategy == ir.CDCApply && createdLike.MatchString(name):
		why = "looks like a creation time"
	case s.Partition != nil && s.Partition.Column.Value == name && c.Type.Kind == ir.Date:
		why = "is the partition's date, the day a row belongs to"
	case businessDate.MatchString(name) && !updateLike.MatchString(name):
		why = "looks like a business date, the day a row is about"
	default:
		return
	}
	what := "rows that change"
	if strategy == ir.CDCApply {
		what = "each change as it reaches the log"
	}
	w.warn("watermark-misses-updates", pos, "watermark.column %q %s: a %s must see %s, and a row updated later keeps its %s, so no window reads the update (story 1: the late payment); use the column every update sets, such as updated_at, or the log's ingestion time",
		name, why, strategy, what, name)
}

func (w *warner) sequence() {
	s := w.s
	if s.CDC == nil || s.CDC.Sequence.Value == "" {
		return
	}
	seq := s.CDC.Sequence
	switch {
	case s.Watermark != nil && s.Watermark.Column.Value == seq.Value && s.Column(seq.Value) != nil && s.Column(seq.Value).Type.IsTime():
		w.warn("sequence-not-commit-order", seq.Pos, "cdc.sequence %q is the watermark column, the time a change reached the log: it orders a key's changes by when they were loaded, and two changes loaded in one batch tie or swap; use the source's own order (an LSN, a version, the commit time)", seq.Value)
	case ingestLike.MatchString(seq.Value):
		w.warn("sequence-not-commit-order", seq.Pos, "cdc.sequence %q looks like an ingestion time: it orders a key's changes by when they were loaded, and two changes loaded in one batch tie or swap; use the source's own order (an LSN, a version, the commit time)", seq.Value)
	}
}

// versionedTable matches names of tables that keep versions of their rows.
var versionedTable = regexp.MustCompile(`(?i)(^|_)(scd|scd2|history|hist|versions|versioned|snapshots)(_|$)`)

// validityLike matches names of the columns that bound a version.
var validityLike = regexp.MustCompile(`(?i)^(valid_from|valid_to|valid_until|effective_from|effective_to|effective_date|expiry_date|expired_at|is_current|current_flag|dbt_valid_from|dbt_valid_to)$`)

func (w *warner) lookups() {
	s := w.s
	for _, l := range s.Lookups {
		if l.AsOf.Set() || l.writer != nil && l.writer.Strategy.Value == string(ir.SCD2Strategy) {
			continue // as_of, or an scd2 target (refused without as_of)
		}
		name := l.Table.Value[strings.LastIndexByte(l.Table.Value, '.')+1:]
		validity := ""
		for _, p := range append(append([]Pair(nil), l.On...), l.Columns...) {
			if validityLike.MatchString(p.Right.Value) {
				validity = p.Right.Value
			}
		}
		switch {
		case s.Partition != nil:
			w.warn("lookup-current-values", l.Table.Pos, "lookup %s has no as_of, and this pipeline is backfilled by partition: a rebuilt past %s gets the lookup table's values of today, not of that %s; add as_of: the column that says when the row was true (as in as_of: %s)",
				quote(l.Table.Value), orDefault(s.Partition.Granularity.Value, "day"), orDefault(s.Partition.Granularity.Value, "day"), s.Partition.Column.Value)
		case validity != "":
			w.warn("lookup-current-values", l.Table.Pos, "lookup %s reads %s, a validity column, without as_of: the table keeps versions, and a row is joined with every version of its key (or today's); add as_of, the column that says when the row was true", quote(l.Table.Value), validity)
		case versionedTable.MatchString(name):
			w.warn("lookup-current-values", l.Table.Pos, "lookup %s looks like a table of versions, and has no as_of: a row is joined with every version of its key (or today's); add as_of, the column that says when the row was true", quote(l.Table.Value))
		}
	}
}

func (w *warner) commitOrder() {
	s := w.s
	wm := s.Watermark
	if wm == nil || !w.database() {
		return
	}
	c := s.Column(wm.Column.Value)
	if c == nil {
		return
	}
	strategy := ir.Strategy(s.Strategy.Value)
	if strategy == ir.FullRefresh || strategy == ir.SCD2Strategy && scd2Snapshot(s) {
		return // every run reads [start, hi)
	}
	switch {
	case c.Type.IsInteger() && !wm.Lookback.Set() && strategy == ir.Append && len(s.UniqueKey) == 0:
		w.warn("id-commit-order", wm.Column.Pos, "append by the integer %q from a database loses rows for good: an id is taken when a row is written and seen when its transaction commits, so a row that commits after a larger id was read is below every later window; add unique_key: [%s] and watermark.lookback: 1000, so that each run reads the last 1000 ids again and appends only the ones it has not",
			wm.Column.Value, wm.Column.Value)
	case c.Type.IsInteger() && !wm.Lookback.Set():
		w.warn("id-commit-order", wm.Column.Pos, "the integer watermark %q from a database has no lookback: an id is taken when a row is written and seen when its transaction commits, so a row that commits after a larger id was read is below every later window; add watermark.lookback: 1000, so that each run reads the last 1000 ids again",
			wm.Column.Value)
	case c.Type.IsTime() && !wm.Lag.Set() && !wm.Lookback.Set():
		w.warn("no-lag", wm.Pos, "watermark %q from a database has neither lag nor lookback: a row still committing when a run reads, its %s before the run's hi, is read by no later window; add lag: 5m (hi is then now minus 5 minutes)", wm.Column.Value, wm.Column.Value)
	}
}

// Silence drops the warnings a spec silences (its silence mapping, for
// the warnings reported in its file) and adds a silence-unused warning for
// each entry no warning needed.
func Silence(specs []*Spec, warnings Diagnostics) Diagnostics {
	byFile := map[string]*Spec{}
	for _, s := range specs {
		byFile[s.File] = s
	}
	used := map[*Silenced]bool{}
	var out Diagnostics
	for _, d := range warnings {
		s := byFile[d.Pos.File]
		silenced := false
		if s != nil {
			for i := range s.Silence {
				if e := &s.Silence[i]; e.Code.Value == d.Code {
					used[e], silenced = true, true
				}
			}
		}
		if !silenced {
			out = append(out, d)
		}
	}
	for _, s := range specs {
		for i := range s.Silence {
			if e := &s.Silence[i]; !used[e] {
				out = append(out, Diagnostic{Pos: e.Code.Pos, Code: "silence-unused", Warning: true, Pipelines: []string{s.Pipeline.Value},
					Msg: fmt.Sprintf("silence.%s: no %s warning is raised here; remove the entry, so that it does not hide the next one", e.Code.Value, e.Code.Value)})
			}
		}
	}
	out.Sort()
	return out
}
