package compiler

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	// The zone database compiled in: a spec's partition.timezone means
	// the same on every machine, whatever zoneinfo it has (or lacks).
	_ "time/tzdata"
	"unicode"
	"unicode/utf8"

	"github.com/incrc/incrc/compiler/ir"
)

// MaxPipelineLen bounds pipeline names so that names derived from them
// (staging tables) fit every engine's identifier limit (MySQL: 64).
const MaxPipelineLen = 48

// MaxIdentLen bounds table and column names: PostgreSQL's limit, the
// smallest of the executed engines.
const MaxIdentLen = 63

// Validate checks the meaning of a parsed spec and returns every problem.
func Validate(s *Spec) Diagnostics {
	if s.Pos.Line == 0 {
		return nil // no mapping: Parse said why, and every key would be "missing"
	}
	v := &validator{s: s}
	v.run()
	return v.diags
}

type validator struct {
	s     *Spec
	diags Diagnostics
}

func (v *validator) errf(p ir.Pos, format string, args ...any) { v.diags.add(p, format, args...) }

// reported reports whether Parse already said what is wrong with key.
func (v *validator) reported(key string) bool { return v.s.reported[key] }

// missing reports a required key that is absent, at its parent, unless
// Parse already reported it misspelled or malformed.
func (v *validator) missing(parent ir.Pos, key string) {
	if v.reported(key) {
		return
	}
	if i := strings.LastIndexByte(key, '.'); i >= 0 {
		v.errf(parent, "%s: missing required key %q", key[:i], key[i+1:])
		return
	}
	v.errf(parent, "missing required key %q", key)
}

func (v *validator) run() {
	s := v.s
	v.pipeline()
	v.tables()
	v.foreign()
	v.columns()
	strategy := ir.Strategy(s.Strategy.Value)
	switch {
	case !s.Strategy.Set():
		v.missing(s.Pos, "strategy")
	case s.Strategy.Value == "":
		strategy = "" // Parse reported it
	case !contains(strategies, s.Strategy.Value):
		v.errf(s.Strategy.Pos, "unknown strategy %s%s", quote(s.Strategy.Value), suggest(s.Strategy.Value, strategies))
		strategy = ""
	}
	if st := strategyOf(strategy); st != nil {
		st.validate(v)
	}
	v.key()
	v.watermark(strategy)
	v.dedupe(strategy)
	v.partition(strategy)
	v.quality()
	v.reconcile()
	v.cdc(strategy)
	v.scd2(strategy)
	v.mergeOpts(strategy)
	v.lookups()
	v.silence()
}

func (v *validator) pipeline() {
	s := v.s
	switch p := s.Pipeline; {
	case !p.Set():
		v.missing(s.Pos, "pipeline")
	case p.Value == "":
	case !ir.IsPipelineName(p.Value):
		v.errf(p.Pos, "pipeline %s must be lower case letters, digits and _, starting with a letter, as in dw_orders", quote(p.Value))
	case len(p.Value) > MaxPipelineLen:
		v.errf(p.Pos, "pipeline %s is longer than %d characters: the staging table named after it must fit every engine's identifier limit", quote(p.Value), MaxPipelineLen)
	}
}

// checkTable accepts [catalog.][schema.]table made of plain identifiers:
// nothing a spec writes in a name can leave the identifier.
func (v *validator) checkTable(what string, t ir.String) {
	if t.Value == "" {
		return // absent, or Parse reported the empty value
	}
	parts := strings.Split(t.Value, ".")
	off := 0
	for _, part := range parts {
		if !ir.IsIdent(part) {
			v.errf(t.At(off+badIdentChar(part)), "%s %s is not a plain name: use letters, digits and _, as in schema.table (no quotes, spaces, semicolons or comments)", what, quote(t.Value))
			return
		}
		off += len(part) + 1
	}
	for _, part := range parts {
		if len(part) > MaxIdentLen {
			v.errf(t.Pos, "%s %s: a name is at most %d characters (PostgreSQL cuts longer ones short, and two names may then collide)", what, quote(t.Value), MaxIdentLen)
			return
		}
	}
	if len(parts) > 3 {
		v.errf(t.Pos, "%s %s has %d parts: expected table, schema.table or catalog.schema.table", what, quote(t.Value), len(parts))
		return
	}
	if strings.HasPrefix(strings.ToLower(parts[len(parts)-1]), "incrc_") && what == "target.table" {
		v.errf(t.Pos, "%s %s: names starting with incrc_ are reserved for incrc's state and staging tables", what, quote(t.Value))
	}
}

func (v *validator) tables() {
	s := v.s
	src := s.Source
	switch {
	case src.Pos.Line == 0:
		v.missing(s.Pos, "source")
	case v.reported("source"), v.reported("source.table"), v.reported("source.query"):
		v.checkTable("source.table", src.Table)
	case src.Files.Set() && (src.Table.Set() || src.Query.Set()):
		v.errf(src.Files.Pos, "source: give files, or table or query, not both")
	case src.Files.Set():
	case src.Table.Set() && src.Query.Set():
		v.errf(src.Query.Pos, "source: give table or query, not both")
	case src.Table.Set():
		v.checkTable("source.table", src.Table)
	case src.Query.Set():
		wm := ""
		if s.Watermark != nil {
			wm = s.Watermark.Column.Value
		}
		for _, problem := range checkQuery(src.Query.Value, wm) {
			v.errf(src.Query.At(problem.Off), "source.query %s", problem.Msg)
		}
	default:
		v.errf(src.Pos, "source needs table (schema.table), query (a SELECT) or files (a folder glob)")
	}
	switch {
	case s.Target.Pos.Line == 0:
		v.missing(s.Pos, "target")
	case v.reported("target"):
	case !s.Target.Table.Set():
		v.missing(s.Target.Pos, "target.table")
	default:
		v.checkTable("target.table", s.Target.Table)
		if src.Table.Value != "" && !src.Connection.Set() && strings.EqualFold(src.Table.Value, s.Target.Table.Value) {
			v.errf(s.Target.Table.Pos, "target.table %s is the source table: a pipeline writes somewhere else than it reads", quote(s.Target.Table.Value))
		}
	}
}

