package compiler

import (
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Names of the state tables every pipeline shares, in the target
// database's default schema.
var (
	StateTable      = Table{Parts: []string{"incrc_state"}}
	RunsTable       = Table{Parts: []string{"incrc_runs"}}
	PartitionsTable = Table{Parts: []string{"incrc_partitions"}}
	FilesTable      = Table{Parts: []string{"incrc_files"}}
)

// runsIndex is the run log's index by pipeline and status.
const runsIndex = "incrc_runs_pipeline_status"

// runsIndexColumns are runsIndex's: abandon_runs finds a pipeline's
// running rows by them.
var runsIndexColumns = []string{"pipeline", "status"}

// Statement names. The compiled file lists the statements in the order
// Lower adds them; the programs say which of them each mode runs.
const (
	StmtCreateSchema     = "create_schema"
	StmtCreateState      = "create_state"
	StmtCreateRuns       = "create_runs"
	StmtProbeState       = "probe_state"
	StmtProbeRuns        = "probe_runs"
	StmtProbeRunsIndex   = "probe_runs_index"
	StmtCreateRunsIndex  = "create_runs_index"
	StmtCreatePartitions = "create_partitions"
	StmtProbePartitions  = "probe_partitions"
	StmtCreateTarget     = "create_target"
	StmtCreateQuarantine = "create_quarantine"
	StmtCheckTarget      = "check_target_columns"
	StmtCheckQuarantine  = "check_quarantine_columns"
	StmtCreatePartIndex  = "create_partition_index"

	StmtInitState    = "init_state"
	StmtAcquireLease = "acquire_lease"
	StmtReadState    = "read_state"
	StmtRenewLease   = "renew_lease"
	StmtReleaseLease = "release_lease"
	StmtForceRelease = "force_release"
	StmtAbandonRuns  = "abandon_runs"
	// The engine session's locks around a lease and a setup
	// (SessionLock), and the takeover of a lease whose holder's session
	// is gone.
	StmtLockSession   = "lock_session"
	StmtUnlockSession = "unlock_session"
	StmtTakeOverLease = "take_over_lease"
	StmtLockSetup     = "lock_setup"
	StmtUnlockSetup   = "unlock_setup"
	StmtRecordStart   = "record_start"
	StmtRecentRuns    = "recent_runs"
	// StmtTargetHasRows reads whether the target holds a row; the state
	// keeps it with the watermark (target_filled), and StmtCheckKept finds
	// a target emptied since.
	StmtTargetHasRows = "target_has_rows"
	StmtCheckKept     = "check_target_kept"

	StmtSourceMax            = "source_max"
	StmtTieMax               = "source_max_tiebreak"
	StmtCountRead            = "count_read"
	StmtProbeSource          = "probe_source"
	StmtCountNullWatermark   = "count_null_watermark"
	StmtCountNullWMSource    = "count_null_watermark_source"
	StmtDeleteNullWatermark  = "delete_null_watermark"
	StmtDropStage            = "drop_stage"
	StmtCreateStage          = "create_stage"
	StmtStageWindow          = "stage_window"
	StmtStageAll             = "stage_all"
	StmtCopyWindow           = "copy_window"
	StmtDropRaw              = "drop_raw"
	StmtCreateRaw            = "create_raw"
	StmtDedupeStage          = "dedupe_stage"
	StmtAnalyzeStage         = "analyze_stage"
	StmtQuarantine           = "quarantine"
	StmtCountInvalid         = "count_invalid"
	StmtDeleteInvalid        = "delete_invalid"
	StmtCountStaged          = "count_staged"
	StmtRetractInvalid       = "retract_invalid"
	StmtIgnoreOlder          = "ignore_older"
	StmtIgnoreKnown          = "ignore_known_keys"
	StmtCheckUnique          = "check_unique"
	StmtCountMatched         = "count_matched"
	StmtWriteWindow          = "write_window"
	StmtWrite                = "write"
	StmtClearTarget          = "clear_target"
	StmtInsertAll            = "insert_all"
	StmtQuarantineNullWM     = "quarantine_null_watermark"
	StmtQuarantineNullWMSrc  = "quarantine_null_watermark_source"
	StmtAdvance              = "advance_watermark"
	StmtRecordFinish         = "record_finish"
	StmtRecordDuration       = "record_duration"
	StmtCheckpoint           = "checkpoint"
	StmtSourceUnique         = "source_unique"
	StmtCountSource          = "count_source"
	StmtCountInvalidSource   = "count_invalid_source"
	StmtCountInvalidUnique   = "count_invalid_source_unique"
	StmtQuarantineSource     = "quarantine_source"
	StmtQuarantineUnique     = "quarantine_source_unique"
	StmtCountTarget          = "count_target"
	StmtReplaceTarget        = "replace_target"
	StmtReplaceUnique        = "replace_target_unique"
	StmtReconcileSrc         = "reconcile_source"
	StmtReconcileSrcFlat     = "reconcile_source_flat"
	StmtVersionedKeys        = "versioned_keys"
	StmtReconcileTgt         = "reconcile_target"
	StmtTouchedPartitions    = "touched_partitions"
	StmtCountUnpartitioned   = "count_unpartitioned"
	StmtQuarantineUnpartited = "quarantine_unpartitioned"
	StmtStagePartition       = "stage_partition"
	StmtCountPartitionSource = "count_partition_source"
	StmtCountPartition       = "count_partition"
	StmtReplacePartition     = "replace_partition"
	StmtCheckPartitionSrc    = "check_partition_source"
	StmtCheckPartitionTgt    = "check_partition_target"
	StmtClearMarkers         = "clear_markers"
	StmtReadMarkers          = "read_markers"
	StmtDeleteMarker         = "delete_marker"
	StmtInsertMarker         = "insert_marker"
	StmtRecentMarkers        = "recent_markers"
	StmtLogicMarkers         = "logic_markers"
	StmtLogicRuns            = "logic_runs"
	StmtTargetPartitions     = "target_partitions"
)

const (
	quarantineSuffix = "_quarantine"
	stagePrefix      = "incrc_stage_"
	rawPrefix        = "incrc_raw_"
)

// Lower turns a valid spec into its plan. The spec must have passed
// Validate; Lower panics on nothing and reports what it cannot compile.
func Lower(s *Spec) (*Plan, error) {
	strategy := Strategy(s.Strategy.Value)
	p := &Plan{
		File:     s.File,
		SpecHash: s.Hash,
		Pipeline: s.Pipeline.Value,
		Strategy: strategy,
		Target:   splitTable(s.Target.Table.Value),
		Stage:    Table{Parts: []string{stagePrefix + s.Pipeline.Value}},
		Raw:      Table{Parts: []string{rawPrefix + s.Pipeline.Value}},
		Key:      s.Key(),
		Upstream: s.Upstreams(),
		Params:   Params(s),
		Tables:   s.Tables(),
	}
	p.LogicHash = LogicHashOf(p.Params)
	switch {
	case s.Source.Files.Set():
		p.From = &Foreign{Dialect: "duckdb", Files: s.Source.Files.Value, Format: FileFormat(s.Source), ByFile: s.Source.ByFile.Set()}
		scan := &FileScan{Glob: p.From.Files, Format: p.From.Format}
		if p.From.ByFile {
			scan.Param = pFiles.Name
		}
		p.Source = Relation{Files: scan}
	case s.Source.Table.Set():
		p.Source = Relation{Table: splitTable(s.Source.Table.Value)}
	default:
		p.Source = Relation{Query: strings.TrimSpace(s.Source.Query.Value)}
		p.SourceQuery = s.Source.Query
	}
	if c := s.Source.Connection; c.Set() {
		p.From = &Foreign{Connection: c.Value, Dialect: s.Source.Dialect.Value}
	}
	p.Source = withLookups(s, p.Source)
	for _, c := range s.Columns {
		notNull := contains(p.Key, c.Name.Value) && !c.Nullable
		p.Columns = append(p.Columns, Col{Name: c.Name.Value, Type: c.Type, NotNull: notNull})
	}
	if f := p.Source.Files; f != nil && f.Format == "csv" {
		for _, c := range p.Columns {
			if len(p.Source.Lookups) == 0 || contains(p.Source.Columns, c.Name) {
				f.Types = append(f.Types, Col{Name: c.Name, Type: c.Type})
			}
		}
	}
	if w := s.Watermark; w != nil {
		c := *s.Column(w.Column.Value)
		start, _ := ParseWatermark(c.Type, w.Start.Value) // Validate checked it
		p.Watermark = &Watermarking{Col: Col{Name: c.Name.Value, Type: c.Type}, Start: start, Lookback: w.Lookback, Lag: w.Lag, Batch: w.Batch, Tiebreak: w.Tiebreak.Value}
	}
	if pt := s.Partition; pt != nil {
		c := s.Column(pt.Column.Value)
		g := pt.Granularity.Value
		if g == "" {
			g = "day"
		}
		p.Partition = &Partitioning{Column: c.Name.Value, Type: c.Type, Granularity: g, FinalizeAfter: pt.FinalizeAfter, Zone: pt.Timezone.Value}
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
			p.ReconcileGroups = &Partitioning{Column: c.Name.Value, Type: c.Type, Granularity: g}
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
		p.Quarantine = Table{Parts: parts}
	}
	p.Statements = make([]*Statement, 0, 64)
	l := &lowerer{p: p, spec: s, rules: rules, mode: mode}
	if l.scd = newSCD2(s, p); l.scd != nil {
		p.Versions = l.scd.String()
	}
	if strategy == CDCApply {
		l.cdcPlan()
	}
	l.setup()
	l.state()
	l.lookupCheck()
	switch {
	case strategy == CDCApply:
		l.cdcStatements() // see cdc.go
	case l.scd != nil && l.scd.fromCDC:
		l.scd.cdcStatements(l) // see scd2cdc.go
	default:
		l.stage()
		l.write()
		l.refresh()
		l.partitions()
		l.reconcile()
	}
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
		if err := pr.check(names); err != nil {
			return nil, fmt.Errorf("%s: pipeline %s: %w", s.File, p.Pipeline, err)
		}
	}
	return p, nil
}

