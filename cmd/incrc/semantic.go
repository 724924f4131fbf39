package main

import (
	"fmt"
	"html"
	"io"
	"path/filepath"
	"sort"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/runner"
)

// pipelineChange is what a plan says of one pipeline whose compiled files
// change: what changed in its spec, in the spec's own words; the programs
// whose steps changed; the statements whose SQL changed; and what that
// means for what is already written.
type pipelineChange struct {
	Pipeline string `json:"pipeline"`
	Spec     string `json:"spec,omitempty"`
	// Kind: new (no compiled file on disk), changed, removed.
	Kind         string   `json:"kind"`
	Summary      string   `json:"summary,omitempty"` // a new pipeline: one line of what it is
	Params       []string `json:"spec_changes,omitempty"`
	Programs     []string `json:"programs,omitempty"`
	Statements   []string `json:"statements,omitempty"`
	Consequences []string `json:"consequences,omitempty"`
	// logic: a parameter that decides the rows computed changed.
	logic bool
	files []fileChange
	// hunks are the file diffs cut per statement, each labelled with it.
	hunks []string
}

// compiledParts is a compiled file cut into what a reviewer reads apart:
// its header (the spec's parameters, the programs) and each statement.
type compiledParts struct {
	header   string
	programs map[string]string // program name: its listing
	progs    []string
	stmts    map[string]string
	names    []string
}

func splitCompiled(data []byte) compiledParts {
	cp := compiledParts{programs: map[string]string{}, stmts: map[string]string{}}
	text := string(data)
	blocks := strings.Split(text, "\n-- name: ")
	cp.header = blocks[0] + "\n"
	for _, b := range blocks[1:] {
		name, _, _ := strings.Cut(b, "\n")
		cp.stmts[name] = "-- name: " + b
		if !strings.HasSuffix(cp.stmts[name], "\n") {
			cp.stmts[name] += "\n"
		}
		cp.names = append(cp.names, name)
	}
	var cur string
	for _, line := range strings.Split(blocks[0], "\n") {
		switch {
		case strings.HasPrefix(line, "-- program "):
			name := strings.TrimPrefix(line, "-- program ")
			if i := strings.IndexAny(name, " :"); i > 0 {
				name = name[:i]
			}
			cur = name
			cp.progs = append(cp.progs, name)
			cp.programs[cur] = line + "\n"
		case cur != "" && strings.HasPrefix(line, "--   "):
			cp.programs[cur] += line + "\n"
		case line == "--":
			cur = ""
		}
	}
	return cp
}

