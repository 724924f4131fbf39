package compiler

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/incrc/incrc/compiler/ir"
)

// runsIndex is the run log's index by pipeline and status.
const runsIndex = "incrc_runs_pipeline_status"

// runsIndexColumns are runsIndex's: abandon_runs finds a pipeline's
// running rows by them.
var runsIndexColumns = []string{"pipeline", "status"}

const (
	quarantineSuffix = "_quarantine"
	stagePrefix      = "incrc_stage_"
	rawPrefix        = "incrc_raw_"
)

// Lower turns a valid spec into its plan. The spec must have passed
// Validate; Lower panics on nothing and reports what it cannot compile.
func Lower(s *Spec) (*ir.Plan, error) {
	strategy := ir.Strategy(s.Strategy.Value)
	p := &ir.Plan{
		File:     s.File,
		SpecHash: s.Hash,
		Pipeline: s.Pipeline.Value,
		Strategy: strategy,
		Target:   splitTable(s.Target.Table.Value),
		Stage:    ir.Table{Parts: []string{stagePrefix + s.Pipeline.Value}},
		Raw:      ir.Table{Parts: []string{rawPrefix + s.Pipeline.Value}},
		Key:      s.Key(),
		Upstream: s.Upstreams(),
		Params:   Params(s),
		Tables:   s.Tables(),
	}
	p.LogicHash = LogicHashOf(p.Params)
	switch {
	case s.Source.Files.Set():
		p.From = &ir.Foreign{Dialect: "duckdb", Files: s.Source.Files.Value, Format: FileFormat(s.Source), ByFile: s.Source.ByFile.Set()}
		scan := &ir.FileScan{Glob: p.From.Files, Format: p.From.Format}
		if p.From.ByFile {
			scan.Param = pFiles.Name
		}
		p.Source = ir.Relation{Files: scan}
	case s.Source.Table.Set():
		p.Source = ir.Relation{Table: splitTable(s.Source.Table.Value)}
	default:
		p.Source = ir.Relation{Query: strings.TrimSpace(s.Source.Query.Value)}
		p.SourceQuery = s.Source.Query
	}
	if c := s.Source.Connection; c.Set() {
		p.From = &ir.Foreign{Connection: c.Value, Dialect: s.Source.Dialect.Value}
	}
	p.Source = withLookups(s, p.Source)
	for _, c := range s.Columns {
		notNull := contains(p.Key, c.Name.Value) && !c.Nullable
		p.Columns = append(p.Columns, ir.Col{Name: c.Name.Value, Type: c.Type, NotNull: notNull})
	}
	if f := p.Source.Files; f != nil && f.Format == "csv" {
		for _, c := range p.Columns {
			if len(p.Source.Lookups) == 0 || contains(p.Source.Columns, c.Name) {
				f.Types = append(f.Types, ir.Col{Name: c.Name, Type: c.Type})
			}
		}
	}
	if w := s.Watermark; w != nil {
		c := *s.Column(w.Column.Value)
		start, _ := ir.ParseWatermark(c.Type, w.Start.Value) // Validate checked it
		p.Watermark = &ir.Watermarking{Col: ir.Col{Name: c.Name.Value, Type: c.Type}, Start: start, Lookback: w.Lookback, Lag: w.Lag, Batch: w.Batch, Tiebreak: w.Tiebreak.Value}
	}
	if pt := s.Partition; pt != nil {
		c := s.Column(pt.Column.Value)
		g := pt.Granularity.Value
		if g == "" {
			g = "day"
		}
		p.Partition = &ir.Partitioning{Column: c.Name.Value, Type: c.Type, Granularity: g, FinalizeAfter: pt.FinalizeAfter, Zone: pt.Timezone.Value}
	}
	switch {
	case p.Partition != nil:
		p.ReconcileBy = p.Partition.Column // partitioned pipelines reconcile per partition
	case s.Reconcile != nil:
		p.ReconcileBy = s.Reconcile.By.Value
		if c := s.Column(p.ReconcileBy); c != nil && c.Type.IsTime() {
			g := s.Reconcile.Granularity.Value
			if g == "" {
				g = "day"
			}
			p.ReconcileGroups = &ir.Partitioning{Column: c.Name.Value, Type: c.Type, Granularity: g}
		}
	}
	if p.Partition != nil {
		p.ReconcileGroups = p.Partition
	}
	p.InsertOnly = s.InsertOnly()
	p.Measures, p.Uncompared = measures(s, p.InsertOnly)
	rules, mode := qualityRules(s, p.Columns)
	if mode == "quarantine" {
		t := p.Target
		parts := append(append([]string(nil), t.Schema()...), t.Name()+quarantineSuffix)
		p.Quarantine = ir.Table{Parts: parts}
	}
	p.Statements = make([]*ir.Statement, 0, 64)
	l := &lowerer{p: p, spec: s, strategy: strategyOf(strategy), rules: rules, mode: mode}
	if pr, ok := l.strategy.(preparer); ok {
		pr.prepare(l)
	}
	l.setup()
	l.state()
	l.lookupCheck()
	l.strategy.stage(l)
	l.strategy.write(l)
	l.files()
	l.programs()
	if err := l.foreign(); err != nil {
		return nil, fmt.Errorf("%s: pipeline %s: %w", s.File, p.Pipeline, err)
	}
	names := make(map[string]bool, len(p.Statements))
	for _, st := range p.Statements {
		names[st.Name] = true
	}
	for _, pr := range p.Programs {
		if err := pr.Check(names); err != nil {
			return nil, fmt.Errorf("%s: pipeline %s: %w", s.File, p.Pipeline, err)
		}
	}
	return p, nil
}

type lowerer struct {
	p        *ir.Plan
	spec     *Spec
	strategy strategy
	rules    []ir.Rule     // what a staged row must pass
	mode     string        // what happens to a row that breaks one: quarantine, fail, or "" (no rules)
	scd      *scd2Lowering // nil unless the strategy is scd2
}

func (l *lowerer) add(name string, phase ir.Phase, doc string, op ir.Op, params ...ir.Param) {
	l.addStatement(ir.Statement{Name: name, Phase: phase, Doc: doc, Op: op, Params: params})
}

// addStatement adds a copy of st to the plan.
func (l *lowerer) addStatement(st ir.Statement) {
	l.p.Statements = append(l.p.Statements, &st)
}

// shared makes the statements that add adds the same for every pipeline
// once: each plan gets copies of them, which share their operations, as
// plans share the state tables' columns. An operation is a value no one
// changes; a statement's parameters are clipped, so that appending to
// them (foreign) copies them first. Each copy names the statement it
// copies (Statement.Shared).
func shared(add func(l *lowerer)) func() []ir.Statement {
	return sync.OnceValue(func() []ir.Statement {
		l := &lowerer{p: &ir.Plan{}}
		add(l)
		out := make([]ir.Statement, len(l.p.Statements))
		for i, st := range l.p.Statements {
			out[i] = *st
			out[i].Params = slices.Clip(out[i].Params)
			out[i].SetShared(&out[i])
		}
		return out
	})
}