type lowerer struct {
	p     *Plan
	spec  *Spec
	rules []Rule        // what a staged row must pass
	mode  string        // what happens to a row that breaks one: quarantine, fail, or "" (no rules)
	scd   *scd2Lowering // nil unless the strategy is scd2
}

func (l *lowerer) add(name string, phase Phase, doc string, op Op, params ...Param) {
	l.addStatement(Statement{Name: name, Phase: phase, Doc: doc, Op: op, Params: params})
}

// addStatement adds a copy of st to the plan.
func (l *lowerer) addStatement(st Statement) {
	l.p.Statements = append(l.p.Statements, &st)
}

// shared makes the statements that add adds the same for every pipeline
// once: each plan gets copies of them, which share their operations, as
// plans share the state tables' columns. An operation is a value no one
// changes; a statement's parameters are clipped, so that appending to
// them (foreign) copies them first. Each copy names the statement it
// copies (Statement.Shared).
func shared(add func(l *lowerer)) func() []Statement {
	return sync.OnceValue(func() []Statement {
		l := &lowerer{p: &Plan{}}
		add(l)
		out := make([]Statement, len(l.p.Statements))
		for i, st := range l.p.Statements {
			out[i] = *st
			out[i].Params = slices.Clip(out[i].Params)
			out[i].shared = &out[i]
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
func Bookkeeping() []*Statement {
	var out []*Statement
	for _, list := range [][]Statement{sharedSetup(), stateStatements(), advanceStatements(), markerStatements()} {
		for i := range list {
			out = append(out, &list[i])
		}
	}
	return out
}

func splitTable(s string) Table { return Table{Parts: strings.Split(s, ".")} }

var (
	pPipeline  = Param{"pipeline", PText}
	pOwner     = Param{"owner", PText}
	pNow       = Param{"now", PText}
	pExpires   = Param{"expires_at", PText}
	pHolder    = Param{"holder", PText}
	pRunID     = Param{"run_id", PText}
	pFrom      = Param{"from", PBound}
	pTo        = Param{"to", PBound}
	pWatermark = Param{"watermark", PText}
	pExpected  = Param{"expected", PText}
	pSpecHash  = Param{"spec_hash", PText}
	pFilled    = Param{RegTargetFilled, PInt}
	pLoID      = Param{"lo_id", PInt}
	pHiID      = Param{"hi_id", PInt}
	pPlo       = Param{"plo", PPartition}
	pPhi       = Param{"phi", PPartition}
	pBackfill  = Param{"backfill_id", PText}
	pPartKey   = Param{"partition_key", PText}
)

func ref(p Param) Expr     { return ParamRef{p.Name} }
func col(name string) Expr { return ColRef{name} }
func eq(a, b Expr) Expr    { return Binary{"=", a, b} }
func and(a, b Expr) Expr   { return Binary{"AND", a, b} }
func or(a, b Expr) Expr    { return Binary{"OR", a, b} }
func colEq(c string, p Param) Expr {
	return eq(col(c), ref(p))
}

var null = Lit{"NULL"}

func varchar(n int) Type { return Type{Kind: Varchar, Length: n} }

// stateColumns are incrc_state's columns. Times are RFC 3339 UTC text so
// that they compare and round-trip the same way on every engine.
var stateColumns = []Col{
	{Name: "pipeline", Type: varchar(64), NotNull: true},
	{Name: "watermark", Type: varchar(64)},
	{Name: "lease_owner", Type: varchar(128)},
	{Name: "lease_expires_at", Type: varchar(40)},
	{Name: "spec_hash", Type: varchar(64)},
	{Name: "updated_at", Type: varchar(40)},
	// target_filled: 1 when the target held a row as the run that last
	// moved the watermark committed, 0 when it held none; NULL before.
	{Name: "target_filled", Type: Type{Kind: Integer}},
}

// addedStateColumns are the state's columns an older incrc did not
// create: setup adds them.
var addedStateColumns = []string{"target_filled"}

func addStateColumn(name string) string { return "add_state_" + name }

// addedPartitionColumns are the markers' columns an older incrc did not
// create: setup adds them.
var addedPartitionColumns = []string{"logic_hash"}

func addPartitionsColumn(name string) string { return "add_partitions_" + name }

// RunColumns are incrc_runs' columns, one row per run, failed ones too.
// Columns added after the table first shipped come last, and setup adds
// them to a table an older incrc created (see addedRunColumns).
var RunColumns = []Col{
	{Name: "run_id", Type: varchar(64), NotNull: true},
	{Name: "pipeline", Type: varchar(64), NotNull: true},
	{Name: "kind", Type: varchar(16)},
	{Name: "status", Type: varchar(16)},
	{Name: "window_lo", Type: varchar(64)},
	{Name: "window_hi", Type: varchar(64)},
	{Name: "watermark_before", Type: varchar(64)},
	{Name: "watermark_after", Type: varchar(64)},
	{Name: "rows_read", Type: Type{Kind: Bigint}},
	{Name: "rows_inserted", Type: Type{Kind: Bigint}},
	{Name: "rows_updated", Type: Type{Kind: Bigint}},
	{Name: "rows_deleted", Type: Type{Kind: Bigint}},
	{Name: "rows_quarantined", Type: Type{Kind: Bigint}},
	{Name: "started_at", Type: varchar(40)},
	{Name: "finished_at", Type: varchar(40)},
	{Name: "duration_ms", Type: Type{Kind: Bigint}},
	{Name: "error", Type: Type{Kind: Text}},
	{Name: "spec_hash", Type: varchar(64)},
	{Name: "rows_skipped", Type: Type{Kind: Bigint}},
	{Name: "note", Type: Type{Kind: Text}},
	{Name: "rows_ignored", Type: Type{Kind: Bigint}},
	// logic_hash: the spec's logic (LogicHash) the run computed its rows
	// with; a partition last written with another one is stale.
	{Name: "logic_hash", Type: varchar(64)},
}

// addedRunColumns are the columns of RunColumns that incrc_runs did not
// have when it was first created by a released incrc.
var addedRunColumns = []string{"rows_skipped", "note", "rows_ignored", "logic_hash"}

// partitionColumns are incrc_partitions' columns: backfill completion
// markers and reconciliation results, one row per partition.
var partitionColumns = []Col{
	{Name: "pipeline", Type: varchar(64), NotNull: true},
	{Name: "backfill_id", Type: varchar(64), NotNull: true},
	{Name: "partition_key", Type: varchar(40), NotNull: true},
	{Name: "status", Type: varchar(16)},
	{Name: "rows_written", Type: Type{Kind: Bigint}},
	{Name: "detail", Type: Type{Kind: Text}},
	{Name: "updated_at", Type: varchar(40)},
	{Name: "logic_hash", Type: varchar(64)}, // the logic the partition was rebuilt with
}

func (l *lowerer) setup() {
	p := l.p
	if schema := p.Target.Schema(); schema != nil {
		l.add(StmtCreateSchema, PhaseSetup, "The target's schema.", CreateSchema{Schema: schema})
	}
	for _, st := range sharedSetup() {
		l.addStatement(st)
	}
	var pk []string
	if p.Strategy == Merge && !l.nullableKey() {
		pk = p.Key
	}
	switch {
	case p.CDC != nil:
		l.add(StmtCreateTarget, PhaseSetup, "The target: the row image of the declared columns but the excluded ones, and the sequence of the change applied.",
			CreateTable{Table: p.Target, Columns: p.CDC.TargetColumns, PrimaryKey: p.Key})
	case l.scd != nil && l.scd.fromCDC:
		l.add(StmtCreateTarget, PhaseSetup, "The target: the versions, each the image of the declared columns but the excluded ones and the sequence of its change, valid over ["+l.scd.v.ValidFrom+", "+l.scd.v.ValidTo+").", l.scd.createTarget(p))
	case l.scd != nil:
		l.add(StmtCreateTarget, PhaseSetup, "The target, from the declared columns.", l.scd.createTarget(p))
	default:
		l.add(StmtCreateTarget, PhaseSetup, "The target, from the declared columns.",
			CreateTable{Table: p.Target, Columns: p.Columns, PrimaryKey: pk})
	}
	l.schemaCheck(StmtCheckTarget, "The target's columns against the spec's, before anything writes: an added column is added, a widened type widened in place; anything else fails with the DDL it needs.")
	// The tables beside a change log's target come after its check, which
	// probes the table created last.
	switch {
	case p.CDC != nil:
		l.cdcSetup()
	case l.scd != nil && l.scd.fromCDC:
		l.scd.cdcSetup(l)
	}
	if p.Partition != nil {
		l.add(StmtCreatePartIndex, PhaseSetup, "An index on the partition column: a partition's rewrite and check read only that partition.",
			CreateIndex{Name: "incrc_" + p.Pipeline + "_part", Table: p.Target, Columns: []string{p.Partition.Column}})
	}
	if !p.Quarantine.IsZero() {
		cols := []Col{{Name: "incrc_run_id", Type: varchar(64)}, {Name: "incrc_reason", Type: Type{Kind: Text}}}
		for _, c := range p.Columns {
			cols = append(cols, Col{Name: c.Name, Type: c.Type})
		}
		l.add(StmtCreateQuarantine, PhaseSetup, "Rows that fail quality rules, with the run and the rule.",
			CreateTable{Table: p.Quarantine, Columns: cols})
		l.schemaCheck(StmtCheckQuarantine, "The quarantine's columns against the spec's, as the target's.")
	}
}

// schemaCheck adds the probe of the table the last statement created,
// against the columns it creates.
func (l *lowerer) schemaCheck(name, doc string) {
	ct := l.p.Statements[len(l.p.Statements)-1].Op.(CreateTable)
	l.add(name, PhaseSetup, doc, ProbeColumns{Source: Relation{Table: ct.Table}, Declared: append([]Col{}, ct.Columns...), DeclaredKey: ct.PrimaryKey})
}

// sharedSetup are the setup statements of the tables every pipeline
// shares: the same for every pipeline.
var sharedSetup = shared((*lowerer).addSharedSetup)

func (l *lowerer) addSharedSetup() {
	l.add(StmtCreateState, PhaseSetup, "Watermark and lease per pipeline, shared by all pipelines of this database.",
		CreateTable{Table: StateTable, Columns: stateColumns, PrimaryKey: []string{"pipeline"}})
	l.add(StmtProbeState, PhaseSetup, "The state's columns: a table an older incrc created lacks the newer ones.",
		ProbeColumns{Source: Relation{Table: StateTable}})
	l.addColumns(StateTable, stateColumns, addedStateColumns, addStateColumn, "the state of an older incrc")
	l.add(StmtCreateRuns, PhaseSetup, "The run log: one row per run, failed runs too.",
		CreateTable{Table: RunsTable, Columns: RunColumns, PrimaryKey: []string{"run_id"}, Log: true,
			Indexes: []TableIndex{{Name: runsIndex, Columns: runsIndexColumns}}})
	l.add(StmtProbeRuns, PhaseSetup, "The run log's columns: a table an older incrc created lacks the newer ones.",
		ProbeColumns{Source: Relation{Table: RunsTable}})
	l.addColumns(RunsTable, RunColumns, addedRunColumns, addRunsColumn, "a run log an older incrc created")
	l.add(StmtProbeRunsIndex, PhaseSetup, "Is the run log indexed by pipeline and status? (Asked first: creating an index that exists still locks the table on some engines, which would make every run wait for every other pipeline's write.)",
		IndexExists{Name: runsIndex, Table: RunsTable})
	l.add(StmtCreateRunsIndex, PhaseSetup, "The run log by pipeline and status: abandon_runs finds a pipeline's running rows without reading the whole log, which grows with every run.",
		CreateIndex{Name: runsIndex, Table: RunsTable, Columns: runsIndexColumns})
	l.add(StmtCreatePartitions, PhaseSetup, "Backfill completion markers and per-partition reconciliation results.",
		CreateTable{Table: PartitionsTable, Columns: partitionColumns, PrimaryKey: []string{"pipeline", "backfill_id", "partition_key"}})
	l.add(StmtProbePartitions, PhaseSetup, "The markers' columns: a table an older incrc created lacks the newer ones.",
		ProbeColumns{Source: Relation{Table: PartitionsTable}})
	l.addColumns(PartitionsTable, partitionColumns, addedPartitionColumns, addPartitionsColumn, "the markers of an older incrc")
}

// addColumns adds the setup statements that add the columns named added
// (of cols) to table, which an older incrc created without them.
func (l *lowerer) addColumns(table Table, cols []Col, added []string, stmt func(string) string, older string) {
	for _, name := range added {
		for _, c := range cols {
			if c.Name == name {
				l.add(stmt(name), PhaseSetup, "Add "+name+" to "+older+".", AddColumn{Table: table, Column: c})
			}
		}
	}
}

func addRunsColumn(name string) string { return "add_runs_" + name }

// version is the column that orders a merge's versions of a key, which
// its write compares with the target's: dedupe_by, or the watermark column.
// None without one, or when it is a key column, or nothing but the key is
// written.
func (l *lowerer) version() string {
	p := l.p
	if p.Strategy != Merge || p.CDC != nil || len(p.Key) == 0 {
		return ""
	}
	v := l.spec.DedupeBy.Value
	if v == "" && p.Watermark != nil {
		v = p.Watermark.Name
	}
	if v == "" || contains(p.Key, v) {
		return ""
	}
	return v
}

// mergeList names the merge block's list, for a statement's comment.
func (l *lowerer) mergeList() string {
	if m := l.spec.MergeOpts; m != nil && len(m.UpdateColumns) > 0 {
		return "update_columns"
	}
	return "exclude_columns"
}

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
	l.add(StmtTargetHasRows, PhaseQuery, "Does the target hold a row? An EXISTS, which stops at the first: the state keeps the answer with the watermark, so that the next run can tell a target emptied or created again since.",
		HasRows{Table: l.p.Target})
}

var stateStatements = shared((*lowerer).addState)

func (l *lowerer) addState() {
	free := or(or(IsNull{X: col("lease_owner")}, colEq("lease_owner", pOwner)), Binary{"<", col("lease_expires_at"), ref(pNow)})
	mine := and(colEq("pipeline", pPipeline), colEq("lease_owner", pOwner))
	l.add(StmtInitState, PhaseState, "The pipeline's state row, created once.",
		InsertValues{Table: StateTable, Columns: []string{"pipeline"}, Values: []Expr{ref(pPipeline)}, IfAbsentKey: []string{"pipeline"}}, pPipeline)
	l.add(StmtAcquireLease, PhaseState, "Take the lease if it is free, expired or already ours; one row changed means taken.",
		Update{Table: StateTable, Set: []Assign{{"lease_owner", ref(pOwner)}, {"lease_expires_at", ref(pExpires)}},
			Where: and(colEq("pipeline", pPipeline), free)}, pOwner, pExpires, pPipeline, pNow)
	l.add(StmtReadState, PhaseState, "The saved watermark and who holds the lease.",
		SelectRows{Table: StateTable, Columns: []string{"watermark", "lease_owner", "lease_expires_at", "spec_hash", "updated_at"}, Where: colEq("pipeline", pPipeline)}, pPipeline)
	l.add(StmtRenewLease, PhaseState, "Extend the lease while the run is alive.",
		Update{Table: StateTable, Set: []Assign{{"lease_expires_at", ref(pExpires)}}, Where: mine}, pExpires, pPipeline, pOwner)
	l.add(StmtReleaseLease, PhaseState, "Give the lease back at the end of a run, failed or not.",
		Update{Table: StateTable, Set: []Assign{{"lease_owner", null}, {"lease_expires_at", null}}, Where: mine}, pPipeline, pOwner)
	l.add(StmtLockSession, PhaseState, "Hold the engine session's lock of the pipeline for the run's life (1 taken, 0 held by a live session): a run whose process died loses it with its connection.",
		SessionLock{Guards: "lease"}, pPipeline)
	l.add(StmtUnlockSession, PhaseState, "Give the session's lock of the pipeline back, after the lease.",
		SessionLock{Guards: "lease", Release: true}, pPipeline)
	l.add(StmtTakeOverLease, PhaseState, "Take a lease whose holder held the session lock and lost it with its connection: its process ended; one row changed means taken.",
		Update{Table: StateTable, Set: []Assign{{"lease_owner", ref(pOwner)}, {"lease_expires_at", ref(pExpires)}},
			Where: and(colEq("pipeline", pPipeline), colEq("lease_owner", pHolder))}, pOwner, pExpires, pPipeline, pHolder)
	l.add(StmtLockSetup, PhaseState, "Wait for the database's setup lock: runs that create the state tables at once do it one after the other (1 taken).",
		SessionLock{Guards: "setup"})
	l.add(StmtUnlockSetup, PhaseState, "Give the setup lock back.",
		SessionLock{Guards: "setup", Release: true})
	l.add(StmtForceRelease, PhaseState, "incrc state --release: free the lease of a run that died.",
		Update{Table: StateTable, Set: []Assign{{"lease_owner", null}, {"lease_expires_at", null}}, Where: colEq("pipeline", pPipeline)}, pPipeline)
	l.add(StmtAbandonRuns, PhaseState, "Runs still marked running when their lease was taken over died without finishing.",
		Update{Table: RunsTable, Set: []Assign{{"status", Str{"abandoned"}}}, Where: and(colEq("pipeline", pPipeline), eq(col("status"), Str{"running"}))}, pPipeline)
	startCols := []string{"run_id", "pipeline", "kind", "window_lo", "window_hi", "watermark_before", "started_at", "spec_hash", "note", "logic_hash"}
	startParams := textParams(startCols)
	startVals := refs(startParams)
	startCols = append(startCols, "status")
	startVals = append(startVals, Str{"running"})
	l.add(StmtRecordStart, PhaseState, "The run's row in the run log, written before any data moves.",
		InsertValues{Table: RunsTable, Columns: startCols, Values: startVals}, startParams...)
	l.add(StmtCheckKept, PhaseState, "Did the run that last moved the watermark leave rows in the target? Asked when the target holds none: it was emptied or created again since.",
		CountRows{Table: StateTable, Where: and(colEq("pipeline", pPipeline), eq(col("target_filled"), Lit{"1"}))}, pPipeline)
	l.add(StmtRecentRuns, PhaseQuery, "The latest runs, for incrc state.",
		SelectRows{Table: RunsTable, Columns: runLogColumns(), Where: colEq("pipeline", pPipeline), OrderBy: []Order{{"started_at", true}}, Limit: 20}, pPipeline)
}

func textParams(names []string) []Param {
	ps := make([]Param, len(names))
	for i, n := range names {
		ps[i] = Param{n, PText}
	}
	return ps
}

func refs(ps []Param) []Expr {
	out := make([]Expr, len(ps))
	for i, p := range ps {
		out[i] = ref(p)
	}
	return out
}

func runLogColumns() []string {
	var cols []string
	for _, c := range RunColumns {
		cols = append(cols, c.Name)
	}
	return cols
}

// dedupe is the rule for sources that hold several versions of a key in
// one window: one row per unique_key per batch, the greatest dedupe_by,
// defaulting to the watermark column, ties broken by the other columns.
// A full refresh keeps the same row, so an incremental run stays equal
// to it. Without a unique_key there is nothing to dedupe by.
func (l *lowerer) dedupe() *Dedupe {
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
	d := &Dedupe{Key: key, NullSafe: l.nullableKey()}
	if order != "" {
		d.OrderBy = append(d.OrderBy, Order{order, true})
	}
	// Ties on the version column are broken by the other columns, so the
	// row kept is the same on every run: a full refresh keeps it too.
	for _, c := range p.Columns {
		if c.Name != order && !contains(key, c.Name) {
			d.OrderBy = append(d.OrderBy, Order{c.Name, true})
			if c.Type.Kind == JSON {
				d.JSON = append(d.JSON, c.Name)
			}
		}
	}
	return d
}

// window is the run's half-open window [lo, hi) on the watermark; upTo is
// what a full refresh and a partition rebuild read, [start, hi). Both are
// zero without a watermark: a full_refresh pipeline reads everything.
func (l *lowerer) windows() (window, upTo Window) {
	if wm := l.p.Watermark; wm != nil {
		window, upTo = Window{Column: wm.Name, Lo: "lo", Hi: "hi"}, Window{Column: wm.Name, Lo: "start", Hi: "hi"}
		if wm.Tiebreak != "" {
			// start has no id: a full refresh reads every id from it.
			window.Tie, window.LoID, window.HiID = wm.Tiebreak, pLoID.Name, pHiID.Name
			window.LooseLo = wm.Lookback.Value > 0
			upTo.Tie, upTo.HiID = wm.Tiebreak, pHiID.Name
		}
		return window, upTo
	}
	return Window{}, Window{}
}

// withNull is a window that also reads the rows whose watermark is NULL:
// no window holds them, so the staging read takes them along in the same
// scan, to be quarantined (or to fail the run) rather than never read.
// With a tiebreak, the window reads those by id: only the rows whose id is
// NULL too are in none.
func withNull(w Window) Window {
	w.OrNull = w.Column != ""
	return w
}

// nullWM is true for a row whose watermark is NULL, which no window reads
// (with a tiebreak: whose tiebreak is NULL too).
func (l *lowerer) nullWM() Expr {
	wm := l.p.Watermark
	if wm.Tiebreak != "" {
		return and(IsNull{X: col(wm.Name)}, IsNull{X: col(wm.Tiebreak)})
	}
	return IsNull{X: col(wm.Name)}
}

// hasWM is true for a row that some window reads: not nullWM.
func (l *lowerer) hasWM() Expr {
	wm := l.p.Watermark
	if wm.Tiebreak != "" {
		return or(IsNull{X: col(wm.Name), Not: true}, IsNull{X: col(wm.Tiebreak), Not: true})
	}
	return IsNull{X: col(wm.Name), Not: true}
}

// readSource adds what every strategy's runs read of the source before
// staging it: an integer watermark's upper bound, the count a preview
// shows, the column types.
func (l *lowerer) readSource() {
	p := l.p
	window, upTo := l.windows()
	if wm := p.Watermark; wm != nil && wm.Type.IsInteger() {
		wm.MaxStatement = StmtSourceMax
		l.add(StmtSourceMax, PhaseStage, "An integer watermark's window ends after the largest id present.",
			SourceMax{Source: p.Source, Column: p.Watermark.Name})
	}
	if wm := p.Watermark; wm != nil && wm.Tiebreak != "" {
		wm.TieMaxStatement = StmtTieMax
		l.add(StmtTieMax, PhaseStage, "With a tiebreak, hi is (now - lag, the largest id present + 1): rows of hi's time and rows without a time that exist now are read now.",
			SourceMax{Source: p.Source, Column: wm.Tiebreak})
	}
	read := window
	if l.snapshot() {
		read = upTo // every run reads the whole snapshot
	}
	l.add(StmtCountRead, PhaseQuery, "incrc plan --target: the source rows the next run would read.",
		CountSource{Source: p.Source, Window: withNull(read)}, windowParams(read)...)
	l.add(StmtProbeSource, PhaseStage, "The source's columns and types, no rows: each must fit its declared type, or the run fails before it writes.",
		ProbeColumns{Source: p.Source, Columns: columnNames(p.Columns)})
}

func (l *lowerer) stage() {
	p := l.p
	cols := columnNames(p.Columns)
	window, upTo := l.windows()
	wp := windowParams(window)
	l.readSource()
	if wm := p.Watermark; wm != nil && p.Strategy == OverwritePartitions {
		// A partition rewrite reads whole partitions, not the window: the
		// rows whose watermark is NULL are read on their own.
		l.nullWatermarkSource(wm.Name, cols)
	}
	if p.Strategy == OverwritePartitions {
		l.add(StmtTouchedPartitions, PhaseStage, "The partitions the window's rows fall in, and how many rows each: every one is rewritten whole.",
			DistinctPartitions{Source: p.Source, Partition: *p.Partition, Window: window}, wp...)
		if l.mode == "fail" {
			l.add(StmtCountUnpartitioned, PhaseStage, "Rows of the window without a partition belong to none: on_invalid is fail, so they fail the run.",
				CountSource{Source: p.Source, Window: window, Where: IsNull{X: col(p.Partition.Column)}}, wp...)
		}
	}
	stageCols := make([]Col, len(p.Columns))
	for i, c := range p.Columns {
		stageCols[i] = Col{Name: c.Name, Type: c.Type}
	}
	l.add(StmtDropStage, PhaseStage, "Staging is session-scoped; a retry in the same session starts clean.",
		DropTable{Table: p.Stage, Temporary: true})
	l.add(StmtCreateStage, PhaseStage, "The rows to write.",
		CreateTable{Table: p.Stage, Columns: stageCols, Temporary: true})
	// The source is read once: its window's rows land in the raw table
	// (counted as rows read), and the dedupe reads only those.
	into := p.Stage
	if d := l.dedupe(); d != nil {
		into = p.Raw
		l.add(StmtDropRaw, PhaseStage, "The window's rows as read, before the dedupe.",
			DropTable{Table: p.Raw, Temporary: true})
		l.add(StmtCreateRaw, PhaseStage, "The window's rows as read, before the dedupe.",
			CreateTable{Table: p.Raw, Columns: stageCols, Temporary: true})
	}
	if p.Strategy != OverwritePartitions && p.Strategy != FullRefresh && !l.snapshot() {
		l.add(StmtStageWindow, PhaseStage, "The half-open window [lo, hi) of the source, read once, with the rows whose watermark is NULL.",
			StageRows{Into: into, Source: p.Source, Columns: cols, Window: withNull(window)}, wp...)
	}
	if l.direct() {
		l.add(StmtCopyWindow, PhaseWrite, "Append the window's rows straight into the target, inside the write transaction: nothing reads them staged (an append without quality rules, dedupe or watermark column, from a source outside the target).",
			StageRows{Into: p.Target, Source: p.Source, Columns: cols, Window: withNull(window)}, wp...)
	}
	if !l.refreshes() { // (refresh.go reads the source in the write transaction)
		l.add(StmtStageAll, PhaseStage, "Full refresh: every source row in [start, hi), with the rows whose watermark is NULL.",
			StageRows{Into: into, Source: p.Source, Columns: cols, Window: withNull(upTo)}, windowParams(upTo)...)
	}
	if d := l.dedupe(); d != nil {
		var where Expr
		if wm := p.Watermark; wm != nil {
			// A version without a watermark takes no part in the dedupe:
			// it must never replace a good version of its key.
			where = l.hasWM()
		}
		doc := "One row per key: the newest version."
		if l.scd != nil && l.scd.byTime {
			doc = "One row per key and start: each version of the source once."
		}
		l.add(StmtDedupeStage, PhaseStage, doc,
			StageRows{Into: p.Stage, Source: Relation{Table: p.Raw}, Columns: cols, Dedupe: d, Where: where})
	}
	if l.scd == nil && p.Strategy != OverwritePartitions {
		l.add(StmtAnalyzeStage, PhaseStage, "The staged rows' statistics, for the planner's joins to the target.", AnalyzeTable{Table: p.Stage, Columns: p.Key})
	}
	if wm := p.Watermark; wm != nil {
		isNull := l.nullWM()
		if l.nullMode() == "fail" {
			l.add(StmtCountNullWatermark, PhaseStage, "Staged rows whose watermark is NULL are in no window: without a quarantine the run fails on them.",
				CountRows{Table: into, Where: isNull})
		} else {
			l.add(StmtQuarantineNullWM, PhaseWrite, "Staged rows whose watermark is NULL are in no window: each run quarantines them, with the reason, until the source is fixed.",
				QuarantineRows{Into: p.Quarantine, From: Relation{Table: into}, Columns: cols, Rules: []Rule{l.nullRule()}}, pRunID)
		}
		if l.dedupe() == nil { // the window was staged straight into the stage
			l.add(StmtDeleteNullWatermark, PhaseWrite, "Rows whose watermark is NULL never reach the target.",
				DeleteRows{Table: p.Stage, Where: isNull})
		}
	}
	if l.spec.UniqueSource() && len(p.Key) > 0 && l.scd == nil && p.CDC == nil {
		l.add(StmtCheckUnique, PhaseWrite, "source.unique: true skips the dedupe: a key with several staged rows fails the run, naming it, rather than writing an arbitrary one of them.",
			DuplicateKey{Table: p.Stage, Key: p.Key})
	}
	if p.Partition != nil {
		l.add(StmtStagePartition, PhaseStage, "One whole partition [plo, phi) of the source, rows in [start, hi), one row per key.",
			StageRows{Into: p.Stage, Source: p.Source, Columns: cols, Window: upTo, Dedupe: l.dedupe(),
				Range: Window{Column: p.Partition.Column, Lo: pPlo.Name, Hi: pPhi.Name}}, append(windowParams(upTo), pPlo, pPhi)...)
		if p.Strategy == OverwritePartitions && l.dedupe() != nil {
			l.add(StmtCountPartitionSource, PhaseStage, "The source's rows of one partition [plo, phi) in [start, hi), before the dedupe keeps one per key (rows read).",
				CountSource{Source: p.Source, Window: upTo, Range: Window{Column: p.Partition.Column, Lo: pPlo.Name, Hi: pPhi.Name}},
				append(windowParams(upTo), pPlo, pPhi)...)
		}
	}
	if l.scd != nil {
		l.scd.stage(l)
	}
	if len(l.rules) > 0 {
		invalid := anyOf(l.rules)
		if l.mode == "quarantine" {
			l.add(StmtQuarantine, PhaseWrite, "Rows that break a quality rule go to quarantine, with the first rule they break.",
				QuarantineRows{Into: p.Quarantine, From: Relation{Table: p.Stage}, Columns: cols, Rules: l.rules}, pRunID)
		}
		l.add(StmtCountInvalid, PhaseWrite, "Rows that break a quality rule (on_invalid: fail stops the run when there are any).",
			CountRows{Table: p.Stage, Where: invalid})
		if p.Strategy == Merge {
			l.add(StmtRetractInvalid, PhaseWrite, "A key whose newest version is invalid has no valid current row: the target drops it, as a full refresh would.",
				RetractKeys{Target: p.Target, Stage: p.Stage, Key: p.Key, NullSafe: l.nullableKey(), Where: invalid})
		}
		l.add(StmtDeleteInvalid, PhaseWrite, "Invalid rows never reach the target.",
			DeleteRows{Table: p.Stage, Where: invalid})
	}
	if l.scd == nil {
		l.add(StmtCountStaged, PhaseWrite, "Rows to write.", CountRows{Table: p.Stage})
	}

}

// nullWatermarkSource adds the read of the source rows whose watermark
// (column wm) is NULL, which no window reads: counted to fail the run, or
// quarantined with the reason.
func (l *lowerer) nullWatermarkSource(wm string, cols []string) {
	p := l.p
	if l.nullMode() == "fail" {
		l.add(StmtCountNullWMSource, PhaseStage, "Source rows whose watermark is NULL are in no window: without a quarantine the run fails on them.",
			CountSource{Source: p.Source, Where: l.nullWM()})
		return
	}
	l.add(StmtQuarantineNullWMSrc, PhaseWrite, "Source rows whose watermark is NULL are in no window: each run quarantines them, with the reason, until the source is fixed.",
		QuarantineRows{Into: p.Quarantine, From: p.Source, Columns: cols, Rules: []Rule{l.nullRule()}}, pRunID)
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
func (l *lowerer) nullRule() Rule {
	wm := l.p.Watermark
	if wm.Tiebreak != "" {
		return Rule{Reason: "not_null(" + wm.Name + ", " + wm.Tiebreak + "): the watermark and its tiebreak, so no window reads the row", Invalid: l.nullWM()}
	}
	return Rule{Reason: "not_null(" + wm.Name + "): the watermark, so no window reads the row", Invalid: l.nullWM()}
}

// windowParams declares a window's bounds, which are watermark values.
func windowParams(w Window) []Param {
	var ps []Param
	if w.Lo != "" {
		ps = append(ps, Param{w.Lo, PWatermark})
	}
	if w.Hi != "" {
		ps = append(ps, Param{w.Hi, PWatermark})
	}
	if w.Tie != "" && w.LoID != "" {
		ps = append(ps, Param{w.LoID, PInt})
	}
	if w.Tie != "" && w.HiID != "" {
		ps = append(ps, Param{w.HiID, PInt})
	}
	return ps
}

func columnNames(cols []Col) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c.Name
	}
	return out
}

// qualityRules lists the rules a staged row must pass, and what happens to
// rows that break one. Key columns that are not declared nullable must not
// be NULL even without a quality section: such a row cannot be matched.
func qualityRules(s *Spec, cols []Col) ([]Rule, string) {
	if Strategy(s.Strategy.Value) == CDCApply || fromChanges(s) {
		return cdcRules(s, cols)
	}
	var rules []Rule
	notNull := map[string]bool{}
	addNotNull := func(name string) {
		if !notNull[name] {
			notNull[name] = true
			rules = append(rules, Rule{Reason: "not_null(" + name + ")", Invalid: IsNull{X: col(name)}})
		}
	}
	for _, c := range cols {
		if c.NotNull {
			addNotNull(c.Name)
		}
	}
	// A row without a partition value belongs to no partition: a run could
	// never write it, so a full refresh must not either.
	if s.Strategy.Value == string(OverwritePartitions) && s.Partition != nil {
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
			rules = append(rules, Rule{Reason: "check: " + c.Value, Invalid: Unary{"NOT", e}})
		}
	}
	if len(rules) == 0 && mode == "fail" {
		mode = ""
	}
	return rules, mode
}

func anyOf(rules []Rule) Expr {
	e := rules[0].Invalid
	for _, r := range rules[1:] {
		e = or(e, r.Invalid)
	}
	return e
}

func (l *lowerer) write() {
	p := l.p
	cols := columnNames(p.Columns)
	switch p.Strategy {
	case OverwritePartitions:
		// The write is replace_partition, once per touched partition.
	case Merge:
		v := l.version()
		doc, tally := "", "Returns the rows it read, inserted and updated."
		if v != "" {
			doc = " A matched row is updated only where the incoming " + v + " is newer or equal: an older version never replaces a newer one."
			tally = "Returns the rows it read, inserted, updated and ignored (older than the target's)."
			l.add(StmtIgnoreOlder, PhaseWrite, "Staged rows older than the target's version of their key ("+v+") are ignored: a late or re-delivered older version never replaces a newer one.",
				RetractKeys{Target: p.Stage, Stage: p.Target, Key: p.Key, NullSafe: l.nullableKey(), Older: v})
		}
		if len(p.InsertOnly) > 0 {
			doc += " " + strings.Join(p.InsertOnly, ", ") + ": written when a key is inserted, never updated (merge." + l.mergeList() + ")."
		}
		l.add(StmtWrite, PhaseWrite, "Upsert the staged rows by unique key: a retry of the same window writes the same rows."+doc+" Returns the rows it updated (the rest it inserted).",
			MergeRows{Target: p.Target, Stage: p.Stage, Key: p.Key, Columns: cols, NullSafe: l.nullableKey(), Count: true, Version: v, Keep: p.InsertOnly})
		if l.directMerge() {
			window, _ := l.windows()
			src := p.Source
			l.add(StmtWriteWindow, PhaseWrite, "Direct merge: upsert the source's rows in [lo, hi) by unique key, read in the write itself (the source enforces the key: no stage, no dedupe)."+doc+" "+tally,
				MergeRows{Target: p.Target, Source: &src, Window: window, Key: p.Key, Columns: cols, Tally: true, Version: v, Keep: p.InsertOnly}, windowParams(window)...)
		}
	case Append:
		if len(p.Key) > 0 {
			l.add(StmtIgnoreKnown, PhaseWrite, "Staged rows whose key the target holds are ignored: an append with a unique_key writes each key once, so a window read again (a lookback, for ids that commit out of order) appends only the keys it lacks.",
				RetractKeys{Target: p.Stage, Stage: p.Target, Key: p.Key, NullSafe: l.nullableKey()})
		}
		l.add(StmtWrite, PhaseWrite, "Append the staged rows.", InsertFrom{Into: p.Target, From: p.Stage, Columns: cols})
	case SCD2Strategy:
		l.scd.write(l)
	}
	if !l.refreshes() && !l.rebuildsPlain() {
		l.add(StmtClearTarget, PhaseWrite, "Full refresh: empty the target (DELETE, in the transaction: readers never see it empty).",
			DeleteRows{Table: p.Target})
	}
	if !l.refreshes() && l.rebuildsPlain() {
		// The same rewrite as a full refresh of a source in the target,
		// from the stage: DELETE then INSERT left a dead row per target
		// row on PostgreSQL, and on DuckDB a checkpoint of every keyed row
		// deleted and inserted again.
		var key []string
		if p.Strategy == Merge && !l.nullableKey() {
			key = p.Key // the target's primary key
		}
		l.add(StmtReplaceTarget, PhaseWrite, "Full refresh: the target made exactly the staged rows (deduped and checked), in the write transaction where the engine has one (what a concurrent reader sees, per engine: dialects/README.md).",
			ReplaceAll{Target: p.Target, Source: Relation{Table: p.Stage}, Columns: cols, Keep: Keep{Columns: cols}, Key: key})
		l.add(StmtCountTarget, PhaseWrite, "Full refresh: the target's rows before its rewrite (rows deleted).", CountRows{Table: p.Target})
	}
	if p.Strategy == OverwritePartitions && l.mode == "quarantine" {
		window, _ := l.windows()
		pc := p.Partition.Column
		l.add(StmtQuarantineUnpartited, PhaseWrite, "Rows of the window whose partition column is NULL belong to no partition: quarantined, with the reason.",
			QuarantineRows{Into: p.Quarantine, From: p.Source, Window: window, Columns: cols,
				Rules: []Rule{{Reason: "not_null(" + pc + "): the partition column, so the row belongs to no partition", Invalid: IsNull{X: col(pc)}}}},
			append([]Param{pRunID}, windowParams(window)...)...)
	}
	l.advanceAndRecord()
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
	l.add(StmtAdvance, PhaseWrite, "Advance the watermark by compare-and-set: only from the value this run read, only while it holds the lease.",
		Update{Table: StateTable,
			Set: []Assign{{"watermark", ref(pWatermark)}, {"spec_hash", ref(pSpecHash)}, {"updated_at", ref(pNow)}, {"target_filled", ref(pFilled)}},
			Where: and(and(colEq("pipeline", pPipeline), colEq("lease_owner", pOwner)),
				// expected is '' before the first run: a typed value, never
				// a NULL parameter an engine must guess the type of.
				eq(Call{"coalesce", []Expr{col("watermark"), Str{""}}}, ref(pExpected)))},
		pWatermark, pSpecHash, pNow, pFilled, pPipeline, pOwner, pExpected)
	finishCols := append([]string{"status", "watermark_after"}, Counters...)
	finishCols = append(finishCols, "finished_at", "duration_ms", "error", "note")
	var set []Assign
	var params []Param
	for _, c := range finishCols {
		t := PText
		if strings.HasPrefix(c, "rows_") || c == "duration_ms" {
			t = PInt
		}
		pp := Param{c, t}
		set = append(set, Assign{c, ref(pp)})
		params = append(params, pp)
	}
	l.add(StmtRecordFinish, PhaseWrite, "Close the run's row with its status and counts: in the write transaction when the run succeeds, after the rollback when it fails.",
		Update{Table: RunsTable, Set: set, Where: colEq("run_id", pRunID)}, append(params, pRunID)...)
	pFinished, pDuration := Param{"finished_at", PText}, Param{"duration_ms", PInt}
	l.add(StmtCheckpoint, PhaseState, "After the write transaction committed: the engine's log written into the database file, so that the run's duration covers it and closing the database has nothing left to write.",
		Checkpoint{})
	l.add(StmtRecordDuration, PhaseState, "After the write transaction committed: the run's end and duration, the commit included.",
		Update{Table: RunsTable, Set: []Assign{{"finished_at", ref(pFinished)}, {"duration_ms", ref(pDuration)}}, Where: colEq("run_id", pRunID)},
		pFinished, pDuration, pRunID)
}

// measures are count and the spec's reconcile measures, but for those of
// a column the target keeps at its first value (kept), which come second:
// they differ from the source by design, and comparing them would report
// drift that no backfill should repair.
func measures(s *Spec, kept []string) (out []Measure, uncompared []string) {
	out = []Measure{{Fn: "count"}}
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
func (l *lowerer) valid() Expr {
	if len(l.rules) == 0 {
		return nil
	}
	return Unary{"NOT", Call{"coalesce", []Expr{anyOf(l.rules), Lit{"FALSE"}}}}
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
	rng := Window{Column: pc, Lo: pPlo.Name, Hi: pPhi.Name}
	l.add(StmtCountPartition, PhaseWrite, "The target's rows of the partition [plo, phi) that its rewrite replaces (rows deleted).",
		CountRows{Table: p.Target, Where: and(Binary{">=", col(pc), ref(pPlo)}, Binary{"<", col(pc), ref(pPhi)})}, pPlo, pPhi)
	l.add(StmtReplacePartition, PhaseWrite, "Overwrite the partition [plo, phi) of the target with its staged rows (in the write transaction where the engine has one).",
		ReplacePartition{Target: p.Target, Stage: p.Stage, Columns: cols, Range: rng}, pPlo, pPhi)
	for _, st := range markerStatements() {
		l.addStatement(st)
	}
	l.add(StmtTargetPartitions, PhaseQuery, "The partitions the target holds, oldest first: stale partitions are among them.",
		DistinctPartitions{Source: Relation{Table: p.Target}, Partition: *p.Partition})
	_, upTo := l.windows()
	l.add(StmtCheckPartitionSrc, PhaseQuery, "After a rebuild: the partition's count and measures in the source, as staged.",
		Aggregate{Source: p.Source, By: pc, Partition: p.Partition, Measures: p.Measures, Dedupe: l.dedupe(), Valid: l.valid(), Window: upTo, Range: rng},
		append(windowParams(upTo), pPlo, pPhi)...)
	l.add(StmtCheckPartitionTgt, PhaseQuery, "After a rebuild: the partition's count and measures in the target.",
		Aggregate{Source: Relation{Table: p.Target}, By: pc, Partition: p.Partition, Measures: p.Measures, Range: rng}, pPlo, pPhi)
}

// markerStatements are the statements of a backfill's markers and of the
// logic runs computed with: the same for every pipeline with partitions.
var markerStatements = shared((*lowerer).addMarkers)

func (l *lowerer) addMarkers() {
	markerKey := and(and(colEq("pipeline", pPipeline), colEq("backfill_id", pBackfill)), colEq("partition_key", pPartKey))
	l.add(StmtClearMarkers, PhaseState, "backfill --restart: forget which partitions of this backfill are done.",
		DeleteRows{Table: PartitionsTable, Where: and(colEq("pipeline", pPipeline), colEq("backfill_id", pBackfill))}, pPipeline, pBackfill)
	l.add(StmtReadMarkers, PhaseState, "The partitions of this backfill already done: an interrupted backfill resumes after them.",
		SelectRows{Table: PartitionsTable, Columns: []string{"partition_key", "status"}, Where: and(colEq("pipeline", pPipeline), colEq("backfill_id", pBackfill)),
			OrderBy: []Order{{"partition_key", false}}}, pPipeline, pBackfill)
	l.add(StmtRecentMarkers, PhaseQuery, "The latest partition markers of every backfill, for incrc state.",
		SelectRows{Table: PartitionsTable, Columns: []string{"backfill_id", "partition_key", "status", "rows_written", "detail", "updated_at"}, Where: colEq("pipeline", pPipeline),
			OrderBy: []Order{{"updated_at", true}, {"partition_key", true}}, Limit: 100}, pPipeline)
	l.add(StmtDeleteMarker, PhaseWrite, "Replace a partition's marker (with the rewrite, in its transaction).",
		DeleteRows{Table: PartitionsTable, Where: markerKey}, pPipeline, pBackfill, pPartKey)
	markerCols := []string{"pipeline", "backfill_id", "partition_key", "status", "rows_written", "detail", "updated_at", "logic_hash"}
	markerParams := []Param{pPipeline, pBackfill, pPartKey, {"marker_status", PText}, {RegWritten, PInt}, {"detail", PText}, {"updated_at", PText}, {"logic_hash", PText}}
	l.add(StmtInsertMarker, PhaseWrite, "The partition's completion marker.",
		InsertValues{Table: PartitionsTable, Columns: markerCols, Values: refs(markerParams)}, markerParams...)
	l.add(StmtLogicMarkers, PhaseQuery, "The logic each partition was last rebuilt with (the markers of done partitions): stale partitions.",
		SelectRows{Table: PartitionsTable, Columns: []string{"partition_key", "logic_hash", "updated_at"},
			Where: and(colEq("pipeline", pPipeline), eq(col("status"), Str{"done"})), OrderBy: []Order{{"updated_at", false}, {"partition_key", false}}}, pPipeline)
	l.add(StmtLogicRuns, PhaseQuery, "The logic each succeeded run and full refresh computed its rows with, in order: stale partitions.",
		SelectRows{Table: RunsTable, Columns: []string{"kind", "logic_hash", "finished_at"},
			Where: and(colEq("pipeline", pPipeline), eq(col("status"), Str{"succeeded"})), OrderBy: []Order{{"finished_at", false}}}, pPipeline)
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
	var since Window
	valid := l.valid()
	if wm := p.Watermark; wm != nil {
		since = Window{Column: wm.Name, Lo: "start", OrNull: true}
	}
	l.add(StmtReconcileSrc, PhaseQuery, "Reconcile, source side: what a full refresh would write, per "+by+" in [from, to).",
		Aggregate{Source: p.Source, By: by, Partition: p.ReconcileGroups, Measures: p.Measures, Dedupe: l.dedupe(), Valid: valid, Window: since}, append(windowParams(since), pFrom, pTo)...)
	if l.spec.UniqueSource() {
		l.add(StmtVersionedKeys, PhaseQuery, "Keys with more than one row in the source, which declares source.unique: true: reconcile reports them.",
			VersionedKeys{Source: p.Source, Key: p.Key, Window: since}, windowParams(since)...)
	}
	if d := l.dedupe(); d != nil {
		// Keeping one row per key costs a sort of the whole source; when no
		// key has two versions it changes nothing, and a hash aggregate over
		// the keys finds that out for much less.
		l.add(StmtVersionedKeys, PhaseQuery, "Keys with more than one version in the source: without any, reconcile skips the dedupe.",
			VersionedKeys{Source: p.Source, Key: d.Key, Window: since}, windowParams(since)...)
		l.add(StmtReconcileSrcFlat, PhaseQuery, "Reconcile, source side, for a source holding one version per key: the same rows, no dedupe.",
			Aggregate{Source: p.Source, By: by, Partition: p.ReconcileGroups, Measures: p.Measures, Valid: valid, Window: since}, append(windowParams(since), pFrom, pTo)...)
	}
	l.add(StmtReconcileTgt, PhaseQuery, "Reconcile, target side, per "+by+" in [from, to).",
		Aggregate{Source: Relation{Table: p.Target}, By: by, Partition: p.ReconcileGroups, Measures: p.Measures}, pFrom, pTo)
}
