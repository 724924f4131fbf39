package ir

// Plan is the dialect-neutral program of one pipeline: every statement a
// run, a full refresh, a backfill, a lease or a reconciliation may execute,
// each named and with its parameters declared, and the programs that say
// which of them each mode executes, in which order. A dialect spells each
// statement; the runner walks the programs.
//
// The runner reads the plan, never the spec: everything a run needs from
// the spec (the watermark's start, lookback and lag, finalize_after, the
// measures) is here.
type Plan struct {
	File     string // the spec's path, for messages
	SpecHash string // recorded with every run: which spec wrote the target
	// LogicHash hashes the spec's parameters that decide the rows a run
	// computes (LogicHash): recorded with every run and backfill marker, a
	// partition built with another one is stale.
	LogicHash string
	// Params are the spec's semantic parameters, which the compiled file's
	// header keeps (see Params).
	Params   []SpecParam
	Pipeline string
	Strategy Strategy
	Source   Relation
	// SourceQuery is the spec's source.query as written, with its place in
	// the file: compiling for an engine points into it.
	SourceQuery String
	Target      Table
	Stage       Table // session-scoped staging table: the rows to write
	Raw         Table // session-scoped: the window's rows as read, when a dedupe follows
	Quarantine  Table // zero when invalid rows fail the run instead
	Columns     []Col
	Key         []string
	Watermark   *Watermarking // nil for full_refresh pipelines without a watermark
	Partition   *Partitioning // nil for pipelines without partitions
	// ReconcileBy is the column reconciliation groups by (the partition
	// column when there are partitions); empty without reconciliation.
	ReconcileBy string
	// ReconcileGroups is how reconciliation cuts reconcile.by into the
	// groups it compares: the partitioning, else reconcile.granularity
	// (day by default). A timestamp compared value by value would print a
	// line per distinct instant. Nil when reconcile.by is not a time.
	ReconcileGroups *Partitioning
	Measures        []Measure // count first, then the spec's reconcile measures
	// InsertOnly are the columns a merge writes when it inserts a key and
	// never updates (merge.update_columns, merge.exclude_columns): there
	// the target keeps each key's first value, where a full refresh would
	// hold the source's newest.
	InsertOnly []string
	// Uncompared are the spec's reconcile measures of InsertOnly columns,
	// which reconciliation leaves out (they differ from the source by
	// design), as written.
	Uncompared []string
	// Versions, for an scd2 target, says how it keeps versions (the
	// compiled file's header shows it).
	Versions string
	// CDC is how a cdc pipeline applies its change log; nil for the other
	// strategies.
	CDC        *CDCApplying
	Statements []*Statement
	Programs   []*Program
	// Upstream lists the pipelines of the project whose target this one
	// reads, in the order of the spec: they run first, and a source's
	// saved watermark bounds this pipeline's hi (Upstream.Bounds).
	Upstream []Upstream

	// Tables are the tables the pipeline reads and writes in its target's
	// database (Spec.Tables): a run checks in the catalog that it does not
	// write what it reads, nor incrc's own tables.
	Tables []TableUse

	// From, when set, says the source lives outside the target: its
	// statements (Statement.On) run there, in its dialect, and copy steps
	// stream the rows into the target's staging.
	From *Foreign
}

// Watermarking is how a pipeline's runs are windowed.
type Watermarking struct {
	Col
	Start string // watermark.start, canonical (see ParseWatermark)
	// Lookback is subtracted from the saved watermark to start a window:
	// a duration, or for an integer watermark a count of ids.
	Lookback Duration
	Lag      Duration // hi = now - lag
	// Batch, when set, cuts a run's window at Start + k x Batch: the
	// runner runs the run program once per batch, oldest first.
	Batch        Duration
	MaxStatement string // an integer watermark's hi: the statement reading the largest id
	// Tiebreak, when set, is an integer key column that orders the rows of
	// one watermark value, and the rows whose watermark is NULL: a
	// position in the window is (watermark, tiebreak), and the saved
	// watermark holds both (see ParseTiedMark). TieMaxStatement reads the
	// largest id, the id part of hi.
	Tiebreak        string
	TieMaxStatement string
}

