package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/incrc/incrc/dialects/all"
)

// TestConcurrentFirstRuns: eight runs of one pipeline start at once on a
// database where nothing of incrc exists yet (a schema of the test's own,
// where every unqualified name resolves). Their setups create the state
// tables one after the other (lock_setup): each run succeeds or is
// refused with a *LockedError (exit 3, which a scheduler retries), never
// fails with a catalog collision (PostgreSQL's duplicate key in
// pg_type_typname_nsp_index, exit 1). Several rounds, each on a fresh
// schema.
func TestConcurrentFirstRuns(t *testing.T) {
	for _, eng := range serverEngines() {
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			p := ordersPlan(e, "first", "lookback: 2d")
			seedOrders(e, p)
			for round := range 3 {
				home := fmt.Sprintf("incrc_first_%s_%d", e.id, round)
				if err := e.tg.CreateOwnSchema(e.ctx, home); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { e.tg.DropSchema(context.Background(), home) })
				url, err := InSchema(e.url, home)
				if err != nil {
					t.Fatal(err)
				}
				var (
					wg              sync.WaitGroup
					mu              sync.Mutex
					ok, locked, bad int
					errs            []error
				)
				for range 8 {
					wg.Go(func() {
						tg, err := Open(e.ctx, all.Lookup, url, "")
						if err == nil {
							defer tg.Close()
							_, err = tg.Run(e.ctx, p, Options{Until: until("2026-01-24")})
						}
						mu.Lock()
						defer mu.Unlock()
						var le *LockedError
						switch {
						case err == nil:
							ok++
						case errors.As(err, &le):
							locked++
						default:
							bad++
							errs = append(errs, err)
						}
					})
				}
				wg.Wait()
				// A run that starts after the winner finished finds the lease
				// free and succeeds too (with nothing new to read).
				if ok < 1 || ok+locked != 8 || bad != 0 {
					t.Errorf("round %d: %d succeeded, %d locked, %d failed otherwise: %v", round, ok, locked, bad, errs)
				}
			}
		})
	}
}
