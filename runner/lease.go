package runner

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/incrc/incrc/compiler/ir"
)

// DefaultLeaseTTL is how long a lease lasts without renewal: long enough
// for a slow statement, short enough that a crashed run's pipeline is not
// stuck for long.
const DefaultLeaseTTL = 5 * time.Minute

// MinLeaseTTL is the shortest lease a command accepts. The lease is
// renewed when a third of it has passed, by a statement that queues like
// any other on a busy server (and, on DuckDB and SQLite, only between the
// program's steps): a lease much shorter expires while its run is alive,
// and a second run takes the pipeline. A nanosecond disabled the lease.
const MinLeaseTTL = 30 * time.Second

// LockedError says another run holds the pipeline's lease, or (Reason
// set) another process holds the whole target, as DuckDB's one writer.
type LockedError struct {
	Pipeline string
	Owner    string
	Until    string
	Reason   string
	// Target is the target as the command that was refused names it
	// (shell-quoted, no password): the command the message gives then
	// works when pasted.
	Target string
}

func (e *LockedError) Error() string {
	if e.Reason != "" {
		return e.Reason
	}
	target := e.Target
	if target == "" {
		target = "URL"
	}
	if e.Owner == "" {
		// The session lock is held, the lease not yet: a run starting.
		return fmt.Sprintf("pipeline %s is locked by another run that is starting (its database session holds the pipeline's lock)", e.Pipeline)
	}
	return fmt.Sprintf("pipeline %s is locked by run %s until %s (wait, or free a dead run's lease with: incrc state --target %s --release %s)", e.Pipeline, e.Owner, e.Until, target, e.Pipeline)
}

// lease is a pipeline's lease while a program holds it. It is renewed
// when a third of its time has passed: by one ticker on a connection of
// its own where that cannot conflict with the program's writes
// (concurrent), otherwise between the program's steps (renewDue).
type lease struct {
	t        *Target
	c        *compiled
	pipeline string
	owner    string
	ttl      time.Duration
	now      func() time.Time
	ticks    <-chan time.Time // the heartbeat's, when not a ticker's (Options.ticks)

	mu      sync.Mutex
	renewed time.Time
	stop    func()
	// session: the lease's connection holds the engine's session lock of
	// the pipeline (lock_session), given back with the lease.
	session bool
}

// sessionMark ends the name of a lease holder that holds the engine's
// session lock of its pipeline: when another run then gets that lock, the
// holder's session is gone, and so is its process, and the lease is taken
// over at once instead of after its TTL. A holder without it (an
// engine-side script, an older incrc, an owner given by the caller) is
// waited for as before.
const sessionMark = " (session lock)"

// has: the statement has something to run on this engine.
func (c *compiled) has(name string) bool {
	st, ok := c.stmts[name]
	return ok && len(st.Parts) > 0
}

// acquire takes the pipeline's lease on conn: it reads the state first,
// so that a held lease is reported at once without queueing behind the
// holder's write transaction (SQLite has one writer at a time), creates
// the state row if there is none, and takes the lease by compare-and-set.
// Runs still marked running are then abandoned: their lease is gone.
//
// Where the engine has session locks, the pipeline's is taken first, on
// conn, and held until the lease is given back; generated says the
// owner's name is incrc's own (NewOwner), which then says it holds the
// lock (sessionMark).
func (t *Target) acquire(ctx context.Context, conn querier, c *compiled, vals params, ttl time.Duration, now func() time.Time, hook func(string) error, generated bool) (*lease, error) {
	l := &lease{t: t, c: c, pipeline: c.plan.Pipeline, owner: vals["owner"].(string), ttl: ttl, now: now, stop: func() {}}
	step := func(name string) (int64, error) {
		if hook != nil {
			if err := hook(name); err != nil {
				return 0, fmt.Errorf("%s: %w", name, err)
			}
		}
		if name != ir.StmtAcquireLease {
			return 0, c.run(ctx, conn, name, vals) // no count read
		}
		return c.exec(ctx, conn, name, vals)
	}
	at := now()
	if c.has(ir.StmtLockSession) {
		// The session lock first: while a live run holds it, nothing of the
		// state is touched.
		taken, err := lockSession(ctx, conn, c, vals, l.pipeline)
		if err != nil {
			return nil, err
		}
		if !taken {
			st, err := readState(ctx, c, conn, l.pipeline)
			if err != nil {
				return nil, err
			}
			return nil, &LockedError{Pipeline: l.pipeline, Owner: st.LeaseOwner, Until: st.LeaseExpiresAt}
		}
		l.session = true
		if generated && !strings.HasSuffix(l.owner, sessionMark) {
			l.owner += sessionMark
			vals["owner"] = l.owner
		}
	}
	taken, err := t.acquireLease(ctx, conn, c, l, vals, ttl, at, step)
	if err != nil {
		if l.session {
			c.run(context.WithoutCancel(ctx), conn, ir.StmtUnlockSession, vals)
		}
		return nil, err
	}
	return taken, nil
}

