package runner

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/compiler/ir"
)

// TestDeadPeer: the proxy between a run and its server goes silent while
// the run waits for its write; it accepts connections and answers
// nothing, so the kernel's keepalive sees a live peer. The statement
// timeout is an hour, as by default: the run's pings, on connections of
// their own, get no answer, and the run fails with a DeadPeerError after
// two ping intervals, not at the statement timeout.
func TestDeadPeer(t *testing.T) {
	for _, eng := range serverEngines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := ordersPlan(e, "peer", "lookback: 2d")
			seedOrders(e, p)
			px := newProxy(t, hostOf(t, e.url))
			tg, err := Open(e.ctx, all.Lookup, px.through(t, e.url), "", ConnectTimeout(2*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			if tg.StatementTimeout != time.Hour || tg.PingInterval != DefaultPingInterval {
				t.Fatalf("defaults: statement timeout %s, ping interval %s", tg.StatementTimeout, tg.PingInterval)
			}
			tg.PingInterval = time.Second
			done := make(chan struct{})
			var res *Result
			go func() {
				defer close(done)
				res, err = tg.Run(e.ctx, p, Options{Until: until("2026-01-24"), LeaseTTL: time.Hour, BeforeStatement: func(name string) error {
					if name == ir.StmtWrite {
						px.silence()
					}
					return nil
				}})
			}()
			select {
			case <-done:
			case <-time.After(5 * time.Minute):
				t.Fatal("the run still waits for a silent server after 5 minutes")
			}
			var dp *DeadPeerError
			if !errors.As(err, &dp) || !strings.Contains(err.Error(), "stopped answering") {
				t.Fatalf("a silent server: %v, want a DeadPeerError", err)
			}
			if res == nil || res.Status != "failed" {
				t.Errorf("result: %+v", res)
			}
			if strings.Contains(err.Error(), "statement timeout") {
				t.Errorf("waited for the statement timeout: %v", err)
			}
		})
	}
}
