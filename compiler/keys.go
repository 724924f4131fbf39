package compiler

import "strings"

// The keys a spec and incrc.yaml may hold, in one table: the parser's
// unknown-key check reads the names from here, and the JSON Schema that
// editors complete and document from (Schema) is generated from the same
// table, so the two cannot disagree. A new key is one entry here and one
// case in the parser's switch for its mapping; TestKeyTable fails when a
// key of the table is not read by the parser.

// KeyKind is the shape of a key's value.
type KeyKind int

const (
	KindScalar          KeyKind = iota // one value
	KindBool                           // true or false
	KindDuration                       // 90s, 15m, 36h, 2d, 1w
	KindDurationOrCount                // a duration, or a whole number of ids
	KindList                           // a list of values, or one value
	KindMapping                        // a mapping of Children
	KindColumns                        // column name: type, or {type, nullable}: Children
	KindPairs                          // a mapping of one name to another
	KindMappingList                    // a list of mappings of Children
)

// Key is one key of a mapping.
type Key struct {
	Name     string
	Kind     KeyKind
	Doc      string   // one or two sentences: what the key means (hover text)
	Enum     []string // the values a scalar may take, when they are few
	Required bool     // every spec has it (Validate says so; the schema too)
	Children []Key    // KindMapping, KindColumns (the {type, nullable} form), KindMappingList
	Example  string   // a valid value in YAML flow style, for KindScalar..KindPairs
}

