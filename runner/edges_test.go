package runner

import (
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"
)

// orderCols, ordersPlan, seedOrders and fullRefresh set up story 1 of
// docs/stories.md for the tests of this file, on the conformance suite's
// fixture (ordersSpec, orders5).
var orderCols = []string{"order_id", "order_date", "amount", "updated_at"}

func ordersPlan(e *env, target, lookback string) *ir.Plan {
	return e.spec(strings.ReplaceAll(orders(lookback, amountCheck), "{target}", target))
}

func seedOrders(e *env, p *ir.Plan) {
	e.createTable("app_{id}.orders", p.Columns)
	e.insert("app_{id}.orders", p.Columns, orders5...)
}

// fullRefresh is what the promise is measured against: the same spec
// written from scratch at the same hi.
func fullRefresh(t *testing.T, e *env, hi string) []string {
	t.Helper()
	mustRun(t, e, ordersPlan(e, "ref", ""), Options{Until: until(hi), FullRefresh: true})
	return e.rows("dw_{id}.orders_ref", orderCols)
}

// This file holds the edges of a run where rows or time could be lost
// without a word: a source type wider than its declaration, a connection
// lost mid-run, a server that stops answering, a mistyped --until, and
// pipelines that share the state tables. (Rows whose watermark is NULL and
// rewinds are scenarios of the conformance suite.)

// TestSourceTypeMustFit: a source column whose type does not fit its
// declaration without loss fails the run before anything is written,
// naming the column and both types; a wider declaration is fine. SQLite
// keeps no types to check, and stores the value whole.
func TestSourceTypeMustFit(t *testing.T) {
	const spec = `
pipeline: fit_{target}_{id}
source:
  table: app_{id}.payments
target:
  table: dw_{id}.payments_{target}
columns:
  id: bigint
  amount: {amount}
  paid_at: {paid_at}
strategy: merge
unique_key: [id]
watermark:
  column: paid_at
  start: 2026-01-01
`
	plan := func(e *env, target, amount, paidAt string) *ir.Plan {
		y := strings.NewReplacer("{target}", target, "{amount}", amount, "{paid_at}", paidAt).Replace(spec)
		return e.spec(y)
	}
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			source := []ir.Col{{Name: "id", Type: ir.Type{Kind: ir.Bigint}},
				{Name: "amount", Type: ir.Type{Kind: ir.Decimal, Precision: 12, Scale: 2}},
				{Name: "paid_at", Type: ir.Type{Kind: ir.Timestamp}}}
			e.createTable("app_{id}.payments", source)
			e.insert("app_{id}.payments", source, []any{1, "75.50", "2026-01-02 10:00:00"})

			narrow := plan(e, "narrow", "integer", "timestamp")
			res, err := e.tg.Run(e.ctx, narrow, Options{Until: until("2026-01-03")})
			if eng.name == "sqlite" {
				if err != nil {
					t.Fatal(err)
				}
				if got := e.rows("dw_{id}.payments_narrow", []string{"id", "amount"}); !cmp.Equal(got, []string{line(1, "75.5")}) {
					t.Errorf("SQLite stored %v: a value must never be rounded", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), "column amount") || !strings.Contains(err.Error(), "declared integer") || !strings.Contains(err.Error(), "(12,2)") {
				t.Fatalf("decimal(12,2) into integer: %v", err)
			}
			if res.Status != "failed" || res.RowsInserted != 0 {
				t.Errorf("result: %+v", res)
			}
			if got := e.rows("dw_{id}.payments_narrow", []string{"id"}); len(got) != 0 {
				t.Errorf("a refused run wrote %v", got)
			}
			st := e.state(narrow)
			if st.Watermark != "" || len(st.Runs) != 1 || st.Runs[0].Status != "failed" || !strings.Contains(st.Runs[0].Error, "column amount") {
				t.Errorf("state after the refused run: watermark %q, runs %+v", st.Watermark, st.Runs)
			}

			wide := plan(e, "wide", "decimal(14,3)", "timestamptz")
			mustRun(t, e, wide, Options{Until: until("2026-01-03")})
			if got := e.rows("dw_{id}.payments_wide", []string{"id", "amount"}); !cmp.Equal(got, []string{line(1, "75.5")}) {
				t.Errorf("a wider declaration wrote %v", got)
			}
		})
	}
}