// Bookkeeping is every statement that plans share alike (Statement.Shared),
// once, in a stable order: the setup of the state table, the run log and
// the partition markers, and their migrations; the lease and the state
// row; the watermark's advance and the run's record; the backfill markers.
// They are the same for every pipeline of a target, so they are compiled
// once per dialect rather than into each pipeline's file.
func Bookkeeping() []*ir.Statement {
	var out []*ir.Statement
	for _, list := range [][]ir.Statement{sharedSetup(), stateStatements(), advanceStatements(), markerStatements()} {
		for i := range list {
			out = append(out, &list[i])
		}
	}
	return out
}

func splitTable(s string) ir.Table { return ir.Table{Parts: strings.Split(s, ".")} }

var (
	pPipeline  = ir.Param{Name: "pipeline", Type: ir.PText}
	pOwner     = ir.Param{Name: "owner", Type: ir.PText}
	pNow       = ir.Param{Name: "now", Type: ir.PText}
	pExpires   = ir.Param{Name: "expires_at", Type: ir.PText}
	pHolder    = ir.Param{Name: "holder", Type: ir.PText}
	pRunID     = ir.Param{Name: "run_id", Type: ir.PText}
	pFrom      = ir.Param{Name: "from", Type: ir.PBound}
	pTo        = ir.Param{Name: "to", Type: ir.PBound}
	pWatermark = ir.Param{Name: "watermark", Type: ir.PText}
	pExpected  = ir.Param{Name: "expected", Type: ir.PText}
	pSpecHash  = ir.Param{Name: "spec_hash", Type: ir.PText}
	pFilled    = ir.Param{Name: ir.RegTargetFilled, Type: ir.PInt}
	pLoID      = ir.Param{Name: "lo_id", Type: ir.PInt}
	pHiID      = ir.Param{Name: "hi_id", Type: ir.PInt}
	pPlo       = ir.Param{Name: "plo", Type: ir.PPartition}
	pPhi       = ir.Param{Name: "phi", Type: ir.PPartition}
	pBackfill  = ir.Param{Name: "backfill_id", Type: ir.PText}
	pPartKey   = ir.Param{Name: "partition_key", Type: ir.PText}
)

func ref(p ir.Param) ir.Expr   { return ir.ParamRef{Name: p.Name} }
func col(name string) ir.Expr  { return ir.ColRef{Name: name} }
func eq(a, b ir.Expr) ir.Expr  { return ir.Binary{Op: "=", L: a, R: b} }
func and(a, b ir.Expr) ir.Expr { return ir.Binary{Op: "AND", L: a, R: b} }
func or(a, b ir.Expr) ir.Expr  { return ir.Binary{Op: "OR", L: a, R: b} }
func colEq(c string, p ir.Param) ir.Expr {
	return eq(col(c), ref(p))
}

var null = ir.Lit{Text: "NULL"}

func varchar(n int) ir.Type { return ir.Type{Kind: ir.Varchar, Length: n} }

// stateColumns are incrc_state's columns. Times are RFC 3339 UTC text so
// that they compare and round-trip the same way on every engine.
var stateColumns = []ir.Col{
	{Name: "pipeline", Type: varchar(64), NotNull: true},
	{Name: "watermark", Type: varchar(64)},
	{Name: "lease_owner", Type: varchar(128)},
	{Name: "lease_expires_at", Type: varchar(40)},
	{Name: "spec_hash", Type: varchar(64)},
	{Name: "updated_at", Type: varchar(40)},
	// target_filled: 1 when the target held a row as the run that last
	// moved the watermark committed, 0 when it held none; NULL before;
	// 2 (ir.FilledRebuilding) while a run rebuilds merged scd2 versions.
	{Name: "target_filled", Type: ir.Type{Kind: ir.Integer}},
}

// addedStateColumns are the state's columns an older incrc did not
// create: setup adds them.
var addedStateColumns = []string{"target_filled"}

func addStateColumn(name string) string { return "add_state_" + name }

// addedPartitionColumns are the markers' columns an older incrc did not
// create: setup adds them.
var addedPartitionColumns = []string{"logic_hash"}

func addPartitionsColumn(name string) string { return "add_partitions_" + name }

// addedRunColumns are the columns of RunColumns that incrc_runs did not
// have when it was first created by a released incrc.
var addedRunColumns = []string{"rows_skipped", "note", "rows_ignored", "logic_hash"}

// partitionColumns are incrc_partitions' columns: backfill completion
// markers and reconciliation results, one row per partition.
var partitionColumns = []ir.Col{
	{Name: "pipeline", Type: varchar(64), NotNull: true},
	{Name: "backfill_id", Type: varchar(64), NotNull: true},
	{Name: "partition_key", Type: varchar(40), NotNull: true},
	{Name: "status", Type: varchar(16)},
	{Name: "rows_written", Type: ir.Type{Kind: ir.Bigint}},
	{Name: "detail", Type: ir.Type{Kind: ir.Text}},
	{Name: "updated_at", Type: varchar(40)},
	{Name: "logic_hash", Type: varchar(64)}, // the logic the partition was rebuilt with
}

func (l *lowerer) setup() {
	p := l.p
	if schema := p.Target.Schema(); schema != nil {
		l.add(ir.StmtCreateSchema, ir.PhaseSetup, "The target's schema.", ir.CreateSchema{Schema: schema})
	}
	for _, st := range sharedSetup() {
		l.addStatement(st)
	}
	d, declares := l.strategy.(targetDeclarer)
	if declares {
		d.createTarget(l)
	} else {
		l.add(ir.StmtCreateTarget, ir.PhaseSetup, "The target, from the declared columns.",
			ir.CreateTable{Table: p.Target, Columns: p.Columns, PrimaryKey: l.primaryKey()})
	}
	l.schemaCheck(ir.StmtCheckTarget, "The target's columns against the spec's, before anything writes: an added column is added, a widened type widened in place; anything else fails with the DDL it needs.")
	if declares {
		d.besideTarget(l)
	}
	if p.Partition != nil {
		l.add(ir.StmtCreatePartIndex, ir.PhaseSetup, "An index on the partition column: a partition's rewrite and check read only that partition.",
			ir.CreateIndex{Name: "incrc_" + p.Pipeline + "_part", Table: p.Target, Columns: []string{p.Partition.Column}})
	}
	if !p.Quarantine.IsZero() {
		cols := []ir.Col{{Name: "incrc_run_id", Type: varchar(64)}, {Name: "incrc_reason", Type: ir.Type{Kind: ir.Text}}}
		for _, c := range p.Columns {
			cols = append(cols, ir.Col{Name: c.Name, Type: c.Type})
		}
		l.add(ir.StmtCreateQuarantine, ir.PhaseSetup, "Rows that fail quality rules, with the run and the rule.",
			ir.CreateTable{Table: p.Quarantine, Columns: cols})
		l.schemaCheck(ir.StmtCheckQuarantine, "The quarantine's columns against the spec's, as the target's.")
	}
}

