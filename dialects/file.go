package dialects

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// File renders the compiled file of one pipeline for one dialect: a header
// naming the spec, then every statement of its own with its name, phase,
// parameters and why it exists. The bookkeeping statements every pipeline
// shares (the compiler's Bookkeeping) are not in it: they are in the dialect's
// BookkeepingFile, and the header names those the pipeline's programs
// call. The bytes depend only on the spec, the dialect and the incrc
// version (Filer.Version): no timestamps, a stable order, LF line ends, a
// trailing newline.
//
// specPath is the spec's path as the header should show it (relative to
// the project, with forward slashes).
//
// A plan whose source is outside the target needs the source's dialect,
// src (see Render).
func File(d Dialect, p *ir.Plan, specPath string, src ...Dialect) ([]byte, error) {
	return NewFiler(p, specPath).File(d, src...)
}

// Filer renders the compiled files of one plan, one per dialect (File):
// what every dialect's file says alike, the spec's parameters and the
// programs' listing, is spelled once. Its renders share one Writer's
// scratch space: a Filer is for one goroutine.
type Filer struct {
	// Version is the incrc version the header records: a binary of
	// another version may write other bytes. Empty writes no such line.
	Version  string
	p        *ir.Plan
	specPath string
	// params are the header's lines from the spec's parameters through
	// its upstream pipelines; programs the listing of every program.
	params   string
	programs []byte
	types    map[ir.ParamType]ir.Type // paramTypes(p), for every dialect
	w        Writer                   // the scratch space of File's renders, one after another
}

// lineBreaksToSpaces keeps a path on its comment line.
var lineBreaksToSpaces = strings.NewReplacer("\n", " ", "\r", " ")

// NewFiler spells what the files of p share. specPath is as for File.
func NewFiler(p *ir.Plan, specPath string) *Filer {
	// The path goes into a comment line: a newline in it must not end the
	// comment.
	f := &Filer{p: p, specPath: lineBreaksToSpaces.Replace(specPath), types: paramTypes(p)}
	var b strings.Builder
	b.Grow(512 + 64*len(p.Params))
	// The spec's semantic parameters, one a line: a diff of this file says
	// what changed in the spec's own words, and incrc plan reads them back.
	for _, sp := range p.Params {
		ir.WriteParamLine(&b, sp)
		b.WriteString("\n")
	}
	if len(p.Params) > 0 {
		b.WriteString("-- logic sha256: " + p.LogicHash + " (the spec logic: lines; rows built with another are stale)\n")
	}
	b.WriteString("-- strategy: " + string(p.Strategy))
	if len(p.Key) > 0 {
		b.WriteString(", unique key (" + strings.Join(p.Key, ", ") + ")")
	}
	if p.Watermark != nil {
		b.WriteString(", watermark " + p.Watermark.Name + " (" + p.Watermark.Type.String() + ")")
	}
	if p.Versions != "" {
		b.WriteString(",\n--   " + p.Versions)
	}
	b.WriteString("\n")
	if wm := p.Watermark; wm != nil && wm.Batch.Set() {
		b.WriteString("-- batches: incrc run cuts a longer window at watermark.start + k x " + wm.Batch.Text + " and runs the run program\n")
		b.WriteString("--   once per batch, oldest first: each batch is written and advanced before the next starts\n")
	}
	if len(p.InsertOnly) > 0 {
		// A reviewer reads here that the target is not a full refresh's.
		b.WriteString("-- written on insert only: " + strings.Join(p.InsertOnly, ", ") + " (an update keeps each key's first value, a full refresh\n")
		b.WriteString("--   writes the source's newest)")
		if len(p.Uncompared) > 0 {
			b.WriteString("; reconcile leaves out " + strings.Join(p.Uncompared, ", "))
		}
		b.WriteString("\n")
	}
	if f := p.From; f != nil && readsItself(p) {
		b.WriteString("-- source: " + f.Describe() + ", read by the target's own reader: the statements that read them\n")
		b.WriteString("--   take the run's exact list of files as a parameter.\n")
	} else if f != nil {
		b.WriteString("-- source: " + f.Describe() + ", outside the target: the statements marked \"on: source\" run there, spelled\n")
		b.WriteString("--   for " + f.Dialect + "; each copy step streams the rows they return into a table of the target.\n")
	}
	if len(p.Upstream) > 0 {
		var ups []string
		for _, u := range p.Upstream {
			what := "lookup: runs first"
			if u.Via == "source" {
				what = "source: runs first"
				if u.Bounds {
					what += "; its watermark bounds hi"
				}
			}
			ups = append(ups, u.Pipeline+" ("+what+")")
		}
		b.WriteString("-- upstream: " + strings.Join(ups, ", ") + "\n")
	}
	f.params = b.String()
	// The programs first: what each mode runs, in order, so that a change
	// in the order shows in a diff as plainly as a change in the SQL.
	lines := make([]byte, 0, 4096) // room for the listings of a typical pipeline's programs
	for _, pr := range p.Programs {
		lines = append(lines, "--\n"...)
		lines = pr.AppendListing(lines, "-- ")
	}
	f.programs = lines
	return f
}