// semanticChanges groups the file changes by pipeline and says, for each,
// what changed in its spec (read from the header of the file on disk),
// then its programs, statements and consequences.
func semanticChanges(specs []*compiler.Spec, changes []fileChange, files []compiled, next []*runner.Preview) []*pipelineChange {
	byPipeline := map[string]*pipelineChange{}
	var order []string
	spec := map[string]*compiler.Spec{}
	for _, s := range specs {
		spec[s.Pipeline.Value] = s
	}
	newData := map[string][]byte{}
	for _, f := range files {
		newData[f.path] = f.data
	}
	for _, c := range changes {
		if filepath.Base(c.Path) == dialects.BookkeepingName {
			continue // no pipeline's: its diff is the file list's and the hunks'
		}
		name := strings.TrimSuffix(filepath.Base(c.Path), ".sql")
		pc := byPipeline[name]
		if pc == nil {
			pc = &pipelineChange{Pipeline: name}
			byPipeline[name] = pc
			order = append(order, name)
		}
		pc.files = append(pc.files, c)
	}
	sort.Strings(order)
	var out []*pipelineChange
	for _, name := range order {
		pc := byPipeline[name]
		s := spec[name]
		if s != nil {
			pc.Spec = specPath(s.File)
		}
		var oldParams []ir.SpecParam
		haveOld, allNew := false, true
		stmtDialects := map[string][]string{}
		progChanged := map[string]string{}
		var progOrder []string
		for _, f := range pc.files {
			dialect := filepath.Base(filepath.Dir(f.Path))
			var old, cur []byte
			if f.Action != "added" {
				old = f.old
				allNew = false
				if !haveOld {
					oldParams, haveOld = ir.ReadParams(old)
				}
			}
			cur = newData[f.Path]
			o, n := splitCompiled(old), splitCompiled(cur)
			if f.Action == "added" {
				continue
			}
			for _, p := range n.progs {
				if o.programs[p] != n.programs[p] {
					if _, ok := progChanged[p]; !ok {
						progChanged[p] = stepChange(o.programs[p], n.programs[p])
						progOrder = append(progOrder, p)
					}
				}
			}
			for _, p := range o.progs {
				if _, ok := n.programs[p]; !ok {
					if _, ok := progChanged[p]; !ok {
						progChanged[p] = "removed"
						progOrder = append(progOrder, p)
					}
				}
			}
			if o.header != n.header {
				pc.hunks = append(pc.hunks, hunk(slash(f.Path)+" (header)", o.header, n.header))
			}
			names := append([]string(nil), n.names...)
			for _, nm := range o.names {
				if _, ok := n.stmts[nm]; !ok {
					names = append(names, nm)
				}
			}
			for _, nm := range names {
				if o.stmts[nm] == n.stmts[nm] {
					continue
				}
				stmtDialects[nm] = append(stmtDialects[nm], dialect)
				label := slash(f.Path) + " (statement " + nm + ")"
				pc.hunks = append(pc.hunks, hunk(label, o.stmts[nm], n.stmts[nm]))
			}
		}
		switch {
		case s == nil:
			pc.Kind = "removed"
			pc.Consequences = []string{"the pipeline is gone from the specs: its compiled files are removed; its target, state and run log stay in the databases"}
		case allNew:
			pc.Kind = "new"
			pc.Summary = newSummary(s, pc.files)
		default:
			pc.Kind = "changed"
			newParams := compiler.Params(s)
			if !haveOld {
				pc.Params = []string{"(the compiled files on disk predate the spec's parameters in their header: compile once to compare them from then on)"}
			} else {
				for _, c := range compiler.DiffParams(oldParams, newParams) {
					pc.Params = append(pc.Params, c.String())
					pc.logic = pc.logic || c.Logic
				}
				pc.Consequences = consequences(s, compiler.DiffParams(oldParams, newParams), previewOf(next, name))
			}
		}
		for _, p := range progOrder {
			pc.Programs = append(pc.Programs, p+": "+progChanged[p])
		}
		var stmts []string
		for nm := range stmtDialects {
			stmts = append(stmts, nm)
		}
		sort.Strings(stmts)
		for _, nm := range stmts {
			ds := stmtDialects[nm]
			where := strings.Join(ds, ", ")
			if len(ds) == len(pc.files) && len(ds) > 1 {
				where = "every dialect"
			}
			pc.Statements = append(pc.Statements, nm+" ("+where+")")
		}
		out = append(out, pc)
	}
	return out
}

func previewOf(next []*runner.Preview, name string) *runner.Preview {
	for _, p := range next {
		if p.Pipeline == name {
			return p
		}
	}
	return nil
}

// stepChange says how a program's steps changed: steps added, removed, or
// the same steps in another order.
func stepChange(old, new string) string {
	steps := func(listing string) []string {
		var out []string
		for _, l := range strings.Split(listing, "\n") {
			if f := strings.Fields(strings.TrimPrefix(l, "--")); strings.HasPrefix(l, "--   ") && len(f) > 0 && f[0] != "begin" && f[0] != "commit" && f[0] != "then," && f[0] != "refused" {
				out = append(out, f[0])
			}
		}
		return out
	}
	if old == "" {
		return "new"
	}
	o, n := steps(old), steps(new)
	in := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	var parts []string
	for _, s := range n {
		if !in(o, s) {
			parts = append(parts, "+ "+s)
		}
	}
	for _, s := range o {
		if !in(n, s) {
			parts = append(parts, "- "+s)
		}
	}
	if len(parts) > 0 {
		return strings.Join(parts, ", ")
	}
	if strings.Join(o, " ") != strings.Join(n, " ") {
		return "the same steps in another order"
	}
	return "the steps' conditions or reads changed"
}