// schemaCheck adds the probe of the table the last statement created,
// against the columns it creates.
func (l *lowerer) schemaCheck(name, doc string) {
	ct := l.p.Statements[len(l.p.Statements)-1].Op.(ir.CreateTable)
	l.add(name, ir.PhaseSetup, doc, ir.ProbeColumns{Source: ir.Relation{Table: ct.Table}, Declared: append([]ir.Col{}, ct.Columns...), DeclaredKey: ct.PrimaryKey})
}

// sharedSetup are the setup statements of the tables every pipeline
// shares: the same for every pipeline.
var sharedSetup = shared((*lowerer).addSharedSetup)

func (l *lowerer) addSharedSetup() {
	l.add(ir.StmtCreateState, ir.PhaseSetup, "Watermark and lease per pipeline, shared by all pipelines of this database.",
		ir.CreateTable{Table: ir.StateTable, Columns: stateColumns, PrimaryKey: []string{"pipeline"}})
	l.add(ir.StmtProbeState, ir.PhaseSetup, "The state's columns: a table an older incrc created lacks the newer ones.",
		ir.ProbeColumns{Source: ir.Relation{Table: ir.StateTable}})
	l.addColumns(ir.StateTable, stateColumns, addedStateColumns, addStateColumn, "the state of an older incrc")
	l.add(ir.StmtCreateRuns, ir.PhaseSetup, "The run log: one row per run, failed runs too.",
		ir.CreateTable{Table: ir.RunsTable, Columns: ir.RunColumns, PrimaryKey: []string{"run_id"}, Log: true,
			Indexes: []ir.TableIndex{{Name: runsIndex, Columns: runsIndexColumns}}})
	l.add(ir.StmtProbeRuns, ir.PhaseSetup, "The run log's columns: a table an older incrc created lacks the newer ones.",
		ir.ProbeColumns{Source: ir.Relation{Table: ir.RunsTable}})
	l.addColumns(ir.RunsTable, ir.RunColumns, addedRunColumns, addRunsColumn, "a run log an older incrc created")
	l.add(ir.StmtProbeRunsIndex, ir.PhaseSetup, "Is the run log indexed by pipeline and status? (Asked first: creating an index that exists still locks the table on some engines, which would make every run wait for every other pipeline's write.)",
		ir.IndexExists{Name: runsIndex, Table: ir.RunsTable})
	l.add(ir.StmtCreateRunsIndex, ir.PhaseSetup, "The run log by pipeline and status: abandon_runs finds a pipeline's running rows without reading the whole log, which grows with every run.",
		ir.CreateIndex{Name: runsIndex, Table: ir.RunsTable, Columns: runsIndexColumns})
	l.add(ir.StmtCreatePartitions, ir.PhaseSetup, "Backfill completion markers and per-partition reconciliation results.",
		ir.CreateTable{Table: ir.PartitionsTable, Columns: partitionColumns, PrimaryKey: []string{"pipeline", "backfill_id", "partition_key"}})
	l.add(ir.StmtProbePartitions, ir.PhaseSetup, "The markers' columns: a table an older incrc created lacks the newer ones.",
		ir.ProbeColumns{Source: ir.Relation{Table: ir.PartitionsTable}})
	l.addColumns(ir.PartitionsTable, partitionColumns, addedPartitionColumns, addPartitionsColumn, "the markers of an older incrc")
}

// addColumns adds the setup statements that add the columns named added
// (of cols) to table, which an older incrc created without them.
func (l *lowerer) addColumns(table ir.Table, cols []ir.Col, added []string, stmt func(string) string, older string) {
	for _, name := range added {
		for _, c := range cols {
			if c.Name == name {
				l.add(stmt(name), ir.PhaseSetup, "Add "+name+" to "+older+".", ir.AddColumn{Table: table, Column: c})
			}
		}
	}
}

func addRunsColumn(name string) string { return "add_runs_" + name }

func (l *lowerer) nullableKey() bool {
	for _, c := range l.p.Columns {
		if contains(l.p.Key, c.Name) && !c.NotNull {
			return true
		}
	}
	return false
}

// state adds the statements of the pipeline's row of incrc_state and of
// its runs: the same for every pipeline.
func (l *lowerer) state() {
	for _, st := range stateStatements() {
		l.addStatement(st)
	}
	l.add(ir.StmtTargetHasRows, ir.PhaseQuery, "Does the target hold a row? An EXISTS, which stops at the first: the state keeps the answer with the watermark, so that the next run can tell a target emptied or created again since.",
		ir.HasRows{Table: l.p.Target})
}

var stateStatements = shared((*lowerer).addState)

