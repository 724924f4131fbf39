package dialects

import (
	"fmt"

	"github.com/incrc/incrc/compiler/ir"
)

// Lookup returns the dialect called name, or an error that names the
// known ones. dialects/all.Lookup is the one the command hands the
// runner: the runner speaks the engines it is handed and imports none of
// them, so a test or a program can hand it fewer.
type Lookup func(name string) (Dialect, error)

// Source returns the dialect a plan's source outside the target is
// spelled in, and nil when the source is in the target. A files source is
// read by the embedded DuckDB; a connection's dialect is the spec's
// source.dialect, or what dialectOf says of the connection (its URL's
// scheme). It records the dialect in the plan.
func Source(p *ir.Plan, lookup Lookup, dialectOf func(connection string) (string, bool)) (Dialect, error) {
	f := p.From
	if f == nil {
		return nil, nil
	}
	if f.Dialect == "" && dialectOf != nil {
		f.Dialect, _ = dialectOf(f.Connection)
	}
	if f.Dialect == "" {
		return nil, fmt.Errorf("%s: pipeline %s: source.connection %s: its dialect is not known here: add it to connections: in incrc.yaml (its URL's scheme says it), give --source %s=URL, or write source.dialect", p.File, p.Pipeline, f.Connection, f.Connection)
	}
	return lookup(f.Dialect)
}
