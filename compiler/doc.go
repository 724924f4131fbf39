// Package compiler turns YAML pipeline specs into a dialect-neutral plan
// (package ir: the plan the dialects and the runner read).
//
// It owns the spec model (every node keeps its file, line and column),
// validation (every error at once, each "path:line:col: message") and the
// lowering of a valid spec into ordered, named statements with declared
// parameters. It decides what happens in a run — setup, staging, dedupe,
// the quality split, the write, the run record and the watermark advance —
// and never how an engine spells it: that is the dialects' job. What sets
// one strategy apart lives in its own file (append.go, merge.go,
// overwrite.go, fullrefresh.go, cdc.go, scd2.go) behind the strategy
// interface of strategy.go.
//
// The compiler never opens a database, reads the environment or the clock.
package compiler