func (l *lowerer) addState() {
	free := or(or(ir.IsNull{X: col("lease_owner")}, colEq("lease_owner", pOwner)), ir.Binary{Op: "<", L: col("lease_expires_at"), R: ref(pNow)})
	mine := and(colEq("pipeline", pPipeline), colEq("lease_owner", pOwner))
	l.add(ir.StmtInitState, ir.PhaseState, "The pipeline's state row, created once.",
		ir.InsertValues{Table: ir.StateTable, Columns: []string{"pipeline"}, Values: []ir.Expr{ref(pPipeline)}, IfAbsentKey: []string{"pipeline"}}, pPipeline)
	l.add(ir.StmtAcquireLease, ir.PhaseState, "Take the lease if it is free, expired or already ours; one row changed means taken.",
		ir.Update{Table: ir.StateTable, Set: []ir.Assign{{Column: "lease_owner", Value: ref(pOwner)}, {Column: "lease_expires_at", Value: ref(pExpires)}},
			Where: and(colEq("pipeline", pPipeline), free)}, pOwner, pExpires, pPipeline, pNow)
	l.add(ir.StmtReadState, ir.PhaseState, "The saved watermark and who holds the lease.",
		ir.SelectRows{Table: ir.StateTable, Columns: []string{"watermark", "lease_owner", "lease_expires_at", "spec_hash", "updated_at"}, Where: colEq("pipeline", pPipeline)}, pPipeline)
	l.add(ir.StmtRenewLease, ir.PhaseState, "Extend the lease while the run is alive.",
		ir.Update{Table: ir.StateTable, Set: []ir.Assign{{Column: "lease_expires_at", Value: ref(pExpires)}}, Where: mine}, pExpires, pPipeline, pOwner)
	l.add(ir.StmtReleaseLease, ir.PhaseState, "Give the lease back at the end of a run, failed or not.",
		ir.Update{Table: ir.StateTable, Set: []ir.Assign{{Column: "lease_owner", Value: null}, {Column: "lease_expires_at", Value: null}}, Where: mine}, pPipeline, pOwner)
	l.add(ir.StmtLockSession, ir.PhaseState, "Hold the engine session's lock of the pipeline for the run's life (1 taken, 0 held by a live session): a run whose process died loses it with its connection.",
		ir.SessionLock{Guards: "lease"}, pPipeline)
	l.add(ir.StmtUnlockSession, ir.PhaseState, "Give the session's lock of the pipeline back, after the lease.",
		ir.SessionLock{Guards: "lease", Release: true}, pPipeline)
	l.add(ir.StmtTakeOverLease, ir.PhaseState, "Take a lease whose holder held the session lock and lost it with its connection: its process ended; one row changed means taken.",
		ir.Update{Table: ir.StateTable, Set: []ir.Assign{{Column: "lease_owner", Value: ref(pOwner)}, {Column: "lease_expires_at", Value: ref(pExpires)}},
			Where: and(colEq("pipeline", pPipeline), colEq("lease_owner", pHolder))}, pOwner, pExpires, pPipeline, pHolder)
	l.add(ir.StmtLockSetup, ir.PhaseState, "Wait for the database's setup lock: runs that create the state tables at once do it one after the other (1 taken).",
		ir.SessionLock{Guards: "setup"})
	l.add(ir.StmtUnlockSetup, ir.PhaseState, "Give the setup lock back.",
		ir.SessionLock{Guards: "setup", Release: true})
	l.add(ir.StmtForceRelease, ir.PhaseState, "incrc state --release: free the lease of a run that died.",
		ir.Update{Table: ir.StateTable, Set: []ir.Assign{{Column: "lease_owner", Value: null}, {Column: "lease_expires_at", Value: null}}, Where: colEq("pipeline", pPipeline)}, pPipeline)
	l.add(ir.StmtAbandonRuns, ir.PhaseState, "Runs still marked running when their lease was taken over died without finishing.",
		ir.Update{Table: ir.RunsTable, Set: []ir.Assign{{Column: "status", Value: ir.Str{Value: "abandoned"}}}, Where: and(colEq("pipeline", pPipeline), eq(col("status"), ir.Str{Value: "running"}))}, pPipeline)
	startCols := []string{"run_id", "pipeline", "kind", "window_lo", "window_hi", "watermark_before", "started_at", "spec_hash", "note", "logic_hash"}
	startParams := textParams(startCols)
	startVals := refs(startParams)
	startCols = append(startCols, "status")
	startVals = append(startVals, ir.Str{Value: "running"})
	l.add(ir.StmtRecordStart, ir.PhaseState, "The run's row in the run log, written before any data moves.",
		ir.InsertValues{Table: ir.RunsTable, Columns: startCols, Values: startVals}, startParams...)
	l.add(ir.StmtCheckKept, ir.PhaseState, "Did the run that last moved the watermark leave rows in the target? Asked when the target holds none: it was emptied or created again since.",
		ir.CountRows{Table: ir.StateTable, Where: and(colEq("pipeline", pPipeline), eq(col("target_filled"), ir.Lit{Text: "1"}))}, pPipeline)
	l.add(ir.StmtRecentRuns, ir.PhaseQuery, "The latest runs, for incrc state.",
		ir.SelectRows{Table: ir.RunsTable, Columns: runLogColumns(), Where: colEq("pipeline", pPipeline), OrderBy: []ir.Order{{Column: "started_at", Desc: true}}, Limit: 20}, pPipeline)
}

func textParams(names []string) []ir.Param {
	ps := make([]ir.Param, len(names))
	for i, n := range names {
		ps[i] = ir.Param{Name: n, Type: ir.PText}
	}
	return ps
}

func refs(ps []ir.Param) []ir.Expr {
	out := make([]ir.Expr, len(ps))
	for i, p := range ps {
		out[i] = ref(p)
	}
	return out
}

func runLogColumns() []string {
	var cols []string
	for _, c := range ir.RunColumns {
		cols = append(cols, c.Name)
	}
	return cols
}

// dedupe is the rule for sources that hold several versions of a key in
// one window: one row per unique_key per batch, the greatest dedupe_by,
// defaulting to the watermark column, ties broken by the other columns.
// A full refresh keeps the same row, so an incremental run stays equal
// to it. Without a unique_key there is nothing to dedupe by.
func (l *lowerer) dedupe() *ir.Dedupe {
	p, s := l.p, l.spec
	if len(p.Key) == 0 || s.UniqueSource() {
		return nil // nothing to dedupe by, or the spec says there is nothing to dedupe
	}
	order := s.DedupeBy.Value
	if order == "" && p.Watermark != nil {
		order = p.Watermark.Name
	}
	key := p.Key
	if l.scd != nil && l.scd.byTime {
		// A source of versions holds several rows per key: one per key and
		// start is kept, and the order only breaks ties.
		key = append(append([]string(nil), p.Key...), p.Watermark.Name)
		if order == p.Watermark.Name {
			order = ""
		}
	}
	d := &ir.Dedupe{Key: key, NullSafe: l.nullableKey()}
	if order != "" {
		d.OrderBy = append(d.OrderBy, ir.Order{Column: order, Desc: true})
	}
	// Ties on the version column are broken by the other columns, so the
	// row kept is the same on every run: a full refresh keeps it too.
	for _, c := range p.Columns {
		if c.Name != order && !contains(key, c.Name) {
			d.OrderBy = append(d.OrderBy, ir.Order{Column: c.Name, Desc: true})
			if c.Type.Kind == ir.JSON {
				d.JSON = append(d.JSON, c.Name)
			}
		}
	}
	return d
}

// window is the run's half-open window [lo, hi) on the watermark; upTo is
// what a full refresh and a partition rebuild read, [start, hi). Both are
// zero without a watermark: a full_refresh pipeline reads everything.
func (l *lowerer) windows() (window, upTo ir.Window) {
	if wm := l.p.Watermark; wm != nil {
		window, upTo = ir.Window{Column: wm.Name, Lo: "lo", Hi: "hi"}, ir.Window{Column: wm.Name, Lo: "start", Hi: "hi"}
		if wm.Tiebreak != "" {
			// start has no id: a full refresh reads every id from it.
			window.Tie, window.LoID, window.HiID = wm.Tiebreak, pLoID.Name, pHiID.Name
			window.LooseLo = wm.Lookback.Value > 0
			upTo.Tie, upTo.HiID = wm.Tiebreak, pHiID.Name
		}
		return window, upTo
	}
	return ir.Window{}, ir.Window{}
}

// withNull is a window that also reads the rows whose watermark is NULL:
// no window holds them, so the staging read takes them along in the same
// scan, to be quarantined (or to fail the run) rather than never read.
// With a tiebreak, the window reads those by id: only the rows whose id is
// NULL too are in none.
func withNull(w ir.Window) ir.Window {
	w.OrNull = w.Column != ""
	return w
}

// nullWM is true for a row whose watermark is NULL, which no window reads
// (with a tiebreak: whose tiebreak is NULL too).
func (l *lowerer) nullWM() ir.Expr {
	wm := l.p.Watermark
	if wm.Tiebreak != "" {
		return and(ir.IsNull{X: col(wm.Name)}, ir.IsNull{X: col(wm.Tiebreak)})
	}
	return ir.IsNull{X: col(wm.Name)}
}

// hasWM is true for a row that some window reads: not nullWM.
func (l *lowerer) hasWM() ir.Expr {
	wm := l.p.Watermark
	if wm.Tiebreak != "" {
		return or(ir.IsNull{X: col(wm.Name), Not: true}, ir.IsNull{X: col(wm.Tiebreak), Not: true})
	}
	return ir.IsNull{X: col(wm.Name), Not: true}
}

