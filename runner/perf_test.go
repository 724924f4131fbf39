package runner

import (
	"sync"
	"testing"
	"time"
)

// TestDurationCoversCommit: the run log's duration_ms and finished_at are
// written after the write transaction committed, so a slow commit (a
// DuckDB checkpoint, a PostgreSQL flush) shows in them. The clock jumps an
// hour at the commit: a duration taken before it would miss that hour.
func TestDurationCoversCommit(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := ordersPlan(e, "dur", "lookback: 2d")
			seedOrders(e, p)
			var mu sync.Mutex
			clock := time.Date(2026, 1, 24, 12, 0, 0, 0, time.UTC)
			now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
			hook := func(name string) error {
				if name == "commit" {
					mu.Lock()
					clock = clock.Add(time.Hour)
					mu.Unlock()
				}
				return nil
			}
			for _, full := range []bool{true, false} {
				res := mustRun(t, e, p, Options{Until: until("2026-01-24"), Now: now, BeforeStatement: hook, FullRefresh: full})
				if res.DurationMS < time.Hour.Milliseconds() {
					t.Errorf("full refresh %v: the result's duration %d ms misses the commit", full, res.DurationMS)
				}
				st := e.state(p)
				if len(st.Runs) == 0 || st.Runs[0].RunID != res.RunID {
					t.Fatalf("full refresh %v: the run log's latest run is not this one: %+v", full, st.Runs)
				}
				got := st.Runs[0]
				if got.DurationMS != res.DurationMS || got.FinishedAt != res.FinishedAt || got.Status != "succeeded" {
					t.Errorf("full refresh %v: the run log says %d ms, finished %s, %s; the result %d ms, finished %s",
						full, got.DurationMS, got.FinishedAt, got.Status, res.DurationMS, res.FinishedAt)
				}
			}
			if st := e.state(p); st.LeaseOwner != "" {
				t.Errorf("the lease is still held by %s", st.LeaseOwner)
			}
		})
	}
}
