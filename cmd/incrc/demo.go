package main

import (
	"context"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/runner"
)

// demoSpec is specs/orders.yaml (story 1); a test keeps the two equal.
// The demo also runs a copy without the lookback, to show what it misses.
const demoSpecFile = "specs/orders.yaml"

func demoCmd() *command {
	c := &command{
		name:    "demo",
		summary: "Story 1 end to end on an embedded DuckDB: a late payment missed by a plain window, caught by a lookback.",
		usage:   "[--keep]",
		example: "incrc demo",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var keep bool
		fs := c.flags(e)
		fs.BoolVar(&keep, "keep", false, "keep the demo's database file and print its path")
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		dir, err := os.MkdirTemp("", "incrc-demo-")
		if err != nil {
			c.errorf(e, "%v", err)
			return exitError
		}
		if !keep {
			defer os.RemoveAll(dir)
		}
		if err := demo(ctx, e, filepath.Join(dir, "wh.duckdb")); err != nil {
			c.errorf(e, "%v", err)
			return exitError
		}
		return exitOK
	}
	return c
}

func demoPlans() (look, plain *ir.Plan, err error) {
	for i, variant := range []struct{ from, to string }{
		{"", ""},
		{"pipeline: dw_orders\n", "pipeline: dw_orders_plain\n"},
	} {
		y := strings.Replace(demoOrdersYAML, variant.from, variant.to, 1)
		if i == 1 {
			y = strings.Replace(y, "  table: dw.orders\n", "  table: dw.orders_plain\n", 1)
			y = strings.Replace(y, "  lookback: 2d\n", "", 1)
		}
		s, err := compiler.Parse(demoSpecFile, []byte(y))
		if err == nil {
			if d := compiler.Validate(s); len(d) > 0 {
				err = d.Err()
			}
		}
		if err != nil {
			return nil, nil, err
		}
		p, err := compiler.Lower(s)
		if err != nil {
			return nil, nil, err
		}
		if i == 0 {
			look = p
		} else {
			plain = p
		}
	}
	return look, plain, nil
}

func demo(ctx context.Context, e *env, path string) error {
	out := e.stdout
	look, plain, err := demoPlans()
	if err != nil {
		return err
	}
	tg, err := runner.Open(ctx, all.Lookup, "duckdb:"+path, "")
	if err != nil {
		return err
	}
	defer tg.Close()
	fmt.Fprintf(out, "incrc demo: the late payment (story 1) on an embedded DuckDB (%s)\n\n", path)
	if err := demoSeed(ctx, tg, look); err != nil {
		return err
	}
	fmt.Fprint(out, `The app's table app.orders holds five orders placed 2026-01-20..23; order 105 is not paid
yet (amount NULL). Two pipelines copy it into the warehouse with a MERGE by order_id on an
updated_at watermark (a created-date watermark would never see a payment at all):
  dw_orders_plain  reads [watermark, hi)
  dw_orders        reads [watermark - 2d, hi)   (lookback: 2d, specs/orders.yaml)
Each run is a nightly run at 00:00 UTC (--until).

`)
	from, to := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	runDay := func(day string) error {
		u, _ := ir.ParseTime(day)
		for _, p := range []*ir.Plan{plain, look} {
			res, err := tg.Run(ctx, p, runner.Options{Until: &u})
			if err != nil {
				return err
			}
			src, wh, err := demoTotals(ctx, tg, p, from, to)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "  %s  %-16s window [%s, %s)  read %d, inserted %d, updated %d   source %s, warehouse %s\n",
				day, p.Pipeline, short(res.WindowLo), short(res.WindowHi), res.RowsRead, res.RowsInserted, res.RowsUpdated, src, wh)
		}
		return nil
	}
	for _, day := range []string{"2026-01-21", "2026-01-22", "2026-01-24", "2026-01-26"} {
		if err := runDay(day); err != nil {
			return err
		}
	}
	fmt.Fprint(out, "\n  2026-01-26 10:00  a slow payment system commits order 105's payment: amount 22.00,\n                    updated_at 2026-01-25 12:00 (in the past: the window [01-25, 01-26) has already run)\n\n")
	ts, _ := tg.BindTime("2026-01-25 12:00:00", ir.Timestamp)
	err = tg.ExecOp(ctx, ir.Update{
		Table: look.Source.Table,
		Set:   []ir.Assign{{Column: "amount", Value: ir.Lit{Text: "22.00"}}, {Column: "updated_at", Value: ir.ParamRef{Name: "ts"}}},
		Where: ir.Binary{Op: "=", L: ir.ColRef{Name: "order_id"}, R: ir.Lit{Text: "105"}},
	}, map[string]any{"ts": ts})
	if err != nil {
		return err
	}
	if err := runDay("2026-01-27"); err != nil {
		return err
	}
	fmt.Fprintf(out, "\nThe plain window [01-26, 01-27) never reads a row dated the 25th; the lookback re-reads\n[01-24, 01-27), and the MERGE makes re-reading harmless. Reconciled by order_date:\n\n")
	for _, p := range []*ir.Plan{plain, look} {
		rec, err := tg.Reconcile(ctx, p, from, to)
		if err != nil {
			return err
		}
		src, wh, _ := demoTotals(ctx, tg, p, from, to)
		verdict := "= source: reconciled"
		if len(rec.Drifted) > 0 {
			verdict = fmt.Sprintf("!= source %s: drift on %s (incrc reconcile exits 2)", src, strings.Join(rec.Drifted, ", "))
		}
		fmt.Fprintf(out, "  %-16s warehouse %s %s\n", p.Pipeline, wh, verdict)
		if p == look && len(rec.Drifted) == 0 {
			fmt.Fprintf(out, "\n%s = %s\n", wh, src)
		}
	}
	return nil
}