// readSource adds what every strategy's runs read of the source before
// staging it: an integer watermark's upper bound, the count a preview
// shows, the column types.
func (l *lowerer) readSource() {
	p := l.p
	window, upTo := l.windows()
	if wm := p.Watermark; wm != nil && wm.Type.IsInteger() {
		wm.MaxStatement = ir.StmtSourceMax
		l.add(ir.StmtSourceMax, ir.PhaseStage, "An integer watermark's window ends after the largest id present.",
			ir.SourceMax{Source: p.Source, Column: p.Watermark.Name})
	}
	if wm := p.Watermark; wm != nil && wm.Tiebreak != "" {
		wm.TieMaxStatement = ir.StmtTieMax
		l.add(ir.StmtTieMax, ir.PhaseStage, "With a tiebreak, hi is (now - lag, the largest id present + 1): rows of hi's time and rows without a time that exist now are read now.",
			ir.SourceMax{Source: p.Source, Column: wm.Tiebreak})
	}
	read := window
	if l.snapshot() {
		read = upTo // every run reads the whole snapshot
	}
	l.add(ir.StmtCountRead, ir.PhaseQuery, "incrc plan --target: the source rows the next run would read.",
		ir.CountSource{Source: p.Source, Window: withNull(read)}, windowParams(read)...)
	l.add(ir.StmtProbeSource, ir.PhaseStage, "The source's columns and types, no rows: each must fit its declared type, or the run fails before it writes.",
		ir.ProbeColumns{Source: p.Source, Columns: columnNames(p.Columns)})
}

func (l *lowerer) stage() {
	p := l.p
	cols := columnNames(p.Columns)
	window, upTo := l.windows()
	wp := windowParams(window)
	l.readSource()
	if wm := p.Watermark; wm != nil && l.rewritesPartitions() {
		// A partition rewrite reads whole partitions, not the window: the
		// rows whose watermark is NULL are read on their own.
		l.nullWatermarkSource(wm.Name, cols)
	}
	if l.rewritesPartitions() {
		l.add(ir.StmtTouchedPartitions, ir.PhaseStage, "The partitions the window's rows fall in, and how many rows each: every one is rewritten whole.",
			ir.DistinctPartitions{Source: p.Source, Partition: *p.Partition, Window: window}, wp...)
		if l.mode == "fail" {
			l.add(ir.StmtCountUnpartitioned, ir.PhaseStage, "Rows of the window without a partition belong to none: on_invalid is fail, so they fail the run.",
				ir.CountSource{Source: p.Source, Window: window, Where: ir.IsNull{X: col(p.Partition.Column)}}, wp...)
		}
	}
	stageCols := make([]ir.Col, len(p.Columns))
	for i, c := range p.Columns {
		stageCols[i] = ir.Col{Name: c.Name, Type: c.Type}
	}
	l.add(ir.StmtDropStage, ir.PhaseStage, "Staging is session-scoped; a retry in the same session starts clean.",
		ir.DropTable{Table: p.Stage, Temporary: true})
	l.add(ir.StmtCreateStage, ir.PhaseStage, "The rows to write.",
		ir.CreateTable{Table: p.Stage, Columns: stageCols, Temporary: true})
	// The source is read once: its window's rows land in the raw table
	// (counted as rows read), and the dedupe reads only those.
	into := p.Stage
	if d := l.dedupe(); d != nil {
		into = p.Raw
		l.add(ir.StmtDropRaw, ir.PhaseStage, "The window's rows as read, before the dedupe.",
			ir.DropTable{Table: p.Raw, Temporary: true})
		l.add(ir.StmtCreateRaw, ir.PhaseStage, "The window's rows as read, before the dedupe.",
			ir.CreateTable{Table: p.Raw, Columns: stageCols, Temporary: true})
	}
	if !l.rewritesPartitions() && !l.rebuildsEveryRun() && !l.snapshot() {
		l.add(ir.StmtStageWindow, ir.PhaseStage, "The half-open window [lo, hi) of the source, read once, with the rows whose watermark is NULL.",
			ir.StageRows{Into: into, Source: p.Source, Columns: cols, Window: withNull(window)}, wp...)
	}
	if l.direct() {
		l.add(ir.StmtCopyWindow, ir.PhaseWrite, "Append the window's rows straight into the target, inside the write transaction: nothing reads them staged (an append without quality rules, dedupe or watermark column, from a source outside the target).",
			ir.StageRows{Into: p.Target, Source: p.Source, Columns: cols, Window: withNull(window)}, wp...)
	}
	if !l.refreshes() { // (refresh.go reads the source in the write transaction)
		l.add(ir.StmtStageAll, ir.PhaseStage, "Full refresh: every source row in [start, hi), with the rows whose watermark is NULL.",
			ir.StageRows{Into: into, Source: p.Source, Columns: cols, Window: withNull(upTo)}, windowParams(upTo)...)
	}
	if d := l.dedupe(); d != nil {
		var where ir.Expr
		if wm := p.Watermark; wm != nil {
			// A version without a watermark takes no part in the dedupe:
			// it must never replace a good version of its key.
			where = l.hasWM()
		}
		doc := "One row per key: the newest version."
		if l.scd != nil && l.scd.byTime {
			doc = "One row per key and start: each version of the source once."
		}
		l.add(ir.StmtDedupeStage, ir.PhaseStage, doc,
			ir.StageRows{Into: p.Stage, Source: ir.Relation{Table: p.Raw}, Columns: cols, Dedupe: d, Where: where})
	}
	if l.scd == nil && !l.rewritesPartitions() {
		l.add(ir.StmtAnalyzeStage, ir.PhaseStage, "The staged rows' statistics, for the planner's joins to the target.", ir.AnalyzeTable{Table: p.Stage, Columns: p.Key})
	}
	if wm := p.Watermark; wm != nil {
		isNull := l.nullWM()
		if l.nullMode() == "fail" {
			l.add(ir.StmtCountNullWatermark, ir.PhaseStage, "Staged rows whose watermark is NULL are in no window: without a quarantine the run fails on them.",
				ir.CountRows{Table: into, Where: isNull})
		} else {
			l.add(ir.StmtQuarantineNullWM, ir.PhaseWrite, "Staged rows whose watermark is NULL are in no window: each run quarantines them, with the reason, until the source is fixed.",
				ir.QuarantineRows{Into: p.Quarantine, From: ir.Relation{Table: into}, Columns: cols, Rules: []ir.Rule{l.nullRule()}}, pRunID)
		}
		if l.dedupe() == nil { // the window was staged straight into the stage
			l.add(ir.StmtDeleteNullWatermark, ir.PhaseWrite, "Rows whose watermark is NULL never reach the target.",
				ir.DeleteRows{Table: p.Stage, Where: isNull})
		}
	}
	if l.spec.UniqueSource() && len(p.Key) > 0 && l.scd == nil && p.CDC == nil {
		l.add(ir.StmtCheckUnique, ir.PhaseWrite, "source.unique: true skips the dedupe: a key with several staged rows fails the run, naming it, rather than writing an arbitrary one of them.",
			ir.DuplicateKey{Table: p.Stage, Key: p.Key})
	}
	if p.Partition != nil {
		l.add(ir.StmtStagePartition, ir.PhaseStage, "One whole partition [plo, phi) of the source, rows in [start, hi), one row per key.",
			ir.StageRows{Into: p.Stage, Source: p.Source, Columns: cols, Window: upTo, Dedupe: l.dedupe(),
				Range: ir.Window{Column: p.Partition.Column, Lo: pPlo.Name, Hi: pPhi.Name}}, append(windowParams(upTo), pPlo, pPhi)...)
		if l.rewritesPartitions() && l.dedupe() != nil {
			l.add(ir.StmtCountPartitionSource, ir.PhaseStage, "The source's rows of one partition [plo, phi) in [start, hi), before the dedupe keeps one per key (rows read).",
				ir.CountSource{Source: p.Source, Window: upTo, Range: ir.Window{Column: p.Partition.Column, Lo: pPlo.Name, Hi: pPhi.Name}},
				append(windowParams(upTo), pPlo, pPhi)...)
		}
	}
	if l.scd != nil {
		l.scd.stage(l)
	}
	if len(l.rules) > 0 {
		invalid := anyOf(l.rules)
		if l.mode == "quarantine" {
			l.add(ir.StmtQuarantine, ir.PhaseWrite, "Rows that break a quality rule go to quarantine, with the first rule they break.",
				ir.QuarantineRows{Into: p.Quarantine, From: ir.Relation{Table: p.Stage}, Columns: cols, Rules: l.rules}, pRunID)
		}
		l.add(ir.StmtCountInvalid, ir.PhaseWrite, "Rows that break a quality rule (on_invalid: fail stops the run when there are any).",
			ir.CountRows{Table: p.Stage, Where: invalid})
		if l.upserts() {
			l.add(ir.StmtRetractInvalid, ir.PhaseWrite, "A key whose newest version is invalid has no valid current row: the target drops it, as a full refresh would.",
				ir.RetractKeys{Target: p.Target, Stage: p.Stage, Key: p.Key, NullSafe: l.nullableKey(), Where: invalid})
		}
		l.add(ir.StmtDeleteInvalid, ir.PhaseWrite, "Invalid rows never reach the target.",
			ir.DeleteRows{Table: p.Stage, Where: invalid})
	}
	if l.scd == nil {
		l.add(ir.StmtCountStaged, ir.PhaseWrite, "Rows to write.", ir.CountRows{Table: p.Stage})
	}

}