// consequences says what a spec change means for what is already written.
func consequences(s *compiler.Spec, changes []compiler.ParamChange, pv *runner.Preview) []string {
	var out []string
	changed := map[string]compiler.ParamChange{}
	logic := false
	for _, c := range changes {
		changed[c.Key] = c
		logic = logic || c.Logic
	}
	fullRefresh := false
	for _, k := range []string{"strategy", "unique_key", "partition.column", "partition.granularity", "target.table", "cdc.sequence", "scd2.by"} {
		if c, ok := changed[k]; ok {
			out = append(out, fmt.Sprintf("needs a full refresh (incrc run --full-refresh): %s changed, and the rows already written were kept by the old one", c.Key))
			fullRefresh = true
			break
		}
	}
	var ddl []string
	for _, c := range changes {
		if c.Key != "columns" {
			continue
		}
		name, nt := splitColumn(c.New)
		oname, ot := splitColumn(c.Old)
		switch {
		case c.Old == "":
			ddl = append(ddl, "add column "+name+" "+nt.String()+" (the next run adds it; rows written before hold NULL there)")
		case c.New == "":
			ddl = append(ddl, "drop column "+oname+" (incrc migrate)")
		default:
			if fits, _ := ir.Fits(ot, nt); fits {
				ddl = append(ddl, "widen "+name+" "+ot.String()+" -> "+nt.String()+" (the next run does it in place)")
			} else {
				ddl = append(ddl, "change "+name+" "+ot.String()+" -> "+nt.String()+" (incrc migrate; rows that do not fit fail it)")
			}
		}
	}
	if len(ddl) > 0 {
		out = append(out, "the target and the quarantine need these DDL changes: "+strings.Join(ddl, "; "))
	}
	if pv != nil && len(pv.Schema) > 0 {
		var pend []string
		for _, ch := range pv.Schema {
			pend = append(pend, strings.Join(ch.DDL, "; "))
		}
		out = append(out, "pending on the target: "+strings.Join(pend, "; "))
	}
	switch {
	case logic && !fullRefresh && s.Partition != nil:
		stale := "a backfill of the partitions built by the old logic (incrc backfill --stale; plan --target counts them)"
		if pv != nil && pv.Stale != nil {
			if len(pv.Stale) == 0 {
				stale = "no partition built yet needs a backfill"
			} else {
				stale = fmt.Sprintf("%d %s (from %s to %s) need a backfill: incrc backfill --stale", len(pv.Stale), plural(len(pv.Stale), "partition", "partitions"), pv.Stale[0], pv.Stale[len(pv.Stale)-1])
			}
		}
		out = append(out, "rows already written were computed with the old logic: "+stale)
	case logic && !fullRefresh:
		out = append(out, "rows already written were computed with the old logic: without partitions, a full refresh (incrc run --full-refresh) rebuilds them")
	case !logic:
		out = append(out, "rows already written stay as the new spec computes them: no backfill needed")
	}
	if c, ok := changed["watermark.column"]; ok {
		out = append(out, fmt.Sprintf("the saved watermark is a value of %s, not of %s: rewind it (incrc state --rewind) or run a full refresh", orNone(c.Old), orNone(c.New)))
	} else {
		out = append(out, "state is kept: the watermark, the lease and the run log carry over")
	}
	return out
}

func splitColumn(v string) (string, ir.Type) {
	name, rest, _ := strings.Cut(v, " ")
	rest = strings.TrimSuffix(rest, " nullable")
	t, _ := ir.ParseType(rest)
	return name, t
}

// newSummary is a new pipeline in one line.
func newSummary(s *compiler.Spec, files []fileChange) string {
	src := s.Source.Table.Value
	if src == "" {
		src = "a source.query"
	}
	var ds []string
	for _, f := range files {
		ds = append(ds, filepath.Base(filepath.Dir(f.Path)))
	}
	line := fmt.Sprintf("new pipeline: %s from %s into %s, %d %s", s.Strategy.Value, src, s.Target.Table.Value, len(s.Columns), plural(len(s.Columns), "column", "columns"))
	if s.Watermark != nil {
		line += ", watermark " + s.Watermark.Column.Value
	}
	return line + "; compiled for " + strings.Join(ds, ", ")
}

