package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
)

// Story 3 of docs/stories.md: customer 1 lived in IN until 2026-01-08,
// then in DE. The sales pipeline looks its country up in the type-2
// dimension as of each sale's date. The dimension learns of the move late,
// after the sales of the 8th to the 10th were loaded with IN; a backfill
// of 2026-01-03..2026-01-10 rebuilds each day with the same join, and the
// revenue by country then says IN before the 8th and DE from the 8th.

const story3Dim = `
pipeline: dim_customer_{id}
source:
  table: app_{id}.customers
target:
  table: dw_{id}.dim_customer
columns:
  customer_id: bigint
  country: varchar(2)
  updated_at: timestamp
strategy: scd2
unique_key: [customer_id]
watermark:
  column: updated_at
  start: 2000-01-01
scd2:
  by: time
  snapshot: true
  deletes: close
  open_end: 9999-12-31
`

const story3Sales = `
pipeline: sales_{id}
source:
  table: app_{id}.sales
target:
  table: dw_{id}.sales
columns:
  sale_id: bigint
  sale_date: date
  customer_id: bigint
  amount: decimal(12,2)
  updated_at: timestamp
  customer_country: varchar(2)
strategy: overwrite_partitions
watermark:
  column: updated_at
  start: 2026-01-01
partition:
  column: sale_date
lookups:
  - table: dw_{id}.dim_customer
    on: { customer_id: customer_id }
    as_of: sale_date
    columns: { customer_country: country }
reconcile:
  by: sale_date
  measures: [count, sum(amount)]
`