// nullWatermarkSource adds the read of the source rows whose watermark
// (column wm) is NULL, which no window reads: counted to fail the run, or
// quarantined with the reason.
func (l *lowerer) nullWatermarkSource(wm string, cols []string) {
	p := l.p
	if l.nullMode() == "fail" {
		l.add(ir.StmtCountNullWMSource, ir.PhaseStage, "Source rows whose watermark is NULL are in no window: without a quarantine the run fails on them.",
			ir.CountSource{Source: p.Source, Where: l.nullWM()})
		return
	}
	l.add(ir.StmtQuarantineNullWMSrc, ir.PhaseWrite, "Source rows whose watermark is NULL are in no window: each run quarantines them, with the reason, until the source is fixed.",
		ir.QuarantineRows{Into: p.Quarantine, From: p.Source, Columns: cols, Rules: []ir.Rule{l.nullRule()}}, pRunID)
}

// nullMode is what happens to a source row whose watermark is NULL: no
// window ever reads it, so it is quarantined when the pipeline has a
// quarantine, and fails the run otherwise. It is never skipped in silence.
func (l *lowerer) nullMode() string {
	if l.mode == "quarantine" {
		return "quarantine"
	}
	return "fail"
}

// nullRule is the reason a row whose watermark is NULL is quarantined.
func (l *lowerer) nullRule() ir.Rule {
	wm := l.p.Watermark
	if wm.Tiebreak != "" {
		return ir.Rule{Reason: "not_null(" + wm.Name + ", " + wm.Tiebreak + "): the watermark and its tiebreak, so no window reads the row", Invalid: l.nullWM()}
	}
	return ir.Rule{Reason: "not_null(" + wm.Name + "): the watermark, so no window reads the row", Invalid: l.nullWM()}
}

// windowParams declares a window's bounds, which are watermark values.
func windowParams(w ir.Window) []ir.Param {
	var ps []ir.Param
	if w.Lo != "" {
		ps = append(ps, ir.Param{Name: w.Lo, Type: ir.PWatermark})
	}
	if w.Hi != "" {
		ps = append(ps, ir.Param{Name: w.Hi, Type: ir.PWatermark})
	}
	if w.Tie != "" && w.LoID != "" {
		ps = append(ps, ir.Param{Name: w.LoID, Type: ir.PInt})
	}
	if w.Tie != "" && w.HiID != "" {
		ps = append(ps, ir.Param{Name: w.HiID, Type: ir.PInt})
	}
	return ps
}

func columnNames(cols []ir.Col) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// qualityRules lists the rules a staged row must pass, and what happens to
// rows that break one. Key columns that are not declared nullable must not
// be NULL even without a quality section: such a row cannot be matched.
func qualityRules(s *Spec, cols []ir.Col) ([]ir.Rule, string) {
	if ir.Strategy(s.Strategy.Value) == ir.CDCApply || fromChanges(s) {
		return cdcRules(s, cols)
	}
	var rules []ir.Rule
	notNull := map[string]bool{}
	addNotNull := func(name string) {
		if !notNull[name] {
			notNull[name] = true
			rules = append(rules, ir.Rule{Reason: "not_null(" + name + ")", Invalid: ir.IsNull{X: col(name)}})
		}
	}
	for _, c := range cols {
		if c.NotNull {
			addNotNull(c.Name)
		}
	}
	// A row without a partition value belongs to no partition: a run could
	// never write it, so a full refresh must not either.
	if s.Strategy.Value == string(ir.OverwritePartitions) && s.Partition != nil {
		addNotNull(s.Partition.Column.Value)
	}
	mode := "fail"
	if q := s.Quality; q != nil {
		mode = "quarantine"
		if q.OnInvalid.Value == "fail" {
			mode = "fail"
		}
		for _, n := range q.NotNull {
			addNotNull(n.Value)
		}
		for _, c := range q.Checks {
			e, err := ParseExpr(c.Value, s.ColumnNames())
			if err != nil {
				continue // Validate reported it
			}
			// A check that evaluates to NULL passes, as a CHECK constraint does.
			rules = append(rules, ir.Rule{Reason: "check: " + c.Value, Invalid: ir.Unary{Op: "NOT", X: e}})
		}
	}
	if len(rules) == 0 && mode == "fail" {
		mode = ""
	}
	return rules, mode
}

func anyOf(rules []ir.Rule) ir.Expr {
	e := rules[0].Invalid
	for _, r := range rules[1:] {
		e = or(e, r.Invalid)
	}
	return e
}

