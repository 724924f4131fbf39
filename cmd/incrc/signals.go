package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// releaseHint is the command that frees the lease of the pipeline incrc
// run is running, for the message of a second signal, which leaves it
// held: the signal arrives outside every command, and only the command
// knows its target as the user gave it.
var releaseHint atomic.Pointer[string]

// signalContext is the context of incrc run from a shell or a scheduler:
// the first SIGTERM, SIGINT or SIGHUP (a scheduler cancelling its task,
// Ctrl-C, a closed terminal) cancels it, which cancels the statement that
// is running; the run rolls back, is recorded as cancelled and frees its
// lease, and incrc exits exitCancelled. A second signal exits at once,
// with 128 plus its number as a shell reports a process a signal ended.
func signalContext() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		sig := <-ch
		fmt.Fprintf(os.Stderr, "incrc: %v: cancelling: the statement is cancelled, the run rolled back, recorded as cancelled and its lease freed (a second signal exits at once)\n", sig)
		cancel()
		sig = <-ch
		code := 128 + 1
		if s, ok := sig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		hint := "incrc state --target URL --release PIPELINE"
		if h := releaseHint.Load(); h != nil {
			hint = *h
		}
		fmt.Fprintf(os.Stderr, "incrc: %v again: exiting at once; a run's lease is held until it expires, or its database session ends where the engine has session locks (free it with: %s)\n", sig, hint)
		os.Exit(code)
	}()
	return ctx
}
