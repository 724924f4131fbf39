package dialects

import (
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// ReadsFilesItself reports whether a target of dialect d reads a plan's
// files source with its own reader: the source's statements are spelled
// in d (a files source's are DuckDB's), so the target can run them where
// its rows are to go, and nothing crosses into incrc and back.
func ReadsFilesItself(d Dialect, p *ir.Plan) bool {
	f := p.From
	return f != nil && f.Files != "" && string(d.Name()) == f.Dialect
}

// ForTarget is the plan a target of dialect d runs: p itself, but for a
// files source the target reads itself (ReadsFilesItself). Then every
// statement that ran on the embedded reader runs on the target, and each
// read that a copy step streamed into a table of the target becomes the
// statement that stages the rows there (INSERT ... SELECT from the reader
// over the run's exact file list, with the declared columns), counted as
// the copy counted them. No value is converted in between, so no row is
// held back for the quarantine: those steps go too.
//
// Compiled files and the runner both spell the plan ForTarget returns:
// the statement that reads the files is in the file a reviewer reads.
func ForTarget(d Dialect, p *ir.Plan) *ir.Plan {
	if !ReadsFilesItself(d, p) || readsItself(p) {
		return p // not a files source this target reads, or made so already
	}
	copies := map[string]ir.Table{}
	for _, pr := range p.Programs {
		for _, s := range pr.Steps {
			if s.Read == ir.ReadCopy {
				copies[s.Stmt] = s.Copy
			}
		}
	}
	q := *p
	q.Statements = make([]*ir.Statement, 0, len(p.Statements))
	for _, st := range p.Statements {
		if st.Name == ir.StmtQuarantineUnfit {
			continue
		}
		if st.On != ir.OnSource {
			q.Statements = append(q.Statements, st)
			continue
		}
		c := *st
		c.On = ""
		if op, ok := st.Op.(ir.ReadSource); ok {
			into, ok := copies[st.Name]
			if !ok {
				continue // a read no program copies (an append's, which copies straight into the target)
			}
			c.Op = ir.StageRows{Into: into, Source: op.Source, Columns: op.Columns, Window: op.Window, Where: op.Where, Dedupe: op.Dedupe, Range: op.Range}
			if doc, _, cut := strings.Cut(c.Doc, " Read on the source;"); cut {
				c.Doc = doc
			}
			c.Doc += " The target reads the files itself, over the run's list of them."
		}
		q.Statements = append(q.Statements, &c)
	}
	q.Programs = make([]*ir.Program, len(p.Programs))
	for i, pr := range p.Programs {
		c := *pr
		c.Steps = make([]ir.Step, 0, len(pr.Steps))
		for _, s := range pr.Steps {
			if s.Read == ir.ReadHeld {
				continue
			}
			s.On = ""
			if s.Read == ir.ReadCopy {
				s.Read, s.Copy = ir.ReadAffected, ir.Table{}
			}
			c.Steps = append(c.Steps, s)
		}
		q.Programs[i] = &c
	}
	return &q
}

// readsItself: the plan's files source is read by the target
// (ForTarget made it so): no statement runs on the source.
func readsItself(p *ir.Plan) bool {
	if p.From == nil || p.From.Files == "" {
		return false
	}
	for _, st := range p.Statements {
		if st.On == ir.OnSource {
			return false
		}
	}
	return true
}