// CDCApplying is what a cdc pipeline writes besides its target. Columns
// (the declared ones) are the change log's; the target holds TargetColumns.
type CDCApplying struct {
	// TargetColumns are the target's: the row image (the declared columns
	// but the excluded ones), SequenceColumn, and with soft deletes the
	// flag and the time of the mark.
	TargetColumns []Col
	// Tombstones holds, per key whose newest change is a delete, that
	// change's sequence: a late change older than it cannot bring the key
	// back.
	Tombstones Table
	// Deletes is session-scoped: the deletes a run applies, shaped as the
	// tombstones.
	Deletes Table
	// Ranked is session-scoped: the changes a run applies, ranked once
	// (RankChanges), with the sequences the target and the tombstones
	// held for their keys.
	Ranked Table
	Soft   bool // deletes mark the row (SoftFlag, SoftAt) instead of removing it
	// SoftFlag and SoftAt name the mark's columns when Soft.
	SoftFlag, SoftAt string
	// Truncated, when the change log has truncate codes, holds the
	// sequence of the newest truncate applied (one row, or none): a
	// change not newer than it is ignored, also one that arrives later.
	// Truncate is session-scoped: the truncate a run applies.
	Truncated, Truncate Table
}

// Partitioning is how a target is cut into partitions: the unit a run of
// overwrite_partitions rewrites, a backfill rebuilds and a reconciliation
// compares.
type Partitioning struct {
	Column      string
	Type        Type
	Granularity string // hour | day | month
	// Zone is the IANA time zone whose days and months the partitions are
	// (partition.timezone), validated; empty: UTC. The engine only cuts
	// rows into UTC hours (Trunc); the runner finds each hour's partition
	// in the zone and binds its bounds as UTC times, so no engine needs
	// time-zone data.
	Zone string
	// FinalizeAfter: partitions older than hi minus this are closed; a run
	// does not rewrite them, a backfill needs --restate. Zero: never.
	FinalizeAfter Duration
}

// Table is a qualified table name, split into its parts.
type Table struct {
	Parts []string
}

// Name returns the last part: the table's own name.
func (t Table) Name() string {
	if len(t.Parts) == 0 {
		return ""
	}
	return t.Parts[len(t.Parts)-1]
}

// Schema returns the qualifying parts, or nil.
func (t Table) Schema() []string {
	if len(t.Parts) <= 1 {
		return nil
	}
	return t.Parts[:len(t.Parts)-1]
}

// IsZero reports whether the table is absent.
func (t Table) IsZero() bool { return len(t.Parts) == 0 }

// Col is a column with its portable type.
type Col struct {
	Name    string
	Type    Type
	NotNull bool
}

// Phase says where a statement runs relative to the run's transaction.
type Phase string

const (
	PhaseSetup Phase = "setup" // idempotent DDL, before anything else and outside any transaction
	PhaseState Phase = "state" // lease and watermark bookkeeping, each its own short transaction
	PhaseStage Phase = "stage" // session-scoped staging, before the write transaction
	PhaseWrite Phase = "write" // the quality split, the write, the run record and the advance: one transaction where the engine allows
	PhaseQuery Phase = "query" // read-only: reconciliation and inspection
)

// ParamType is how the runner binds a parameter.
type ParamType string

const (
	PText      ParamType = "text"      // a string
	PInt       ParamType = "integer"   // an int64
	PWatermark ParamType = "watermark" // a value of the watermark column's type
	PBound     ParamType = "bound"     // a value of the reconcile.by column's type
	PPartition ParamType = "partition" // a value of the partition column's type
	PFiles     ParamType = "files"     // a list of file paths
	PValue     ParamType = "value"     // a value of a declared column, as the target's bulk path takes it
)

// Param is a declared statement parameter.
type Param struct {
	Name string
	Type ParamType
}

// Statement is one named step of a plan.
type Statement struct {
	Name   string
	Doc    string // why the statement exists, rendered as a comment
	Phase  Phase
	Op     Op
	Params []Param
	// On is the database the statement runs on: the target (zero), or
	// the source outside it, spelled in the source's dialect.
	On On
	// shared is the statement this one is a copy of when every plan has
	// it alike (see Shared); nil for a plan's own.
	shared *Statement
}