// sessionGrace is how long a run asks again for a session lock that an
// incrc run holds: a killed run's server session ends a moment after its
// process does (the server notices the closed connection), and a run
// started right after the kill would otherwise find the lock still held.
// A live holder is reported after it, as before.
const sessionGrace = 3 * time.Second

// lockSession takes the pipeline's session lock (lock_session); held by
// a run that marked its lease as holding it (sessionMark), the lock is
// asked for again for sessionGrace before it counts as held.
func lockSession(ctx context.Context, conn querier, c *compiled, vals params, pipeline string) (bool, error) {
	deadline := time.Now().Add(sessionGrace)
	for {
		n, _, err := c.count(ctx, conn, ir.StmtLockSession, vals)
		if err != nil || n == 1 {
			return n == 1, err
		}
		st, err := readState(ctx, c, conn, pipeline)
		if err != nil {
			return false, err
		}
		if !strings.HasSuffix(st.LeaseOwner, sessionMark) || time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// acquireLease is acquire's part after the session lock: the state row,
// then the lease, taken by compare-and-set, or taken over from a holder
// whose session lock this run now holds.
func (t *Target) acquireLease(ctx context.Context, conn querier, c *compiled, l *lease, vals params, ttl time.Duration, at time.Time, step func(string) (int64, error)) (*lease, error) {
	st, err := readState(ctx, c, conn, l.pipeline)
	if err != nil {
		return nil, err
	}
	if st.LeaseOwner != "" && st.LeaseOwner != l.owner && st.LeaseExpiresAt >= stateTime(at) {
		if !l.session || !strings.HasSuffix(st.LeaseOwner, sessionMark) || !c.has(ir.StmtTakeOverLease) {
			return nil, &LockedError{Pipeline: l.pipeline, Owner: st.LeaseOwner, Until: st.LeaseExpiresAt}
		}
		// Its holder held the session lock this run now holds: the
		// holder's connection, and process, are gone.
		vals["holder"] = st.LeaseOwner
		vals["expires_at"] = stateTime(at.Add(ttl))
		n, err := c.exec(ctx, conn, ir.StmtTakeOverLease, vals)
		if err != nil {
			return nil, err
		}
		if n != 1 {
			st, err := readState(ctx, c, conn, l.pipeline)
			if err != nil {
				return nil, err
			}
			return nil, &LockedError{Pipeline: l.pipeline, Owner: st.LeaseOwner, Until: st.LeaseExpiresAt}
		}
		l.renewed = at
		if _, err := step(ir.StmtAbandonRuns); err != nil {
			l.releaseOn(ctx, conn)
			return nil, err
		}
		return l, nil
	}
	if !st.exists {
		if _, err := step(ir.StmtInitState); err != nil {
			return nil, err
		}
	}
	vals["now"] = stateTime(at)
	vals["expires_at"] = stateTime(at.Add(ttl))
	n, err := step(ir.StmtAcquireLease)
	if err != nil {
		return nil, err
	}
	if n != 1 {
		st, err := readState(ctx, c, conn, l.pipeline)
		if err != nil {
			return nil, err
		}
		return nil, &LockedError{Pipeline: l.pipeline, Owner: st.LeaseOwner, Until: st.LeaseExpiresAt}
	}
	l.renewed = at
	if _, err := step(ir.StmtAbandonRuns); err != nil {
		l.releaseOn(ctx, conn)
		return nil, err
	}
	return l, nil
}

// keep starts the ticker that renews the lease on a connection of its own
// while the program runs. A failed renewal is not fatal here: the
// advance's compare-and-set on the lease owner is what keeps a run that
// lost its lease from committing.
func (l *lease) keep(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	l.stop = func() { cancel(); <-done }
	go func() {
		defer close(done)
		ticks := l.ticks
		if ticks == nil {
			tick := time.NewTicker(max(l.ttl/3, 10*time.Millisecond))
			defer tick.Stop()
			ticks = tick.C
		}
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticks:
				l.renew(ctx, l.t.DB)
			}
		}
	}()
}

