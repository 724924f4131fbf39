package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/rogpeppe/go-internal/diff"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/runner"
)

func planCmd() *command {
	c := &command{
		name:    "plan",
		summary: "Compile in memory and diff against the compiled files on disk: what a compile would change.",
		usage:   "[flags] [PIPELINE|SPEC|DIR...]",
		example: "incrc plan                        # exit 0: no changes, 2: changes, 1: error\nincrc plan --dialect all --format markdown > plan.md",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p       projectFlags
			dialect string
			out     string
			scripts bool
			output  outputFlags
			tf      targetFlags
		)
		fs := c.flags(e)
		fs.StringVar(&dialect, "dialect", "", "dialect to plan for: a name, a comma-separated list, or all (default: the project's)")
		fs.BoolVar(&scripts, "scripts", false, "also compare each pipeline's engine-side scripts (see compile --scripts; incrc.yaml: scripts: true)")
		fs.StringVar(&out, "out", "", "folder of compiled files to compare with (default: the project's, sql)")
		output.register(fs, "markdown")
		tf.register(fs, "also show each pipeline's next window and the partitions it would rewrite, read from this target")
		tf.registerSources(fs)
		p.register(fs)
		p.registerWarnings(fs, &dialect)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		format, ok := output.resolve(c, e)
		if !ok {
			return exitError
		}
		pr, ok := p.load(e, c, fs.Args())
		if !ok {
			return exitError
		}
		cfg, specs := pr.cfg, pr.chosen
		if out == "" {
			out = cfg.Out
		}
		ds, err := dialectsFor(dialect, cfg)
		if err != nil {
			return c.fail(e, "%v", err)
		}
		files, errs := compileAll(specs, ds, out, cfg.ConnectionDialect, scripts || cfg.Scripts, nil)
		if len(errs) > 0 {
			for _, err := range errs {
				fmt.Fprintln(e.stderr, err)
			}
			return exitError
		}
		changes, err := diffFiles(files, dialectDirs(out, ds, !pr.named), pr.outRoots(fs, out))
		if err != nil {
			return c.fail(e, "%v", err)
		}
		var next []*runner.Preview
		if tf.target != "" {
			tf.log = e.stderr
			if next, err = previews(ctx, cfg, tf, pr); err != nil {
				return c.fail(e, "%v", err)
			}
		}
		edges := graphEdges(pr)
		semantic := semanticChanges(specs, changes, files, next)
		show(e.stdout, format, planView{changes: changes, next: next, edges: edges, semantic: semantic})
		if len(changes) > 0 {
			return exitChanges
		}
		return exitOK
	}
	return c
}

// fileChange is one compiled file a compile would add, change or remove.
type fileChange struct {
	Path   string `json:"path"`
	Action string `json:"action"` // added | changed | removed
	Diff   string `json:"diff"`
	// CompiledBy is the incrc version the file on disk records, when this
	// binary, of another version, writes a different file: an upgrade
	// shows in review as a diff, before a run refuses it.
	CompiledBy string `json:"compiled_by,omitempty"`
	old        []byte // the file on disk
}

// compiledBy is the incrc version a compiled file records ("" for none).
// The file is text anyone may have edited: a version that is not one is
// not repeated.
func compiledBy(data []byte) string {
	for _, line := range strings.SplitN(string(data), "\n", 8) {
		if v, ok := strings.CutPrefix(line, dialects.VersionLine); ok {
			if !versionText.MatchString(v) {
				return "an unrecognised version"
			}
			return "incrc " + v
		}
	}
	return ""
}