// Shared is the statement this one is a copy of when every plan holds
// it alike, the same for every copy (the state tables' statements, made
// once: see the compiler's shared); nil for a statement of the plan's
// own, or one changed since it was copied. Copies with the same Shared
// are the same statement: a renderer may spell it once for all plans.
func (st *Statement) Shared() *Statement { return st.shared }

// SetShared records that st is a copy of of, the statement every plan
// holds alike (nil: st is the plan's own, or changed since it was copied).
func (st *Statement) SetShared(of *Statement) { st.shared = of }

// Foreign is a source outside the target database.
type Foreign struct {
	// Connection names the source's database (incrc.yaml's connections,
	// --source NAME=URL); empty for files.
	Connection string
	// Dialect is the source's: what its statements are spelled in
	// (duckdb for files, read by the embedded DuckDB).
	Dialect string
	// Files is a files source's glob and Format its format; ByFile: each
	// run loads the files not loaded before (incrc_files).
	Files  string
	Format string
	ByFile bool
}

// Describe says where the source is, for plan and state.
// It is one line: the compiled file's header prints it in a comment.
func (f *Foreign) Describe() string {
	if f.Files != "" {
		s := f.Format + " files " + OneLine(f.Files)
		if f.ByFile {
			s += " (by file)"
		}
		return s
	}
	return "connection " + OneLine(f.Connection) + " (" + f.Dialect + ")"
}

