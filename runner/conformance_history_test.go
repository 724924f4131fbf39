package runner

import (
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// The conformance rows of the strategies that keep history: a change log
// applied by key (cdc), a table of versions (scd2 by time), and a change
// log kept as versions (scd2 with a cdc block: historySpec, see
// scd2_cdc_test.go). conform compares what each target holds (the sequence
// applied, the validity columns), and the tombstones beside a change log's,
// with what a full refresh — a replay of the whole log, a rebuild of every
// version — writes at the same hi.

const cdcConformSpec = `
pipeline: accounts_{target}_{id}
source:
  table: app_{id}.account_changes
target:
  table: dw_{id}.accounts_{target}
columns:
  account_id: bigint
  plan: varchar(16)
  op: varchar(1)
  lsn: bigint
  ingested_at: timestamp
strategy: cdc
unique_key: [account_id]
watermark:
  column: ingested_at
  start: 2026-01-01
  lookback: 1h
cdc:
  op: op
  sequence: lsn
  exclude: [op, ingested_at]
`

const scd2ConformSpec = `
pipeline: prices_{target}_{id}
source:
  table: app_{id}.price_versions
target:
  table: dw_{id}.prices_{target}
columns:
  sku: bigint
  price: decimal(10,2)
  changed_at: timestamp
strategy: scd2
unique_key: [sku]
watermark:
  column: changed_at
  start: 2026-01-01
  lookback: 2d
scd2:
  by: time
`

func historyScenarios() []scenario {
	return []scenario{
		{
			// Story 4: inserts, updates and a delete in one window and
			// across windows; a stale update arriving after the delete, and
			// a change arriving late within the lookback; a rerun.
			name: "cdc/change log", spec: cdcConformSpec, source: "app_{id}.account_changes",
			seed: [][]any{
				{1, "free", "c", 10, "2026-01-01 09:00:00"},
				{2, "free", "c", 11, "2026-01-01 09:05:00"},
				{1, "pro", "u", 12, "2026-01-01 09:10:00"},
				{3, "team", "c", 13, "2026-01-01 09:20:00"},
			},
			steps: []act{
				run{until: "2026-01-01T10:00:00Z", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-01T10:00:00Z", Read: 4, Inserted: 3}},
				insert{
					{2, nil, "d", 20, "2026-01-01 10:05:00"},
					{2, "pro", "u", 15, "2026-01-01 10:10:00"},   // stale: older than the delete
					{3, "team+", "u", 21, "2026-01-01 09:30:00"}, // late, within the lookback
				},
				run{until: "2026-01-01T11:00:00Z"},
				run{until: "2026-01-01T11:00:00Z"},
				insert{{2, "free", "c", 30, "2026-01-01 11:10:00"}}, // the key comes back
				run{until: "2026-01-01T12:00:00Z", rows: []string{
					line(1, "pro", 12, 12), line(2, "free", 30, 30), line(3, "team+", 21, 21)}},
			},
		},
		{
			// A truncate (op t, no key) empties the target at its point of
			// the sequence: changes before it are ignored, also ones that
			// arrive later; changes after it apply on the empty target. A
			// truncate that arrives late (below rows already applied)
			// removes the rows and tombstones older than it and keeps the
			// newer ones, as a replay does; an older truncate than the one
			// applied changes nothing; a rerun changes nothing.
			name: "cdc/truncate", spec: strings.Replace(cdcConformSpec, "  exclude:", "  ops: {insert: [c, r], update: [u], delete: [d], truncate: [t]}\n  exclude:", 1),
			source: "app_{id}.account_changes", nulls: true,
			seed: [][]any{
				{1, "free", "c", 10, "2026-01-01 09:00:00"},
				{2, "free", "c", 11, "2026-01-01 09:05:00"},
				{3, "team", "c", 13, "2026-01-01 09:20:00"},
			},
			steps: []act{
				run{until: "2026-01-01T10:00:00Z", want: &counts{Read: 3, Inserted: 3}},
				insert{
					{nil, nil, "t", 20, "2026-01-01 10:05:00"},
					{2, "pro", "u", 21, "2026-01-01 10:10:00"},   // after the truncate: onto the empty target
					{3, "team+", "u", 15, "2026-01-01 10:15:00"}, // before it, read after it: ignored
				},
				// [09:00, 11:00): the seed again, all before the truncate.
				run{until: "2026-01-01T11:00:00Z", want: &counts{Read: 6, Inserted: 1, Deleted: 1}, rows: []string{
					line(2, "pro", 21, 21)}},
				insert{
					{4, "ent", "c", 30, "2026-01-01 11:05:00"},
					{5, "ent", "c", 32, "2026-01-01 11:06:00"},
					{2, nil, "d", 29, "2026-01-01 11:10:00"},
				},
				run{until: "2026-01-01T12:00:00Z", want: &counts{Read: 6, Inserted: 2, Deleted: 1}, rows: []string{
					line(4, "ent", 30, 30), line(5, "ent", 32, 32)}},
				insert{
					{nil, nil, "t", 31, "2026-01-01 12:05:00"}, // late: after 4's insert and 2's delete, before 5's
					{1, nil, "d", 25, "2026-01-01 12:10:00"},   // before it: ignored
				},
				run{until: "2026-01-01T13:00:00Z", want: &counts{Read: 5, Deleted: 1}, rows: []string{
					line(5, "ent", 32, 32)}},
				insert{
					{nil, nil, "t", 18, "2026-01-01 13:05:00"}, // older than the one applied: ignored
					{6, "free", "c", 40, "2026-01-01 13:06:00"},
				},
				run{until: "2026-01-01T14:00:00Z", want: &counts{Read: 4, Inserted: 1}, rows: []string{
					line(5, "ent", 32, 32), line(6, "free", 40, 40)}},
				run{until: "2026-01-01T14:00:00Z", want: &counts{Read: 2}},
				run{until: "2026-01-01T14:00:00Z", full: true, want: &counts{Read: 13, Inserted: 2, Deleted: 1}, rows: []string{
					line(5, "ent", 32, 32), line(6, "free", 40, 40)}},
			},
		},
		{
			// Versions by time: a new version closes the one before; a late
			// version splits the interval it falls in; a rerun.
			name: "scd2/versions by time", spec: scd2ConformSpec, source: "app_{id}.price_versions",
			seed: [][]any{
				{1, "10.00", "2026-01-02 00:00:00"},
				{2, "20.00", "2026-01-02 00:00:00"},
			},
			steps: []act{
				run{until: "2026-01-03"},
				insert{{1, "12.00", "2026-01-04 00:00:00"}, {2, "18.00", "2026-01-03 12:00:00"}},
				run{until: "2026-01-05"},
				insert{{1, "11.00", "2026-01-03 06:00:00"}}, // late: splits [01-02, 01-04)
				run{until: "2026-01-05T06:00:00Z"},
				run{until: "2026-01-05T06:00:00Z", rows: []string{
					line(1, "10.00", "2026-01-02 00:00:00", "2026-01-02 00:00:00", "2026-01-03 06:00:00"),
					line(1, "11.00", "2026-01-03 06:00:00", "2026-01-03 06:00:00", "2026-01-04 00:00:00"),
					line(1, "12.00", "2026-01-04 00:00:00", "2026-01-04 00:00:00", nil),
					line(2, "20.00", "2026-01-02 00:00:00", "2026-01-02 00:00:00", "2026-01-03 12:00:00"),
					line(2, "18.00", "2026-01-03 12:00:00", "2026-01-03 12:00:00", nil)}},
			},
		},
		{
			// Versions by time with scd2.open_start: each key's earliest
			// version starts at 1970-01-01, the later ones at their own
			// time; a late version before a key's first becomes its first,
			// and the one it precedes starts at its own time again; a new
			// key; a version inside an interval; a rerun.
			name: "scd2/open start by time", spec: scd2ConformSpec + "  open_start: 1970-01-01\n", source: "app_{id}.price_versions",
			seed: [][]any{
				{1, "10.00", "2026-01-02 00:00:00"},
				{2, "20.00", "2026-01-02 00:00:00"},
			},
			steps: []act{
				run{until: "2026-01-03", want: &counts{Read: 2, Inserted: 2}, rows: []string{
					line(1, "10.00", "2026-01-02 00:00:00", "1970-01-01", nil),
					line(2, "20.00", "2026-01-02 00:00:00", "1970-01-01", nil)}},
				insert{
					{1, "12.00", "2026-01-04 00:00:00"},
					{2, "9.00", "2026-01-01 12:00:00"}, // late: before key 2's first version
					{3, "30.00", "2026-01-04 00:00:00"},
				},
				run{until: "2026-01-05", want: &counts{Read: 5, Inserted: 2, Updated: 1}, rows: []string{
					line(1, "10.00", "2026-01-02 00:00:00", "1970-01-01", "2026-01-04 00:00:00"),
					line(1, "12.00", "2026-01-04 00:00:00", "2026-01-04 00:00:00", nil),
					line(2, "9.00", "2026-01-01 12:00:00", "1970-01-01", "2026-01-02 00:00:00"),
					line(2, "20.00", "2026-01-02 00:00:00", "2026-01-02 00:00:00", nil),
					line(3, "30.00", "2026-01-04 00:00:00", "1970-01-01", nil)}},
				insert{
					{1, "11.00", "2026-01-03 06:00:00"}, // late: splits [01-02, 01-04), the first
					{3, "29.00", "2026-01-03 00:00:00"}, // late: before key 3's first version
				},
				run{until: "2026-01-05T06:00:00Z", want: &counts{Read: 4, Inserted: 1, Updated: 1}},
				run{until: "2026-01-05T06:00:00Z", want: &counts{Read: 3}, rows: []string{
					line(1, "10.00", "2026-01-02 00:00:00", "1970-01-01", "2026-01-03 06:00:00"),
					line(1, "11.00", "2026-01-03 06:00:00", "2026-01-03 06:00:00", "2026-01-04 00:00:00"),
					line(1, "12.00", "2026-01-04 00:00:00", "2026-01-04 00:00:00", nil),
					line(2, "9.00", "2026-01-01 12:00:00", "1970-01-01", "2026-01-02 00:00:00"),
					line(2, "20.00", "2026-01-02 00:00:00", "2026-01-02 00:00:00", nil),
					line(3, "29.00", "2026-01-03 00:00:00", "1970-01-01", "2026-01-04 00:00:00"),
					line(3, "30.00", "2026-01-04 00:00:00", "2026-01-04 00:00:00", nil)}},
				run{until: "2026-01-05T06:00:00Z", full: true, want: &counts{Read: 7, Inserted: 3, Updated: 4, Deleted: 7}},
			},
		},
		{
			// Story 4's change log kept as versions (scd2 with a cdc block):
			// a delete ends a version, a late change splits one, a key comes
			// back after its delete; a run that fails before it applies the
			// versions or writes the tombstones commits nothing, and the
			// retry converges; the full refresh replays the log. conform
			// compares the tombstones with the full refresh's too.
			name: "scd2/from a change log", spec: strings.ReplaceAll(historySpec, "{scd2}", "scd2:\n  open_end: 9999-12-31\n"), source: "app_{id}.customers_log", nulls: true,
			seed: [][]any{
				{1, "ann", "DE", "c", 100, "2026-01-01 09:00:00", "2026-01-01 09:01:00"},
				{2, "bob", "FR", "c", 110, "2026-01-01 09:00:00", "2026-01-01 09:01:00"},
				{2, "bob", "IT", "u", 120, "2026-01-01 09:10:00", "2026-01-01 09:11:00"},
				{3, "cy", "US", "c", 130, "2026-01-01 09:20:00", "2026-01-01 09:21:00"},
				{3, nil, nil, "d", 140, "2026-01-01 09:30:00", "2026-01-01 09:31:00"},
			},
			steps: []act{
				run{until: "2026-01-01T10:00:00Z", want: &counts{Read: 5, Inserted: 3, Updated: 1, Deleted: 1}, rows: []string{
					line(1, "ann", "DE", 100, "2026-01-01 09:00:00", 100, "2026-01-01 09:00:00", "9999-12-31"),
					line(2, "bob", "FR", 110, "2026-01-01 09:00:00", 110, "2026-01-01 09:00:00", "2026-01-01 09:10:00"),
					line(2, "bob", "IT", 120, "2026-01-01 09:10:00", 120, "2026-01-01 09:10:00", "9999-12-31"),
					line(3, "cy", "US", 130, "2026-01-01 09:20:00", 130, "2026-01-01 09:20:00", "2026-01-01 09:30:00")}},
				insert{
					{2, "bob", "GB", "u", 115, "2026-01-01 09:05:00", "2026-01-01 10:20:00"}, // committed before IT, read late
					{1, nil, nil, "d", 150, "2026-01-01 10:10:00", "2026-01-01 10:11:00"},
					{3, "cy", "CA", "c", 160, "2026-01-01 10:30:00", "2026-01-01 10:31:00"},
				},
				crash{until: "2026-01-01T11:00:00Z", at: ir.StmtApplyVersions},
				crash{until: "2026-01-01T11:00:00Z", at: ir.StmtWriteTombstones},
				run{until: "2026-01-01T11:00:00Z", want: &counts{Read: 8, Inserted: 1, Updated: 1, Deleted: 1}, wantTx: true, rows: []string{
					line(1, "ann", "DE", 100, "2026-01-01 09:00:00", 100, "2026-01-01 09:00:00", "2026-01-01 10:10:00"),
					line(2, "bob", "FR", 110, "2026-01-01 09:00:00", 110, "2026-01-01 09:00:00", "2026-01-01 09:05:00"),
					line(2, "bob", "GB", 115, "2026-01-01 09:05:00", 115, "2026-01-01 09:05:00", "2026-01-01 09:10:00"),
					line(2, "bob", "IT", 120, "2026-01-01 09:10:00", 120, "2026-01-01 09:10:00", "9999-12-31"),
					line(3, "cy", "US", 130, "2026-01-01 09:20:00", 130, "2026-01-01 09:20:00", "2026-01-01 09:30:00"),
					line(3, "cy", "CA", 160, "2026-01-01 10:30:00", 160, "2026-01-01 10:30:00", "9999-12-31")}},
				run{until: "2026-01-01T11:00:00Z", want: &counts{Read: 3}}, // [10:00, 11:00): nothing new
				run{until: "2026-01-01T11:00:00Z", full: true, want: &counts{Read: 8, Inserted: 4, Updated: 2, Deleted: 2}},
			},
		},
		{
			// The same log without a commit time (no cdc.at): versions are
			// numbered by the sequence, valid_from and valid_to holding lsn
			// values; a late change splits the version its lsn falls in, a
			// delete ends one at its lsn; a rerun; the full refresh.
			name: "scd2/versioned by the sequence", spec: strings.Replace(strings.ReplaceAll(historySpec, "{scd2}", ""), "  at: committed_at\n", "", 1), source: "app_{id}.customers_log", nulls: true,
			seed: [][]any{
				{1, "ann", "DE", "c", 100, "2026-01-01 09:00:00", "2026-01-01 09:01:00"},
				{1, "ann", "FR", "u", 120, "2026-01-01 09:20:00", "2026-01-01 09:21:00"},
				{2, "bob", "IT", "c", 110, "2026-01-01 09:10:00", "2026-01-01 09:11:00"},
			},
			steps: []act{
				run{until: "2026-01-01T10:00:00Z", want: &counts{Read: 3, Inserted: 2, Updated: 1}, rows: []string{
					line(1, "ann", "DE", 100, "2026-01-01 09:00:00", 100, 100, 120),
					line(1, "ann", "FR", 120, "2026-01-01 09:20:00", 120, 120, nil),
					line(2, "bob", "IT", 110, "2026-01-01 09:10:00", 110, 110, nil)}},
				insert{
					{1, "ann", "US", "u", 110, "2026-01-01 09:10:00", "2026-01-01 10:05:00"}, // late: splits [100, 120)
					{2, nil, nil, "d", 130, "2026-01-01 10:10:00", "2026-01-01 10:11:00"},
					{2, "bo", "IT", "u", 140, "2026-01-01 10:20:00", "2026-01-01 10:21:00"},
				},
				run{until: "2026-01-01T11:00:00Z", rows: []string{
					line(1, "ann", "DE", 100, "2026-01-01 09:00:00", 100, 100, 110),
					line(1, "ann", "US", 110, "2026-01-01 09:10:00", 110, 110, 120),
					line(1, "ann", "FR", 120, "2026-01-01 09:20:00", 120, 120, nil),
					line(2, "bob", "IT", 110, "2026-01-01 09:10:00", 110, 110, 130),
					line(2, "bo", "IT", 140, "2026-01-01 10:20:00", 140, 140, nil)}},
				run{until: "2026-01-01T11:00:00Z", want: &counts{Read: 3}},
				run{until: "2026-01-01T11:00:00Z", full: true},
			},
		},
		{
			// The same log with scd2.open_start (SQLMesh's 1970-01-01): each
			// key's earliest version starts there, the ones after it (also
			// after a delete) at their own time; a late change before a
			// key's first version becomes its first, and the version it
			// precedes starts at its own time again; a rerun; the full
			// refresh. conform compares the events too.
			name: "scd2/open start from a change log", spec: strings.ReplaceAll(historySpec, "{scd2}", "scd2:\n  open_start: 1970-01-01\n"), source: "app_{id}.customers_log", nulls: true,
			seed: [][]any{
				{1, "ann", "DE", "c", 100, "2026-01-01 09:00:00", "2026-01-01 09:01:00"},
				{2, "bob", "FR", "c", 110, "2026-01-01 09:00:00", "2026-01-01 09:01:00"},
				{2, "bob", "IT", "u", 120, "2026-01-01 09:10:00", "2026-01-01 09:11:00"},
				{3, "cy", "US", "c", 130, "2026-01-01 09:20:00", "2026-01-01 09:21:00"},
				{3, nil, nil, "d", 140, "2026-01-01 09:30:00", "2026-01-01 09:31:00"},
			},
			steps: []act{
				run{until: "2026-01-01T10:00:00Z", want: &counts{Read: 5, Inserted: 3, Updated: 1, Deleted: 1}, rows: []string{
					line(1, "ann", "DE", 100, "2026-01-01 09:00:00", 100, "1970-01-01", nil),
					line(2, "bob", "FR", 110, "2026-01-01 09:00:00", 110, "1970-01-01", "2026-01-01 09:10:00"),
					line(2, "bob", "IT", 120, "2026-01-01 09:10:00", 120, "2026-01-01 09:10:00", nil),
					line(3, "cy", "US", 130, "2026-01-01 09:20:00", 130, "1970-01-01", "2026-01-01 09:30:00")}},
				insert{
					{1, "ann", "PT", "c", 95, "2026-01-01 08:50:00", "2026-01-01 10:05:00"}, // late: before key 1's first version
					{3, "cy", "CA", "c", 160, "2026-01-01 10:30:00", "2026-01-01 10:31:00"}, // back after its delete: its own time
				},
				run{until: "2026-01-01T11:00:00Z", want: &counts{Read: 7, Inserted: 2}, rows: []string{
					line(1, "ann", "PT", 95, "2026-01-01 08:50:00", 95, "1970-01-01", "2026-01-01 09:00:00"),
					line(1, "ann", "DE", 100, "2026-01-01 09:00:00", 100, "2026-01-01 09:00:00", nil),
					line(2, "bob", "FR", 110, "2026-01-01 09:00:00", 110, "1970-01-01", "2026-01-01 09:10:00"),
					line(2, "bob", "IT", 120, "2026-01-01 09:10:00", 120, "2026-01-01 09:10:00", nil),
					line(3, "cy", "US", 130, "2026-01-01 09:20:00", 130, "1970-01-01", "2026-01-01 09:30:00"),
					line(3, "cy", "CA", 160, "2026-01-01 10:30:00", 160, "2026-01-01 10:30:00", nil)}},
				run{until: "2026-01-01T11:00:00Z", want: &counts{Read: 2}},
				run{until: "2026-01-01T11:00:00Z", full: true, want: &counts{Read: 7, Inserted: 4, Updated: 2, Deleted: 1}},
			},
		},
		{
			// The same log with tracked columns (TRACK HISTORY ON country):
			// a change only in name updates the version it falls in, a
			// change of country opens one; late changes of either kind,
			// a delete between two equal versions (not merged), a run that
			// fails after it retracted the merged versions and before it
			// merges them again, a rerun, the full refresh. conform
			// compares the target, the tombstones and the events.
			name: "scd2/tracked columns from a change log", spec: strings.ReplaceAll(historySpec, "{scd2}", "scd2:\n  tracked: [country]\n"), source: "app_{id}.customers_log", nulls: true,
			seed: [][]any{
				{1, "ann", "DE", "c", 100, "2026-01-01 09:00:00", "2026-01-01 09:01:00"},
				{1, "anna", "DE", "u", 110, "2026-01-01 09:10:00", "2026-01-01 09:11:00"}, // name only
				{1, "anna", "FR", "u", 120, "2026-01-01 09:20:00", "2026-01-01 09:21:00"},
				{2, "bob", "IT", "c", 130, "2026-01-01 09:00:00", "2026-01-01 09:01:00"},
			},
			steps: []act{
				run{until: "2026-01-01T10:00:00Z", want: &counts{Read: 4, Inserted: 2, Updated: 2}, rows: []string{
					line(1, "anna", "DE", 110, "2026-01-01 09:10:00", 110, "2026-01-01 09:00:00", "2026-01-01 09:20:00"),
					line(1, "anna", "FR", 120, "2026-01-01 09:20:00", 120, "2026-01-01 09:20:00", nil),
					line(2, "bob", "IT", 130, "2026-01-01 09:00:00", 130, "2026-01-01 09:00:00", nil)}},
				insert{
					{1, "annie", "DE", "u", 105, "2026-01-01 09:05:00", "2026-01-01 10:05:00"}, // late, name only, older than anna: the image stays
					{1, "anna", "US", "u", 115, "2026-01-01 09:15:00", "2026-01-01 10:06:00"},  // late, country: splits DE
					{2, "bobby", "IT", "u", 140, "2026-01-01 10:10:00", "2026-01-01 10:11:00"}, // name only: updates the version
					{2, nil, nil, "d", 150, "2026-01-01 10:20:00", "2026-01-01 10:21:00"},
					{2, "bob", "IT", "c", 160, "2026-01-01 10:30:00", "2026-01-01 10:31:00"}, // back, equal, after a delete: a version of its own
				},
				run{until: "2026-01-01T11:00:00Z", rows: []string{
					line(1, "anna", "DE", 110, "2026-01-01 09:10:00", 110, "2026-01-01 09:00:00", "2026-01-01 09:15:00"),
					line(1, "anna", "US", 115, "2026-01-01 09:15:00", 115, "2026-01-01 09:15:00", "2026-01-01 09:20:00"),
					line(1, "anna", "FR", 120, "2026-01-01 09:20:00", 120, "2026-01-01 09:20:00", nil),
					line(2, "bobby", "IT", 140, "2026-01-01 10:10:00", 140, "2026-01-01 09:00:00", "2026-01-01 10:20:00"),
					line(2, "bob", "IT", 160, "2026-01-01 10:30:00", 160, "2026-01-01 10:30:00", nil)}},
				run{until: "2026-01-01T11:00:00Z", want: &counts{Read: 5}},
				insert{{1, "ann", "FR", "u", 170, "2026-01-01 11:10:00", "2026-01-01 11:11:00"}}, // name only, on the current version
				crash{until: "2026-01-01T12:00:00Z", at: ir.StmtMergeVersions},
				// Where each statement commits alone the crashed run's
				// write landed (its versions retracted, the events
				// applied): the rerun finds no new event to count and
				// rebuilds the merged versions, without being refused as
				// for an emptied target (mark_rebuilding).
				run{until: "2026-01-01T12:00:00Z", want: &counts{Read: 6, Updated: 1}, wantTx: true, rows: []string{
					line(1, "anna", "DE", 110, "2026-01-01 09:10:00", 110, "2026-01-01 09:00:00", "2026-01-01 09:15:00"),
					line(1, "anna", "US", 115, "2026-01-01 09:15:00", 115, "2026-01-01 09:15:00", "2026-01-01 09:20:00"),
					line(1, "ann", "FR", 170, "2026-01-01 11:10:00", 170, "2026-01-01 09:20:00", nil),
					line(2, "bobby", "IT", 140, "2026-01-01 10:10:00", 140, "2026-01-01 09:00:00", "2026-01-01 10:20:00"),
					line(2, "bob", "IT", 160, "2026-01-01 10:30:00", 160, "2026-01-01 10:30:00", nil)}},
				run{until: "2026-01-01T12:00:00Z", full: true, want: &counts{Read: 10, Inserted: 3, Updated: 6, Deleted: 1}},
			},
		},
	}
}
