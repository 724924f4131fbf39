package runner

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// DefaultPingInterval is how often a run on a server engine asks the
// server whether it is still there, and how long it waits for the answer.
// A statement may rightly run for an hour (--timeout), and a healthy
// server answers a ping within milliseconds even then, on another
// connection: a server (or a proxy, a network path) that stopped
// answering fails the run after at most twice this, instead of at the
// statement timeout.
const DefaultPingInterval = 10 * time.Second

// keepAlive probes an idle connection whose peer vanished (a host gone,
// a dropped route): the kernel notices after about Idle + Interval*Count,
// where the drivers' defaults wait minutes (pgx: 5) before the first probe.
var keepAlive = net.KeepAliveConfig{Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3}

// dial opens a server's TCP connection with keepAlive.
func dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d := net.Dialer{KeepAliveConfig: keepAlive}
	return d.DialContext(ctx, network, addr)
}

// DeadPeerError says the server stopped answering while a run was going
// on: a ping, on a connection of its own, got no answer in time. The run
// was cancelled, as a signal would cancel it, and recorded as failed.
type DeadPeerError struct {
	Target   string
	Interval time.Duration
}

func (e *DeadPeerError) Error() string {
	return fmt.Sprintf("%s stopped answering: a ping got no answer within %s while the run waited for a statement (a server, a proxy or the network path gone)", e.Target, e.Interval)
}

// watchPeer pings the target every PingInterval while a program runs on a
// server engine, and cancels ctx with a *DeadPeerError when a ping gets
// no answer within the interval. A ping the server answers with an error
// (too many connections) is an answer: the server is there. stop ends the
// watch.
func (t *Target) watchPeer(ctx context.Context, cancel context.CancelCauseFunc) (stop func()) {
	interval := t.PingInterval
	if interval <= 0 || !t.Dialect.Caps().Heartbeat {
		return func() {}
	}
	ctx, done := context.WithCancel(ctx)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		tick := time.NewTicker(interval)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			pctx, pcancel := context.WithTimeout(ctx, interval)
			t.DB.PingContext(pctx)
			silent := errors.Is(pctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
			pcancel()
			if silent {
				cancel(&DeadPeerError{Target: t.URL, Interval: interval})
				return
			}
		}
	}()
	return func() { done(); <-finished }
}

// deadPeer is the DeadPeerError that cancelled ctx, if one did.
func deadPeer(ctx context.Context) *DeadPeerError {
	var dp *DeadPeerError
	if errors.As(context.Cause(ctx), &dp) {
		return dp
	}
	return nil
}