func (v *validator) columns() {
	s := v.s
	if len(s.Columns) == 0 {
		v.missing(s.Pos, "columns")
		return
	}
	for _, c := range s.Columns {
		switch {
		case !ir.IsIdent(c.Name.Value):
			v.errf(c.Name.At(badIdentChar(c.Name.Value)), "column %s is not a plain name: use letters, digits and _, starting with a letter or _", quote(c.Name.Value))
		case len(c.Name.Value) > MaxIdentLen:
			v.errf(c.Name.Pos, "column %s: a name is at most %d characters (PostgreSQL cuts longer ones short, and two names may then collide)", quote(c.Name.Value), MaxIdentLen)
		case strings.HasPrefix(strings.ToLower(c.Name.Value), "incrc_"):
			v.errf(c.Name.Pos, "column %s: names starting with incrc_ are reserved for incrc's own columns", quote(c.Name.Value))
		}
	}
}

// col checks that ref names a declared column and returns it.
func (v *validator) col(what string, ref ir.String) *Column {
	if ref.Value == "" || len(v.s.Columns) == 0 {
		return nil // absent, reported by Parse, or no columns to look in
	}
	c := v.s.Column(ref.Value)
	if c == nil {
		v.errf(ref.Pos, "%s %s is not a declared column%s", what, quote(ref.Value), suggest(ref.Value, v.s.ColumnNames()))
	}
	if c != nil && c.Type.Kind == "" {
		return nil // declared with a bad type, reported by Parse: nothing to check against
	}
	return c
}

// needsKey reports a strategy that matches rows by unique_key without one.
func (v *validator) needsKey() {
	s := v.s
	if len(s.UniqueKey) == 0 && !v.reported("unique_key") {
		v.errf(s.Strategy.Pos, "strategy %s needs unique_key, the columns that identify a row: without it a changed row cannot be matched to the row it replaces", s.Strategy.Value)
	}
}

// needsWatermark reports a strategy that reads its source incrementally
// without a watermark (files loaded by file need none: the bookmark is
// the files).
func (v *validator) needsWatermark() {
	s := v.s
	if s.Watermark == nil && !v.reported("watermark") && !s.Source.ByFile.Set() {
		v.errf(s.Strategy.Pos, "strategy %s reads the source incrementally and needs watermark: {column: COLUMN, start: DATE}", s.Strategy.Value)
	}
}

func (v *validator) key() {
	s := v.s
	if len(s.UniqueKey) == 0 {
		return
	}
	seen := map[string]bool{}
	for _, k := range s.UniqueKey {
		if seen[k.Value] {
			v.errf(k.Pos, "unique_key lists %q twice: keep one", k.Value)
		}
		seen[k.Value] = true
		c := v.col("unique_key column", k)
		if c != nil && (c.Type.Kind == ir.JSON || c.Type.Kind == ir.Double) {
			v.errf(k.Pos, "unique_key column %q has type %s, which engines cannot compare reliably: key on an integer, text or date column", k.Value, c.Type)
		}
	}
}

// createdLike matches names that say a row's creation time: a watermark on
// such a column misses every later update of the row.
var createdLike = regexp.MustCompile(`(?i)(^|_)(created|inserted|creation|insert)(_|$)`)