// projectPlans loads specs as a project (the lookups are checked against
// the pipeline that writes their table) and lowers each, by pipeline.
func projectPlans(t *testing.T, e *env, specs ...string) map[string]*compiler.Plan {
	t.Helper()
	dir := t.TempDir()
	var files []string
	for i, y := range specs {
		f := filepath.Join(dir, string(rune('a'+i))+".yaml")
		if err := os.WriteFile(f, []byte(strings.ReplaceAll(y, "{id}", e.id)), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	loaded, diags := compiler.LoadSpecs(files)
	if len(diags) > 0 {
		t.Fatal(diags.Err())
	}
	plans := map[string]*compiler.Plan{}
	for _, s := range loaded {
		p, err := compiler.Lower(s)
		if err != nil {
			t.Fatal(err)
		}
		plans[strings.TrimSuffix(s.Pipeline.Value, "_"+e.id)] = p
	}
	return plans
}

// sourceColumns are the columns a source table holds: the declared ones
// no lookup fills.
func sourceColumns(p *compiler.Plan) []compiler.Col {
	var out []compiler.Col
	for _, c := range p.Columns {
		if len(p.Source.Columns) == 0 || slices.Contains(p.Source.Columns, c.Name) {
			out = append(out, c)
		}
	}
	return out
}

// revenue is the report of story 3, by a query on the target: per day and
// country, the sales and their sum (a NULL country reads NULL), in text
// order.
func revenue(e *env) []string {
	e.t.Helper()
	q := e.tg.Dialect.QuoteIdent
	query := "SELECT " + q("sale_date") + ", " + q("customer_country") + ", COUNT(*), SUM(" + q("amount") + ") FROM " + scdName(e, "dw_{id}.sales") +
		" GROUP BY " + q("sale_date") + ", " + q("customer_country")
	rs, err := e.tg.DB.QueryContext(e.ctx, query)
	if err != nil {
		e.t.Fatalf("%s\n%v", query, err)
	}
	defer rs.Close()
	var out []string
	for rs.Next() {
		var day, country, n, sum any
		if err := rs.Scan(&day, &country, &n, &sum); err != nil {
			e.t.Fatal(err)
		}
		out = append(out, scdLine(day, country, n, sum))
	}
	if err := rs.Err(); err != nil {
		e.t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

func TestStory3(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			plans := projectPlans(t, e, story3Dim, story3Sales)
			dim, sales := plans["dim_customer"], plans["sales"]
			if sales.Statement(compiler.StmtCheckLookups) != nil {
				t.Error("the sales pipeline checks a lookup table that an scd2 pipeline of the project keeps")
			}
			e.createTable("app_{id}.customers", dim.Columns)
			e.createTable("app_{id}.sales", sourceColumns(sales))
			e.insert("app_{id}.customers", dim.Columns, []any{1, "IN", "2026-01-01"}, []any{2, "FR", "2026-01-01"})
			scdRun(t, e, dim, "2026-01-05", &scdCounts{read: 2, inserted: 2})

			var rows [][]any
			for day := 3; day <= 10; day++ {
				d := fmt.Sprintf("2026-01-%02d", day)
				rows = append(rows, []any{day, d, 1, "10.00", d + " 12:00:00"})
			}
			rows = append(rows, []any{20, "2026-01-04", 2, "20.00", "2026-01-04 13:00:00"}, []any{99, "2026-01-09", 99, "5.00", "2026-01-09 13:00:00"})
			e.insert("app_{id}.sales", sourceColumns(sales), rows...)
			res := scdRun(t, e, sales, "2026-01-11", nil)
			if res.RowsRead != 10 || res.RowsInserted != 10 {
				t.Errorf("sales run: read %d, inserted %d; want 10 and 10 (a sale with no version of its customer is kept)", res.RowsRead, res.RowsInserted)
			}
			// The dimension has not heard of the move: every sale says IN.
			stale := revenue(e)
			for _, l := range stale {
				if strings.Contains(l, "| DE |") {
					t.Fatalf("DE before the dimension knew of it: %v", stale)
				}
			}

			// The move reaches the dimension, dated the 8th.
			e.update("app_{id}.customers", dim.Columns, "customer_id", 1, map[string]any{"country": "DE", "updated_at": "2026-01-08"})
			scdRun(t, e, dim, "2026-01-11", &scdCounts{read: 2, updated: 1, ignored: 1})

			from, to := scdUntil("2026-01-03"), scdUntil("2026-01-11")
			bf, err := e.tg.Backfill(e.ctx, sales, BackfillOptions{From: *from, To: *to})
			if err != nil {
				t.Fatal(err)
			}
			if len(bf.Partitions) != 8 || bf.Mismatch != nil {
				t.Fatalf("backfill: %d partitions, mismatch %v", len(bf.Partitions), bf.Mismatch)
			}
			want := []string{
				scdLine("2026-01-03", "IN", 1, "10.00"),
				scdLine("2026-01-04", "FR", 1, "20.00"),
				scdLine("2026-01-04", "IN", 1, "10.00"),
				scdLine("2026-01-05", "IN", 1, "10.00"),
				scdLine("2026-01-06", "IN", 1, "10.00"),
				scdLine("2026-01-07", "IN", 1, "10.00"),
				scdLine("2026-01-08", "DE", 1, "10.00"),
				scdLine("2026-01-09", "DE", 1, "10.00"),
				scdLine("2026-01-09", "NULL", 1, "5.00"),
				scdLine("2026-01-10", "DE", 1, "10.00"),
			}
			if diff := cmp.Diff(want, revenue(e)); diff != "" {
				t.Errorf("revenue by country after the backfill (-want +got):\n%s", diff)
			}
			rec, err := e.tg.Reconcile(e.ctx, sales, *from, *to)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Drifted) != 0 {
				t.Errorf("reconcile after the backfill: drifted %v", rec.Drifted)
			}
		})
	}
}

const ticketsSpec = `
pipeline: tickets_{id}
source:
  table: app_{id}.tickets
target:
  table: dw_{id}.tickets
columns:
  ticket_id: bigint
  opened_on: date
  agent_id: bigint
  team_id: bigint
  updated_at: timestamp
  agent_name: varchar(32)
  team_name: varchar(32)
strategy: merge
unique_key: [ticket_id]
watermark:
  column: updated_at
  start: 2026-01-01
{quality}
lookups:
  - table: app_{id}.agent_history
    on: { agent_id: agent_id }
    as_of: opened_on
    columns: { agent_name: name }
    valid_from: since
    valid_to: until
  - table: app_{id}.teams
    on: { team_id: id }
    columns: { team_name: name }
`