// File renders the plan's compiled file for d (see File).
func (f *Filer) File(d Dialect, src ...Dialect) ([]byte, error) {
	if own := ForTarget(d, f.p); own != f.p {
		// Its programs differ from the other dialects': a header of its own.
		g := NewFiler(own, f.specPath)
		g.Version = f.Version
		return g.File(d, src...)
	}
	rendered, err := render(&f.w, d, f.p, src, f.types, false)
	if err != nil {
		return nil, err
	}
	// The file is its statements and their comments: room for them once,
	// not a buffer doubled along the way.
	size := 4096 + len(f.programs)
	for _, r := range rendered {
		size += 256
		for _, part := range r.Parts {
			size += len(part.SQL)
		}
	}
	return f.appendFile(make([]byte, 0, size), d, src, rendered), nil
}

// BookkeepingName is the bookkeeping file's name in each dialect's folder
// of compiled files, beside the pipelines' files.
const BookkeepingName = "_incrc.sql"

// BookkeepingMarker starts the bookkeeping file.
const BookkeepingMarker = "-- incrc: bookkeeping"

// BookkeepingFile renders shared, the statements every pipeline shares
// (the compiler's Bookkeeping: the state table's, the run log's, the
// lease's and the partition markers', their setup and migrations), for
// d, once for all pipelines of a target. version is as Filer.Version.
// The statements are handed in, as a plan is: which statements are the
// bookkeeping is the compiler's to decide, their spelling the dialect's.
func BookkeepingFile(d Dialect, shared []*ir.Statement, version string) ([]byte, error) {
	var rendered []Rendered
	for _, st := range shared {
		parts, err := renderStatement(d, st, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: bookkeeping: render %s: %w", d.Name(), st.Name, err)
		}
		rendered = append(rendered, Rendered{Statement: st, Parts: parts})
	}
	var b bytes.Buffer
	b.WriteString(BookkeepingMarker + ", compiled for " + string(d.Name()) + ".\n")
	b.WriteString("-- Generated by `incrc compile`: the statements every pipeline of a target shares (its state,\n")
	b.WriteString("-- run log, lease and partition markers, their setup and migrations), once for all pipelines;\n")
	b.WriteString("-- each pipeline's file names those its programs call. The setup is idempotent: tables are\n")
	b.WriteString("-- created if absent, and a column added or an index created only when the probe before it\n")
	b.WriteString("-- finds it missing.\n")
	writeVersion(&b, version)
	writeStatements(&b, d, nil, "", rendered)
	return b.Bytes(), nil
}

// writeVersion writes the header's line of the incrc version.
func writeVersion(b *bytes.Buffer, version string) {
	if version != "" {
		b.WriteString("-- incrc version: " + lineBreaksToSpaces.Replace(version) + "\n")
	}
}

// VersionLine is the prefix of the header line that records the incrc
// version that wrote a compiled file.
const VersionLine = "-- incrc version: "