// renewDue renews the lease on q when a third of its time has passed: the
// renewal between steps, for engines where the ticker cannot run.
func (l *lease) renewDue(ctx context.Context, q querier) error {
	l.mu.Lock()
	due := l.now().Sub(l.renewed) >= l.ttl/3
	l.mu.Unlock()
	if !due {
		return nil
	}
	return l.renew(ctx, q)
}

func (l *lease) renew(ctx context.Context, q querier) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	at := l.now()
	vals := params{"pipeline": l.pipeline, "owner": l.owner, "expires_at": stateTime(at.Add(l.ttl))}
	n, err := l.c.exec(ctx, q, ir.StmtRenewLease, vals)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("lease lost: another run took over pipeline %s after this run's lease expired", l.pipeline)
	}
	l.renewed = at
	return nil
}

// release stops the ticker and gives the lease back. It runs even when
// the program's context is cancelled, and when the program's connection
// died it goes over a fresh one: a dead run must not hold its pipeline
// for the whole TTL.
func (l *lease) release(ctx context.Context, conn *sql.Conn) error {
	l.stop()
	vals := params{"pipeline": l.pipeline, "owner": l.owner}
	err := l.t.onLiveConn(ctx, conn, func(ctx context.Context, q querier) error {
		return l.c.run(ctx, q, ir.StmtReleaseLease, vals)
	})
	l.unlockSession(ctx, conn)
	return err
}

// unlockSession gives the session lock back on the lease's connection,
// after the lease: a pooled connection outlives the run. On a connection
// that died the lock went with it.
func (l *lease) unlockSession(ctx context.Context, q querier) {
	if !l.session {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	l.c.run(ctx, q, ir.StmtUnlockSession, params{"pipeline": l.pipeline})
	l.session = false
}

// releaseOn gives the lease back on q: in a transaction of the run's
// bookkeeping, or after a failure that left the connection alive.
func (l *lease) releaseOn(ctx context.Context, q querier) error {
	l.stop()
	_, err := l.c.exec(ctx, q, ir.StmtReleaseLease, params{"pipeline": l.pipeline, "owner": l.owner})
	if _, inTx := q.(*sql.Tx); !inTx {
		l.unlockSession(ctx, q)
	}
	return err
}

// cleanupTimeout bounds what runs after a program failed (its record, the
// lease's release), so that a dead server cannot hang the exit.
const cleanupTimeout = 30 * time.Second

// onLiveConn runs f on conn, and when that fails, once more on a fresh
// connection: for the bookkeeping after a failure, when the failure may
// have been the connection itself. It runs even when ctx is cancelled.
func (t *Target) onLiveConn(ctx context.Context, conn *sql.Conn, f func(context.Context, querier) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	err := f(ctx, conn)
	if err == nil {
		return nil
	}
	fresh, cerr := t.DB.Conn(ctx)
	if cerr != nil {
		return fmt.Errorf("%w (and no fresh connection: %v)", err, cerr)
	}
	defer fresh.Close()
	return f(ctx, fresh)
}