// SpecKeys are the keys of a pipeline spec.
var SpecKeys = []Key{
	{Name: "pipeline", Kind: KindScalar, Required: true, Example: "dw_orders",
		Doc: "The pipeline's name: [a-z][a-z0-9_]*, unique in the project; state and run logs are kept under it."},
	{Name: "description", Kind: KindScalar, Example: "Orders, one row per order.",
		Doc: "What the pipeline holds, for readers of the spec and the compiled file."},
	{Name: "source", Kind: KindMapping, Required: true,
		Doc: "Where rows are read from: a table, or a SELECT whose rows the window filters outside it; in the target's database, or in another one (connection), or a folder of files (files).",
		Children: []Key{
			{Name: "table", Kind: KindScalar, Example: "app.orders", Doc: "A plain schema.table."},
			{Name: "query", Kind: KindScalar, Example: "SELECT order_id, updated_at FROM app.orders",
				Doc: "One SELECT (no ';', no bind parameters), written in the dialect of the database it runs on (the source's, with connection); the window wraps it, so it must not filter the watermark column with BETWEEN or <=."},
			{Name: "connection", Kind: KindScalar, Example: "app",
				Doc: "The source lives in another database: a name of incrc.yaml's connections (or --source NAME=URL). The window's read runs there, in its dialect, and the rows stream into the target's staging."},
			{Name: "dialect", Kind: KindScalar, Example: "postgres",
				Doc: "With connection: the source's dialect, when its URL is not known at compile time (default: from the connection's URL in incrc.yaml)."},
			{Name: "files", Kind: KindScalar, Example: "landing/orders/**/*.parquet",
				Doc: "A local folder glob of files (** crosses folders; key=value folders become columns), read through the embedded DuckDB reader whatever the target. s3:// and gs:// are a later step."},
			{Name: "format", Kind: KindScalar, Enum: []string{"parquet", "csv", "json"}, Example: "parquet",
				Doc: "With files: parquet, csv or json; default from the glob's extension."},
			{Name: "unique", Kind: KindBool, Example: "true",
				Doc: "The source holds one row per unique_key (a key it enforces, or one it is known to keep): runs skip the dedupe, and reconcile reports keys with several rows. Without it a full refresh still skips the dedupe when the source table's catalog shows a primary key or unique constraint on exactly the key."},
		}},
	{Name: "target", Kind: KindMapping, Required: true,
		Doc: "Where rows are written; no two pipelines write one table.",
		Children: []Key{
			{Name: "table", Kind: KindScalar, Example: "dw.orders", Doc: "A plain schema.table."},
		}},
	{Name: "columns", Kind: KindColumns, Required: true,
		Doc: "The columns read and written: name: portable type (smallint integer bigint decimal(p,s) double boolean text varchar(n) date timestamp timestamptz json), or {type: T, nullable: true}. In a { } mapping quote a type with a comma: \"decimal(12,2)\".",
		Children: []Key{
			{Name: "type", Kind: KindScalar, Example: `"decimal(12,2)"`, Doc: "A portable type: smallint integer bigint decimal(p,s) double boolean text varchar(n) date timestamp timestamptz json."},
			{Name: "nullable", Kind: KindBool, Example: "true", Doc: "Key columns are NOT NULL unless nullable: true (then matching by key is NULL-safe)."},
		}},
	{Name: "strategy", Kind: KindScalar, Required: true, Enum: strategies, Example: "merge",
		Doc: "How the target is written: append, merge (by unique_key), overwrite_partitions, full_refresh (every run rebuilds), cdc (a change log applied by key), scd2 (every version of a key)."},
	{Name: "unique_key", Kind: KindList, Example: "[order_id]",
		Doc: "The key columns: required by merge, cdc and scd2; staging keeps one row per key (the greatest dedupe_by)."},
	{Name: "watermark", Kind: KindMapping,
		Doc: "What a run reads: the half-open window [watermark - lookback, hi).",
		Children: []Key{
			{Name: "column", Kind: KindScalar, Example: "updated_at", Doc: "A timestamp, date or integer column that grows when a row changes (not a creation time, for merge)."},
			{Name: "tiebreak", Kind: KindScalar, Example: "id", Doc: "A monotonic integer unique_key column read with a timestamp column: rows are ordered by (column, tiebreak), so rows sharing one time at a window's edge split between runs by id, and rows whose column is NULL are read by id instead of quarantined. merge and append only."},
			{Name: "files", Kind: KindScalar, Enum: []string{"new"}, Example: "new",
				Doc: "With source.files, instead of column: each run loads exactly the files not loaded before (by path, size and modification time), recorded in incrc_files in the write's transaction."},
			{Name: "start", Kind: KindScalar, Example: "2026-01-01", Doc: "The first run's lower bound: a date or RFC 3339 (an id for an integer column). Nothing before it is ever read."},
			{Name: "lookback", Kind: KindDurationOrCount, Example: "2d", Doc: "How far each run re-reads behind the watermark, for rows committed late (idempotent strategies only: an append needs a unique_key, and then appends only the keys the target lacks); a count of ids for an integer watermark."},
			{Name: "lag", Kind: KindDuration, Example: "5m", Doc: "hi is now minus the lag, so rows still committing belong to the next run."},
			{Name: "batch", Kind: KindDurationOrCount, Example: "1d",
				Doc: "Catch up in batches: a run whose window is longer splits it at start + k x batch, oldest first, each batch written, advanced and recorded in its own transaction, so a run killed between batches resumes from the last one; a count of ids for an integer watermark."},
		}},
	{Name: "dedupe_by", Kind: KindScalar, Example: "updated_at",
		Doc: "The version column: of several rows of one key in a window, the greatest wins (default: the watermark column). Needs unique_key."},
	{Name: "partition", Kind: KindMapping,
		Doc: "The partitions a run rewrites whole (overwrite_partitions) and backfills rebuild.",
		Children: []Key{
			{Name: "column", Kind: KindScalar, Example: "event_date", Doc: "A date or timestamp column."},
			{Name: "granularity", Kind: KindScalar, Enum: []string{"hour", "day", "month"}, Example: "day", Doc: "hour, day (the default) or month."},
			{Name: "finalize_after", Kind: KindDuration, Example: "35d", Doc: "Partitions that end this long before the saved watermark are never rewritten by a run; a backfill needs --restate for them."},
			{Name: "timezone", Kind: KindScalar, Example: "Europe/Berlin", Doc: "The IANA time zone whose days (or months) the partitions of a timestamp column are, such as Europe/Berlin: bounds are that zone's midnights, stored and bound in UTC, so a daylight-saving day has 23 or 25 hours. Default UTC. Zones whose offset is not a whole number of hours are refused."},
		}},
	{Name: "quality", Kind: KindMapping,
		Doc: "Rules every row must pass; a row that breaks one is quarantined with its reason, or fails the run.",
		Children: []Key{
			{Name: "not_null", Kind: KindList, Example: "[order_date]", Doc: "Columns that must not be NULL."},
			{Name: "checks", Kind: KindList, Example: `["amount >= 0"]`, Doc: "Expressions every row must satisfy: columns, literals, comparisons, arithmetic, AND/OR/NOT, IS NULL, IN, abs/coalesce/lower/upper."},
			{Name: "on_invalid", Kind: KindScalar, Enum: []string{"quarantine", "fail"}, Example: "quarantine", Doc: "quarantine (the default: the row goes to <target>_quarantine) or fail (the run fails)."},
		}},
	{Name: "reconcile", Kind: KindMapping,
		Doc: "How incrc reconcile compares source and target: per day of by (or per reconcile.granularity, or per partition), count and each measure.",
		Children: []Key{
			{Name: "by", Kind: KindScalar, Example: "order_date", Doc: "A date or timestamp column; a partitioned pipeline reconciles per partition."},
			{Name: "granularity", Kind: KindScalar, Enum: []string{"hour", "day", "month"}, Example: "day", Doc: "The groups compared: hour, day (the default) or month of by; a partitioned pipeline compares its partitions."},
			{Name: "measures", Kind: KindList, Example: "[count, sum(amount)]", Doc: "count, count(col), sum(col), min(col), max(col)."},
		}},
	{Name: "cdc", Kind: KindMapping,
		Doc: "The source is a change log, one row per change: strategy cdc applies it by key, strategy scd2 keeps every change as a version.",
		Children: []Key{
			{Name: "op", Kind: KindScalar, Example: "op", Doc: "The column holding the op code."},
			{Name: "sequence", Kind: KindScalar, Example: "lsn", Doc: "The column that orders a key's changes: an integer, decimal or timestamp (an LSN); never NULL."},
			{Name: "at", Kind: KindScalar, Example: "committed_at", Doc: "The column holding the change's commit time: for strategy cdc soft deletes record it; for scd2 each version starts there. scd2 without it numbers the versions by cdc.sequence: valid_from and valid_to hold sequence values, the current version's end NULL."},
			{Name: "deletes", Kind: KindScalar, Enum: []string{"hard", "soft"}, Example: "hard", Doc: "strategy cdc: hard (the default: the row is removed) or soft (the row is marked; needs at). Not for scd2, where a delete ends the current version."},
			{Name: "soft_delete", Kind: KindMapping, Doc: "The target columns a soft delete sets.",
				Children: []Key{
					{Name: "flag", Kind: KindScalar, Example: "deleted", Doc: "The boolean column (default deleted)."},
					{Name: "at", Kind: KindScalar, Example: "deleted_at", Doc: "The time column (default deleted_at)."},
				}},
			{Name: "ops", Kind: KindMapping, Doc: "The op codes of each kind of change (default Debezium's: c r / u / d).",
				Children: []Key{
					{Name: "insert", Kind: KindList, Example: "[c, r]", Doc: "Codes of inserts."},
					{Name: "update", Kind: KindList, Example: "[u]", Doc: "Codes of updates."},
					{Name: "delete", Kind: KindList, Example: "[d]", Doc: "Codes of deletes."},
					{Name: "truncate", Kind: KindList, Example: "[t]", Doc: "strategy cdc: codes of truncates, which empty the target at their point of the sequence (none by default; Debezium's is t)."},
				}},
			{Name: "exclude", Kind: KindList, Example: "[op, ingested_at]", Doc: "Change-log columns the target does not get."},
		}},
	{Name: "scd2", Kind: KindMapping,
		Doc: "strategy scd2: the target keeps every version of a key, each valid over [valid_from, valid_to). With a cdc block it is optional, and only valid_from, valid_to, open_end and tracked apply.",
		Children: []Key{
			{Name: "by", Kind: KindScalar, Enum: scd2By, Example: "time", Doc: "time (a row's watermark value is when its version became true) or columns (a version opens at the run's hi when a tracked column changes); required, but with a cdc block, where it does not apply."},
			{Name: "tracked", Kind: KindList, Example: "[country]", Doc: "by columns: the columns whose change opens a version (default: all but the key and the watermark). With a cdc block: a change that leaves them all equal updates the version it falls in instead of opening one (default: every change opens one)."},
			{Name: "snapshot", Kind: KindBool, Example: "true", Doc: "Every run reads the whole source [start, hi), and a key no row carries any more has vanished (the default without a watermark)."},
			{Name: "deletes", Kind: KindScalar, Enum: scd2Deletes, Example: "close", Doc: "What a vanished key does to its current version: ignore, close (ends it at hi) or new_record (ends it and records the deletion)."},
			{Name: "valid_from", Kind: KindScalar, Example: "valid_from", Doc: "The target's column where a version starts (default valid_from)."},
			{Name: "valid_to", Kind: KindScalar, Example: "valid_to", Doc: "The target's column where a version ends (default valid_to)."},
			{Name: "open_end", Kind: KindScalar, Example: "9999-12-31", Doc: "The current version's valid_to, such as 9999-12-31 (default NULL)."},
			{Name: "open_start", Kind: KindScalar, Example: "1970-01-01", Doc: "The valid_from of each key's earliest version, such as 1970-01-01 (SQLMesh's), so the key's first values hold for any time before it was first seen; a version whose own start is earlier keeps it. The own start is the change's time from a change log, the row's watermark value by time (open_start at or before watermark.start), the run's hi by columns. Default: the own start. A time, or an integer for versions numbered by an integer cdc.sequence."},
			{Name: "deleted", Kind: KindScalar, Example: "is_deleted", Doc: "new_record: the flag column of the version that records a deletion (default is_deleted)."},
		}},
	{Name: "merge", Kind: KindMapping,
		Doc: "strategy merge: the columns a matched row gets, when not all of them. The others are written when a key is first inserted and kept after: such a target deliberately differs from a full refresh in them, and reconcile compares only the columns updates write.",
		Children: []Key{
			{Name: "update_columns", Kind: KindList, Example: "[status, amount, updated_at]",
				Doc: "The non-key columns an update writes; every other column keeps its first value (dbt's merge_update_columns)."},
			{Name: "exclude_columns", Kind: KindList, Example: "[first_seen_at]",
				Doc: "The columns an update leaves alone: written on insert only (dbt's merge_exclude_columns). Give update_columns or exclude_columns, not both."},
		}},
	{Name: "lookups", Kind: KindMappingList,
		Doc: "Columns filled from other tables, joined on a key and, with as_of, on the version valid at the row's time.",
		Children: []Key{
			{Name: "table", Kind: KindScalar, Example: "dw.dim_customer", Doc: "The lookup table: schema.table."},
			{Name: "on", Kind: KindPairs, Example: "{customer_id: customer_id}", Doc: "This pipeline's column: the lookup table's column."},
			{Name: "as_of", Kind: KindScalar, Example: "sale_date", Doc: "A date or timestamp column of this pipeline: the version valid then."},
			{Name: "columns", Kind: KindPairs, Example: "{customer_country: country}", Doc: "The target column filled (declared in columns): the lookup table's column."},
			{Name: "valid_from", Kind: KindScalar, Example: "valid_from", Doc: "For a table outside the project: its column where a version starts."},
			{Name: "valid_to", Kind: KindScalar, Example: "valid_to", Doc: "For a table outside the project: its column where a version ends."},
			{Name: "open_end", Kind: KindScalar, Example: "9999-12-31", Doc: "For a table outside the project: the current version's valid_to (default NULL)."},
		}},
	{Name: "silence", Kind: KindPairs, Example: `{no-lag: "the source is a replica: its rows are committed before they appear"}`,
		Doc: "Warnings this spec does not want, each code with the reason it does not apply here: code: reason. incrc validate --strict fails on the other warnings."},
}