// TestSourcePointInTimeSaysTimestamptz: a source column that holds points
// in time (MariaDB's TIMESTAMP, PostgreSQL's and DuckDB's timestamptz)
// declared timestamp fails the run, and the error names the declaration
// that fits: paid_at: timestamptz. SQLite keeps no types to check.
func TestSourcePointInTimeSaysTimestamptz(t *testing.T) {
	const spec = `
pipeline: tstz_{id}
source:
  table: app_{id}.payments
target:
  table: dw_{id}.payments
columns:
  id: bigint
  paid_at: {paid_at}
strategy: merge
unique_key: [id]
watermark:
  column: paid_at
  start: 2026-01-01
`
	for _, eng := range engines() {
		if eng.name == "sqlite" {
			continue
		}
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			source := []ir.Col{{Name: "id", Type: ir.Type{Kind: ir.Bigint}}, {Name: "paid_at", Type: ir.Type{Kind: ir.TimestampTZ}}}
			e.createTable("app_{id}.payments", source, "id")
			if eng.name == "mysql" {
				// The portable timestamptz is a DATETIME(6) here; the source
				// of the report is MariaDB's own TIMESTAMP.
				if _, err := e.tg.DB.ExecContext(e.ctx, "ALTER TABLE "+e.tg.Dialect.QuoteIdent("app_"+e.id)+".payments MODIFY paid_at TIMESTAMP NULL"); err != nil {
					t.Fatal(err)
				}
			}
			e.insert("app_{id}.payments", source, []any{1, "2026-01-02 10:00:00"})
			naive := e.spec(strings.ReplaceAll(spec, "{paid_at}", "timestamp"))
			_, err := e.tg.Run(e.ctx, naive, Options{Until: until("2026-01-03")})
			if err == nil || !strings.Contains(err.Error(), "declare paid_at: timestamptz") {
				t.Fatalf("a point in time declared timestamp: %v", err)
			}
			if got := e.rows("dw_{id}.payments", []string{"id"}); len(got) != 0 {
				t.Errorf("a refused run wrote %v", got)
			}
			mustRun(t, e, e.spec(strings.ReplaceAll(spec, "{paid_at}", "timestamptz")), Options{Until: until("2026-01-03")})
			if got := e.rows("dw_{id}.payments", []string{"id"}); !cmp.Equal(got, []string{line(1)}) {
				t.Errorf("declared timestamptz, the run wrote %v", got)
			}
		})
	}
}

// proxy stands between a runner and a database server: cut closes every
// connection through it (the backend died), stall stops forwarding on the
// connections open now (a server that accepts and never answers) while
// new connections still go through.
type proxy struct {
	ln      net.Listener
	backend string
	mu      sync.Mutex
	conns   []*proxied
	stalled []*proxied
	silent  bool // every connection stalls, new ones too (silence)
}

type proxied struct {
	client, server net.Conn
	stalled        chan struct{}
	once           sync.Once
}

func newProxy(t *testing.T, backend string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, backend: backend}
	t.Cleanup(func() {
		ln.Close()
		p.cut()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, pc := range p.stalled {
			pc.close()
		}
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				continue
			}
			pc := &proxied{client: c, server: s, stalled: make(chan struct{})}
			p.mu.Lock()
			if p.silent {
				close(pc.stalled)
				p.stalled = append(p.stalled, pc)
			} else {
				p.conns = append(p.conns, pc)
			}
			p.mu.Unlock()
			go pc.pipe(c, s)
			go pc.pipe(s, c)
		}
	}()
	return p
}

// pipe forwards from one side to the other until either closes, then
// closes both: the server sees its client go, as it would. A stalled pipe
// keeps reading, to notice that, but forwards nothing.
func (pc *proxied) pipe(from, to net.Conn) {
	defer pc.close()
	buf := make([]byte, 32<<10)
	for {
		n, err := from.Read(buf)
		select {
		case <-pc.stalled:
			n = 0 // swallowed: nobody answers any more
		default:
		}
		if n > 0 {
			if _, werr := to.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (pc *proxied) close() {
	pc.client.Close()
	pc.server.Close()
}

// cut closes every connection through the proxy, stalled ones too.
func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pc := range p.conns {
		pc.close()
	}
	p.conns = nil
}

// stall stops forwarding on the connections open now; later ones flow.
func (p *proxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, pc := range p.conns {
		pc.once.Do(func() { close(pc.stalled) })
	}
	p.stalled = append(p.stalled, p.conns...)
	p.conns = nil
}

// silence stalls every connection, those opened later too: a proxy (or a
// server) that goes silent, accepting connections and answering nothing.
func (p *proxy) silence() {
	p.stall()
	p.mu.Lock()
	p.silent = true
	p.mu.Unlock()
}

// through rewrites a server URL to go through the proxy.
func (p *proxy) through(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = p.ln.Addr().String()
	return u.String()
}

// serverEngines are the engines a connection can be lost to.
func serverEngines() []engine {
	var out []engine
	for _, e := range engines() {
		if e.name == "postgres" || e.name == "mysql" {
			out = append(out, e)
		}
	}
	return out
}

func hostOf(t *testing.T, raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// TestLostConnection: the backend of a run dies before its write. The run
// fails, is recorded as failed (over a fresh connection, since its own is
// dead), and its lease is free: the next run does not wait for the TTL,
// and converges.
func TestLostConnection(t *testing.T) {
	for _, eng := range serverEngines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := ordersPlan(e, "look", "lookback: 2d")
			seedOrders(e, p)
			px := newProxy(t, hostOf(t, e.url))
			tg, err := Open(e.ctx, all.Lookup, px.through(t, e.url), "")
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			res, err := tg.Run(e.ctx, p, Options{Until: until("2026-01-24"), LeaseTTL: time.Hour, BeforeStatement: func(name string) error {
				if name == ir.StmtWrite {
					px.cut()
				}
				return nil
			}})
			if err == nil {
				t.Fatal("a run whose connection died succeeded")
			}
			if res.Status != "failed" {
				t.Errorf("result: %+v", res)
			}
			st := e.state(p)
			if st.LeaseOwner != "" {
				t.Errorf("the dead run still holds the lease (until %s)", st.LeaseExpiresAt)
			}
			if len(st.Runs) != 1 || st.Runs[0].Status != "failed" || st.Runs[0].Error == "" || st.Watermark != "" {
				t.Errorf("run log after the lost connection: watermark %q, runs %+v", st.Watermark, st.Runs)
			}
			mustRun(t, e, p, Options{Until: until("2026-01-24")})
			if diff := cmp.Diff(fullRefresh(t, e, "2026-01-24"), e.rows("dw_{id}.orders_look", orderCols)); diff != "" {
				t.Errorf("(-full +incremental):\n%s", diff)
			}
		})
	}
}