// versionText is what a version incrc records looks like.
var versionText = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9.+_-]{0,63}$`)

// diffFiles compares the files a compile would write with those on disk,
// read from inside roots only (readCompiled).
func diffFiles(files []compiled, dirs, roots []string) ([]fileChange, error) {
	var changes []fileChange
	want := map[string]bool{}
	for _, f := range files {
		want[f.path] = true
		old, err := readCompiled(f.path, roots)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			changes = append(changes, fileChange{Path: f.path, Action: "added", Diff: string(diff.Diff("/dev/null", nil, slash(f.path), f.data))})
		case err != nil:
			return nil, err
		case !bytes.Equal(old, f.data):
			ch := fileChange{Path: f.path, Action: "changed", Diff: string(diff.Diff(slash(f.path), old, slash(f.path), f.data)), old: old}
			if by := compiledBy(old); by != "incrc "+compiledVersion() {
				ch.CompiledBy = by
				if by == "" {
					ch.CompiledBy = "an incrc that records no version"
				}
			}
			changes = append(changes, ch)
		}
	}
	for _, path := range staleFiles(dirs, want, roots) {
		old, err := readCompiled(path, roots)
		if err != nil {
			return nil, err
		}
		changes = append(changes, fileChange{Path: path, Action: "removed", Diff: string(diff.Diff(slash(path), old, "/dev/null", nil)), old: old})
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes, nil
}

func slash(p string) string { return filepath.ToSlash(p) }

// upgrade says that a changed file was compiled by another incrc.
func upgrade(c fileChange) string {
	if c.CompiledBy == "" {
		return ""
	}
	return fmt.Sprintf(" (compiled by %s; this incrc, %s, writes a different file)", c.CompiledBy, compiledVersion())
}

func summary(changes []fileChange) string {
	n := map[string]int{}
	for _, c := range changes {
		n[c.Action]++
	}
	return fmt.Sprintf("%d changed, %d added, %d removed", n["changed"], n["added"], n["removed"])
}

var actionSymbol = map[string]string{"added": "+", "changed": "~", "removed": "-"}

func printPlanText(w io.Writer, changes []fileChange, semantic []*pipelineChange) {
	if len(changes) == 0 {
		fmt.Fprintln(w, "No changes.")
		return
	}
	// A legend only for the actions that occur, as terraform prints it.
	var legend []string
	for _, a := range []string{"added", "changed", "removed"} {
		for _, c := range changes {
			if c.Action == a {
				legend = append(legend, actionSymbol[a]+" "+a)
				break
			}
		}
	}
	fmt.Fprintf(w, "Compiled SQL that would change (%s):\n\n", strings.Join(legend, ", "))
	for _, c := range changes {
		fmt.Fprintf(w, "%s %s%s\n", actionSymbol[c.Action], slash(c.Path), upgrade(c))
	}
	// Each pipeline first in the spec's words, then its diffs cut per
	// statement.
	printSemanticText(w, semantic)
	printHunks(w, semantic)
	// The bookkeeping is no pipeline's: its diff whole.
	for _, c := range changes {
		if filepath.Base(c.Path) == dialects.BookkeepingName {
			fmt.Fprintf(w, "\n%s", c.Diff)
		}
	}
	fmt.Fprintf(w, "\nPlan: %s.\n", summary(changes))
}

func printPlanMarkdown(w io.Writer, changes []fileChange, semantic []*pipelineChange) {
	fmt.Fprintln(w, "### incrc plan")
	fmt.Fprintln(w)
	if len(changes) == 0 {
		fmt.Fprintln(w, "No changes.")
		return
	}
	fmt.Fprintf(w, "**%s.**\n\n| file | change |\n|---|---|\n", summary(changes))
	for _, c := range changes {
		fmt.Fprintf(w, "| %s | %s%s |\n", mdCell(mdCode(slash(c.Path))), c.Action, mdCell(upgrade(c)))
	}
	printSemanticMarkdown(w, semantic)
	for _, c := range changes {
		if filepath.Base(c.Path) == dialects.BookkeepingName {
			fmt.Fprintf(w, "\n#### %s: the bookkeeping every pipeline shares\n\n<details><summary>the diff</summary>\n\n%s\n\n</details>\n", mdCode(slash(c.Path)), fencedBlock("diff", c.Diff))
		}
	}
}

// previews reads each pipeline's next window from the target.
func previews(ctx context.Context, cfg *compiler.Config, tf targetFlags, pr *project) ([]*runner.Preview, error) {
	plans, err := pr.plans()
	if err != nil {
		return nil, err
	}
	tg, err := openTarget(ctx, cfg, tf, "")
	if err != nil {
		return nil, err
	}
	defer tg.Close()
	var out []*runner.Preview
	for _, p := range plans {
		pv, err := tg.Preview(ctx, p, time.Now())
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Pipeline, err)
		}
		out = append(out, pv)
	}
	return out, nil
}

// nextView is each pipeline's next window as a target sees it, and the
// DDL its tables are waiting for: part of plan's output with --target
// (its JSON is plan's "next").
type nextView []*runner.Preview

func (v nextView) json() any { return nil }

func (v nextView) text(w io.Writer) {
	if len(v) == 0 {
		return
	}
	fmt.Fprintf(w, "\nNext runs (hi = now - lag):\n")
	for _, p := range v {
		lo := p.WindowLo
		if lo == "" {
			lo = "-inf"
		}
		fmt.Fprintf(w, "  %s: watermark %s, window [%s, %s), %d row(s)%s", p.Pipeline, orNone(p.Watermark), lo, p.WindowHi, p.Rows, previewSource(p))
		if parts := strings.Join(p.Partitions, ", "); parts != "" {
			fmt.Fprintf(w, ", rewrites %s", parts)
		}
		if p.LeaseOwner != "" {
			fmt.Fprintf(w, " (leased by %s)", p.LeaseOwner)
		}
		if p.HeldBy != "" {
			fmt.Fprintf(w, " (hi held back by upstream %s)", p.HeldBy)
		}
		if len(p.Stale) > 0 {
			fmt.Fprintf(w, "; %d stale %s (%s): incrc backfill --stale", len(p.Stale), plural(len(p.Stale), "partition", "partitions"), rangeOf(p.Stale))
		}
		fmt.Fprintln(w)
	}
	if !v.pending() {
		return
	}
	fmt.Fprintf(w, "\nPending DDL (the next run applies added columns and widened types; the rest needs incrc migrate):\n")
	for _, p := range v {
		if len(p.Schema) == 0 {
			continue
		}
		fmt.Fprintf(w, "  %s:\n", p.Pipeline)
		var b strings.Builder
		printChanges(&b, p.Schema)
		fmt.Fprint(w, "  "+strings.ReplaceAll(strings.TrimSuffix(b.String(), "\n"), "\n", "\n  ")+"\n")
	}
}

func (v nextView) markdown(w io.Writer) {
	if len(v) == 0 {
		return
	}
	fmt.Fprintf(w, "\n#### Next runs\n\n| pipeline | watermark | next window | rows | partitions to rewrite |\n|---|---|---|---|---|\n")
	for _, p := range v {
		lo := p.WindowLo
		if lo == "" {
			lo = "-inf"
		}
		name := p.Pipeline
		if from := previewSource(p); from != "" {
			name += " (from " + strings.TrimPrefix(from, ", from ") + ")"
		}
		hi := p.WindowHi
		if p.HeldBy != "" {
			hi += " (held back by " + p.HeldBy + ")"
		}
		parts := strings.Join(p.Partitions, ", ")
		if len(p.Stale) > 0 {
			parts = strings.TrimPrefix(parts+"; ", "; ") + fmt.Sprintf("%d stale (%s): backfill --stale", len(p.Stale), rangeOf(p.Stale))
		}
		cell := func(s string) string { return mdCell(mdText(s)) }
		fmt.Fprintf(w, "| %s | %s | %s | %d | %s |\n", cell(name), cell(orNone(p.Watermark)), cell("["+lo+", "+hi+")"), p.Rows, cell(parts))
	}
	if !v.pending() {
		return
	}
	fmt.Fprintf(w, "\n#### Pending DDL\n")
	for _, p := range v {
		if len(p.Schema) == 0 {
			continue
		}
		var b strings.Builder
		for _, ch := range p.Schema {
			fmt.Fprintf(&b, "-- %s\n", oneLine(ch.String()))
			for _, ddl := range ch.DDL {
				fmt.Fprintf(&b, "%s;\n", ddl)
			}
		}
		fmt.Fprintf(w, "\n%s:\n\n%s\n", mdCode(p.Pipeline), fencedBlock("sql", b.String()))
	}
}

// pending reports whether a pipeline's tables differ from its spec: what
// its next run applies, or what needs incrc migrate.
func (v nextView) pending() bool {
	for _, p := range v {
		if len(p.Schema) > 0 {
			return true
		}
	}
	return false
}

// previewSource is where a run reads when the source is outside the
// target ("" when it is inside).
func previewSource(p *runner.Preview) string {
	if p.Source == "" {
		return ""
	}
	from := ", from " + p.Source
	if p.NewFiles != nil {
		from += fmt.Sprintf(", %d new file(s)", *p.NewFiles)
	}
	return from
}

// planView is what incrc plan prints: the compiled files a compile would
// change, what each pipeline's change means, with a target the next runs,
// and the graph of pipelines.
type planView struct {
	changes  []fileChange
	next     []*runner.Preview
	edges    []compiler.Edge
	semantic []*pipelineChange
}

func (v planView) text(w io.Writer) {
	printPlanText(w, v.changes, v.semantic)
	nextView(v.next).text(w)
	graphView(v.edges).text(w)
}

func (v planView) markdown(w io.Writer) {
	printPlanMarkdown(w, v.changes, v.semantic)
	nextView(v.next).markdown(w)
	graphView(v.edges).markdown(w)
}

func (v planView) indent() string { return "  " }

func (v planView) json() any {
	changes, next, edges, semantic := v.changes, v.next, v.edges, v.semantic
	n := map[string]int{}
	for _, c := range changes {
		n[c.Action]++
	}
	if changes == nil {
		changes = []fileChange{}
	}
	out := map[string]any{"changes": changes, "changed": n["changed"], "added": n["added"], "removed": n["removed"]}
	if next != nil {
		out["next"] = next
	}
	if len(edges) > 0 {
		out["graph"] = edges
	}
	if len(semantic) > 0 {
		out["pipelines"] = semantic
	}
	return out
}

// The markdown form is a pull-request comment: every value in it that
// comes from a spec, a compiled file or a database is written so that it
// renders as the text it is, never as markup a reviewer would read as
// incrc's own (a bold verdict, an image, a link, a table cell more).

// mdCode is s as an inline code span: its fence is one backtick longer
// than the longest run of backticks in s, so nothing in s can close it;
// line breaks are spaces (a blank line would end the span's paragraph).
func mdCode(s string) string {
	s = oneLine(s)
	longest, run := 0, 0
	for _, r := range s {
		if r == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	// A span that starts or ends with a backtick needs a space between it
	// and the fence; CommonMark strips one space from each side.
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") || strings.HasPrefix(s, " ") && strings.HasSuffix(s, " ") {
		s = " " + s + " "
	}
	return fence + s + fence
}

// mdCell is markdown for a cell of a table: a pipe, even inside a code
// span, would end the cell.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// mdText is prose with values in it as markdown text: every character
// that could start markup or a link is backslash-escaped, and line breaks
// are spaces, so the line stays one line of the list or heading it is in.
// A pipe is left to mdCell: outside a table it is text.
func mdText(s string) string {
	var b strings.Builder
	rs := []rune(oneLine(s))
	word := func(i int) bool { return i >= 0 && i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])) }
	for i, r := range rs {
		rest := string(rs[i:])
		switch {
		case strings.ContainsRune("\\`*[]<>&~!#@", r),
			// An underscore inside a word never emphasizes (dw_orders
			// reads as it is); elsewhere it could.
			r == '_' && !(word(i-1) && word(i+1)),
			// What GitHub would make a link of: scheme://, www.
			strings.HasPrefix(rest, "://"),
			r == '.' && i >= 3 && strings.EqualFold(string(rs[i-3:i]), "www"):
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