func (v *validator) watermark(strategy ir.Strategy) {
	s := v.s
	w := s.Watermark
	if v.reported("watermark") {
		return
	}
	if w == nil {
		return // the strategy says whether it needs one (needsWatermark)
	}
	if !w.Column.Set() {
		v.missing(w.Pos, "watermark.column")
	}
	c := v.col("watermark.column", w.Column)
	if c != nil && !c.Type.IsTime() && !c.Type.IsInteger() {
		v.errf(w.Column.Pos, "watermark.column %q has type %s: a watermark must be a timestamp, date or integer column that grows as rows change", c.Name.Value, c.Type)
		c = nil
	}
	if c != nil && (strategy == ir.Merge || strategy == ir.SCD2Strategy && !scd2VersionTable(s)) && createdLike.MatchString(c.Name.Value) {
		v.errf(w.Column.Pos, "watermark.column %q looks like a creation time: a %s must see rows that change, and a creation time never moves when a row is updated; use the column that every update sets, such as updated_at", c.Name.Value, strategy)
	}
	if !w.Start.Set() {
		if !v.reported("watermark.start") {
			v.errf(w.Pos, "watermark: missing required key \"start\", the lower bound of the first run (as in start: 2026-01-01): it must be chosen, never the epoch by accident")
		}
	} else if c != nil && w.Start.Value != "" {
		if _, err := ir.ParseWatermark(c.Type, w.Start.Value); err != nil {
			v.errf(w.Start.Pos, "watermark.start: %v", err)
		}
	}
	if w.Lookback.Set() {
		switch {
		case strategy == ir.Append && len(s.UniqueKey) > 0:
			// An append with a unique_key appends only the keys the target
			// lacks: reading a row twice writes it once.
		case strategy != "" && !strategy.Idempotent():
			v.errf(w.Lookback.Pos, "watermark.lookback re-reads rows already written, and strategy %s is not idempotent: it would write them twice; add unique_key (an append then writes only the keys the target lacks), use merge, or drop the lookback", strategy)
		case c == nil:
		case c.Type.IsInteger() && !w.Lookback.IsCount:
			v.errf(w.Lookback.Pos, "watermark.lookback %s: the watermark %q is an integer, so the lookback is a number of ids such as 1000, not a duration", quote(w.Lookback.Text), c.Name.Value)
		case c.Type.IsTime() && w.Lookback.IsCount && w.Lookback.Count != 0:
			v.errf(w.Lookback.Pos, "watermark.lookback %s needs a unit: 90s, 15m, 36h, 2d, 1w", quote(w.Lookback.Text))
		case c.Type.Kind == ir.Date && w.Lookback.Value%(24*3600e9) != 0:
			v.errf(w.Lookback.Pos, "watermark.lookback %s: the watermark %q is a date, so the lookback is whole days (2d, 1w)", quote(w.Lookback.Text), c.Name.Value)
		}
	}
	if w.Batch.Set() {
		switch {
		case strategy == ir.FullRefresh:
			v.errf(w.Batch.Pos, "watermark.batch splits a run's window, and strategy full_refresh reads the whole source on every run: remove the batch")
		case strategy == ir.SCD2Strategy && s.SCD2 != nil && scd2Snapshot(s):
			v.errf(w.Batch.Pos, "watermark.batch splits a run's window, and scd2.snapshot reads the whole source [start, hi) on every run: remove the batch")
		}
		switch {
		case c == nil:
		case c.Type.IsInteger() && !w.Batch.IsCount:
			v.errf(w.Batch.Pos, "watermark.batch %s: the watermark %q is an integer, so a batch is a number of ids such as 100000, not a duration", quote(w.Batch.Text), c.Name.Value)
		case c.Type.IsInteger() && w.Batch.Count <= 0, !c.Type.IsInteger() && !w.Batch.IsCount && w.Batch.Value <= 0:
			v.errf(w.Batch.Pos, "watermark.batch %s: a batch must be larger than nothing", quote(w.Batch.Text))
		case c.Type.IsTime() && w.Batch.IsCount:
			v.errf(w.Batch.Pos, "watermark.batch %s needs a unit: 90s, 15m, 36h, 2d, 1w", quote(w.Batch.Text))
		case c.Type.Kind == ir.Date && w.Batch.Value%(24*3600e9) != 0:
			v.errf(w.Batch.Pos, "watermark.batch %s: the watermark %q is a date, so a batch is whole days (1d, 1w)", quote(w.Batch.Text), c.Name.Value)
		}
	}
	if w.Lag.Set() && c != nil && c.Type.IsInteger() {
		v.errf(w.Lag.Pos, "watermark.lag applies to time watermarks; %q is an integer, whose window ends at the largest id present: remove the lag", c.Name.Value)
	}
	if w.Tiebreak.Set() {
		v.tiebreak(strategy, c)
	}
}

// tiebreak checks watermark.tiebreak: an integer key column after a
// timestamp, on a strategy whose window is the only thing it reads.
func (v *validator) tiebreak(strategy ir.Strategy, wc *Column) {
	s := v.s
	w := s.Watermark
	t := w.Tiebreak
	c := v.col("watermark.tiebreak", t)
	switch {
	case c == nil:
	case !c.Type.IsInteger():
		v.errf(t.Pos, "watermark.tiebreak %q has type %s: the tiebreak is a monotonic id, an integer column", c.Name.Value, c.Type)
	case !contains(values(s.UniqueKey), c.Name.Value) || c.Nullable:
		// A row whose id is NULL would sit nowhere in the order at a
		// window's edge: the key's NOT NULL rule keeps every row in it.
		v.errf(t.Pos, "watermark.tiebreak %q must be a unique_key column that is never NULL: each row takes one place in the order (%s, %s), and a NULL id has none", c.Name.Value, w.Column.Value, c.Name.Value)
	case wc != nil && c.Name.Value == wc.Name.Value:
		v.errf(t.Pos, "watermark.tiebreak %q is the watermark column itself: name the id that orders rows of one time", c.Name.Value)
	}
	if wc != nil && wc.Type.Kind != ir.Timestamp && wc.Type.Kind != ir.TimestampTZ {
		// A date's ties are whole days: reading part of one and moving on
		// by id would lose a row updated later that day, whose date and
		// id both stay where they were.
		v.errf(t.Pos, "watermark.tiebreak needs a timestamp watermark; %q is %s: a row updated later on the same %s keeps its value and its id, and a run that read part of its ties would never read it again", wc.Name.Value, wc.Type, map[bool]string{true: "day", false: "value"}[wc.Type.Kind == ir.Date])
	}
	switch {
	case strategy != "" && strategy != ir.Merge && strategy != ir.Append:
		v.errf(t.Pos, "watermark.tiebreak applies to strategy merge and append, whose runs read only their window; strategy %s does not take one: remove it", strategy)
	case w.Batch.Set():
		v.errf(w.Batch.Pos, "watermark.batch cuts windows on the time alone, and watermark.tiebreak orders rows by time and id: remove one of them")
	case s.Partition != nil:
		v.errf(t.Pos, "watermark.tiebreak does not apply with partitions, which a run rewrites or a backfill rebuilds whole: remove it")
	}
}