// refreshStaged adds, for a pipeline whose source is outside the target,
// the full refresh from the stage: the target emptied or replaced by the
// staged rows.
func (l *lowerer) refreshStaged() {
	p := l.p
	cols := columnNames(p.Columns)
	if !l.refreshes() && !l.rebuildsPlain() {
		l.add(ir.StmtClearTarget, ir.PhaseWrite, "Full refresh: empty the target (DELETE, in the transaction: readers never see it empty).",
			ir.DeleteRows{Table: p.Target})
	}
	if !l.refreshes() && l.rebuildsPlain() {
		// The same rewrite as a full refresh of a source in the target,
		// from the stage: DELETE then INSERT left a dead row per target
		// row on PostgreSQL, and on DuckDB a checkpoint of every keyed row
		// deleted and inserted again.
		l.add(ir.StmtReplaceTarget, ir.PhaseWrite, "Full refresh: the target made exactly the staged rows (deduped and checked), in the write transaction where the engine has one (what a concurrent reader sees, per engine: dialects/README.md).",
			ir.ReplaceAll{Target: p.Target, Source: ir.Relation{Table: p.Stage}, Columns: cols, Keep: ir.Keep{Columns: cols}, Key: l.primaryKey()})
		l.add(ir.StmtCountTarget, ir.PhaseWrite, "Full refresh: the target's rows before its rewrite (rows deleted).", ir.CountRows{Table: p.Target})
	}
}

// endWrite adds what follows a staged strategy's write statements: the
// full refresh from the stage, the advance and the record, and the
// statements of the modes that rebuild the target.
func (l *lowerer) endWrite() {
	l.refreshStaged()
	l.advanceAndRecord()
	l.rebuild()
}

// rebuild adds the statements of the modes that rebuild the target from
// the source: full refresh, backfill, reconcile.
func (l *lowerer) rebuild() {
	l.refresh()
	l.partitions()
	l.reconcile()
}

// advanceAndRecord adds the end of every write: the watermark's
// compare-and-set and the run's record.
func (l *lowerer) advanceAndRecord() {
	for _, st := range advanceStatements() {
		l.addStatement(st)
	}
}

// advanceStatements are advanceAndRecord's: the same for every pipeline.
var advanceStatements = shared((*lowerer).addAdvanceAndRecord)

func (l *lowerer) addAdvanceAndRecord() {
	l.add(ir.StmtAdvance, ir.PhaseWrite, "Advance the watermark by compare-and-set: only from the value this run read, only while it holds the lease.",
		ir.Update{Table: ir.StateTable,
			Set: []ir.Assign{{Column: "watermark", Value: ref(pWatermark)}, {Column: "spec_hash", Value: ref(pSpecHash)}, {Column: "updated_at", Value: ref(pNow)}, {Column: "target_filled", Value: ref(pFilled)}},
			Where: and(and(colEq("pipeline", pPipeline), colEq("lease_owner", pOwner)),
				// expected is '' before the first run: a typed value, never
				// a NULL parameter an engine must guess the type of.
				eq(ir.Call{Fn: "coalesce", Args: []ir.Expr{col("watermark"), ir.Str{Value: ""}}}, ref(pExpected)))},
		pWatermark, pSpecHash, pNow, pFilled, pPipeline, pOwner, pExpected)
	finishCols := append([]string{"status", "watermark_after"}, ir.Counters...)
	finishCols = append(finishCols, "finished_at", "duration_ms", "error", "note")
	var set []ir.Assign
	var params []ir.Param
	for _, c := range finishCols {
		t := ir.PText
		if strings.HasPrefix(c, "rows_") || c == "duration_ms" {
			t = ir.PInt
		}
		pp := ir.Param{Name: c, Type: t}
		set = append(set, ir.Assign{Column: c, Value: ref(pp)})
		params = append(params, pp)
	}
	l.add(ir.StmtRecordFinish, ir.PhaseWrite, "Close the run's row with its status and counts: in the write transaction when the run succeeds, after the rollback when it fails.",
		ir.Update{Table: ir.RunsTable, Set: set, Where: colEq("run_id", pRunID)}, append(params, pRunID)...)
	pFinished, pDuration := ir.Param{Name: "finished_at", Type: ir.PText}, ir.Param{Name: "duration_ms", Type: ir.PInt}
	l.add(ir.StmtCheckpoint, ir.PhaseState, "After the write transaction committed: the engine's log written into the database file, so that the run's duration covers it and closing the database has nothing left to write.",
		ir.Checkpoint{})
	l.add(ir.StmtRecordDuration, ir.PhaseState, "After the write transaction committed: the run's end and duration, the commit included.",
		ir.Update{Table: ir.RunsTable, Set: []ir.Assign{{Column: "finished_at", Value: ref(pFinished)}, {Column: "duration_ms", Value: ref(pDuration)}}, Where: colEq("run_id", pRunID)},
		pFinished, pDuration, pRunID)
}

// measures are count and the spec's reconcile measures, but for those of
// a column the target keeps at its first value (kept), which come second:
// they differ from the source by design, and comparing them would report
// drift that no backfill should repair.
func measures(s *Spec, kept []string) (out []ir.Measure, uncompared []string) {
	out = []ir.Measure{{Fn: "count"}}
	if s.Reconcile == nil {
		return out, nil
	}
	for _, m := range s.Reconcile.Measures {
		meas, _ := ParseMeasure(m.Value, s.ColumnNames())
		switch {
		case meas.Fn == "count" && meas.Column == "":
		case meas.Column != "" && contains(kept, meas.Column):
			uncompared = append(uncompared, meas.String())
		default:
			out = append(out, meas)
		}
	}
	return out, uncompared
}

// valid is the condition a source row passes to be written: nil without
// quality rules. A rule that evaluates to NULL is not broken (the staged
// rows' split reads it so, as a CHECK constraint does), so a NULL must
// read as valid here too, not as "not true".
func (l *lowerer) valid() ir.Expr {
	if len(l.rules) == 0 {
		return nil
	}
	return ir.Unary{Op: "NOT", X: ir.Call{Fn: "coalesce", Args: []ir.Expr{anyOf(l.rules), ir.Lit{Text: "FALSE"}}}}
}

// partitions adds what a backfill needs: rewrite one partition, mark it
// done, and check it against the source.
func (l *lowerer) partitions() {
	p := l.p
	if p.Partition == nil {
		return
	}
	cols := columnNames(p.Columns)
	pc := p.Partition.Column
	rng := ir.Window{Column: pc, Lo: pPlo.Name, Hi: pPhi.Name}
	l.add(ir.StmtCountPartition, ir.PhaseWrite, "The target's rows of the partition [plo, phi) that its rewrite replaces (rows deleted).",
		ir.CountRows{Table: p.Target, Where: and(ir.Binary{Op: ">=", L: col(pc), R: ref(pPlo)}, ir.Binary{Op: "<", L: col(pc), R: ref(pPhi)})}, pPlo, pPhi)
	l.add(ir.StmtReplacePartition, ir.PhaseWrite, "Overwrite the partition [plo, phi) of the target with its staged rows (in the write transaction where the engine has one).",
		ir.ReplacePartition{Target: p.Target, Stage: p.Stage, Columns: cols, Range: rng}, pPlo, pPhi)
	for _, st := range markerStatements() {
		l.addStatement(st)
	}
	l.add(ir.StmtTargetPartitions, ir.PhaseQuery, "The partitions the target holds, oldest first: stale partitions are among them.",
		ir.DistinctPartitions{Source: ir.Relation{Table: p.Target}, Partition: *p.Partition})
	_, upTo := l.windows()
	l.add(ir.StmtCheckPartitionSrc, ir.PhaseQuery, "After a rebuild: the partition's count and measures in the source, as staged.",
		ir.Aggregate{Source: p.Source, By: pc, Partition: p.Partition, Measures: p.Measures, Dedupe: l.dedupe(), Valid: l.valid(), Window: upTo, Range: rng},
		append(windowParams(upTo), pPlo, pPhi)...)
	l.add(ir.StmtCheckPartitionTgt, ir.PhaseQuery, "After a rebuild: the partition's count and measures in the target.",
		ir.Aggregate{Source: ir.Relation{Table: p.Target}, By: pc, Partition: p.Partition, Measures: p.Measures, Range: rng}, pPlo, pPhi)
}

