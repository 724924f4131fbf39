package runner

import (
	"fmt"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"
)

// The scenarios of the conformance suite (conformance_test.go). Expected
// rows and counts are read off each scenario's own fixture; conform adds,
// after every step that writes, that the target equals a full refresh.

// ordersSpec is story 1 of docs/stories.md; {lookback} and {quality}
// vary by scenario.
const ordersSpec = `
pipeline: orders_{target}_{id}
source:
  table: app_{id}.orders
target:
  table: dw_{id}.orders_{target}
columns:
  order_id: bigint
  order_date: date
  amount: decimal(12,2)
  updated_at: timestamp
strategy: merge
unique_key: [order_id]
watermark:
  column: updated_at
  start: 2026-01-01
  {lookback}
dedupe_by: updated_at
{quality}
reconcile:
  by: order_date
  measures: [count, sum(amount)]
`

const amountCheck = "quality:\n  checks: [\"amount >= 0\"]"

func orders(lookback, quality string) string {
	return strings.NewReplacer("{lookback}", lookback, "{quality}", quality).Replace(ordersSpec)
}

// orders5 are story 1's five orders: 220.50 in all, order 105 not paid yet.
var orders5 = [][]any{
	{101, "2026-01-20", "50.00", "2026-01-20 09:00:00"},
	{102, "2026-01-21", "75.50", "2026-01-21 10:00:00"},
	{103, "2026-01-22", "45.00", "2026-01-22 11:00:00"},
	{104, "2026-01-23", "50.00", "2026-01-23 12:00:00"},
	{105, "2026-01-20", nil, "2026-01-20 13:00:00"},
}

// orders5Rows are orders5 as the target holds them.
func orders5Rows() []string {
	var out []string
	for _, r := range orders5 {
		out = append(out, line(r...))
	}
	return out
}

// appendSpec reads a source query by an integer id from {start}.
const appendSpec = `
pipeline: events_{target}_{id}
source:
  query: |
    SELECT id, kind, amount
    FROM {src}
    WHERE kind <> 'test'
target:
  table: dw_{id}.events_{target}
columns:
  id: bigint
  kind: varchar(16)
  amount: decimal(12,2)
strategy: append
watermark:
  column: id
  start: {start}
`

// appendEvents are the append scenario's source rows, id first; its
// query leaves out the "test" ones.
var appendEvents = [][]any{
	{1, "sale", "10.00"}, {2, "sale", "20.50"}, {3, "test", "99.00"}, {4, "refund", "-5.00"},
	{5, "sale", nil}, {6, "sale", "7.25"}, {7, "test", "1.00"},
	{8, "sale", "8.00"}, {9, "test", "9.00"},
	{10, "sale", "10.00"}, {11, "sale", "11.00"}, {12, "refund", "-1.00"},
}

// appended is what the query returns of the first n events.
func appended(n int) []string {
	var out []string
	for _, ev := range appendEvents[:n] {
		if ev[1] != "test" {
			out = append(out, line(ev...))
		}
	}
	return out
}

// stockSpec merges on a composite key whose region part may be NULL.
const stockSpec = `
pipeline: stock_{target}_{id}
source:
  table: app_{id}.stock
target:
  table: dw_{id}.stock_{target}
columns:
  sku: bigint
  region: {type: varchar(8), nullable: true}
  qty: integer
  updated_at: timestamp
strategy: merge
unique_key: [sku, region]
watermark:
  column: updated_at
  start: 2026-01-01
dedupe_by: updated_at
`

// paymentsSpec is a merge whose {quality} varies.
const paymentsSpec = `
pipeline: pay_{target}_{id}
source:
  table: app_{id}.payments
target:
  table: dw_{id}.payments_{target}
columns:
  payment_id: bigint
  amount: decimal(12,2)
  updated_at: timestamp
strategy: merge
unique_key: [payment_id]
watermark:
  column: updated_at
  start: 2026-01-01
{quality}
`

const paymentRules = "quality:\n  not_null: [amount]\n  checks: [\"amount >= 0\"]\n  on_invalid: "

// payments6 hold three rows that break a rule: a negative amount, a NULL
// key (twice: the dedupe keeps the newer), a NULL amount.
var payments6 = [][]any{
	{1, "10.00", "2026-01-01 09:00:00"},
	{2, "-5.00", "2026-01-01 15:00:00"},
	{nil, "3.00", "2026-01-01 16:00:00"},
	{nil, "-1.00", "2026-01-01 16:30:00"},
	{4, nil, "2026-01-01 17:00:00"},
	{5, "0.00", "2026-01-01 18:00:00"},
}

// dailySpec has a date watermark.
const dailySpec = `
pipeline: daily_{target}_{id}
source:
  table: app_{id}.daily
target:
  table: dw_{id}.daily_{target}
columns:
  id: bigint
  total: integer
  changed_on: date
strategy: merge
unique_key: [id]
watermark:
  column: changed_on
  start: 2026-01-01
  lookback: 1d
`

const productsSpec = `
pipeline: snapshot_{target}_{id}
source:
  table: app_{id}.products
target:
  table: dw_{id}.products_{target}
columns:
  id: bigint
  name: varchar(32)
  price: decimal(10,2)
strategy: full_refresh
`

// revenueSpec is story 2: daily partitions of orders, reconciled by count
// and sum(amount).
const revenueSpec = `
pipeline: revenue_{target}_{id}
source:
  table: app_{id}.orders
target:
  table: dw_{id}.revenue_{target}
columns:
  order_id: bigint
  order_date: date
  amount: decimal(12,2)
  updated_at: timestamp
strategy: merge
unique_key: [order_id]
watermark:
  column: updated_at
  start: 2026-01-01
  lookback: 1d
partition:
  column: order_date
  granularity: day
  finalize_after: 35d
reconcile:
  by: order_date
  measures: [count, sum(amount)]
`

// revenueRows are 14 days of orders, 2026-01-01..14, three a day.
func revenueRows() [][]any {
	var rows [][]any
	for d := 1; d <= 14; d++ {
		for k := 0; k < 3; k++ {
			day := fmt.Sprintf("2026-01-%02d", d)
			rows = append(rows, []any{d*10 + k, day, fmt.Sprintf("%d.25", 10*d+k), day + " 12:00:00"})
		}
	}
	return rows
}

// loaded is revenueRows loaded up to 2026-01-15, for the scenarios
// about backfills (story 2 loads them over three runs).
var loaded = run{until: "2026-01-15", wm: "2026-01-15T00:00:00Z"}

// eventsSpec is story 5: append-only events, partition overwrite;
// {finalize} may close old partitions.
const eventsSpec = `
pipeline: events_{target}_{id}
source:
  table: app_{id}.events
target:
  table: dw_{id}.events_{target}
columns:
  event_id: bigint
  event_date: date
  kind: varchar(16)
  ingested_at: timestamp
strategy: overwrite_partitions
watermark:
  column: ingested_at
  start: 2026-01-01
partition:
  column: event_date
  granularity: day
  {finalize}
reconcile:
  by: event_date
  measures: [count]
`

// clicksSpec partitions by the hour of a timestamp or the month of it:
// the granularities that need the engine's truncation.
const clicksSpec = `
pipeline: clicks_{target}_{id}
source:
  table: app_{id}.clicks
target:
  table: dw_{id}.clicks_{target}
columns:
  click_id: bigint
  clicked_at: timestamp
  ingested_at: timestamp
strategy: overwrite_partitions
unique_key: [click_id]
watermark:
  column: ingested_at
  start: 2026-01-01
partition:
  column: clicked_at
  granularity: {granularity}
`

// days names the January days from..to, inclusive.
func days(from, to int) []string {
	var out []string
	for d := from; d <= to; d++ {
		out = append(out, fmt.Sprintf("2026-01-%02d", d))
	}
	return out
}

func steps(groups ...[]act) []act {
	var out []act
	for _, g := range groups {
		out = append(out, g...)
	}
	return out
}

// payment105 is story 1's late payment: committed on the 26th by a slow
// system, with an updated_at of the 25th.
var payment105 = update{key: 105, set: map[string]any{"amount": "22.00", "updated_at": "2026-01-25 12:00:00"}}

// story1Runs are the daily runs before the payment lands.
var story1Runs = []act{run{until: "2026-01-22"}, run{until: "2026-01-24"}, run{until: "2026-01-26"}}

// firstSeenSpec merges customers but keeps, for each, the channel and
// time it was first seen: an update leaves them alone.
const firstSeenSpec = `
pipeline: customers_{target}_{id}
source:
  table: app_{id}.customers
target:
  table: dw_{id}.customers_{target}
columns:
  customer_id: bigint
  email: varchar(64)
  first_channel: {type: varchar(16), nullable: true}
  first_seen_at: timestamp
  lifetime_value: decimal(12,2)
  updated_at: timestamp
strategy: merge
unique_key: [customer_id]
merge:
  exclude_columns: [first_channel, first_seen_at]
watermark:
  column: updated_at
  start: 2026-01-01
  lookback: 1d
dedupe_by: updated_at
reconcile:
  by: updated_at
  measures: [count, sum(lifetime_value), count(first_channel)]
`