func (v *validator) dedupe(strategy ir.Strategy) {
	s := v.s
	if s.UniqueSource() {
		switch {
		case len(s.UniqueKey) == 0:
			v.errf(s.Source.Unique.Pos, "source.unique says the source holds one row per unique_key, and there is no unique_key: add unique_key, or remove source.unique")
		case strategy == ir.CDCApply || strategy == ir.SCD2Strategy:
			v.errf(s.Source.Unique.Pos, "source.unique does not apply to strategy %s, whose source holds several rows per key: remove it", strategy)
		}
	}
	if !s.DedupeBy.Set() {
		return
	}
	c := v.col("dedupe_by", s.DedupeBy)
	if len(s.UniqueKey) == 0 {
		v.errf(s.DedupeBy.Pos, "dedupe_by keeps the newest row per unique_key in a batch, and there is no unique_key: add unique_key, or remove dedupe_by")
	}
	if c != nil && (c.Type.Kind == ir.JSON || c.Type.Kind == ir.Boolean) {
		v.errf(s.DedupeBy.Pos, "dedupe_by column %q has type %s, which does not order versions: use a timestamp or a sequence number", c.Name.Value, c.Type)
	}
}

var granularities = []string{"hour", "day", "month"}

func (v *validator) partition(strategy ir.Strategy) {
	s := v.s
	pt := s.Partition
	if v.reported("partition") {
		return
	}
	if pt == nil {
		return // the strategy says whether it needs one (needsPartition)
	}
	if !pt.Column.Set() {
		v.missing(pt.Pos, "partition.column")
	}
	c := v.col("partition.column", pt.Column)
	if c != nil && c.Type.Kind != ir.Date && c.Type.Kind != ir.Timestamp && c.Type.Kind != ir.TimestampTZ {
		v.errf(pt.Column.Pos, "partition.column %q has type %s: partitions are by a date or timestamp column", c.Name.Value, c.Type)
	}
	if pt.Granularity.Value != "" {
		g := pt.Granularity.Value
		switch {
		case !contains(granularities, g):
			v.errf(pt.Granularity.Pos, "unknown partition.granularity %s%s", quote(g), suggest(g, granularities))
		case g == "hour" && c != nil && c.Type.Kind == ir.Date:
			v.errf(pt.Granularity.Pos, "partition.granularity hour needs a timestamp column; %q is a date", c.Name.Value)
		}
	}
	if tz := pt.Timezone; tz.Set() {
		if err := CheckZone(tz.Value); err != nil {
			v.errf(tz.Pos, "partition.timezone: %v", err)
		}
		switch {
		case c != nil && c.Type.Kind == ir.Date:
			v.errf(tz.Pos, "partition.timezone: %q is a date, which is a day already, in no zone: remove the timezone (or partition by a timestamp column)", c.Name.Value)
		case pt.Granularity.Value == "hour":
			v.errf(tz.Pos, "partition.timezone: hours are the same in every zone incrc accepts (whole-hour offsets): remove the timezone, or partition by day or month")
		}
	}
}