// appendFile appends the compiled file of the statements rendered for d
// to dst. It keeps none of them.
func (f *Filer) appendFile(dst []byte, d Dialect, src []Dialect, rendered []Rendered) []byte {
	p := f.p
	b := bytes.NewBuffer(dst)
	for _, s := range []string{"-- incrc: pipeline ", p.Pipeline, ", compiled for ", string(d.Name()), " from ", f.specPath, ".\n",
		"-- Generated by `incrc compile`: edit the spec, not this file.\n"} {
		b.WriteString(s)
	}
	writeVersion(b, f.Version)
	b.WriteString("-- spec sha256: " + p.SpecHash + "\n" + f.params)
	c := d.Caps()
	writeComment(b, atomicity(c))
	if c.Note != "" {
		writeComment(b, c.Note)
	}
	var shared []string
	for _, st := range p.Statements {
		if st.Shared() != nil {
			shared = append(shared, st.Name)
		}
	}
	if len(shared) > 0 {
		writeWrapped(b, "bookkeeping, in "+BookkeepingName+" beside this file (shared by every pipeline): ", shared)
	}
	b.Write(f.programs)
	var from Dialect
	if len(src) > 0 {
		from = src[0]
	}
	var fromName string
	if p.From != nil {
		fromName = p.From.Dialect
	}
	writeStatements(b, d, from, fromName, rendered)
	return b.Bytes()
}

// writeWrapped writes a comment of a title and names separated by ", ",
// wrapped before 100 columns.
func writeWrapped(b *bytes.Buffer, title string, names []string) {
	line := "-- " + title
	for i, n := range names {
		if i < len(names)-1 {
			n += ","
		}
		if len(line)+1+len(n) > 100 && strings.TrimSpace(line) != "--" {
			b.WriteString(strings.TrimRight(line, " ") + "\n")
			line = "--  "
		}
		if !strings.HasSuffix(line, " ") {
			line += " "
		}
		line += n
	}
	b.WriteString(line + "\n")
}

// writeStatements writes each statement rendered for d: its name, phase,
// doc, parameters and parts. src is the source's dialect, for the
// statements that run on the source, and from what their lines call it.
func writeStatements(b *bytes.Buffer, d, src Dialect, from string, rendered []Rendered) {
	for _, r := range rendered {
		b.WriteString("\n-- name: ")
		b.WriteString(r.Name)
		b.WriteString("\n-- phase: ")
		b.WriteString(string(r.Phase))
		b.WriteString("\n")
		on := d
		if r.On == ir.OnSource {
			on = src
			b.WriteString("-- on: source (" + from + ")\n")
		}
		if r.Doc != "" {
			b.WriteString("-- ")
			b.WriteString(r.Doc)
			b.WriteString("\n")
		}
		if len(r.Parts) == 0 {
			b.WriteString("-- (nothing to run on " + string(on.Name()) + ")\n")
		}
		for _, part := range r.Parts {
			if len(part.Params) > 0 {
				b.WriteString("-- params: ")
				writeParamList(b, on, part.Params)
				b.WriteString("\n")
			}
			b.WriteString(part.SQL)
			b.WriteString(";\n")
		}
	}
}

// atomicity is what a file says of the atomicity of a run on an engine
// with c; the engine's note (Caps.Note) follows it.
func atomicity(c Caps) string {
	if !c.Transactions {
		return "atomicity: no transaction spans the write and the watermark advance; the write is idempotent,\nthe advance follows it, and a retry of the same window converges."
	}
	return "atomicity: the write, the run record and the watermark advance commit in one transaction."
}

// writeComment writes text as comment lines, a line of it each.
func writeComment(b *bytes.Buffer, text string) {
	for rest, more := text, true; more; {
		var line string
		line, rest, more = strings.Cut(rest, "\n")
		b.WriteString("-- ")
		b.WriteString(line)
		b.WriteString("\n")
	}
}

// writeParamList writes the parameters a part binds, in marker order; for
// an engine that reuses markers, each with its marker ($1 = name).
func writeParamList(b *bytes.Buffer, d Dialect, names []string) {
	for i, n := range names {
		if i > 0 {
			b.WriteString(", ")
		}
		if d.Caps().ReusesParams {
			b.WriteString(d.Placeholder(i + 1))
			b.WriteString(" = ")
		}
		b.WriteString(n)
	}
}