func short(s string) string {
	if t, err := ir.ParseTime(s); err == nil {
		return t.Format("01-02")
	}
	return s
}

// demoTotals sums sum(amount) over the reconciliation's groups.
func demoTotals(ctx context.Context, tg *runner.Target, p *ir.Plan, from, to time.Time) (src, wh string, err error) {
	rec, err := tg.Reconcile(ctx, p, from, to)
	if err != nil {
		return "", "", err
	}
	var s, w big.Rat
	for _, g := range rec.Groups {
		if g.Source != nil {
			if r, ok := new(big.Rat).SetString(g.Source[1]); ok {
				s.Add(&s, r)
			}
		}
		if g.Target != nil {
			if r, ok := new(big.Rat).SetString(g.Target[1]); ok {
				w.Add(&w, r)
			}
		}
	}
	return s.FloatString(2), w.FloatString(2), nil
}

func demoSeed(ctx context.Context, tg *runner.Target, p *ir.Plan) error {
	src := p.Source.Table
	if err := tg.ExecOp(ctx, ir.CreateSchema{Schema: src.Schema()}, nil); err != nil {
		return err
	}
	if err := tg.ExecOp(ctx, ir.CreateTable{Table: src, Columns: p.Columns}, nil); err != nil {
		return err
	}
	rows := [][]string{
		{"101", "2026-01-20", "50.00", "2026-01-20 09:00:00"},
		{"102", "2026-01-21", "75.50", "2026-01-21 10:00:00"},
		{"103", "2026-01-22", "45.00", "2026-01-22 11:00:00"},
		{"104", "2026-01-23", "50.00", "2026-01-23 12:00:00"},
		{"105", "2026-01-20", "NULL", "2026-01-20 13:00:00"},
	}
	for _, r := range rows {
		d, _ := tg.BindTime(r[1], ir.Date)
		ts, _ := tg.BindTime(r[3], ir.Timestamp)
		err := tg.ExecOp(ctx, ir.InsertValues{Table: src, Columns: []string{"order_id", "order_date", "amount", "updated_at"},
			Values: []ir.Expr{ir.Lit{Text: r[0]}, ir.ParamRef{Name: "d"}, ir.Lit{Text: r[2]}, ir.ParamRef{Name: "ts"}}},
			map[string]any{"d": d, "ts": ts})
		if err != nil {
			return err
		}
	}
	return nil
}

// demoOrdersYAML is specs/orders.yaml; TestDemoSpec keeps them equal.
const demoOrdersYAML = `# Story 1: orders from the app database, one row per order.
# An order is written when it is placed and updated when it is paid, so the
# watermark is updated_at (a created-date watermark misses the payment), the
# write is a merge by order_id, and a 2-day lookback catches payments that a
# slow system commits after the window that should have read them.
pipeline: dw_orders
description: Orders from the app database, one row per order.
source:
  table: app.orders
target:
  table: dw.orders
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
  lookback: 2d
  lag: 5m
dedupe_by: updated_at
quality:
  not_null: [order_date]
  checks: ["amount >= 0"]
  on_invalid: quarantine
reconcile:
  by: order_date
  measures: [count, sum(amount)]
`
