package ir

// Names of the state tables every pipeline shares, in the target
// database's default schema.
var (
	StateTable      = Table{Parts: []string{"incrc_state"}}
	RunsTable       = Table{Parts: []string{"incrc_runs"}}
	PartitionsTable = Table{Parts: []string{"incrc_partitions"}}
	FilesTable      = Table{Parts: []string{"incrc_files"}}
)

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

func varchar(n int) Type { return Type{Kind: Varchar, Length: n} }

func addStateColumn(name string) string { return "add_state_" + name }

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

func addRunsColumn(name string) string { return "add_runs_" + name }