// ConfigKeys are the keys of the project file, incrc.yaml.
var ConfigKeys = []Key{
	{Name: "specs", Kind: KindScalar, Example: "specs", Doc: "The folder of pipeline specs (default specs)."},
	{Name: "out", Kind: KindScalar, Example: "sql", Doc: "The folder of compiled SQL (default sql)."},
	{Name: "seeds", Kind: KindScalar, Example: "seeds", Doc: "The folder of sample rows incrc seed loads without --rows: PIPELINE.yaml, a list of rows, for each pipeline (default seeds)."},
	{Name: "dialects", Kind: KindList, Example: "[duckdb, postgres]", Doc: "The dialects compile and plan write by default (default duckdb)."},
	{Name: "scripts", Kind: KindBool, Example: "true", Doc: "compile and plan also write, next to each compiled file of an engine that has them, the scripts its own scheduler runs: PIPELINE.run.sql, PIPELINE.full_refresh.sql, PIPELINE.backfill.sql (default false)."},
	{Name: "targets", Kind: KindPairs, Example: "{dev: \"duckdb:wh.duckdb\"}", Doc: "Named targets: name: URL; ${ENV} is expanded when the target is used, and an unset variable is an error then."},
	{Name: "connections", Kind: KindPairs, Example: "{app: \"postgres://etl:${APP_PASSWORD}@app-db/app\"}", Doc: "Source databases a spec's source.connection names: name: URL; ${ENV} is expanded when the connection is used, and an unset variable is an error then. --source NAME=URL overrides one."},
}

// keysAt returns the names of the keys of the mapping at path in table:
// "" for the top level, "watermark", "cdc.ops", "lookups" (an entry's
// keys), "columns" (the {type, nullable} form).
func keysAt(table []Key, path string) []string {
	keys := table
	if path != "" {
		for _, name := range strings.Split(path, ".") {
			k := findKey(keys, name)
			if k == nil {
				panic("compiler: no key " + path + " in the key table")
			}
			keys = k.Children
		}
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	return names
}

func findKey(keys []Key, name string) *Key {
	for i := range keys {
		if keys[i].Name == name {
			return &keys[i]
		}
	}
	return nil
}