// TestStatementTimeout: a server that stops answering mid-run is given up
// on after the statement timeout, with a message that says so; the run is
// recorded as failed and its lease freed.
func TestStatementTimeout(t *testing.T) {
	for _, eng := range serverEngines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := ordersPlan(e, "look", "lookback: 2d")
			seedOrders(e, p)
			px := newProxy(t, hostOf(t, e.url))
			tg, err := Open(e.ctx, all.Lookup, px.through(t, e.url), "")
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			tg.StatementTimeout = time.Second
			start := time.Now()
			_, err = tg.Run(e.ctx, p, Options{Until: until("2026-01-24"), LeaseTTL: time.Hour, BeforeStatement: func(name string) error {
				if name == ir.StmtWrite {
					px.stall()
				}
				return nil
			}})
			if err == nil || !strings.Contains(err.Error(), "statement timeout") {
				t.Fatalf("a stalled server: %v", err)
			}
			if d := time.Since(start); d > time.Minute {
				t.Errorf("gave up after %s", d)
			}
			st := e.state(p)
			if st.LeaseOwner != "" || len(st.Runs) != 1 || st.Runs[0].Status != "failed" {
				t.Errorf("after the timeout: lease %q, runs %+v", st.LeaseOwner, st.Runs)
			}
		})
	}
}

// TestUntilInTheFuture: a --until later than now is a typo until proven
// otherwise (2062 for 2026 moves the watermark decades ahead, and every
// later run reads nothing): refused unless AllowFuture.
func TestUntilInTheFuture(t *testing.T) {
	e := newEnv(t, engines()[0])
	p := ordersPlan(e, "look", "lookback: 2d")
	seedOrders(e, p)
	now := func() time.Time { return time.Date(2026, 1, 24, 12, 0, 0, 0, time.UTC) }
	_, err := e.tg.Run(e.ctx, p, Options{Until: until("2062-01-24"), Now: now})
	if err == nil || !strings.Contains(err.Error(), "--allow-future") {
		t.Fatalf("--until 2062: %v", err)
	}
	if st := e.state(p); st.Watermark != "" {
		t.Errorf("a refused run moved the watermark to %s", st.Watermark)
	}
	// Within the clock-skew allowance, and with AllowFuture, it runs.
	mustRun(t, e, p, Options{Until: until("2026-01-24T12:04:00Z"), Now: now})
	r := mustRun(t, e, p, Options{Until: until("2026-01-30"), Now: now, AllowFuture: true})
	if r.WatermarkAfter != "2026-01-30T00:00:00Z" {
		t.Errorf("with AllowFuture: %+v", r)
	}
}

// TestPipelinesDoNotWaitForEachOther: two pipelines share the state tables
// of a target. While one holds its write transaction open (its run-log row
// locked), another runs start to finish: nothing of one pipeline's
// bookkeeping waits for another's rows. (SQLite has one writer at a time,
// and DuckDB's writers do not lock rows: the server engines are the ones
// to check.)
func TestPipelinesDoNotWaitForEachOther(t *testing.T) {
	for _, eng := range serverEngines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			a, b := ordersPlan(e, "a", ""), ordersPlan(e, "b", "")
			seedOrders(e, a)
			mustRun(t, e, b, Options{Until: until("2026-01-21")})
			held, release, done := make(chan struct{}), make(chan struct{}), make(chan error)
			go func() {
				_, err := e.tg.Run(e.ctx, a, Options{Until: until("2026-01-24"), BeforeStatement: func(name string) error {
					if name == "commit" {
						close(held)
						<-release
					}
					return nil
				}})
				done <- err
			}()
			<-held
			_, err := e.tg.Run(e.ctx, b, Options{Until: until("2026-01-24")})
			close(release)
			if err != nil {
				t.Errorf("a pipeline waited for another's open write: %v", err)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}