var customers3 = [][]any{
	{1, "ana@example.com", "ads", "2026-01-02 09:00:00", "10.00", "2026-01-02 09:00:00"},
	{2, "bo@example.com", "email", "2026-01-03 10:00:00", "20.00", "2026-01-03 10:00:00"},
	{3, "cy@example.com", "search", "2026-01-04 11:00:00", "30.00", "2026-01-04 11:00:00"},
}

// partialMergeSteps: the source rewrites the channel and first-seen time
// of customers 1 and 2 (a CRM that overwrites attribution) along with
// changes a merge must take; the target keeps the first values of
// exactly those keys, and matches a full refresh everywhere else.
// note is the run log's note where the source is keyed (directNote).
func partialMergeSteps(note string) []act {
	return []act{
		run{until: "2026-01-05", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-05T00:00:00Z", Read: 3, Inserted: 3}, catalogNote: note},
		update{key: 1, set: map[string]any{"email": "ana@new.example.com", "first_channel": "referral", "first_seen_at": "2026-01-06 08:00:00",
			"lifetime_value": "15.00", "updated_at": "2026-01-06 08:00:00"}},
		update{key: 2, set: map[string]any{"first_channel": nil, "lifetime_value": "25.00", "updated_at": "2026-01-06 09:00:00"}},
		insert{{4, "di@example.com", "ads", "2026-01-06 10:00:00", "40.00", "2026-01-06 10:00:00"}},
		run{until: "2026-01-07", want: &counts{Lo: "2026-01-04T00:00:00Z", Hi: "2026-01-07T00:00:00Z", Read: 4, Inserted: 1, Updated: 3},
			rows: []string{
				line(1, "ana@new.example.com", "ads", "2026-01-02 09:00:00", "15.00", "2026-01-06 08:00:00"),
				line(2, "bo@example.com", "email", "2026-01-03 10:00:00", "25.00", "2026-01-06 09:00:00"),
				line(3, "cy@example.com", "search", "2026-01-04 11:00:00", "30.00", "2026-01-04 11:00:00"),
				line(4, "di@example.com", "ads", "2026-01-06 10:00:00", "40.00", "2026-01-06 10:00:00"),
			},
			firstKept: []any{1, 2}, catalogNote: note},
		// The lookback reads 1, 2 and 4 again: an update, still no change to
		// what the target keeps.
		run{until: "2026-01-07", want: &counts{Lo: "2026-01-06T00:00:00Z", Hi: "2026-01-07T00:00:00Z", Read: 3, Updated: 3}, firstKept: []any{1, 2}},
		// count(first_channel) differs (customer 2's is NULL at the source):
		// left out, so nothing drifts.
		reconcile{from: "2026-01-01", to: "2026-02-01", uncompared: []string{"count(first_channel)"}},
		// A full refresh rebuilds from the source: the first values are gone.
		run{until: "2026-01-07", full: true, firstKept: nil},
		run{until: "2026-01-08", want: &counts{Lo: "2026-01-06T00:00:00Z", Hi: "2026-01-08T00:00:00Z", Read: 3, Updated: 3}},
	}
}

// directNote is the run log's note of a merge that wrote its window
// straight from a source whose catalog proves the unique key.
const directNote = "stage skipped: the source enforces the unique key"

func scenarios() []scenario {
	// Story 1's orders, 105 paid, and 106 with a NULL watermark.
	nullWM := append(append([][]any{}, orders5[:4]...), []any{105, "2026-01-20", "22.00", "2026-01-20 13:00:00"}, []any{106, "2026-01-21", "9.00", nil})
	fixNullWM := update{key: 106, set: map[string]any{"updated_at": "2026-01-24 10:00:00"}}
	out := []scenario{
		{
			// Story 1: an updated_at watermark with a 2-day lookback catches
			// the late payment of order 105.
			name: "story1", spec: orders("lookback: 2d", amountCheck), source: "app_{id}.orders", seed: orders5,
			steps: steps(story1Runs, []act{
				payment105,
				run{until: "2026-01-27", want: &counts{Lo: "2026-01-24T00:00:00Z", Hi: "2026-01-27T00:00:00Z", Read: 1, Updated: 1}, wm: "2026-01-27T00:00:00Z"},
				reconcile{from: "2026-01-01", to: "2026-02-01", groups: 4},
			}),
		},
		{
			// Story 1 without the lookback: the plain window misses the
			// payment, reconciliation finds its day, and a rewind (incrc
			// state --rewind) makes the next run re-read it.
			name: "story1/no lookback, rewound", spec: orders("", amountCheck), source: "app_{id}.orders", seed: orders5,
			steps: steps(story1Runs, []act{
				payment105,
				run{until: "2026-01-27", want: &counts{Lo: "2026-01-26T00:00:00Z", Hi: "2026-01-27T00:00:00Z"}, rows: orders5Rows(),
					missed: "the payment, dated before the window"},
				reconcile{from: "2026-01-01", to: "2026-02-01", drifted: []string{"2026-01-20"}},
				rewind{to: "2026-01-28", refused: "is after the watermark"},
				rewind{to: "2025-12-31", refused: "before watermark.start"},
				rewind{to: "2026-01-25", wm: "2026-01-25T00:00:00Z"},
				run{until: "2026-01-28", want: &counts{Lo: "2026-01-25T00:00:00Z", Hi: "2026-01-28T00:00:00Z", Read: 1, Updated: 1}},
				reconcile{from: "2026-01-01", to: "2026-02-01"},
			}),
		},
		{
			// Several versions of a key in one window: the merge keeps the
			// newest; versions tied on updated_at are told apart by the
			// other columns the same way on every engine, NULLs last.
			name: "merge/versions and ties", spec: orders("lookback: 2d", amountCheck), source: "app_{id}.orders",
			seed: [][]any{
				{201, "2026-01-20", "10.00", "2026-01-20 09:00:00"},
				{201, "2026-01-20", "11.00", "2026-01-20 10:00:00"},
				{201, "2026-01-20", "12.00", "2026-01-20 11:00:00"},
				{202, "2026-01-20", "5.00", "2026-01-20 09:00:00"},
				{202, "2026-01-20", "6.00", "2026-01-21 09:00:00"},
			},
			steps: []act{
				run{until: "2026-01-21", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-21T00:00:00Z", Read: 4, Inserted: 2}},
				run{until: "2026-01-22", rows: []string{line(201, "2026-01-20", "12.00", "2026-01-20 11:00:00"), line(202, "2026-01-20", "6.00", "2026-01-21 09:00:00")}},
				insert{
					{1, "2026-01-21", nil, "2026-01-22 10:00:00"},
					{1, "2026-01-21", "2.00", "2026-01-22 10:00:00"},
					{2, "2026-01-21", "3.00", "2026-01-22 10:00:00"},
					{2, "2026-01-22", "3.00", "2026-01-22 10:00:00"},
					{3, nil, "4.00", "2026-01-22 10:00:00"},
					{3, "2026-01-22", "4.00", "2026-01-22 10:00:00"},
				},
				run{until: "2026-01-23", rows: []string{
					line(1, "2026-01-21", "2.00", "2026-01-22 10:00:00"),
					line(2, "2026-01-22", "3.00", "2026-01-22 10:00:00"),
					line(3, "2026-01-22", "4.00", "2026-01-22 10:00:00"),
					line(201, "2026-01-20", "12.00", "2026-01-20 11:00:00"),
					line(202, "2026-01-20", "6.00", "2026-01-21 09:00:00"),
				}},
			},
		},
		{
			// --until given as a date on a timestamp watermark is midnight
			// UTC: the day's last microsecond is in the window, midnight is
			// in the next.
			name: "merge/until a date", spec: orders("", amountCheck), source: "app_{id}.orders",
			seed: [][]any{
				{1, "2026-01-21", "1.00", "2026-01-21 00:00:00"},
				{2, "2026-01-21", "2.00", "2026-01-21 23:59:59.999999"},
				{3, "2026-01-22", "3.00", "2026-01-22 00:00:00"},
			},
			steps: []act{
				run{until: "2026-01-22", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-22T00:00:00Z", Read: 2, Inserted: 2},
					rows: []string{line(1, "2026-01-21", "1.00", "2026-01-21 00:00:00"), line(2, "2026-01-21", "2.00", "2026-01-21 23:59:59.999999")}},
				run{until: "2026-01-23", want: &counts{Lo: "2026-01-22T00:00:00Z", Hi: "2026-01-23T00:00:00Z", Read: 1, Inserted: 1}},
			},
		},
		{
			// Story 1 caught up in weekly batches from start: each batch a
			// run of its own, equal to a full refresh at its hi; the last
			// batch ends at the run's hi, not at a batch's end.
			name: "batch/a catch-up in weeks", spec: orders("lookback: 2d\n  batch: 1w", amountCheck), source: "app_{id}.orders", seed: orders5,
			steps: []act{
				batched{until: "2026-01-24", his: []string{"2026-01-08T00:00:00Z", "2026-01-15T00:00:00Z", "2026-01-22T00:00:00Z", "2026-01-24T00:00:00Z"}},
				payment105,
				// One batch: the window [watermark - lookback, hi) ends before the batch does.
				batched{until: "2026-01-27", his: []string{"2026-01-27T00:00:00Z"}},
				reconcile{from: "2026-01-01", to: "2026-02-01", groups: 4},
			},
		},
		{
			// A catch-up that fails in its third batch keeps the two before
			// it; the next run goes on from the second's hi, not from start.
			name: "batch/resumes after a failed batch", spec: orders("lookback: 2d\n  batch: 1w", amountCheck), source: "app_{id}.orders", seed: orders5,
			steps: []act{
				batched{until: "2026-01-24", his: []string{"2026-01-08T00:00:00Z", "2026-01-15T00:00:00Z", "2026-01-22T00:00:00Z"}, failAt: 3},
				batched{until: "2026-01-24", his: []string{"2026-01-22T00:00:00Z", "2026-01-24T00:00:00Z"}},
			},
		},
		{
			// A catch-up killed (SIGKILL, in a child process) before the
			// third batch's commit keeps the two batches before it; the next
			// run, once the dead run's lease expired, resumes at the
			// second's end and marks the killed run abandoned.
			name: "batch/killed between batches", spec: orders("lookback: 2d\n  batch: 1w", amountCheck), source: "app_{id}.orders", seed: orders5, serial: true,
			steps: []act{
				kill{until: "2026-01-24", at: "commit#3", wm: "2026-01-15T00:00:00Z", batches: 2,
					after: []string{"2026-01-22T00:00:00Z", "2026-01-24T00:00:00Z"}},
			},
		},
		{
			// An integer watermark's batch is a count of ids: [1, 5), then
			// up to the largest id; the batches continue from there.
			name: "batch/ids", spec: strings.ReplaceAll(appendSpec, "{start}", "1") + "  batch: 4\n", source: "app_{id}.events", seed: appendEvents[:7],
			steps: []act{
				batched{his: []string{"5", "7"}}, // the query leaves out event 7 ("test")
				insert(appendEvents[7:]),
				batched{his: []string{"9", "13"}},
			},
		},
		{
			name: "merge/exclude_columns keep first values", spec: firstSeenSpec, source: "app_{id}.customers", nulls: true,
			seed: customers3, steps: partialMergeSteps(""),
		},
		{
			// The same where the run merges straight from a source that
			// enforces the key (DuckDB, PostgreSQL): write_window.
			name: "merge/exclude_columns, source keyed", spec: firstSeenSpec, source: "app_{id}.customers", nulls: true, keyed: true,
			seed: customers3, steps: partialMergeSteps(directNote),
		},
		{
			// A key whose region part may be NULL: a NULL region matches a
			// NULL region, within one window (dedupe) and across windows
			// (merge), and is never confused with a region.
			name: "merge/nullable composite key", spec: stockSpec, source: "app_{id}.stock",
			seed: [][]any{
				{1, nil, 10, "2026-01-01 10:00:00"},
				{1, "eu", 20, "2026-01-01 11:00:00"},
				{2, nil, 30, "2026-01-01 12:00:00"},
				{2, nil, 31, "2026-01-01 13:00:00"},
			},
			steps: []act{
				run{until: "2026-01-02", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-02T00:00:00Z", Read: 4, Inserted: 3}, rows: []string{
					line(1, nil, 10, "2026-01-01 10:00:00"),
					line(1, "eu", 20, "2026-01-01 11:00:00"),
					line(2, nil, 31, "2026-01-01 13:00:00"),
				}},
				insert{
					{1, nil, 11, "2026-01-02 09:00:00"},
					{2, nil, 32, "2026-01-02 10:00:00"},
					{3, nil, 40, "2026-01-02 11:00:00"},
					{1, "us", 50, "2026-01-02 12:00:00"},
				},
				run{until: "2026-01-03", want: &counts{Lo: "2026-01-02T00:00:00Z", Hi: "2026-01-03T00:00:00Z", Read: 4, Inserted: 2, Updated: 2}, rows: []string{
					line(1, nil, 11, "2026-01-02 09:00:00"),
					line(1, "eu", 20, "2026-01-01 11:00:00"),
					line(1, "us", 50, "2026-01-02 12:00:00"),
					line(2, nil, 32, "2026-01-02 10:00:00"),
					line(3, nil, 40, "2026-01-02 11:00:00"),
				}},
				insert{
					{3, "eu", 41, "2026-01-03 09:00:00"},
					{3, nil, 42, "2026-01-03 10:00:00"},
					{1, "eu", 21, "2026-01-03 11:00:00"},
				},
				run{until: "2026-01-04", want: &counts{Lo: "2026-01-03T00:00:00Z", Hi: "2026-01-04T00:00:00Z", Read: 3, Inserted: 1, Updated: 2}, rows: []string{
					line(1, nil, 11, "2026-01-02 09:00:00"),
					line(1, "eu", 21, "2026-01-03 11:00:00"),
					line(1, "us", 50, "2026-01-02 12:00:00"),
					line(2, nil, 32, "2026-01-02 10:00:00"),
					line(3, nil, 42, "2026-01-03 10:00:00"),
					line(3, "eu", 41, "2026-01-03 09:00:00"),
				}},
			},
		},
		{
			// A date watermark's window ends at the start of the day --until
			// falls in; a 1-day lookback re-reads the last complete day, so a
			// change dated within it is caught and one dated before it is
			// missed, as the contract says; a full refresh picks it up.
			name: "merge/date watermark", spec: dailySpec, source: "app_{id}.daily",
			seed: [][]any{{1, 10, "2026-01-02"}, {2, 20, "2026-01-04"}, {3, 30, "2026-01-05"}},
			steps: []act{
				run{until: "2026-01-05T13:00:00Z", want: &counts{Lo: "2026-01-01", Hi: "2026-01-05", Read: 2, Inserted: 2}, wm: "2026-01-05"},
				update{key: 2, set: map[string]any{"total": 21}},
				update{key: 1, set: map[string]any{"total": 11, "changed_on": "2026-01-03"}},
				run{until: "2026-01-06", want: &counts{Lo: "2026-01-04", Hi: "2026-01-06", Read: 2, Inserted: 1, Updated: 1},
					rows:   []string{line(1, 10, "2026-01-02"), line(2, 21, "2026-01-04"), line(3, 30, "2026-01-05")},
					missed: "the change dated before the lookback"},
				run{until: "2026-01-06", full: true, rows: []string{line(1, 11, "2026-01-03"), line(2, 21, "2026-01-04"), line(3, 30, "2026-01-05")}},
			},
		},
		{
			// An append reads a source query (the window is applied outside
			// it) by id: each run reads the ids above the last it saw, up to
			// the largest present; a rerun with nothing new adds nothing, and
			// a crashed run's retry appends nothing twice.
			name: "append/integer watermark over a query", spec: strings.ReplaceAll(appendSpec, "{start}", "1"), source: "app_{id}.events",
			steps: []act{
				insert(appendEvents[:4]),
				run{want: &counts{Lo: "1", Hi: "5", Read: 3, Inserted: 3}, wm: "5", rows: appended(4)},
				// 7 is filtered out by the query: the window ends after 6.
				insert(appendEvents[4:7]),
				run{want: &counts{Lo: "5", Hi: "7", Read: 2, Inserted: 2}, wm: "7", rows: appended(7)},
				run{want: &counts{Lo: "7", Hi: "7"}, wm: "7", rows: appended(7)},
				insert(appendEvents[7:9]),
				crash{at: ir.StmtWrite},
				run{want: &counts{Lo: "7", Hi: "9", Read: 1, Inserted: 1}, wm: "9", rows: appended(9)},
				insert(appendEvents[9:]),
				run{want: &counts{Lo: "9", Hi: "13", Read: 3, Inserted: 3}, wm: "13", rows: appended(12)},
				run{want: &counts{Lo: "13", Hi: "13"}, wm: "13", rows: appended(12)},
				// --until is a time: it has no meaning for an id window.
				run{until: "2026-01-02", refused: "--until does not apply"},
			},
		},
		{
			// watermark.start bounds what the first run reads, and a first
			// run over an empty source saves start, never less: id 50 is
			// never read.
			name: "append/never below start", spec: strings.ReplaceAll(appendSpec, "{start}", "100"), source: "app_{id}.events",
			steps: []act{
				run{want: &counts{Lo: "100", Hi: "100"}, wm: "100"},
				insert{{50, "sale", "1.00"}, {150, "sale", "2.00"}},
				run{want: &counts{Lo: "100", Hi: "151", Read: 1, Inserted: 1}, rows: []string{line(150, "sale", "2.00")}},
			},
		},
		{
			// An append by id with a unique_key and a lookback (issue 22,
			// item 5): each run reads the last 3 ids again and appends only
			// the keys the target lacks, the others counted as ignored; a
			// late id below the watermark, within the lookback, is appended
			// by the next run, where the plain append would lose it.
			name: "append/by id, keyed, with a lookback", spec: strings.ReplaceAll(appendSpec, "{start}", "1") + "  lookback: 3\nunique_key: [id]\n", source: "app_{id}.events",
			steps: []act{
				insert(appendEvents[:4]),
				run{want: &counts{Lo: "1", Hi: "5", Read: 3, Inserted: 3}, wm: "5", rows: appended(4)},
				insert(appendEvents[5:7]),
				run{want: &counts{Lo: "2", Hi: "7", Read: 3, Inserted: 1}, wm: "7"},
				// id 5 commits late, below the watermark 7: the lookback reads it.
				insert(appendEvents[4:5]),
				run{want: &counts{Lo: "4", Hi: "7", Read: 3, Inserted: 1}, wm: "7", rows: appended(7)},
				run{want: &counts{Lo: "4", Hi: "7", Read: 3}, wm: "7", rows: appended(7)},
				crash{at: ir.StmtWrite},
				insert(appendEvents[7:]),
				run{want: &counts{Lo: "4", Hi: "13", Read: 7, Inserted: 4}, wm: "13", rows: appended(12)},
			},
		},
		{
			// A deleted source row, a change behind the watermark and a late
			// row are drift no incremental run sees; a full refresh makes the
			// target equal the source below hi and sets the watermark to hi;
			// runs carry on from there; a full refresh of an empty source
			// empties the target.
			name: "merge/full refresh repairs drift", spec: orders("", amountCheck), source: "app_{id}.orders", seed: orders5,
			steps: []act{
				run{until: "2026-01-24", rows: orders5Rows()},
				remove{key: 102},
				update{key: 103, set: map[string]any{"amount": "46.00"}},
				insert{{106, "2026-01-23", "12.00", "2026-01-23 08:00:00"}, {107, "2026-01-26", "7.00", "2026-01-26 10:00:00"}},
				run{until: "2026-01-25", want: &counts{Lo: "2026-01-24T00:00:00Z", Hi: "2026-01-25T00:00:00Z"}, missed: "the delete, the change and the late row"},
				// 107 is at hi: not yet.
				run{until: "2026-01-26", full: true, want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-26T00:00:00Z", Read: 5, Inserted: 5, Deleted: 5}, wm: "2026-01-26T00:00:00Z",
					rows: []string{line(orders5[0]...), line(103, "2026-01-22", "46.00", "2026-01-22 11:00:00"), line(orders5[3]...), line(orders5[4]...), line(106, "2026-01-23", "12.00", "2026-01-23 08:00:00")}},
				run{until: "2026-01-27", want: &counts{Lo: "2026-01-26T00:00:00Z", Hi: "2026-01-27T00:00:00Z", Read: 1, Inserted: 1},
					rows: []string{line(orders5[0]...), line(103, "2026-01-22", "46.00", "2026-01-22 11:00:00"), line(orders5[3]...), line(orders5[4]...),
						line(106, "2026-01-23", "12.00", "2026-01-23 08:00:00"), line(107, "2026-01-26", "7.00", "2026-01-26 10:00:00")}},
				remove{all: true},
				run{until: "2026-01-28", full: true, want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-28T00:00:00Z", Deleted: 6}, rows: []string{}, wm: "2026-01-28T00:00:00Z"},
			},
		},
		{
			// A full_refresh pipeline rebuilds its target on every run, never
			// appends: two runs leave one copy of each row, a deleted source
			// row leaves the target, a crashed rebuild leaves it as it was.
			name: "full_refresh/run twice", spec: productsSpec, source: "app_{id}.products",
			seed: [][]any{{1, "tea", "3.50"}, {2, "coffee", "4.00"}},
			steps: []act{
				run{kind: "full_refresh", want: &counts{Read: 2, Inserted: 2}, rows: []string{line(1, "tea", "3.50"), line(2, "coffee", "4.00")}},
				run{kind: "full_refresh", want: &counts{Read: 2, Inserted: 2, Deleted: 2}, rows: []string{line(1, "tea", "3.50"), line(2, "coffee", "4.00")}},
				remove{key: 1},
				insert{{3, "cocoa", "5.25"}},
				crash{at: ir.StmtAdvance}, // after the rewrite, before the commit
				run{kind: "full_refresh", want: &counts{Read: 2, Inserted: 2, Deleted: 2}, rows: []string{line(2, "coffee", "4.00"), line(3, "cocoa", "5.25")}},
			},
		},
		{
			// Rows that break a rule go to <target>_quarantine with the run id
			// and the first rule they break, and are counted; a NULL key
			// breaks one even without being named. A corrected version is
			// written by the next run.
			name: "quality/quarantine", spec: strings.ReplaceAll(paymentsSpec, "{quality}", paymentRules+"quarantine"), source: "app_{id}.payments",
			nulls: true, seed: payments6,
			steps: []act{
				run{until: "2026-01-02", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-02T00:00:00Z", Read: 6, Inserted: 2, Quarantined: 3},
					rows: []string{line(1, "10.00", "2026-01-01 09:00:00"), line(5, "0.00", "2026-01-01 18:00:00")},
					quarantine: []string{
						line("check: amount >= 0", "{run1}", 2, "-5.00", "2026-01-01 15:00:00"),
						line("not_null(payment_id)", "{run1}", nil, "-1.00", "2026-01-01 16:30:00"),
						line("not_null(amount)", "{run1}", 4, nil, "2026-01-01 17:00:00"),
					}},
				insert{{2, "5.00", "2026-01-02 10:00:00"}},
				run{until: "2026-01-03", want: &counts{Lo: "2026-01-02T00:00:00Z", Hi: "2026-01-03T00:00:00Z", Read: 1, Inserted: 1},
					rows: []string{line(1, "10.00", "2026-01-01 09:00:00"), line(2, "5.00", "2026-01-02 10:00:00"), line(5, "0.00", "2026-01-01 18:00:00")},
					quarantine: []string{
						line("check: amount >= 0", "{run1}", 2, "-5.00", "2026-01-01 15:00:00"),
						line("not_null(payment_id)", "{run1}", nil, "-1.00", "2026-01-01 16:30:00"),
						line("not_null(amount)", "{run1}", 4, nil, "2026-01-01 17:00:00"),
					}},
			},
		},
		{
			// Reconciled by a timestamp: by day unless reconcile.granularity
			// says otherwise, one group per day and not per instant; a day
			// the runs have not read to its end is pending, not drift.
			name: "reconcile/by a timestamp, per day", spec: strings.ReplaceAll(paymentsSpec, "{quality}", "reconcile:\n  by: updated_at\n  measures: [count, sum(amount)]"),
			source: "app_{id}.payments",
			seed: [][]any{
				{1, "10.00", "2026-01-01 09:00:00"}, {2, "5.00", "2026-01-01 15:00:00"}, {3, "7.50", "2026-01-01 23:59:59"},
				{4, "1.00", "2026-01-02 00:00:00"}, {5, "2.00", "2026-01-02 11:30:00"}, {6, "3.00", "2026-01-03 08:00:00"},
			},
			steps: []act{
				run{until: "2026-01-02T12:00:00Z", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-02T12:00:00Z", Read: 5, Inserted: 5}},
				reconcile{from: "2026-01-01", to: "2026-01-04", partitions: []string{"2026-01-01", "2026-01-02", "2026-01-03"}},
				run{until: "2026-01-04", want: &counts{Lo: "2026-01-02T12:00:00Z", Hi: "2026-01-04T00:00:00Z", Read: 1, Inserted: 1}},
				reconcile{from: "2026-01-01", to: "2026-01-04", partitions: []string{"2026-01-01", "2026-01-02", "2026-01-03"}},
				// A change the watermark cannot see: the day it falls in drifts.
				update{key: 5, set: map[string]any{"amount": "20.00"}},
				reconcile{from: "2026-01-01", to: "2026-01-04", drifted: []string{"2026-01-02"}},
			},
		},
		{
			// on_invalid: fail: the run fails, writes nothing, keeps the
			// watermark and is logged as failed with the rows it read.
			name: "quality/fail", spec: strings.ReplaceAll(paymentsSpec, "{quality}", paymentRules+"fail"), source: "app_{id}.payments",
			nulls: true, seed: payments6,
			steps: []act{
				run{until: "2026-01-01T12:00:00Z", rows: []string{line(1, "10.00", "2026-01-01 09:00:00")}},
				run{until: "2026-01-02", fails: "3 staged row(s) break quality rules",
					want: &counts{Lo: "2026-01-01T12:00:00Z", Hi: "2026-01-02T00:00:00Z", Read: 5}},
			},
		},
		{
			// No quality section: a NULL in a key column not declared
			// nullable is still a broken rule, and fails the run.
			name: "quality/none, NULL key", spec: strings.ReplaceAll(paymentsSpec, "{quality}", ""), source: "app_{id}.payments",
			nulls: true, seed: payments6,
			steps: []act{
				run{until: "2026-01-02", fails: "1 staged row(s) break quality rules and on_invalid is fail (a NULL unique key counts)"},
			},
		},
		{
			// A check that evaluates to NULL passes, as a CHECK constraint
			// does: order 105, not paid yet, is written by runs and full
			// refreshes alike, so reconciliation must find no drift.
			name: "quality/NULL passes a check", spec: orders("", amountCheck), source: "app_{id}.orders", seed: orders5,
			steps: []act{
				run{until: "2026-01-24", rows: orders5Rows()},
				reconcile{from: "2026-01-01", to: "2026-02-01", groups: 4},
			},
		},
		{
			// A key's newest version breaks a check: a full refresh writes no
			// row for the key, so the run retracts its older row (deleted).
			name: "quality/newest version invalid", spec: strings.ReplaceAll(paymentsSpec, "{quality}", amountCheck), source: "app_{id}.payments",
			seed: [][]any{{1, "10.00", "2026-01-01 09:00:00"}, {2, "20.00", "2026-01-01 10:00:00"}},
			steps: []act{
				run{until: "2026-01-02"},
				insert{{1, "-10.00", "2026-01-02 09:00:00"}},
				run{until: "2026-01-03", want: &counts{Lo: "2026-01-02T00:00:00Z", Hi: "2026-01-03T00:00:00Z", Read: 1, Deleted: 1, Quarantined: 1},
					rows: []string{line(2, "20.00", "2026-01-01 10:00:00")}},
			},
		},
		{
			// A source row whose watermark is NULL is in no window: every run
			// quarantines it with the reason (and counts it read and
			// quarantined), reconciliation shows its day drifted, until the
			// source is fixed.
			name: "null watermark/quarantine", spec: orders("", amountCheck), source: "app_{id}.orders", nulls: true, seed: nullWM,
			steps: []act{
				run{until: "2026-01-22", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-22T00:00:00Z", Read: 4, Inserted: 3, Quarantined: 1},
					quarantine: []string{line("not_null(updated_at): the watermark, so no window reads the row", "{run1}", 106, "2026-01-21", "9.00", nil)}},
				run{until: "2026-01-24", want: &counts{Lo: "2026-01-22T00:00:00Z", Hi: "2026-01-24T00:00:00Z", Read: 3, Inserted: 2, Quarantined: 1},
					quarantine: []string{
						line("not_null(updated_at): the watermark, so no window reads the row", "{run1}", 106, "2026-01-21", "9.00", nil),
						line("not_null(updated_at): the watermark, so no window reads the row", "{run2}", 106, "2026-01-21", "9.00", nil),
					}},
				reconcile{from: "2026-01-01", to: "2026-02-01", drifted: []string{"2026-01-21"}},
				fixNullWM,
				run{until: "2026-01-25", want: &counts{Lo: "2026-01-24T00:00:00Z", Hi: "2026-01-25T00:00:00Z", Read: 1, Inserted: 1}},
				reconcile{from: "2026-01-01", to: "2026-02-01"},
			},
		},
		{
			// With on_invalid: fail the NULL watermark fails the run, naming
			// the column, until the source is fixed.
			name: "null watermark/fail", spec: orders("", amountCheck+"\n  on_invalid: fail"), source: "app_{id}.orders", nulls: true, seed: nullWM,
			steps: []act{
				run{until: "2026-01-22", fails: "1 source row(s) have a NULL updated_at"},
				fixNullWM,
				run{until: "2026-01-25", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-25T00:00:00Z", Read: 6, Inserted: 6}},
			},
		},
		{
			// A source whose primary key is the unique key: where the run
			// reads the catalog, it merges its window straight from the
			// source (no stage), and counts, quarantines and writes exactly
			// what the staged run does elsewhere: the NULL watermark is
			// quarantined on every run, a late row within the lookback and
			// an update are read, and so right after a full refresh.
			name: "merge/source keyed by the unique key", spec: orders("lookback: 2d", "quality:\n  on_invalid: quarantine"), source: "app_{id}.orders",
			nulls: true, keyed: true, seed: nullWM,
			steps: []act{
				run{until: "2026-01-22", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-22T00:00:00Z", Read: 4, Inserted: 3, Quarantined: 1},
					catalogNote: directNote,
					quarantine:  []string{line("not_null(updated_at): the watermark, so no window reads the row", "{run1}", 106, "2026-01-21", "9.00", nil)}},
				insert{{107, "2026-01-21", "7.00", "2026-01-21 18:00:00"}},
				update{key: 101, set: map[string]any{"amount": "51.00", "updated_at": "2026-01-23 08:00:00"}},
				run{until: "2026-01-24", want: &counts{Lo: "2026-01-20T00:00:00Z", Hi: "2026-01-24T00:00:00Z", Read: 7, Inserted: 3, Updated: 3, Quarantined: 1},
					catalogNote: directNote},
				run{until: "2026-01-24", full: true},
				fixNullWM,
				run{until: "2026-01-25", want: &counts{Lo: "2026-01-22T00:00:00Z", Hi: "2026-01-25T00:00:00Z", Read: 4, Inserted: 1, Updated: 3},
					catalogNote: directNote},
				run{until: "2026-01-25", want: &counts{Lo: "2026-01-23T00:00:00Z", Hi: "2026-01-25T00:00:00Z", Read: 3, Updated: 3}, catalogNote: directNote},
			},
		},
		{
			// A target dropped (or renamed) while the state keeps its
			// watermark: a run would recreate it empty and go on from the
			// watermark, so it is refused, naming the choices; a full refresh
			// rebuilds it.
			name: "merge/target dropped", spec: orders("lookback: 2d", amountCheck), source: "app_{id}.orders", seed: orders5,
			steps: []act{
				run{until: "2026-01-24", rows: orders5Rows()},
				dropTarget{},
				run{until: "2026-01-25", refused: "was dropped or renamed since the last run, and a run from the watermark would leave out every row before it. Rebuild it from the source with incrc run --full-refresh, or move the watermark back with incrc state --rewind"},
				run{until: "2026-01-25", full: true, rows: orders5Rows()},
				run{until: "2026-01-26"},
			},
		},
		{
			// A target emptied in place (TRUNCATE, DELETE) while the state
			// keeps its watermark: the table is there, so nothing is missing
			// to the catalog, but a run would go on from the watermark and
			// leave out every row before it. The run fails before it writes,
			// naming the choices; a full refresh rebuilds it and the runs go
			// on. A run that leaves the target empty itself (a full refresh
			// of a source emptied) makes the next run no refusal.
			name: "merge/target emptied", spec: orders("lookback: 2d", amountCheck), source: "app_{id}.orders", seed: orders5,
			steps: []act{
				run{until: "2026-01-24", rows: orders5Rows()},
				emptyTarget{},
				run{until: "2026-01-25", fails: "holds no rows, but the run that last moved the watermark left rows in it (incrc_state.target_filled = 1): it was emptied (TRUNCATE, DELETE) or dropped and created again since, and a run from the watermark would leave out every row before it. Rebuild it from the source with incrc run --full-refresh, or move the watermark back with incrc state --rewind"},
				run{until: "2026-01-25", full: true, rows: orders5Rows()},
				run{until: "2026-01-26"},
				remove{all: true},
				run{until: "2026-01-27", full: true, rows: []string{}},
				run{until: "2026-01-28", rows: []string{}},
			},
		},
		{
			// A target dropped and created again by hand, empty: the same
			// refusal; a rewind to watermark.start is the other way on, and
			// the next run re-reads everything.
			name: "merge/target created again", spec: orders("lookback: 2d", amountCheck), source: "app_{id}.orders", seed: orders5,
			steps: []act{
				run{until: "2026-01-24", rows: orders5Rows()},
				emptyTarget{recreate: true},
				run{until: "2026-01-25", fails: "was emptied (TRUNCATE, DELETE) or dropped and created again since"},
				rewind{to: "2026-01-01", wm: "2026-01-01T00:00:00Z"},
				run{until: "2026-01-25", rows: orders5Rows()},
			},
		},
		{
			// An append by an integer id, emptied by hand: the same.
			name: "append/target emptied", spec: strings.ReplaceAll(appendSpec, "{start}", "1"), source: "app_{id}.events",
			seed: [][]any{{1, "sale", "10.00"}, {2, "sale", "20.50"}},
			steps: []act{
				run{want: &counts{Lo: "1", Hi: "3", Read: 2, Inserted: 2}},
				emptyTarget{},
				insert{{3, "sale", "1.00"}},
				run{fails: "was emptied (TRUNCATE, DELETE) or dropped and created again since"},
				run{full: true},
			},
		},
		{
			// A version older than the target's never replaces it, staged or
			// merged straight from a keyed source: the run ignores it (read 2:
			// 103 rewritten with its own version, 104's older one ignored).
			// Written over the newer row in place, the older version is the
			// only one the source holds: a full refresh takes it, the runs
			// keep the newer one.
			name: "merge/an older version is ignored", spec: orders("lookback: 2d", "quality:\n  on_invalid: quarantine"), source: "app_{id}.orders",
			keyed: true, seed: orders5,
			steps: []act{
				run{until: "2026-01-24", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-24T00:00:00Z", Read: 5, Inserted: 5}, catalogNote: directNote},
				update{key: 104, set: map[string]any{"amount": "99.00", "updated_at": "2026-01-23 08:00:00"}},
				run{until: "2026-01-25", want: &counts{Lo: "2026-01-22T00:00:00Z", Hi: "2026-01-25T00:00:00Z", Read: 2, Updated: 1}, catalogNote: directNote,
					missed: "the older version written over the newer one in place"},
			},
		},
		{
			// The same without a quarantine: the NULL watermark fails the
			// run before it writes, until the source is fixed.
			name: "merge/source keyed, no quality", spec: orders("lookback: 2d", ""), source: "app_{id}.orders", nulls: true, keyed: true, seed: nullWM,
			steps: []act{
				run{until: "2026-01-22", fails: "1 source row(s) have a NULL updated_at"},
				fixNullWM,
				run{until: "2026-01-25", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-25T00:00:00Z", Read: 6, Inserted: 6}, catalogNote: directNote},
				update{key: 102, set: map[string]any{"amount": "70.00", "updated_at": "2026-01-24 20:00:00"}},
				run{until: "2026-01-26", want: &counts{Lo: "2026-01-23T00:00:00Z", Hi: "2026-01-26T00:00:00Z", Read: 3, Updated: 3}, catalogNote: directNote},
			},
		},
		{
			// Without a quality section there is no quarantine: the same.
			name: "null watermark/no quality", spec: orders("", ""), source: "app_{id}.orders", nulls: true, seed: nullWM,
			steps: []act{
				run{until: "2026-01-22", fails: "1 source row(s) have a NULL updated_at"},
			},
		},
		{
			// Story 2: a bug corrupts the partitions of the 3rd to the 13th;
			// reconciliation finds exactly those, --only-drifted rebuilds
			// exactly those (two at a time) and leaves the others physically
			// untouched, and the watermark does not move.
			name: "story2", spec: revenueSpec, source: "app_{id}.orders", seed: revenueRows(),
			steps: []act{
				run{until: "2026-01-05"}, run{until: "2026-01-10"}, loaded,
				corrupt{col: "amount", from: "2026-01-03", to: "2026-01-14"},
				reconcile{from: "2026-01-01", to: "2026-01-15", drifted: days(3, 13)},
				rebuild{from: "2026-01-01", to: "2026-01-15", onlyDrifted: true, parallel: 2,
					rebuilt: days(3, 13), ok: []string{"2026-01-01", "2026-01-02", "2026-01-14"}, rows: 33,
					untouched: []string{"2026-01-01", "2026-01-02", "2026-01-14"}},
				reconcile{from: "2026-01-01", to: "2026-01-15"},
			},
		},
		{
			// A backfill interrupted at a partition resumes after the ones it
			// finished, without redoing them; --restart redoes all.
			name: "backfill/resume and restart", spec: revenueSpec, source: "app_{id}.orders", seed: revenueRows(),
			steps: []act{
				loaded,
				corrupt{col: "amount", from: "2026-01-03", to: "2026-01-08"},
				rebuild{from: "2026-01-03", to: "2026-01-08", failAt: [2]string{"2026-01-05", ir.StmtReplacePartition}, fails: "injected crash",
					rebuilt: days(3, 4), failed: []string{"2026-01-05"}, pending: days(6, 7)},
				rebuild{from: "2026-01-03", to: "2026-01-08", done: days(3, 4), rebuilt: days(5, 7)},
				rebuild{from: "2026-01-03", to: "2026-01-08", restart: true, rebuilt: days(3, 7)},
			},
		},
		{
			// A partition whose rewrite does not match the source (a row
			// arrives between the rewrite and its check) stops the backfill
			// there; run again, it redoes that partition.
			name: "backfill/mismatch", spec: revenueSpec, source: "app_{id}.orders", seed: revenueRows(),
			steps: []act{
				loaded,
				rebuild{from: "2026-01-03", to: "2026-01-07", addAt: [2]string{"2026-01-05", ir.StmtCheckPartitionSrc},
					add: []any{999, "2026-01-05", "1.00", "2026-01-05 12:00:00"}, fails: "does not match the source", mismatch: "2026-01-05",
					rebuilt: days(3, 4), failed: []string{"2026-01-05"}, pending: []string{"2026-01-06"}},
				rebuild{from: "2026-01-03", to: "2026-01-07", done: days(3, 4), rebuilt: days(5, 6)},
			},
		},
		{
			// A backfill is refused while a run holds the lease; partitions
			// older than finalize_after need --restate.
			name: "backfill/lease and finalized", spec: revenueSpec, source: "app_{id}.orders", seed: revenueRows(),
			steps: []act{
				loaded,
				deadLease{owner: "a-run", ttl: time.Hour},
				rebuild{from: "2026-01-03", to: "2026-01-05", locked: "a-run"},
				release{},
				// The watermark is 2026-01-15: finalize_after 35d closes the partitions before 2025-12-11.
				rebuild{from: "2025-12-09", to: "2025-12-12", refused: "2025-12-09 .. 2025-12-10; rebuilding them needs --restate"},
				rebuild{from: "2025-12-09", to: "2025-12-12", restate: true, rebuilt: []string{"2025-12-09", "2025-12-10", "2025-12-11"}},
			},
		},
		{
			// Story 5: a late event lands in the partition it belongs to, by a
			// rewrite of that partition; nothing is doubled.
			name: "story5", spec: strings.ReplaceAll(eventsSpec, "{finalize}", ""), source: "app_{id}.events",
			seed: [][]any{
				{1, "2026-01-10", "view", "2026-01-10 10:00:00"},
				{2, "2026-01-10", "click", "2026-01-10 11:00:00"},
				{3, "2026-01-11", "view", "2026-01-11 09:00:00"},
			},
			steps: []act{
				run{until: "2026-01-12"},
				// Event 4 happened on the 10th and arrives on the 12th.
				insert{{4, "2026-01-10", "buy", "2026-01-12 08:00:00"}, {5, "2026-01-12", "view", "2026-01-12 09:00:00"}},
				preview{at: "2026-01-13", lo: "2026-01-12T00:00:00Z", rows: 2, partitions: []string{"2026-01-10", "2026-01-12"}},
				crash{until: "2026-01-13", at: ir.StmtReplacePartition},
				// Partition 01-10 (2 rows) rewritten with 3, 01-12 added: the
				// run reads the 4 rows of both partitions, 2 of them in the window.
				run{until: "2026-01-13", want: &counts{Lo: "2026-01-12T00:00:00Z", Hi: "2026-01-13T00:00:00Z", Read: 4, Inserted: 4, Deleted: 2}, rows: []string{
					line(1, "2026-01-10", "view", "2026-01-10 10:00:00"),
					line(2, "2026-01-10", "click", "2026-01-10 11:00:00"),
					line(3, "2026-01-11", "view", "2026-01-11 09:00:00"),
					line(4, "2026-01-10", "buy", "2026-01-12 08:00:00"),
					line(5, "2026-01-12", "view", "2026-01-12 09:00:00"),
				}},
			},
		},
		{
			// A late event for a partition older than finalize_after is not
			// written by a run, and is counted skipped.
			name: "overwrite/finalized partition", spec: strings.ReplaceAll(eventsSpec, "{finalize}", "finalize_after: 2d"), source: "app_{id}.events",
			seed: [][]any{
				{0, "2026-01-01", "view", "2026-01-01 10:00:00"}, // not final: nothing is before the first run
				{1, "2026-01-03", "view", "2026-01-03 10:00:00"},
				{2, "2026-01-04", "view", "2026-01-04 10:00:00"},
			},
			steps: []act{
				run{until: "2026-01-05", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-05T00:00:00Z", Read: 3, Inserted: 3}},
				// With the watermark at 2026-01-05, partitions before
				// 2026-01-03 are final: the late event 3 of 2026-01-02 is
				// counted as skipped, never written by a run (a backfill
				// with --restate writes it); the one of 2026-01-03 lands, its partition rewritten whole (2 rows, 1 replaced), with 2026-01-05.
				insert{{3, "2026-01-02", "late", "2026-01-05 10:00:00"}, {4, "2026-01-03", "late", "2026-01-05 11:00:00"}, {5, "2026-01-05", "view", "2026-01-05 12:00:00"}},
				// Read: the two partitions rewritten, whole (3 rows), and the
				// skipped row.
				run{until: "2026-01-06", want: &counts{Lo: "2026-01-05T00:00:00Z", Hi: "2026-01-06T00:00:00Z", Read: 4, Inserted: 3, Deleted: 1, Skipped: 1},
					missed: "the late event of 2026-01-02, in a finalized partition (skipped, counted)"},
			},
		},
		{
			// A partition rewritten with two versions of a key keeps the
			// newest; the older one is counted ignored (accounted checks
			// read = inserted + ignored).
			name: "overwrite/an older version in its partition is ignored", spec: strings.ReplaceAll(clicksSpec, "{granularity}", "day"), source: "app_{id}.clicks",
			seed: [][]any{
				{1, "2026-01-10 09:15:00", "2026-01-10 09:20:00"},
				{2, "2026-01-10 09:45:00", "2026-01-10 09:50:00"},
			},
			steps: []act{
				run{until: "2026-01-10T12:00:00Z", want: &counts{Read: 2, Inserted: 2}},
				insert{{2, "2026-01-10 09:46:00", "2026-01-10 13:00:00"}, {3, "2026-01-11 08:00:00", "2026-01-10 13:30:00"}},
				run{until: "2026-01-10T15:00:00Z", want: &counts{Lo: "2026-01-10T12:00:00Z", Hi: "2026-01-10T15:00:00Z", Read: 4, Inserted: 3, Deleted: 2},
					rows: []string{line(1, "2026-01-10 09:15:00", "2026-01-10 09:20:00"), line(2, "2026-01-10 09:46:00", "2026-01-10 13:00:00"), line(3, "2026-01-11 08:00:00", "2026-01-10 13:30:00")}},
			},
		},
		{
			// A second run while one holds the lease is refused at once,
			// naming the holder, also after the holder outlived its TTL on
			// engines that renew the lease by a heartbeat; a dead run's
			// lease is taken over once it expired; --until below the
			// watermark is refused.
			name: "lease", spec: orders("lookback: 2d", amountCheck), source: "app_{id}.orders", seed: orders5,
			steps: []act{
				concurrent{until: "2026-01-24", at: ir.StmtWrite, outlive: true},
				deadLease{owner: "dead", ttl: time.Minute},
				run{until: "2026-01-25", locked: "dead"},
				run{until: "2026-01-25", clock: 2 * time.Minute},
				run{until: "2026-01-23", refused: "before the saved watermark"},
			},
		},
		{
			// A run that fails at the write or before the watermark advance
			// commits nothing; the rerun converges.
			name: "crash and converge", spec: orders("lookback: 2d", amountCheck), source: "app_{id}.orders", seed: orders5,
			steps: []act{
				crash{until: "2026-01-22", at: ir.StmtWrite},
				run{until: "2026-01-22"},
				update{key: 105, set: map[string]any{"amount": "22.00", "updated_at": "2026-01-22 12:00:00"}},
				crash{until: "2026-01-24", at: ir.StmtAdvance},
				run{until: "2026-01-24", want: &counts{Lo: "2026-01-20T00:00:00Z", Hi: "2026-01-24T00:00:00Z", Read: 5, Inserted: 2, Updated: 3}, wantTx: true},
				run{until: "2026-01-24"},
			},
		},
		{
			// A run that fails at its commit commits nothing either.
			name: "crash at commit", spec: orders("lookback: 2d", amountCheck), source: "app_{id}.orders", seed: orders5,
			steps: []act{
				run{until: "2026-01-22"},
				insert{{106, "2026-01-24", "1.00", "2026-01-24 09:00:00"}},
				crash{until: "2026-01-25", at: "commit"},
				run{until: "2026-01-25"},
			},
		},
		{
			// A runner killed (SIGKILL) after its merge ran and before its
			// transaction committed: the next run converges, and the dead run
			// is marked abandoned.
			name: "killed run", spec: orders("lookback: 2d", amountCheck), source: "app_{id}.orders", seed: orders5, serial: true,
			steps: []act{
				run{until: "2026-01-22"},
				update{key: 105, set: map[string]any{"amount": "22.00", "updated_at": "2026-01-22 12:00:00"}},
				kill{until: "2026-01-24", at: ir.StmtAdvance},
			},
		},
		{
			// A runner killed (SIGKILL) while its write runs. Where each
			// statement commits alone the write may land after the runner
			// died, or not; either way the watermark has not moved, and the
			// next run converges.
			name: "killed during the write", spec: orders("lookback: 2d", amountCheck), source: "app_{id}.orders", seed: orders5, serial: true,
			steps: []act{
				run{until: "2026-01-22"},
				update{key: 105, set: map[string]any{"amount": "22.00", "updated_at": "2026-01-22 12:00:00"}},
				kill{until: "2026-01-24", at: ir.StmtWrite, during: true},
			},
		},
	}
	out = append(out, historyScenarios()...)
	// A late click rewrites its own hour (or month), nothing else;
	// reconciliation and backfills name partitions the same way on every
	// engine.
	for _, g := range []struct {
		granularity string
		touched     []string // partitions the late run rewrites
		from, to    string   // a range to reconcile and backfill
		reconciled  []string
	}{
		{"hour", []string{"2026-01-10T09", "2026-01-10T14"}, "2026-01-10T08:00:00Z", "2026-01-10T16:00:00Z", []string{"2026-01-10T09", "2026-01-10T11", "2026-01-10T14"}},
		{"month", []string{"2026-01"}, "2026-01-01", "2026-03-01", []string{"2026-01", "2026-02"}},
	} {
		var all []string
		gr := grain{unit: g.granularity, loc: time.UTC}
		for _, p := range partitionsIn(*mustTime(g.from), *mustTime(g.to), gr) {
			all = append(all, p.Key(gr))
		}
		out = append(out, scenario{
			name: "overwrite/" + g.granularity + " partitions", spec: strings.ReplaceAll(clicksSpec, "{granularity}", g.granularity), source: "app_{id}.clicks",
			seed: [][]any{
				{1, "2026-01-10 09:15:00", "2026-01-10 09:20:00"},
				{2, "2026-01-10 09:45:00", "2026-01-10 09:50:00"},
				{3, "2026-01-10 11:05:00", "2026-01-10 11:10:00"},
				{4, "2026-02-03 10:00:00", "2026-01-10 10:30:00"}, // scheduled ahead
			},
			steps: []act{
				run{until: "2026-01-10T12:00:00Z"},
				// Click 5 happened at 09:30 and arrives at 14:00; click 6 is new.
				insert{{5, "2026-01-10 09:30:00", "2026-01-10 14:00:00"}, {6, "2026-01-10 14:10:00", "2026-01-10 14:15:00"}},
				preview{at: "2026-01-10T15:00:00Z", lo: "2026-01-10T12:00:00Z", rows: 2, partitions: g.touched},
				run{until: "2026-01-10T15:00:00Z"},
				reconcile{from: g.from, to: g.to, partitions: g.reconciled},
				rebuild{from: g.from, to: g.to, rebuilt: all},
			},
		})
	}
	out = append(out, tiebreakScenarios()...)
	return append(out, zoneScenario())
}

// readingsSpec partitions meter readings by days of Europe/Berlin.
const readingsSpec = `
pipeline: readings_{target}_{id}
source:
  table: app_{id}.readings
target:
  table: dw_{id}.readings_{target}
columns:
  reading_id: bigint
  read_at: timestamp
  kwh: decimal(12,3)
  loaded_at: timestamp
strategy: overwrite_partitions
unique_key: [reading_id]
watermark:
  column: loaded_at
  start: 2026-03-01
partition:
  column: read_at
  granularity: day
  timezone: Europe/Berlin
reconcile:
  by: read_at
  measures: [count, sum(kwh)]
`

// zoneScenario crosses both 2026 transitions of Europe/Berlin: its day
// 2026-03-29 is [03-28 23:00, 03-29 22:00) UTC, 23 hours, and 2026-10-25 is
// [10-24 22:00, 10-25 23:00) UTC, 25 hours. Rows sit on each side of every
// local midnight (read_at is UTC), and on both 02:30s of October.
func zoneScenario() scenario {
	loaded := "2026-11-01 00:00:00"
	return scenario{
		name: "overwrite/days of Europe/Berlin across both clock changes", spec: readingsSpec, source: "app_{id}.readings", keyed: true,
		seed: [][]any{
			{1, "2026-03-28 22:59:59", "1.000", loaded},   // 03-28 23:59:59 CET
			{2, "2026-03-28 23:00:00", "2.000", loaded},   // 03-29 00:00 CET
			{3, "2026-03-29 01:30:00", "3.000", loaded},   // 03:30 CEST
			{4, "2026-03-29 21:59:59", "4.000", loaded},   // 23:59:59 CEST
			{5, "2026-03-29 22:00:00", "5.000", loaded},   // 03-30 00:00 CEST
			{6, "2026-10-24 21:59:59", "6.000", loaded},   // 10-24 23:59:59 CEST
			{7, "2026-10-24 22:00:00", "7.000", loaded},   // 10-25 00:00 CEST
			{8, "2026-10-25 00:30:00", "8.000", loaded},   // 02:30 CEST
			{9, "2026-10-25 01:30:00", "9.000", loaded},   // 02:30 CET
			{10, "2026-10-25 22:59:59", "10.000", loaded}, // 23:59:59 CET, the 25th hour
			{11, "2026-10-25 23:00:00", "11.000", loaded}, // 10-26 00:00 CET
		},
		steps: []act{
			preview{at: "2026-11-02T00:00:00Z", lo: "2026-03-01T00:00:00Z", rows: 11,
				partitions: []string{"2026-03-28", "2026-03-29", "2026-03-30", "2026-10-24", "2026-10-25", "2026-10-26"}},
			run{until: "2026-11-02", want: &counts{Lo: "2026-03-01T00:00:00Z", Hi: "2026-11-02T00:00:00Z", Read: 11, Inserted: 11}},
			// Reading 12 arrives late for Berlin's 03-29 (23:30 CEST): only
			// that day is rewritten, never the UTC day it also touches.
			insert{{12, "2026-03-29 21:30:00", "12.000", "2026-11-02 10:00:00"}},
			preview{at: "2026-11-03T00:00:00Z", lo: "2026-11-02T00:00:00Z", rows: 1, partitions: []string{"2026-03-29"}},
			run{until: "2026-11-03", want: &counts{Lo: "2026-11-02T00:00:00Z", Hi: "2026-11-03T00:00:00Z", Read: 4, Inserted: 4, Deleted: 3}},
			reconcile{from: "2026-03-28", to: "2026-03-31", groups: 3, partitions: []string{"2026-03-28", "2026-03-29", "2026-03-30"}},
			reconcile{from: "2026-10-24", to: "2026-10-27", groups: 3, partitions: []string{"2026-10-24", "2026-10-25", "2026-10-26"}},
			rebuild{from: "2026-10-24", to: "2026-10-27", rebuilt: []string{"2026-10-24", "2026-10-25", "2026-10-26"}, rows: 6},
			// A reading of the 25th hour appears in the source during the
			// rebuild of 10-25: the check after it compares the whole day,
			// every UTC hour of it, and stops there.
			rebuild{from: "2026-10-25", to: "2026-10-27", addAt: [2]string{"2026-10-25", ir.StmtCheckPartitionSrc},
				add: []any{13, "2026-10-25 22:30:00", "13.000", "2026-11-02 11:00:00"}, fails: "does not match the source", mismatch: "2026-10-25",
				failed: []string{"2026-10-25"}, pending: []string{"2026-10-26"}},
			rebuild{from: "2026-10-25", to: "2026-10-27", rebuilt: []string{"2026-10-25", "2026-10-26"}, rows: 6},
			rebuild{from: "2026-03-29", to: "2026-03-30", rebuilt: []string{"2026-03-29"}, rows: 4, untouched: []string{"2026-03-28", "2026-03-30"}},
		},
	}
}

// tiedSpec is a merge whose watermark has a tiebreak: rows are ordered
// by (updated_at, ticket_id), and a ticket never updated has no
// updated_at; {lookback} varies by scenario.
const tiedSpec = `
pipeline: tickets_{target}_{id}
source:
  table: app_{id}.tickets
target:
  table: dw_{id}.tickets_{target}
columns:
  ticket_id: bigint
  status: varchar(16)
  updated_at: timestamp
strategy: merge
unique_key: [ticket_id]
watermark:
  column: updated_at
  tiebreak: ticket_id
  start: 2026-01-01
  {lookback}
`

// tiedTickets are ticket 1 without a time, three tickets sharing one time at
// the first run's hi, and one before it.
var tiedTickets = [][]any{
	{1, "new", nil},
	{2, "open", "2026-01-10 12:00:00"},
	{3, "open", "2026-01-10 12:00:00"},
	{4, "open", "2026-01-10 12:00:00"},
	{5, "open", "2026-01-09 08:00:00"},
}

func tiebreakScenarios() []scenario {
	spec := func(lookback string) string { return strings.ReplaceAll(tiedSpec, "{lookback}", lookback) }
	return []scenario{
		{
			// Ties at the edge split across two runs: the first run's hi is
			// the tickets' shared time, and reads the three that exist;
			// ticket 6, of the same time, is written later (a larger id) and
			// read by the next run alone, as is ticket 7, without a time.
			// Nothing is read twice (the counts) and nothing is lost (the
			// full refresh).
			name: "tiebreak/ties at the edge, rows without a time", spec: spec(""), source: "app_{id}.tickets", keyed: true, seed: tiedTickets,
			steps: []act{
				run{until: "2026-01-10T12:00:00Z", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-10T12:00:00Z/6", Read: 5, Inserted: 5}, wm: "2026-01-10T12:00:00Z/6"},
				insert{{6, "open", "2026-01-10 12:00:00"}, {7, "new", nil}},
				run{until: "2026-01-10T12:00:00Z", want: &counts{Lo: "2026-01-10T12:00:00Z/6", Hi: "2026-01-10T12:00:00Z/8", Read: 2, Inserted: 2}, wm: "2026-01-10T12:00:00Z/8"},
				run{until: "2026-01-10T12:00:00Z", want: &counts{Lo: "2026-01-10T12:00:00Z/8", Hi: "2026-01-10T12:00:00Z/8"}},
				update{key: 1, set: map[string]any{"status": "done", "updated_at": "2026-01-11 09:00:00"}},
				update{key: 3, set: map[string]any{"status": "done", "updated_at": "2026-01-11 09:00:00"}},
				run{until: "2026-01-12", want: &counts{Lo: "2026-01-10T12:00:00Z/8", Hi: "2026-01-12T00:00:00Z/8", Read: 2, Updated: 2},
					rows: []string{
						line(1, "done", "2026-01-11 09:00:00"), line(2, "open", "2026-01-10 12:00:00"), line(3, "done", "2026-01-11 09:00:00"),
						line(4, "open", "2026-01-10 12:00:00"), line(5, "open", "2026-01-09 08:00:00"), line(6, "open", "2026-01-10 12:00:00"),
						line(7, "new", nil),
					}},
				rewind{to: "2026-01-13", refused: "is after the watermark"},
				rewind{to: "2026-01-10T12:00:00Z/x", refused: "an integer"},
				// A rewind to a time re-reads every row from that time and
				// every row without one.
				rewind{to: "2026-01-10T12:00:00Z", wm: "2026-01-10T12:00:00Z"},
				run{until: "2026-01-12", want: &counts{Lo: "2026-01-10T12:00:00Z", Hi: "2026-01-12T00:00:00Z/8", Read: 6, Updated: 6}},
				rewind{to: "2026-01-10T12:00:00Z/4", wm: "2026-01-10T12:00:00Z/4"},
				run{until: "2026-01-12", want: &counts{Lo: "2026-01-10T12:00:00Z/4", Hi: "2026-01-12T00:00:00Z/8", Read: 5, Updated: 5}},
			},
		},
		{
			// A lookback is a duration on the time, as without a tiebreak:
			// ticket 8 committed late with a time behind the watermark is
			// re-read; the rows without a time are read once, by id.
			name: "tiebreak/a lookback on the time", spec: spec("lookback: 1d"), source: "app_{id}.tickets", keyed: true, seed: tiedTickets,
			steps: []act{
				run{until: "2026-01-10T12:00:00Z", want: &counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-10T12:00:00Z/6", Read: 5, Inserted: 5}},
				insert{{8, "late", "2026-01-10 08:00:00"}, {9, "new", nil}},
				run{until: "2026-01-10T13:00:00Z", want: &counts{Lo: "2026-01-09T12:00:00Z", Hi: "2026-01-10T13:00:00Z/10", Read: 5, Inserted: 2, Updated: 3},
					rows: []string{
						line(1, "new", nil), line(2, "open", "2026-01-10 12:00:00"), line(3, "open", "2026-01-10 12:00:00"),
						line(4, "open", "2026-01-10 12:00:00"), line(5, "open", "2026-01-09 08:00:00"), line(8, "late", "2026-01-10 08:00:00"),
						line(9, "new", nil),
					}},
			},
		},
	}
}

func mustTime(s string) *time.Time {
	t, err := ir.ParseTime(s)
	if err != nil {
		panic(err)
	}
	return &t
}