// printSemanticText leads each pipeline with what changed in its spec.
func printSemanticText(w io.Writer, pcs []*pipelineChange) {
	for _, pc := range pcs {
		fmt.Fprintln(w)
		where := ""
		if pc.Spec != "" {
			where = " (" + pc.Spec + ")"
		}
		switch pc.Kind {
		case "new":
			fmt.Fprintf(w, "%s%s: %s\n", pc.Pipeline, where, pc.Summary)
			continue
		case "removed":
			fmt.Fprintf(w, "%s: removed\n", pc.Pipeline)
		default:
			fmt.Fprintf(w, "%s%s: the spec changed\n", pc.Pipeline, where)
		}
		for _, p := range pc.Params {
			fmt.Fprintf(w, "  %s\n", p)
		}
		if len(pc.Programs) > 0 {
			fmt.Fprintf(w, "  programs changed:\n")
			for _, p := range pc.Programs {
				fmt.Fprintf(w, "    %s\n", p)
			}
		}
		if len(pc.Statements) > 0 {
			fmt.Fprintf(w, "  statements changed: %s\n", strings.Join(pc.Statements, ", "))
		}
		if len(pc.Consequences) > 0 {
			fmt.Fprintf(w, "  what it means:\n")
			for _, c := range pc.Consequences {
				fmt.Fprintf(w, "    - %s\n", c)
			}
		}
	}
}

// printHunks prints the diffs cut per statement, each labelled with it;
// a new pipeline's files whole.
func printHunks(w io.Writer, pcs []*pipelineChange) {
	for _, pc := range pcs {
		if pc.Kind == "changed" {
			for _, h := range pc.hunks {
				fmt.Fprintf(w, "\n%s", h)
			}
			continue
		}
		for _, f := range pc.files {
			fmt.Fprintf(w, "\n%s", f.Diff)
		}
	}
}

// printSemanticMarkdown is the pull-request form: per pipeline what
// changed in the spec and what it means, the statement diffs collapsed; a
// new pipeline is a summary line and one collapsed block.
func printSemanticMarkdown(w io.Writer, pcs []*pipelineChange) {
	for _, pc := range pcs {
		switch pc.Kind {
		case "new":
			fmt.Fprintf(w, "\n#### %s: %s\n", mdCode(pc.Pipeline), mdText(pc.Summary))
			f := pc.files[0]
			more := ""
			if len(pc.files) > 1 {
				more = fmt.Sprintf(" (%d more %s: the same statements, spelled for each)", len(pc.files)-1, plural(len(pc.files)-1, "dialect", "dialects"))
			}
			fmt.Fprintf(w, "\n<details><summary><code>%s</code>%s</summary>\n\n%s\n\n</details>\n", html.EscapeString(oneLine(slash(f.Path))), more, fencedBlock("diff", f.Diff))
			continue
		case "removed":
			fmt.Fprintf(w, "\n#### %s: removed\n\n", mdCode(pc.Pipeline))
		default:
			fmt.Fprintf(w, "\n#### %s: the spec changed\n\n", mdCode(pc.Pipeline))
		}
		for _, p := range pc.Params {
			fmt.Fprintf(w, "- %s\n", mdCode(p))
		}
		if len(pc.Consequences) > 0 {
			fmt.Fprintf(w, "\n**What it means**\n\n")
			for _, c := range pc.Consequences {
				fmt.Fprintf(w, "- %s\n", mdText(c))
			}
		}
		if len(pc.Programs) > 0 {
			fmt.Fprintf(w, "\n**Programs changed:** %s\n", mdCodes(pc.Programs))
		}
		if len(pc.Statements) > 0 {
			fmt.Fprintf(w, "\n**Statements changed:** %s\n", mdCodes(pc.Statements))
		}
		var b strings.Builder
		for _, h := range pc.hunks {
			b.WriteString(h)
		}
		if pc.Kind == "removed" {
			for _, f := range pc.files {
				b.WriteString(f.Diff)
			}
		}
		if b.Len() > 0 {
			fmt.Fprintf(w, "\n<details><summary>the diff, per statement</summary>\n\n%s\n\n</details>\n", fencedBlock("diff", b.String()))
		}
	}
}

// mdCodes is a list of names, each a code span.
func mdCodes(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = mdCode(n)
	}
	return strings.Join(out, ", ")
}

// fencedBlock is body as a fenced code block whose fence is longer than
// any run of backticks in it, so nothing in it can end the block.
func fencedBlock(lang, body string) string {
	fence := "```"
	for strings.Contains(body, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + body + fence
}

// hunk is the unified diff of one part of a compiled file, labelled with
// it (the statement's name), without the "diff" line that would repeat it.
func hunk(label, old, new string) string {
	d := string(diff.Diff(label, []byte(old), label, []byte(new)))
	if strings.HasPrefix(d, "diff ") {
		if _, rest, ok := strings.Cut(d, "\n"); ok {
			d = rest
		}
	}
	return d
}