// TestLookupTables: lookups into tables no pipeline of the project writes.
// A row whose key has no version at its time keeps its place with a NULL
// (or, with the column in quality.not_null, is quarantined with that
// reason); a lookup table in which one row would match twice (versions of
// a key that overlap, a key twice) fails the run before it writes, since
// the row would be written once per match.
func TestLookupTables(t *testing.T) {
	for _, eng := range engines() {
		for _, quarantine := range []bool{false, true} {
			name := eng.name + "/null"
			quality := ""
			if quarantine {
				name, quality = eng.name+"/quarantine", "quality: {not_null: [agent_name]}"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t, eng)
				p := e.spec(strings.ReplaceAll(ticketsSpec, "{quality}", quality))
				if p.Statement(compiler.StmtCheckLookups) == nil {
					t.Fatal("no check of lookup tables that no pipeline keeps")
				}
				history := []compiler.Col{{Name: "agent_id", Type: compiler.Type{Kind: compiler.Bigint}}, {Name: "name", Type: compiler.Type{Kind: compiler.Varchar, Length: 32}},
					{Name: "since", Type: compiler.Type{Kind: compiler.Date}}, {Name: "until", Type: compiler.Type{Kind: compiler.Date}}}
				teams := []compiler.Col{{Name: "id", Type: compiler.Type{Kind: compiler.Bigint}}, {Name: "name", Type: compiler.Type{Kind: compiler.Varchar, Length: 32}}}
				e.createTable("app_{id}.agent_history", history)
				e.createTable("app_{id}.teams", teams)
				e.createTable("app_{id}.tickets", sourceColumns(p))
				e.insert("app_{id}.agent_history", history,
					[]any{7, "Ann", "2026-01-01", "2026-01-05"}, []any{7, "Ann B.", "2026-01-05", nil})
				e.insert("app_{id}.teams", teams, []any{1, "support"})
				e.insert("app_{id}.tickets", sourceColumns(p),
					[]any{1, "2026-01-02", 7, 1, "2026-01-02 10:00:00"},
					[]any{2, "2026-01-06", 7, 1, "2026-01-06 10:00:00"},
					[]any{3, "2026-01-06", 8, 2, "2026-01-06 11:00:00"}) // no such agent, no such team
				res := scdRun(t, e, p, "2026-01-07", nil)
				cols := []string{"ticket_id", "agent_name", "team_name"}
				want := []string{scdLine(1, "Ann", "support"), scdLine(2, "Ann B.", "support"), scdLine(3, nil, nil)}
				if quarantine {
					want = want[:2]
					if res.RowsQuarantined != 1 {
						t.Errorf("quarantined %d, want the ticket of an agent with no version", res.RowsQuarantined)
					}
					reasons := scdRows(e, "dw_{id}.tickets_quarantine", []string{"ticket_id", "incrc_reason"}, "ticket_id")
					if diff := cmp.Diff([]string{scdLine(3, "not_null(agent_name)")}, reasons); diff != "" {
						t.Errorf("quarantine (-want +got):\n%s", diff)
					}
				}
				if diff := cmp.Diff(want, scdRows(e, "dw_{id}.tickets", cols, "ticket_id")); diff != "" {
					t.Errorf("tickets (-want +got):\n%s", diff)
				}
				// A version that overlaps another: ticket 2 would match both.
				e.insert("app_{id}.agent_history", history, []any{7, "Ann C.", "2026-01-06", "2026-01-09"})
				e.update("app_{id}.tickets", sourceColumns(p), "ticket_id", 2, map[string]any{"updated_at": "2026-01-07 09:00:00"})
				_, err := e.tg.Run(e.ctx, p, Options{Until: scdUntil("2026-01-08")})
				if err == nil || !strings.Contains(err.Error(), "would match a source row more than once") {
					t.Fatalf("a lookup table with overlapping versions: %v", err)
				}
				if diff := cmp.Diff(want, scdRows(e, "dw_{id}.tickets", cols, "ticket_id")); diff != "" {
					t.Errorf("the failed run wrote (-want +got):\n%s", diff)
				}
				e.deleteRows("app_{id}.agent_history", "name", "Ann C.")
				// A team twice.
				e.insert("app_{id}.teams", teams, []any{1, "support 2"})
				if _, err := e.tg.Run(e.ctx, p, Options{Until: scdUntil("2026-01-08")}); err == nil || !strings.Contains(err.Error(), "more than once") {
					t.Fatalf("a lookup table with a key twice: %v", err)
				}
				e.deleteRows("app_{id}.teams", "name", "support 2")
				scdRun(t, e, p, "2026-01-08", nil)
			})
		}
	}
}
