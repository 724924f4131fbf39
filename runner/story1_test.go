package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/compiler"
)

// ordersSpec is story 1 of docs/stories.md, with {id} for isolation and {lookback}
// and {target} varied by the scenarios.
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
quality:
  checks: ["amount >= 0"]
reconcile:
  by: order_date
  measures: [count, sum(amount)]
`

func ordersPlan(e *env, target, lookback string) *compiler.Plan {
	y := strings.ReplaceAll(ordersSpec, "{target}", target)
	y = strings.ReplaceAll(y, "{lookback}", lookback)
	return e.spec(y)
}

var orderCols = []string{"order_id", "order_date", "amount", "updated_at"}

// seedOrders creates app.orders with the five orders of story 1: 220.50 in
// all, order 105 not paid yet.
func seedOrders(e *env, p *compiler.Plan) {
	e.createTable("app_{id}.orders", p.Columns)
	e.insert("app_{id}.orders", p.Columns,
		[]any{101, "2026-01-20", "50.00", "2026-01-20 09:00:00"},
		[]any{102, "2026-01-21", "75.50", "2026-01-21 10:00:00"},
		[]any{103, "2026-01-22", "45.00", "2026-01-22 11:00:00"},
		[]any{104, "2026-01-23", "50.00", "2026-01-23 12:00:00"},
		[]any{105, "2026-01-20", nil, "2026-01-20 13:00:00"},
	)
}

func until(s string) *time.Time {
	t, err := compiler.ParseTime(s)
	if err != nil {
		panic(err)
	}
	return &t
}

// fullRefresh is what the promise is measured against: the same spec
// written from scratch at the same hi.
func fullRefresh(t *testing.T, e *env, hi string) []string {
	t.Helper()
	ref := ordersPlan(e, "ref", "")
	mustRun(t, e, ref, Options{Until: until(hi), FullRefresh: true})
	return e.rows("dw_{id}.orders_ref", orderCols)
}

// TestStory1 is story 1 of docs/stories.md on every engine: the late payment of
// order 105, written by a slow system with an updated_at in the past, is
// missed by the plain window and caught by the 2-day lookback, whose
// target then equals a full refresh.
func TestStory1(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			plain := ordersPlan(e, "plain", "")
			look := ordersPlan(e, "look", "lookback: 2d")
			seedOrders(e, plain)
			for _, day := range []string{"2026-01-21", "2026-01-22", "2026-01-24", "2026-01-26"} {
				for _, p := range []*compiler.Plan{plain, look} {
					mustRun(t, e, p, Options{Until: until(day)})
				}
			}
			// 2026-01-26 10:00: the payment of 105 lands, dated the 25th.
			e.update("app_{id}.orders", plain.Columns, "order_id", 105, map[string]any{"amount": "22.00", "updated_at": "2026-01-25 12:00:00"})
			rp := mustRun(t, e, plain, Options{Until: until("2026-01-27")})
			rl := mustRun(t, e, look, Options{Until: until("2026-01-27")})
			if rp.WindowLo != "2026-01-26T00:00:00Z" || rl.WindowLo != "2026-01-24T00:00:00Z" {
				t.Errorf("windows: plain from %s, lookback from %s", rp.WindowLo, rl.WindowLo)
			}
			if rp.RowsRead != 0 || rl.RowsRead != 1 || rl.RowsUpdated != 1 {
				t.Errorf("plain read %d; lookback read %d, updated %d", rp.RowsRead, rl.RowsRead, rl.RowsUpdated)
			}
			want := fullRefresh(t, e, "2026-01-27")
			if diff := cmp.Diff(want, e.rows("dw_{id}.orders_look", orderCols)); diff != "" {
				t.Errorf("lookback target differs from a full refresh (-full +incremental):\n%s", diff)
			}
			got := e.rows("dw_{id}.orders_plain", orderCols)
			if got[4] != "105 | 2026-01-20 | NULL | 2026-01-20 13:00:00" {
				t.Errorf("plain window should have missed the late payment, has %q", got[4])
			}
			// Reconcile finds the drift of the plain pipeline, not of the other.
			from, to := until("2026-01-01"), until("2026-02-01")
			rec, err := e.tg.Reconcile(e.ctx, plain, *from, *to)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]string{"2026-01-20"}, rec.Drifted); diff != "" {
				t.Errorf("plain drift (-want +got):\n%s", diff)
			}
			rec, err = e.tg.Reconcile(e.ctx, look, *from, *to)
			if err != nil {
				t.Fatal(err)
			}
			if len(rec.Drifted) != 0 || len(rec.Groups) != 4 {
				t.Errorf("lookback reconcile: %+v", rec)
			}
			// The run log holds every run, with its window and counts.
			st, err := e.tg.State(e.ctx, look)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Runs) != 5 || st.Watermark != "2026-01-27T00:00:00Z" || st.LeaseOwner != "" {
				t.Errorf("state: %d runs, watermark %q, lease %q", len(st.Runs), st.Watermark, st.LeaseOwner)
			}
			if r := st.Runs[0]; r.Status != "succeeded" || r.RowsRead != 1 || r.RowsUpdated != 1 || r.WindowLo != "2026-01-24T00:00:00Z" {
				t.Errorf("last run in the log: %+v", r)
			}
		})
	}
}

// TestVersionsInOneWindow: several versions of one key in one window; the
// merge keeps the newest, as a full refresh does.
func TestVersionsInOneWindow(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := ordersPlan(e, "look", "lookback: 2d")
			e.createTable("app_{id}.orders", p.Columns)
			e.insert("app_{id}.orders", p.Columns,
				[]any{201, "2026-01-20", "10.00", "2026-01-20 09:00:00"},
				[]any{201, "2026-01-20", "11.00", "2026-01-20 10:00:00"},
				[]any{201, "2026-01-20", "12.00", "2026-01-20 11:00:00"},
				[]any{202, "2026-01-20", "5.00", "2026-01-20 09:00:00"},
				[]any{202, "2026-01-20", "6.00", "2026-01-21 09:00:00"},
			)
			r := mustRun(t, e, p, Options{Until: until("2026-01-21")})
			if r.RowsRead != 4 || r.RowsInserted != 2 {
				t.Errorf("read %d, inserted %d; want 4 read, 2 inserted", r.RowsRead, r.RowsInserted)
			}
			mustRun(t, e, p, Options{Until: until("2026-01-22")})
			want := []string{"201 | 2026-01-20 | 12 | 2026-01-20 11:00:00", "202 | 2026-01-20 | 6 | 2026-01-21 09:00:00"}
			if diff := cmp.Diff(want, e.rows("dw_{id}.orders_look", orderCols)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestFailureBeforeAdvance: a failure between the write and the watermark
// advance rolls the write back; the retry leaves nothing lost or doubled.
func TestFailureBeforeAdvance(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := ordersPlan(e, "look", "lookback: 2d")
			seedOrders(e, p)
			boom := errors.New("injected failure")
			_, err := e.tg.Run(e.ctx, p, Options{Until: until("2026-01-24"), BeforeStatement: func(name string) error {
				if name == compiler.StmtAdvance {
					return boom
				}
				return nil
			}})
			if !errors.Is(err, boom) {
				t.Fatalf("run: %v, want the injected failure", err)
			}
			if got := e.rows("dw_{id}.orders_look", orderCols); len(got) != 0 {
				t.Fatalf("the failed run's write is visible: %v", got)
			}
			st, err := e.tg.State(e.ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if st.Watermark != "" || st.LeaseOwner != "" || len(st.Runs) != 1 || st.Runs[0].Status != "failed" || !strings.Contains(st.Runs[0].Error, "injected") {
				t.Fatalf("after the failure: %+v", st)
			}
			mustRun(t, e, p, Options{Until: until("2026-01-24")})
			mustRun(t, e, p, Options{Until: until("2026-01-24")}) // a rerun of an empty window
			if diff := cmp.Diff(fullRefresh(t, e, "2026-01-24"), e.rows("dw_{id}.orders_look", orderCols)); diff != "" {
				t.Errorf("(-full +incremental):\n%s", diff)
			}
		})
	}
}

// TestLease: a second run while one holds the lease is refused at once,
// naming the holder; an expired lease is taken over; --until below the
// watermark is refused.
func TestLease(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := ordersPlan(e, "look", "lookback: 2d")
			seedOrders(e, p)
			held := make(chan struct{})
			release := make(chan struct{})
			done := make(chan error)
			go func() {
				_, err := e.tg.Run(e.ctx, p, Options{Owner: "first", Until: until("2026-01-24"), BeforeStatement: func(name string) error {
					if name == compiler.StmtWrite {
						close(held)
						<-release
					}
					return nil
				}})
				done <- err
			}()
			<-held
			_, err := e.tg.Run(e.ctx, p, Options{Owner: "second", Until: until("2026-01-24")})
			var locked *LockedError
			if !errors.As(err, &locked) || locked.Owner != "first" {
				t.Errorf("second run: %v, want locked by first", err)
			}
			close(release)
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			// A crashed run's lease: held by "dead" until a time past.
			now := time.Now()
			prog, _ := compile(e.tg.Dialect, p, 0)
			vals := params{"pipeline": p.Pipeline, "owner": "dead", "expires_at": stateTime(now.Add(time.Minute)), "now": stateTime(now)}
			if n, err := prog.exec(e.ctx, e.tg.DB, compiler.StmtAcquireLease, vals); err != nil || n != 1 {
				t.Fatalf("take the lease for a dead run: %d, %v", n, err)
			}
			if _, err := e.tg.Run(e.ctx, p, Options{Until: until("2026-01-25")}); !errors.As(err, &locked) {
				t.Errorf("run during a dead run's lease: %v, want locked", err)
			}
			later := func() time.Time { return now.Add(2 * time.Minute) }
			mustRun(t, e, p, Options{Until: until("2026-01-25"), Now: later})
			_, err = e.tg.Run(e.ctx, p, Options{Until: until("2026-01-23")})
			if err == nil || !strings.Contains(err.Error(), "before the saved watermark") {
				t.Errorf("--until below the watermark: %v", err)
			}
		})
	}
}

// TestKilledRun kills a runner process with SIGKILL after its merge ran and
// before its transaction committed; the next run converges to what a full
// refresh gives.
func TestKilledRun(t *testing.T) {
	if os.Getenv("INCRC_TEST_CHILD") != "" {
		return // the child's work is in TestKilledRunChild
	}
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			p := ordersPlan(e, "look", "lookback: 2d")
			seedOrders(e, p)
			mustRun(t, e, p, Options{Until: until("2026-01-22")})
			e.update("app_{id}.orders", p.Columns, "order_id", 105, map[string]any{"amount": "22.00", "updated_at": "2026-01-22 12:00:00"})
			e.tg.DB.Close() // DuckDB allows one process per file
			cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRunChild$")
			cmd.Env = append(os.Environ(), "INCRC_TEST_CHILD=1", "INCRC_CHILD_URL="+e.url, "INCRC_CHILD_ID="+e.id)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stderr = os.Stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64)
			n, _ := out.Read(buf)
			if !strings.Contains(string(buf[:n]), "merged") {
				cmd.Process.Kill()
				t.Fatalf("child did not reach the write: %q", buf[:n])
			}
			cmd.Process.Kill() // SIGKILL: no deferred release, no rollback from the process
			cmd.Wait()
			tg, err := Open(e.ctx, e.url, "")
			if err != nil {
				t.Fatal(err)
			}
			e.tg = tg
			// The dead run's lease (TTL 1s in the child) has expired by now+2s.
			later := func() time.Time { return time.Now().Add(2 * time.Second) }
			mustRun(t, e, p, Options{Until: until("2026-01-24"), Now: later})
			if diff := cmp.Diff(fullRefresh(t, e, "2026-01-24"), e.rows("dw_{id}.orders_look", orderCols)); diff != "" {
				t.Errorf("(-full +incremental):\n%s", diff)
			}
			st, err := e.tg.State(e.ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if len(st.Runs) != 3 || st.Runs[1].Status != "abandoned" {
				t.Errorf("runs after the kill: %+v", st.Runs)
			}
		})
	}
}

// TestKilledRunChild is the process TestKilledRun kills.
func TestKilledRunChild(t *testing.T) {
	if os.Getenv("INCRC_TEST_CHILD") == "" {
		t.Skip("only runs as TestKilledRun's child process")
	}
	ctx := context.Background()
	tg, err := Open(ctx, os.Getenv("INCRC_CHILD_URL"), "")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ctx: ctx, tg: tg, id: os.Getenv("INCRC_CHILD_ID")}
	p := ordersPlan(e, "look", "lookback: 2d")
	tg.Run(ctx, p, Options{Until: until("2026-01-24"), LeaseTTL: time.Second, BeforeStatement: func(name string) error {
		if name == compiler.StmtAdvance {
			os.Stdout.WriteString("merged\n")
			time.Sleep(time.Minute)
		}
		return nil
	}})
}

// TestHeartbeat: on engines with a heartbeat, a run whose statement lasts
// longer than its lease keeps the lease, so a second run is still refused.
// Elsewhere the lease is renewed between steps; the advance's
// compare-and-set on the owner protects a run that outlived its lease.
func TestHeartbeat(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			if !e.tg.Dialect.Caps().Heartbeat {
				t.Skipf("%s renews the lease between steps, not from a heartbeat", eng.name)
			}
			p := ordersPlan(e, "look", "lookback: 2d")
			seedOrders(e, p)
			held := make(chan struct{})
			release := make(chan struct{})
			done := make(chan error)
			go func() {
				_, err := e.tg.Run(e.ctx, p, Options{Owner: "slow", LeaseTTL: 300 * time.Millisecond, Until: until("2026-01-24"), BeforeStatement: func(name string) error {
					if name == compiler.StmtWrite {
						close(held)
						<-release
					}
					return nil
				}})
				done <- err
			}()
			<-held
			time.Sleep(time.Second) // three lease lifetimes
			_, err := e.tg.Run(e.ctx, p, Options{Owner: "second", Until: until("2026-01-24")})
			var locked *LockedError
			if !errors.As(err, &locked) || locked.Owner != "slow" {
				t.Errorf("second run after the first outlived its TTL: %v, want locked by slow", err)
			}
			close(release)
			if err := <-done; err != nil {
				t.Fatalf("the slow run: %v", err)
			}
		})
	}
}