// zoneName is what a time zone name may hold: IANA names are letters,
// digits and _ + - in parts separated by /. Anything else (a path, a
// space, a quote) never reaches the zone database.
var zoneName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9][A-Za-z0-9_+-]*)*$`)

// CheckZone validates a time zone name from a spec: an IANA name that the
// zone database knows, whose offsets from UTC are whole hours (incrc
// finds a row's local day from its UTC hour). It returns the zone.
func CheckZone(name string) error {
	if len(name) > 64 || !zoneName.MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("%s is not a time zone name: write an IANA name such as Europe/Berlin or UTC", quote(name))
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return fmt.Errorf("unknown time zone %s: write an IANA name such as Europe/Berlin or UTC", quote(name))
	}
	// Each year's winter and summer offsets, over the years data has:
	// zones such as Asia/Kolkata (+05:30) cut a UTC hour in two days.
	for y := 1970; y <= 2100; y++ {
		for _, m := range []time.Month{time.January, time.July} {
			if _, off := time.Date(y, m, 15, 12, 0, 0, 0, time.UTC).In(loc).Zone(); off%3600 != 0 {
				return fmt.Errorf("time zone %s is %s from UTC in %d, not a whole number of hours: incrc cuts rows into UTC hours and finds each one's local day, which such an hour straddles", quote(name), time.Duration(off)*time.Second, y)
			}
		}
	}
	return nil
}

var onInvalid = []string{"quarantine", "fail"}

func (v *validator) quality() {
	q := v.s.Quality
	if q == nil || v.reported("quality") {
		return
	}
	for _, n := range q.NotNull {
		v.col("quality.not_null column", n)
	}
	for _, chk := range q.Checks {
		if chk.Value == "" {
			continue // Parse reported it empty
		}
		e, err := ParseExpr(chk.Value, v.s.ColumnNames())
		if err != nil {
			v.errf(v.at(chk, err), "quality check %s: %v", quote(chk.Value), err)
			continue
		}
		if !v.isCondition(e) {
			v.errf(chk.Pos, "quality check %s is not a condition: write what a valid row satisfies, as in amount >= 0", quote(chk.Value))
		}
	}
	if q.OnInvalid.Value != "" && !contains(onInvalid, q.OnInvalid.Value) {
		v.errf(q.OnInvalid.Pos, "unknown quality.on_invalid %s%s", quote(q.OnInvalid.Value), suggest(q.OnInvalid.Value, onInvalid))
	}
}

func (v *validator) reconcile() {
	r := v.s.Reconcile
	if r == nil || v.reported("reconcile") {
		return
	}
	if !r.By.Set() {
		v.missing(r.Pos, "reconcile.by")
	}
	by := v.col("reconcile.by", r.By)
	if g := r.Granularity; g.Value != "" {
		switch {
		case !contains(granularities, g.Value):
			v.errf(g.Pos, "unknown reconcile.granularity %s%s", quote(g.Value), suggest(g.Value, granularities))
		case v.s.Partition != nil:
			v.errf(g.Pos, "reconcile.granularity: a partitioned pipeline reconciles per partition (partition.granularity), so that a drifted group is one partition a backfill rebuilds; remove reconcile.granularity")
		case g.Value == "hour" && by != nil && by.Type.Kind == ir.Date:
			v.errf(g.Pos, "reconcile.granularity hour needs a timestamp column; %q is a date", by.Name.Value)
		}
	}
	if by != nil && by.Type.Kind != "" && !by.Type.IsTime() {
		v.errf(r.By.Pos, "reconcile.by %q is %s: reconcile compares the groups of a date or timestamp column (incrc reconcile --from/--to is a range of it)", by.Name.Value, by.Type)
	}
	for _, m := range r.Measures {
		if m.Value == "" {
			continue // Parse reported it
		}
		meas, err := ParseMeasure(m.Value, v.s.ColumnNames())
		if err != nil {
			v.errf(v.at(m, err), "reconcile: %v", err)
			continue
		}
		if meas.Fn == "sum" {
			if c := v.s.Column(meas.Column); c != nil && c.Type.Kind != "" && !c.Type.IsNumeric() {
				v.errf(m.Pos, "reconcile: sum(%s) needs a numeric column; %q is %s", meas.Column, meas.Column, c.Type)
			}
		}
	}
}

// mergeOpts checks merge.update_columns and merge.exclude_columns. The
// columns a run needs the target to carry the newest value of cannot be
// kept at their first value: the version the merge's guard compares (kept,
// it would let an older version overwrite a newer one), and the columns
// that place a row in a partition or a reconcile group (kept, the row
// would sit in a group the source no longer puts it in).
func (v *validator) mergeOpts(strategy ir.Strategy) {
	s := v.s
	m := s.MergeOpts
	if m == nil || v.reported("merge") {
		return
	}
	if strategy != "" && strategy != ir.Merge {
		v.errf(m.Pos, "merge: update_columns and exclude_columns apply to strategy merge only, and this pipeline's is %s: remove the merge block", strategy)
		return
	}
	list, what := m.ExcludeColumns, "merge.exclude_columns"
	switch {
	case len(m.UpdateColumns) > 0 && len(m.ExcludeColumns) > 0:
		v.errf(m.ExcludeColumns[0].Pos, "merge: give update_columns or exclude_columns, not both: one says the other")
		return
	case len(m.UpdateColumns) > 0:
		list, what = m.UpdateColumns, "merge.update_columns"
	case len(m.ExcludeColumns) == 0:
		if !v.reported("merge.update_columns") && !v.reported("merge.exclude_columns") {
			v.errf(m.Pos, "merge: give update_columns (the columns an update writes) or exclude_columns (those it leaves alone), or remove the block")
		}
		return
	}
	keys := values(s.UniqueKey)
	seen := map[string]bool{}
	ok := true
	for _, c := range list {
		if c.Value == "" {
			ok = false
			continue // Parse reported it
		}
		if seen[c.Value] {
			v.errf(c.Pos, "%s lists %q twice: keep one", what, c.Value)
			continue
		}
		seen[c.Value] = true
		if v.col(what+" column", c) == nil {
			ok = false
			continue
		}
		if contains(keys, c.Value) {
			v.errf(c.Pos, "%s: %q is a unique_key column, which a merge matches on and never updates: remove it from the list", what, c.Value)
			ok = false
		}
	}
	if len(s.Columns) == 0 {
		return
	}
	kept := s.InsertOnly()
	if ok && len(kept) == len(NonKeyColumns(s)) {
		v.errf(list[0].Pos, "%s leaves an update nothing to write: use strategy append with the unique_key, which writes each key once and ignores it after", what)
		return
	}
	at := func(col string) ir.Pos {
		for _, c := range list {
			if c.Value == col {
				return c.Pos
			}
		}
		return list[0].Pos
	}
	version := s.DedupeBy.Value
	if version == "" && s.Watermark != nil {
		version = s.Watermark.Column.Value
	}
	if version != "" && contains(kept, version) {
		v.errf(at(version), "%s: the update would keep %q, the version the merge compares so that an older row never replaces a newer one: an update must write it", what, version)
	}
	if pt := s.Partition; pt != nil && contains(kept, pt.Column.Value) {
		v.errf(at(pt.Column.Value), "%s: the update would keep %q, the partition column, so a row would stay in the partition it first fell in while a backfill rebuilds it from the source: an update must write it", what, pt.Column.Value)
	}
	if r := s.Reconcile; r != nil && contains(kept, r.By.Value) {
		v.errf(at(r.By.Value), "%s: the update would keep %q, the column reconcile groups by, so a row would be compared in a group the source no longer puts it in: an update must write it", what, r.By.Value)
	}
}

// NonKeyColumns returns the declared columns that are not unique_key's.
func NonKeyColumns(s *Spec) []string {
	keys := values(s.UniqueKey)
	var out []string
	for _, c := range s.Columns {
		if !contains(keys, c.Name.Value) {
			out = append(out, c.Name.Value)
		}
	}
	return out
}

func (v *validator) cdc(strategy ir.Strategy) {
	s := v.s
	c := s.CDC
	if v.reported("cdc") {
		return
	}
	switch {
	case c == nil:
		return // the strategy says whether it needs one
	case strategy != ir.CDCApply && strategy != ir.SCD2Strategy && strategy != "":
		v.errf(c.Pos, "cdc is only meaningful with strategy cdc (apply the changes by key) or scd2 (keep every change as a version), not %s: remove it, or change the strategy", strategy)
	}
	versions := strategy == ir.SCD2Strategy
	if !c.Op.Set() {
		v.missing(c.Pos, "cdc.op")
	}
	if !c.Sequence.Set() {
		v.missing(c.Pos, "cdc.sequence")
	}
	op := v.col("cdc.op", c.Op)
	if op != nil && !op.Type.IsInteger() && op.Type.Kind != ir.Text && op.Type.Kind != ir.Varchar {
		v.errf(c.Op.Pos, "cdc.op %q has type %s: an op code is text (c, u, d) or an integer", op.Name.Value, op.Type)
		op = nil
	}
	seq := v.col("cdc.sequence", c.Sequence)
	if seq != nil && !seq.Type.IsInteger() && seq.Type.Kind != ir.Decimal && seq.Type.Kind != ir.Timestamp && seq.Type.Kind != ir.TimestampTZ {
		v.errf(c.Sequence.Pos, "cdc.sequence %q has type %s: a sequence orders a key's changes, so it is an integer, a decimal or a timestamp (a text LSN compares as text: '0/10' sorts before '0/9'; cast it in source.query)", seq.Name.Value, seq.Type)
	}
	if op != nil && seq != nil && strings.EqualFold(c.Op.Value, c.Sequence.Value) {
		v.errf(c.Sequence.Pos, "cdc.sequence %q is also cdc.op: the operation and the order of changes are two columns", c.Sequence.Value)
	}
	for _, ref := range []struct {
		key, what string
		col       ir.String
	}{{"cdc.op", "operation", c.Op}, {"cdc.sequence", "sequence", c.Sequence}} {
		for _, k := range s.UniqueKey {
			if ref.col.Value != "" && k.Value == ref.col.Value {
				v.errf(k.Pos, "unique_key column %q is %s: the key identifies the row a change applies to, and each change of that row has its own %s", k.Value, ref.key, ref.what)
			}
		}
	}
	for _, k := range s.UniqueKey {
		// scd2 says it for its versions (scd2Rules).
		if col := s.Column(k.Value); col != nil && col.Nullable && !versions {
			v.errf(k.Pos, "unique_key column %q is declared nullable: a change log's key is never NULL, and a change of a NULL key could not be matched to its row; remove nullable: true", k.Value)
		}
	}
	at := v.col("cdc.at", c.At)
	if at != nil && !at.Type.IsTime() {
		v.errf(c.At.Pos, "cdc.at %q has type %s: the commit time of a change is a timestamp or a date", at.Name.Value, at.Type)
	}
	if versions {
		if c.Deletes.Set() {
			v.errf(c.Deletes.Pos, "cdc.deletes does not apply to strategy scd2: a delete ends the key's current version at the delete's %s, and the closed version stays as history; remove deletes", versionTime(s))
		}
		if o := c.Ops; o != nil && len(o.Truncate) > 0 {
			v.errf(o.Truncate[0].Pos, "cdc.ops.truncate does not apply to strategy scd2: a truncate empties the target, and emptying an scd2 target would erase the history its versions keep (Databricks' AUTO CDC applies truncate to SCD type 1 only, for the same reason); instead, end the versions with deletes: the log's delete of a key ends its current version at the delete's %s and keeps the history; remove truncate (a change with that op is then invalid: quarantined, or the run fails), or use strategy cdc, a current-state target that a truncate empties", versionTime(s))
		}
		if c.SoftDelete != nil {
			v.errf(c.SoftDelete.Pos, "cdc.soft_delete does not apply to strategy scd2: a delete ends the key's current version at the delete's %s, its valid_to; remove soft_delete", versionTime(s))
		}
	} else {
		soft := c.Deletes.Value == "soft"
		if c.Deletes.Value != "" && c.Deletes.Value != "hard" && !soft {
			v.errf(c.Deletes.Pos, "unknown cdc.deletes %s (expected one of: hard, soft)", quote(c.Deletes.Value))
		}
		if soft && !c.At.Set() && !v.reported("cdc.at") {
			v.errf(c.Deletes.Pos, "cdc.deletes soft marks a deleted row with the time it was deleted, and cdc.at is not set: add at: COLUMN, the change's commit time")
		}
		v.softDelete(c, soft)
	}
	v.cdcOps(c, op)
	seen := map[string]int{}
	for _, x := range c.Exclude {
		if x.Value == "" {
			continue // Parse reported it
		}
		if line, ok := seen[x.Value]; ok {
			v.errf(x.Pos, "cdc.exclude lists %q twice (first on line %d): keep one", x.Value, line)
			continue
		}
		seen[x.Value] = x.Pos.Line
		v.col("cdc.exclude column", x)
		if contains(s.Key(), x.Value) {
			v.errf(x.Pos, "cdc.exclude names %q, a unique_key column: the target keeps its key, so it cannot leave it out", x.Value)
		}
	}
	if strategy != ir.CDCApply && !versions {
		return
	}
	switch {
	case s.DedupeBy.Set() && versions:
		v.errf(s.DedupeBy.Pos, "dedupe_by does not apply to scd2 from a change log: a key's changes at one commit time are ordered by cdc.sequence, and the last one is the version; remove dedupe_by")
	case s.DedupeBy.Set():
		v.errf(s.DedupeBy.Pos, "dedupe_by does not apply to strategy cdc: a key's changes are ordered by cdc.sequence; remove dedupe_by")
	}
	if versions {
		v.tombstonesName()
		return // scd2Rules says what partition and reconcile would do to versions
	}
	if s.Partition != nil {
		v.errf(s.Partition.Pos, "partition does not apply to strategy cdc: changes are applied by key, not rewritten by partition; remove partition")
	}
	if s.Reconcile != nil {
		v.errf(s.Reconcile.Pos, "reconcile does not apply to strategy cdc yet: it compares source rows with target rows one for one, and a change log holds changes; remove reconcile")
	}
	v.tombstonesName()
}

// tombstonesName checks that the tombstones table beside a change log's
// target has a name every engine keeps whole.
func (v *validator) tombstonesName() {
	if t := v.s.Target.Table; t.Value != "" && ir.IsIdent(t.Value[strings.LastIndexByte(t.Value, '.')+1:]) {
		if name := t.Value[strings.LastIndexByte(t.Value, '.')+1:]; len(name+tombstonesSuffix) > MaxIdentLen {
			v.errf(t.Pos, "target.table %s: its tombstones table %s would be longer than %d characters: shorten the name", quote(t.Value), quote(name+tombstonesSuffix), MaxIdentLen)
		}
	}
}

// softDelete checks the names of the columns a soft delete sets: they are
// added to the target, so they must not collide with what it holds.
func (v *validator) softDelete(c *CDC, soft bool) {
	sd := c.SoftDelete
	if sd == nil {
		return
	}
	if !soft {
		v.errf(sd.Pos, "cdc.soft_delete names the columns a soft delete sets, and cdc.deletes is %s: add deletes: soft, or remove soft_delete", orDefault(c.Deletes.Value, "hard"))
		return
	}
	flag, at := SoftDeleteNames(c)
	for _, n := range []ir.String{sd.Flag, sd.At} {
		switch {
		case n.Value == "":
		case !ir.IsIdent(n.Value):
			v.errf(n.At(badIdentChar(n.Value)), "cdc.soft_delete column %s is not a plain name: use letters, digits and _", quote(n.Value))
		case len(n.Value) > MaxIdentLen:
			v.errf(n.Pos, "cdc.soft_delete column %s: a name is at most %d characters", quote(n.Value), MaxIdentLen)
		case strings.HasPrefix(strings.ToLower(n.Value), "incrc_"):
			v.errf(n.Pos, "cdc.soft_delete column %s: names starting with incrc_ are reserved for incrc's own columns", quote(n.Value))
		}
	}
	for _, n := range []struct {
		name string
		at   ir.String
	}{{flag, sd.Flag}, {at, sd.At}} {
		for _, col := range v.s.Columns {
			if strings.EqualFold(col.Name.Value, n.name) {
				pos := n.at.Pos
				if !n.at.Set() {
					pos = sd.Pos
				}
				v.errf(pos, "cdc.soft_delete column %q is a declared column: the target holds both; name the mark something else, as in soft_delete: {flag: is_deleted, at: deleted_at}", n.name)
			}
		}
	}
	if strings.EqualFold(flag, at) {
		v.errf(sd.Pos, "cdc.soft_delete names %q for both the flag and the time: give them two names", flag)
	}
}

// cdcOps checks the op codes: each a literal the op column can hold, and
// no code of two kinds, which would make a change both a delete and not.
func (v *validator) cdcOps(c *CDC, op *Column) {
	ops := c.Ops
	if ops == nil {
		if op != nil && op.Type.IsInteger() {
			v.errf(c.Op.Pos, "cdc.op %q is an integer column, and the default op codes are Debezium's c, r, u, d: list yours, as in ops: {insert: [1], update: [2], delete: [3]}", op.Name.Value)
		}
		return
	}
	if len(ops.Insert) == 0 && len(ops.Update) == 0 && !v.reported("cdc.ops.insert") && !v.reported("cdc.ops.update") {
		v.errf(ops.Pos, "cdc.ops lists no insert or update code: a change log without them writes nothing; add insert: [CODE]")
	}
	seen := map[string]string{}
	for _, kind := range []struct {
		name  string
		codes []ir.String
	}{{"insert", ops.Insert}, {"update", ops.Update}, {"delete", ops.Delete}, {"truncate", ops.Truncate}} {
		for _, code := range kind.codes {
			if code.Value == "" {
				continue // Parse reported it
			}
			if why := badOpCode(code.Value, op); why != "" {
				v.errf(code.Pos, "cdc.ops.%s code %s %s", kind.name, quote(code.Value), why)
				continue
			}
			if first, ok := seen[code.Value]; ok {
				if first == kind.name {
					v.errf(code.Pos, "cdc.ops.%s lists %s twice: keep one", kind.name, quote(code.Value))
				} else {
					v.errf(code.Pos, "cdc.ops: %s is both a%s %s code and a%s %s code: a change has one kind", quote(code.Value), article(first), first, article(kind.name), kind.name)
				}
				continue
			}
			seen[code.Value] = kind.name
		}
	}
}

// MaxOpCodeLen bounds an op code: codes are a letter or a word.
const MaxOpCodeLen = 32

// badOpCode says why code cannot be an op code of the column op, or "".
// A code becomes a literal in SQL, spelled by each engine's own rule: like
// a check's literals it is one line of printable text without a backslash,
// which engines read differently.
func badOpCode(code string, op *Column) string {
	if op != nil && op.Type.IsInteger() {
		if _, ok := ir.CanonicalNumber(code); !ok || strings.ContainsAny(code, ".eE") {
			return fmt.Sprintf("is not an integer, and cdc.op %q is %s", op.Name.Value, op.Type)
		}
		return ""
	}
	switch {
	case len(code) > MaxOpCodeLen:
		return fmt.Sprintf("is longer than %d characters: an op code is a letter or a word", MaxOpCodeLen)
	case strings.TrimSpace(code) != code:
		return "begins or ends with a space, which a reviewer cannot see"
	case strings.Contains(code, `\`):
		return "holds a backslash, which engines read differently in a literal"
	}
	for _, r := range code {
		if !unicode.IsPrint(r) {
			return fmt.Sprintf("holds the character %U, which is not printable", r)
		}
	}
	if op != nil && op.Type.Kind == ir.Varchar && utf8.RuneCountInString(code) > op.Type.Length {
		return fmt.Sprintf("is longer than cdc.op %q, a %s, can hold", op.Name.Value, op.Type)
	}
	return ""
}

func article(word string) string {
	if strings.IndexByte("aeiou", word[0]) >= 0 {
		return "n"
	}
	return ""
}

func (v *validator) scd2(strategy ir.Strategy) {
	s := v.s
	c := s.SCD2
	if v.reported("scd2") {
		return
	}
	if c == nil {
		if strategy == ir.SCD2Strategy && s.CDC != nil {
			v.scd2Rules(scd2Block(s)) // from a change log the block is optional
		}
		return // else the strategy says whether it needs one
	}
	if strategy != ir.SCD2Strategy && strategy != "" {
		v.errf(c.Pos, "scd2 is only meaningful with strategy scd2, not %s: remove it, or use strategy: scd2", strategy)
	}
	for _, name := range []ir.String{c.ValidFrom, c.ValidTo, c.Deleted} {
		switch {
		case name.Value == "":
		case !ir.IsIdent(name.Value):
			v.errf(name.At(badIdentChar(name.Value)), "scd2 column %s is not a plain name: use letters, digits and _", quote(name.Value))
		case len(name.Value) > MaxIdentLen:
			v.errf(name.Pos, "scd2 column %s: a name is at most %d characters (PostgreSQL cuts longer ones short, and two names may then collide)", quote(name.Value), MaxIdentLen)
		case strings.HasPrefix(strings.ToLower(name.Value), "incrc_"):
			v.errf(name.Pos, "scd2 column %s: names starting with incrc_ are reserved for incrc's own columns", quote(name.Value))
		}
	}
	for _, t := range c.Tracked {
		v.col("scd2.tracked column", t)
	}
	if strategy == ir.SCD2Strategy {
		v.scd2Rules(c)
	}
}

// at is where err points inside str: the offending character when the
// error knows its offset and the scalar's layout allows it.
func (v *validator) at(str ir.String, err error) ir.Pos {
	var oe *OffsetError
	if errors.As(err, &oe) {
		return str.At(oe.Off)
	}
	return str.Pos
}

// isCondition reports whether e is true or false for a row, so that
// NOT e (how a check finds invalid rows) means something on every engine.
func (v *validator) isCondition(e ir.Expr) bool {
	switch e := e.(type) {
	case ir.Binary:
		switch e.Op {
		case "AND", "OR":
			return v.isCondition(e.L) && v.isCondition(e.R)
		}
		return cmpOps[e.Op]
	case ir.Unary:
		return e.Op == "NOT" && v.isCondition(e.X)
	case ir.IsNull, ir.In:
		return true
	case ir.Lit:
		return e.Text == "TRUE" || e.Text == "FALSE"
	case ir.ColRef:
		c := v.s.Column(e.Name)
		return c != nil && c.Type.Kind == ir.Boolean
	}
	return false
}

// badIdentChar is the offset of the first byte of name that makes it not a
// plain identifier, to point at it.
func badIdentChar(name string) int {
	for i := 0; i < len(name); i++ {
		if c := name[i]; !isIdentPart(c) || i == 0 && !isIdentStart(c) {
			return i
		}
	}
	return 0
}