// markerStatements are the statements of a backfill's markers and of the
// logic runs computed with: the same for every pipeline with partitions.
var markerStatements = shared((*lowerer).addMarkers)

func (l *lowerer) addMarkers() {
	markerKey := and(and(colEq("pipeline", pPipeline), colEq("backfill_id", pBackfill)), colEq("partition_key", pPartKey))
	l.add(ir.StmtClearMarkers, ir.PhaseState, "backfill --restart: forget which partitions of this backfill are done.",
		ir.DeleteRows{Table: ir.PartitionsTable, Where: and(colEq("pipeline", pPipeline), colEq("backfill_id", pBackfill))}, pPipeline, pBackfill)
	l.add(ir.StmtReadMarkers, ir.PhaseState, "The partitions of this backfill already done: an interrupted backfill resumes after them.",
		ir.SelectRows{Table: ir.PartitionsTable, Columns: []string{"partition_key", "status"}, Where: and(colEq("pipeline", pPipeline), colEq("backfill_id", pBackfill)),
			OrderBy: []ir.Order{{Column: "partition_key", Desc: false}}}, pPipeline, pBackfill)
	l.add(ir.StmtRecentMarkers, ir.PhaseQuery, "The latest partition markers of every backfill, for incrc state.",
		ir.SelectRows{Table: ir.PartitionsTable, Columns: []string{"backfill_id", "partition_key", "status", "rows_written", "detail", "updated_at"}, Where: colEq("pipeline", pPipeline),
			OrderBy: []ir.Order{{Column: "updated_at", Desc: true}, {Column: "partition_key", Desc: true}}, Limit: 100}, pPipeline)
	l.add(ir.StmtDeleteMarker, ir.PhaseWrite, "Replace a partition's marker (with the rewrite, in its transaction).",
		ir.DeleteRows{Table: ir.PartitionsTable, Where: markerKey}, pPipeline, pBackfill, pPartKey)
	markerCols := []string{"pipeline", "backfill_id", "partition_key", "status", "rows_written", "detail", "updated_at", "logic_hash"}
	markerParams := []ir.Param{pPipeline, pBackfill, pPartKey, {Name: "marker_status", Type: ir.PText}, {Name: ir.RegWritten, Type: ir.PInt}, {Name: "detail", Type: ir.PText}, {Name: "updated_at", Type: ir.PText}, {Name: "logic_hash", Type: ir.PText}}
	l.add(ir.StmtInsertMarker, ir.PhaseWrite, "The partition's completion marker.",
		ir.InsertValues{Table: ir.PartitionsTable, Columns: markerCols, Values: refs(markerParams)}, markerParams...)
	l.add(ir.StmtLogicMarkers, ir.PhaseQuery, "The logic each partition was last rebuilt with (the markers of done partitions): stale partitions.",
		ir.SelectRows{Table: ir.PartitionsTable, Columns: []string{"partition_key", "logic_hash", "updated_at"},
			Where: and(colEq("pipeline", pPipeline), eq(col("status"), ir.Str{Value: "done"})), OrderBy: []ir.Order{{Column: "updated_at", Desc: false}, {Column: "partition_key", Desc: false}}}, pPipeline)
	l.add(ir.StmtLogicRuns, ir.PhaseQuery, "The logic each succeeded run and full refresh computed its rows with, in order: stale partitions.",
		ir.SelectRows{Table: ir.RunsTable, Columns: []string{"kind", "logic_hash", "finished_at"},
			Where: and(colEq("pipeline", pPipeline), eq(col("status"), ir.Str{Value: "succeeded"})), OrderBy: []ir.Order{{Column: "finished_at", Desc: false}}}, pPipeline)
}

func (l *lowerer) reconcile() {
	p := l.p
	if p.ReconcileBy == "" {
		return
	}
	by := p.ReconcileBy
	// The source side is what a full refresh would write now: one row per
	// key, valid rows only. Rows changed after the watermark show as drift
	// until the next run picks them up. Rows whose watermark is NULL are
	// counted too: no run writes them, and reconciliation must see them.
	var since ir.Window
	valid := l.valid()
	if wm := p.Watermark; wm != nil {
		since = ir.Window{Column: wm.Name, Lo: "start", OrNull: true}
	}
	l.add(ir.StmtReconcileSrc, ir.PhaseQuery, "Reconcile, source side: what a full refresh would write, per "+by+" in [from, to).",
		ir.Aggregate{Source: p.Source, By: by, Partition: p.ReconcileGroups, Measures: p.Measures, Dedupe: l.dedupe(), Valid: valid, Window: since}, append(windowParams(since), pFrom, pTo)...)
	if l.spec.UniqueSource() {
		l.add(ir.StmtVersionedKeys, ir.PhaseQuery, "Keys with more than one row in the source, which declares source.unique: true: reconcile reports them.",
			ir.VersionedKeys{Source: p.Source, Key: p.Key, Window: since}, windowParams(since)...)
	}
	if d := l.dedupe(); d != nil {
		// Keeping one row per key costs a sort of the whole source; when no
		// key has two versions it changes nothing, and a hash aggregate over
		// the keys finds that out for much less.
		l.add(ir.StmtVersionedKeys, ir.PhaseQuery, "Keys with more than one version in the source: without any, reconcile skips the dedupe.",
			ir.VersionedKeys{Source: p.Source, Key: d.Key, Window: since}, windowParams(since)...)
		l.add(ir.StmtReconcileSrcFlat, ir.PhaseQuery, "Reconcile, source side, for a source holding one version per key: the same rows, no dedupe.",
			ir.Aggregate{Source: p.Source, By: by, Partition: p.ReconcileGroups, Measures: p.Measures, Valid: valid, Window: since}, append(windowParams(since), pFrom, pTo)...)
	}
	l.add(ir.StmtReconcileTgt, ir.PhaseQuery, "Reconcile, target side, per "+by+" in [from, to).",
		ir.Aggregate{Source: ir.Relation{Table: p.Target}, By: by, Partition: p.ReconcileGroups, Measures: p.Measures}, pFrom, pTo)
}