// Statement returns the statement called name, or nil.
func (p *Plan) Statement(name string) *Statement {
	for _, s := range p.Statements {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Op is one operation of the plan's vocabulary. The set is closed: each
// dialect renders every Op (or says it cannot, naming itself).
type Op interface{ op() }

type (
	// CreateSchema creates a schema if it does not exist.
	CreateSchema struct{ Schema []string }

	// CreateTable creates a table if it does not exist; a temporary one is
	// dropped first by a DropTable, so it is created unconditionally.
	CreateTable struct {
		Table      Table
		Columns    []Col
		PrimaryKey []string
		Temporary  bool
		// Log: rows are only appended, one per run, and updated by their
		// key, never upserted (the run log). The key says what identifies
		// a row; an engine whose index costs every append more than it
		// gives may leave it undeclared (DuckDB: an appended row of an
		// indexed table rewrites the table's last row group, up to 122,880
		// rows, at the next checkpoint, which every run's close is).
		Log bool
		// Indexes are declared in the CREATE TABLE itself by an engine that
		// cannot create an index idempotently afterwards (MySQL has no
		// CREATE INDEX IF NOT EXISTS, and two first runs would race to
		// create it): a new table gets them with it, atomically; a table
		// that exists keeps what it has. Other engines leave them to the
		// CreateIndex steps that follow.
		Indexes []TableIndex
	}

	// TableIndex is an index declared with its table (CreateTable.Indexes).
	TableIndex struct {
		Name    string
		Columns []string
	}

	// CreateIndex creates an index if it does not exist. It is an
	// optimization: engines without indexes (or that do better without)
	// render nothing for it.
	CreateIndex struct {
		Name    string
		Table   Table
		Columns []string
	}

	// SessionLock takes a lock of the engine session (PostgreSQL's
	// advisory locks, MariaDB/MySQL's GET_LOCK), or with Release gives it
	// back: held by a connection, it is gone when the connection is, so a
	// process that died (SIGKILL) frees it at once. Guards is what it is
	// the lock of: "lease" (one per pipeline, the pipeline parameter in
	// its name; tried once: 1 taken, 0 held by another session) or "setup"
	// (one per database, waited for: concurrent first runs create the
	// state tables one after the other). Engines without session locks
	// render nothing: their leases alone hold a pipeline.
	SessionLock struct {
		Guards  string
		Release bool
	}

	// IndexExists counts the indexes named Name on Table: 0 or 1. It
	// guards a CreateIndex that must not run when the index is there
	// (PostgreSQL's CREATE INDEX IF NOT EXISTS locks the table before it
	// sees the index exists). An engine that creates no index (CreateIndex
	// renders nothing) says 1: there is nothing to create.
	IndexExists struct {
		Name  string
		Table Table
	}

	// AnalyzeTable gathers a table's statistics for the planner (a stage
	// just filled, which the planner would otherwise take for empty or
	// huge). An optimization: engines that need none render nothing.
	// Columns, when set, are the only columns whose statistics are
	// gathered (the key the stage is joined to the target on): the row
	// count is gathered either way, and the rest costs time for nothing.
	AnalyzeTable struct {
		Table   Table
		Columns []string
	}

	// Checkpoint writes what the engine's log holds into the database
	// file now, after a run committed, so that closing the database has
	// nothing left to write and the run's recorded duration covers what
	// the run cost (DuckDB writes its log into the file at close, and
	// that close was the longest step of a small run). Engines that write
	// their log on their own render nothing.
	Checkpoint struct{}

	// DropTable drops a table if it exists.
	DropTable struct {
		Table     Table
		Temporary bool
	}

	// InsertValues inserts one row of parameters. With IfAbsentKey, a row
	// whose key already exists is left alone.
	InsertValues struct {
		Table       Table
		Columns     []string
		Values      []Expr
		IfAbsentKey []string
	}

	// Update sets columns of the rows matching Where.
	Update struct {
		Table Table
		Set   []Assign
		Where Expr
	}

	// SelectRows reads columns of the rows matching Where, ordered.
	SelectRows struct {
		Table   Table
		Columns []string
		Where   Expr
		OrderBy []Order
		Limit   int
	}

	// StageRows copies the source rows of the window into the staging
	// table, keeping one row per key when Dedupe is set. Range, when set,
	// keeps the rows of one partition, after the dedupe: a key whose newest
	// version moved to another partition belongs to that one.
	StageRows struct {
		Into    Table
		Source  Relation
		Columns []string
		Window  Window
		Where   Expr // more of what a row must pass to be staged, before the dedupe
		Dedupe  *Dedupe
		Range   Window
	}

	// ReplacePartition overwrites one partition [Range.Lo, Range.Hi) of the
	// target with the staged rows of that partition: never an append onto
	// rows already there. The shared spelling is DELETE then INSERT, in the
	// run's transaction; engines with an atomic partition replace use it.
	ReplacePartition struct {
		Target  Table
		Stage   Table
		Columns []string
		Range   Window
	}

	// ReadSource is the SELECT of a StageRows on a source outside the
	// target: the rows it returns are streamed into the target's table by
	// the program's copy step.
	ReadSource struct {
		Source  Relation
		Columns []string
		Window  Window
		Where   Expr
		Dedupe  *Dedupe
		Range   Window
	}

	// DistinctPartitions lists the partitions (the start of each) that the
	// source rows of the window fall in, oldest first, with the number of
	// those rows in each.
	DistinctPartitions struct {
		Source    Relation
		Partition Partitioning
		Window    Window
	}

	// CountSource counts the source rows of the window that match Where
	// (nil: all of them), and of the partition Range when it is set. With
	// Keep, it counts the rows a full refresh keeps of the window (see
	// Keep) that match Where.
	CountSource struct {
		Source Relation
		Window Window
		Where  Expr
		Keep   *Keep
		Range  Window
	}

	// ReplaceAll makes the target exactly the rows a full refresh keeps
	// of the source's window (see Keep), that pass Valid (nil: all), in
	// the write transaction: rows of the target no kept row has are gone,
	// never an append. The shared spelling is DELETE then INSERT ...
	// SELECT; PostgreSQL truncates; DuckDB, when Key is set (the target's
	// primary key), merges on it and deletes what the source no longer
	// holds, so unchanged rows are not rewritten.
	ReplaceAll struct {
		Target  Table
		Source  Relation
		Columns []string
		Window  Window
		Keep    Keep
		Valid   Expr
		Key     []string
	}

	// SourceUnique counts the constraints of a source table that make
	// its rows unique on exactly Key, every column of it NOT NULL (a
	// primary key, or a unique constraint on NOT NULL columns): not zero
	// means no two rows share a key, and a dedupe by it changes nothing.
	// Engines whose catalog is not read here count nothing (zero): the
	// dedupe then always runs.
	SourceUnique struct {
		Source Table
		Key    []string
	}

	// ProbeColumns reads no row of a relation, only its columns (all of
	// them when Columns is empty): their names and types. Declared, when
	// set, is what the table (Source.Table) should hold: the columns its
	// CreateTable creates, which the runner compares it with (ReadSchema).
	ProbeColumns struct {
		Source      Relation
		Columns     []string
		Declared    []Col
		DeclaredKey []string // the table's primary key, as CreateTable makes it
	}

	// AlterColumnType changes a column's type to Column.Type, keeping its
	// rows: a widening the runner applies, or a change incrc migrate
	// applies. Rendered at run time from the validated name and the
	// portable type, never from a table's catalog text.
	AlterColumnType struct {
		Table  Table
		Column Col
	}

	// DropColumn drops a column the spec no longer declares (incrc
	// migrate only).
	DropColumn struct {
		Table  Table
		Column string
	}

	// AddColumn adds a column to a table (the setup of a state table that
	// an older incrc created without it).
	AddColumn struct {
		Table  Table
		Column Col
	}

	// ProfileColumns reads what incrc new writes a spec from, besides the
	// catalog: the table's rows, each of Columns' non-NULL values, and the
	// smallest value of each of Min (where a watermark starts).
	ProfileColumns struct {
		Source  Relation
		Columns []string
		Min     []string
	}

	// SourceMax reads the largest value of a source column in the window's
	// lower bound onwards (the upper bound of an integer watermark).
	SourceMax struct {
		Source Relation
		Column string
	}

	// HasRows is 1 when Table holds a row and 0 when it holds none: an
	// EXISTS, which stops at the first row, where a count reads them all.
	HasRows struct{ Table Table }

	// CountRows counts the rows of a table matching Where (nil: all).
	CountRows struct {
		Table Table
		Where Expr
	}

	// QuarantineRows copies the rows of From (in Window, when set) that
	// break a rule into the quarantine table, with the run id and the first
	// rule they break. With Keep, the rules are checked on the rows a full
	// refresh keeps of the window (see Keep).
	QuarantineRows struct {
		Into    Table
		From    Relation
		Window  Window
		Columns []string
		Rules   []Rule
		Keep    *Keep
	}

	// DeleteRows deletes the rows of a table matching Where (nil: all).
	DeleteRows struct {
		Table Table
		Where Expr
	}

	// RetractKeys deletes the target rows whose key has a staged row
	// matching Where (evaluated on the staged row; nil: any staged row).
	//
	// With Older, only where the Stage row's Older column (a version) is
	// newer than the Target row's, NULL being the oldest: a merge keeps a
	// staged row out of its write when the target holds a newer version
	// (Target the stage, Stage the merge's target).
	RetractKeys struct {
		Target   Table
		Stage    Table
		Key      []string
		NullSafe bool
		Where    Expr
		Older    string
	}

	// DuplicateKey returns one key that has more than one row in Table,
	// with its count of rows (no row: none has), the least such key.
	DuplicateKey struct {
		Table Table
		Key   []string
	}

	// VersionedKeys counts the keys that have more than one row in the
	// source (in the window).
	VersionedKeys struct {
		Source Relation
		Key    []string
		Window Window
	}

	// ResolveChanges stages the changes of one kind that a CDC apply
	// writes, from From, the changes RankChanges kept (which are newer than
	// what the target and the tombstones hold).
	//
	// With Deletes it stages the deletes into a table shaped as the
	// tombstones: the key, the sequence, and At (when set) as
	// DeletedAtColumn. Otherwise it stages the inserts and updates into a
	// table shaped as the target: the Image columns and the sequence, and
	// with Flag and FlagAt the mark of a tombstone newer than the image
	// (soft deletes: TombstoneSequenceColumn, TombstoneAtColumn).
	ResolveChanges struct {
		Into         Table
		From         Table
		Key          []string
		Sequence     string
		IsDelete     Expr // true for a delete change
		Deletes      bool
		Image        []string // inserts and updates: the columns copied
		At           string   // deletes: the commit time column, or ""
		Flag, FlagAt string   // soft inserts and updates: the mark's columns
	}

	// UpdateMatched sets columns of the target rows whose key has a row in
	// Stage (at most one row per key), to expressions of that row.
	UpdateMatched struct {
		Target Table
		Stage  Table
		Key    []string
		Set    []Assign
	}

	// CountMatched counts the staged rows whose key is already in the
	// target: the rows a merge will update. With Source, the rows are the
	// source's in Window, as MergeRows reads them. With Tally, one row of
	// three counts, as MergeRows' Tally: the rows, those whose key the
	// target lacks, those whose key it holds (the target keyed by Key).
	//
	// With Version, as MergeRows' Version: a matched row counts only where
	// the merge updates it, and a Tally has a fourth count, the matched
	// rows it does not update (rows_ignored).
	CountMatched struct {
		Stage    Table
		Source   *Relation
		Window   Window
		Target   Table
		Key      []string
		NullSafe bool
		Tally    bool
		Version  string
	}

	// InsertFrom appends every row of From into Into.
	InsertFrom struct {
		Into    Table
		From    Table
		Columns []string
	}

	// MergeRows upserts every staged row into the target by key: matched
	// rows get the staged values, unmatched rows are inserted. The staged
	// rows hold at most one row per key.
	//
	// With Source set (a table: Source.Table), the rows are not staged:
	// they are the source's rows in Window, read in the write itself, which
	// the source's catalog proved hold at most one row per key (see
	// SourceUnique); Stage is then unused.
	//
	// With Count, the statement also returns one integer: the staged rows
	// whose key the target held, which it updated. With Tally instead, one
	// row of three: the rows it read, inserted and updated, named as the
	// registers (rows_read, rows_inserted, rows_updated); with Version, of
	// four: and the rows it ignored (rows_ignored). An engine that can
	// count in the write does (PostgreSQL: RETURNING); the shared spelling
	// counts them first (CountMatched), in a part of its own.
	//
	// With Version (a column that orders a key's versions), a matched row
	// is updated only where the incoming version is newer than the
	// target's or equal to it, NULL being the oldest: a late, older
	// version never replaces a newer one.
	MergeRows struct {
		Target   Table
		Stage    Table
		Source   *Relation
		Window   Window
		Key      []string
		Columns  []string
		NullSafe bool // a key column may be NULL: match NULL to NULL
		Count    bool
		Tally    bool
		Version  string
		// Keep are columns written on insert only: a matched row keeps
		// its value of them (merge.update_columns, merge.exclude_columns).
		Keep []string
	}

	// Aggregate groups a relation by one column within [from, to) and
	// computes the measures: one side of a reconciliation.
	Aggregate struct {
		Source   Relation // the relation read: a source or a table
		By       string
		Measures []Measure
		Dedupe   *Dedupe // for the source side: one row per key, as the target holds
		Valid    Expr    // for the source side: only rows that pass quality
		// Partition, when set, groups by the partition the By value falls
		// in (hour, day, month) rather than by the value itself.
		Partition *Partitioning
		// Window bounds the source side by the watermark (rows a run has
		// covered); Range, when set, replaces [from, to) on By.
		Window Window
		Range  Window
	}
)

// Updated returns the columns a matched row gets: those that are neither
// the key nor kept.
func (m MergeRows) Updated() []string {
	var out []string
	for _, c := range m.Columns {
		if !contains(m.Key, c) && !contains(m.Keep, c) {
			out = append(out, c)
		}
	}
	return out
}

func (CreateSchema) op()       {}
func (CreateTable) op()        {}
func (DropTable) op()          {}
func (InsertValues) op()       {}
func (Update) op()             {}
func (SelectRows) op()         {}
func (StageRows) op()          {}
func (CountSource) op()        {}
func (AnalyzeTable) op()       {}
func (Checkpoint) op()         {}
func (ReplaceAll) op()         {}
func (SourceUnique) op()       {}
func (SourceMax) op()          {}
func (ProfileColumns) op()     {}
func (CountRows) op()          {}
func (HasRows) op()            {}
func (QuarantineRows) op()     {}
func (DeleteRows) op()         {}
func (CountMatched) op()       {}
func (InsertFrom) op()         {}
func (MergeRows) op()          {}
func (Aggregate) op()          {}
func (DistinctPartitions) op() {}
func (ReplacePartition) op()   {}
func (RetractKeys) op()        {}
func (CreateIndex) op()        {}
func (IndexExists) op()        {}
func (SessionLock) op()        {}
func (VersionedKeys) op()      {}
func (DuplicateKey) op()       {}
func (ProbeColumns) op()       {}
func (AddColumn) op()          {}
func (AlterColumnType) op()    {}
func (DropColumn) op()         {}
func (ResolveChanges) op()     {}
func (ReadSource) op()         {}
func (UpdateMatched) op()      {}

// Assign is column = value in an Update.
type Assign struct {
	Column string
	Value  Expr
}

// Keep is what a full refresh keeps of a source's window: the rows that
// pass Where, then one row per key when Dedupe is set. Reading the source
// this way in the write transaction replaces staging it.
type Keep struct {
	Where   Expr
	Dedupe  *Dedupe
	Columns []string // the columns a kept row has
}

// Order is one ORDER BY term.
type Order struct {
	Column string
	Desc   bool
}

// Window filters a relation to the half-open range [lo, hi) of a column,
// with parameters named Lo and Hi. An empty Lo or Hi leaves that side open.
// The predicate is always column >= :lo AND column < :hi: never BETWEEN,
// never <=. OrNull also keeps the rows whose column is NULL, which no
// range holds (reconciliation counts them).
type Window struct {
	Column string
	Lo, Hi string
	OrNull bool
	// Tie, when set, orders the rows of one Column value by this column
	// (never NULL) and puts those whose Column is NULL in the window by it
	// alone: the window is [(lo, lo_id), (hi, hi_id)) in the order
	// (Column, Tie), and [lo_id, hi_id) of Tie where Column is NULL. LoID
	// and HiID name the id parameters; an empty one leaves that side of
	// the ids open. LooseLo reads every row of Column = lo whatever its id
	// (a lookback re-reads behind the watermark anyway). OrNull then keeps
	// the rows where both are NULL.
	Tie        string
	LoID, HiID string
	LooseLo    bool
}

// Dedupe keeps one row per key: the first by OrderBy.
type Dedupe struct {
	Key      []string
	OrderBy  []Order
	NullSafe bool // a key column may be NULL: NULL matches NULL
	// JSON lists the columns of OrderBy that hold json: an engine that
	// cannot order json (BigQuery) orders them by their text form.
	JSON []string
}

// Rule is one quality rule: rows for which Invalid is true break it.
type Rule struct {
	Reason  string
	Invalid Expr
}

// ParamRef is a parameter used inside an expression.
type ParamRef struct{ Name string }

func (ParamRef) exprNode() {}

// Relation is what a statement reads rows from: a table, or the spec's
// source query, which is wrapped so that filters apply outside it.
type Relation struct {
	Table Table
	Query string
	// Files, when set, is a files source: read by the DuckDB reader.
	Files *FileScan
	// Lookups, when set, are joined to each row of the table or query
	// (see LookupJoin); Columns are then what is read of it, and the
	// lookups fill the others.
	Columns []string
	Lookups []LookupJoin
}

// FileScan reads files through DuckDB's readers: Glob, or with Param the
// list of paths bound to that parameter (the bookmark's new files).
// Folders named key=value become columns (hive partitioning).
type FileScan struct {
	Glob   string
	Format string // parquet | csv | json
	Param  string
	// Types are the declared columns a CSV reader reads with their
	// declared types, by name, instead of what its sniffer guesses (a
	// decimal(12,2) column would be sniffed as DOUBLE). Columns a file
	// holds that are not declared are still sniffed, and never read.
	Types []Col
}
