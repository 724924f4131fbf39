package compiler

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestListingAsBefore compares Listing and AppendListing, which write one
// buffer, with the listing as it was built before, a string per line
// (listingBefore, kept here as the reference): every program of the
// repository's specs, and programs made to reach every branch.
func TestListingAsBefore(t *testing.T) {
	var programs []*Program
	specs := repoSpecs(t)
	for _, s := range specs {
		p, err := Lower(s)
		if err != nil {
			t.Fatal(err)
		}
		programs = append(programs, p.Programs...)
	}
	for _, lo := range []LoBound{LoNone, LoStart, LoWatermark} {
		for _, hi := range []HiBound{HiNone, HiNow, HiSaved} {
			programs = append(programs, &Program{Mode: ModeRun, Lo: lo, Hi: hi})
		}
	}
	programs = append(programs,
		&Program{Mode: ModeRewind, Setup: true, Record: "rewind", Force: "drops it all  "},
		&Program{Mode: ModeRun, Lease: true, Cleanup: []string{"a", "b"}},
		&Program{Mode: ModeRun, Steps: []Step{
			{Stmt: "plain"},
			{Stmt: "trailing", Note: "ends in spaces   "},
			{Stmt: "x", Tx: true, If: "a&!b&", Read: ReadCount, Fail: "f"},
			{Stmt: "longer_statement_name", Tx: true, On: OnSource, Each: true, EachFile: true, If: "!", Read: ReadCopy, Copy: Table{Parts: []string{"s", "t"}}, Into: []string{"r", "-q"}},
			{Stmt: "copy", Read: ReadCopy, Copy: Table{Parts: []string{"t"}}},
			{Stmt: "cols", Read: ReadColumns, Into: []string{"c."}},
			{Stmt: "unknown", Read: Read("other"), Note: "n"},
			{Stmt: "empty_if_note", If: "", Read: ReadNothing},
		}},
	)
	for _, r := range []Read{ReadAffected, ReadCount, ReadCounts, ReadRows, ReadPartitions, ReadSwap, ReadTypes, ReadNewFiles, ReadAllFiles, ReadSchema, ReadHeld} {
		programs = append(programs, &Program{Mode: ModeRun, Steps: []Step{
			{Stmt: "a", Read: r},
			{Stmt: "b", Read: r, Into: []string{"x"}, Tx: true},
			{Stmt: "c", Read: r, Into: []string{"-x", "y"}, Fail: "f", If: "g"},
		}})
	}
	for i, pr := range programs {
		want := listingBefore(pr)
		if diff := cmp.Diff(want, pr.Listing()); diff != "" {
			t.Fatalf("program %d (%s): Listing (-before +now):\n%s", i, pr.Mode, diff)
		}
		var b strings.Builder
		for _, line := range want {
			b.WriteString("-- " + line + "\n")
		}
		if got := string(pr.AppendListing([]byte("x"), "-- ")); got != "x"+b.String() {
			t.Fatalf("program %d (%s): AppendListing:\n%s\nwant:\n%s", i, pr.Mode, got, b.String())
		}
	}
}

func listingBefore(pr *Program) []string {
	var head []string
	if pr.Setup {
		head = append(head, "after setup")
	}
	if pr.Lease {
		head = append(head, "holds the lease")
	}
	if pr.Record != "" {
		head = append(head, "records a "+pr.Record+" in the run log")
	}
	if w := windowBefore(pr); w != "" {
		head = append(head, "window "+w)
	}
	title := "program " + string(pr.Mode)
	if len(head) > 0 {
		title += " (" + strings.Join(head, "; ") + ")"
	}
	lines := []string{title + ":"}
	if pr.Force != "" {
		lines = append(lines, "  refused without --force: "+pr.Force)
	}
	width := 0
	for _, s := range pr.Steps {
		width = max(width, len(stepIndent(s))+len(s.Stmt))
	}
	inTx := false
	for _, s := range pr.Steps {
		if s.Tx != inTx {
			if s.Tx {
				lines = append(lines, "  begin")
			} else {
				lines = append(lines, "  commit")
			}
			inTx = s.Tx
		}
		indent := stepIndent(s)
		var notes []string
		if s.On == OnSource {
			notes = append(notes, "on source")
		}
		if s.Each {
			notes = append(notes, "each partition")
		}
		if s.EachFile {
			notes = append(notes, "each file")
		}
		if gs := s.Guards(); len(gs) > 0 {
			terms := make([]string, len(gs))
			for i, g := range gs {
				terms[i] = g.Reg
				if g.Not {
					terms[i] = "no " + g.Reg
				}
			}
			notes = append(notes, "if "+strings.Join(terms, " and "))
		}
		if r := readTextBefore(s); r != "" {
			notes = append(notes, r)
		}
		if s.Note != "" {
			notes = append(notes, "run log note: "+s.Note)
		}
		line := indent + s.Stmt
		if len(notes) > 0 {
			line += strings.Repeat(" ", width-len(line)+2) + strings.Join(notes, "; ")
		}
		lines = append(lines, strings.TrimRight(line, " "))
	}
	if inTx {
		lines = append(lines, "  commit")
	}
	if len(pr.Cleanup) > 0 {
		lines = append(lines, "  then, failed or not: "+strings.Join(pr.Cleanup, ", "))
	}
	return lines
}

func windowBefore(pr *Program) string {
	lo := map[LoBound]string{LoStart: "start", LoWatermark: "watermark - lookback"}[pr.Lo]
	hi := map[HiBound]string{HiNow: "hi", HiSaved: "saved watermark"}[pr.Hi]
	switch {
	case lo == "" && hi == "":
		return ""
	case hi == "":
		return "[" + lo + ", )"
	case lo == "":
		return "[, " + hi + ")"
	}
	return "[" + lo + ", " + hi + ")"
}

func readTextBefore(s Step) string {
	into := func() string {
		out := make([]string, len(s.Into))
		for i, r := range s.Into {
			out[i] = r
			if name, ok := strings.CutPrefix(r, "-"); ok {
				out[i] = "minus " + name
			}
		}
		return strings.Join(out, ", ")
	}
	var t string
	switch s.Read {
	case ReadAffected:
		t = "rows changed -> " + into()
	case ReadCount:
		t = "count"
		if len(s.Into) > 0 {
			t += " -> " + into()
		}
		if s.Fail != "" {
			t += "; fails if not 0"
		}
	case ReadCounts:
		t = "counts -> " + into()
	case ReadRows:
		t = "rows -> " + into()
		if s.Fail != "" {
			t += "; fails on a row"
		}
	case ReadPartitions:
		t = "partitions; rows of finalized ones -> " + RegSkipped
		if len(s.Into) > 0 {
			t += "; rows of partitions left out (finalized, none) -> " + strings.Join(s.Into, ", ")
		}
	case ReadColumns:
		t = "column names -> " + s.Into[0] + "<column>"
	case ReadHeld:
		t = "once per held row; rows -> " + into()
	case ReadSwap:
		t = "exactly one row must change"
	case ReadTypes:
		t = "column types must fit the declared ones"
	case ReadCopy:
		t = "copy rows -> " + strings.Join(s.Copy.Parts, ".")
		if len(s.Into) > 0 {
			t += "; rows -> " + into()
		}
	case ReadNewFiles:
		t = "files not loaded yet -> " + into()
	case ReadAllFiles:
		t = "every file -> " + into()
	case ReadSchema:
		t = "columns vs the spec: added, widened in place; else fails with the DDL (incrc migrate)"
	}
	return t
}

// TestSharedStatementsUnchanged: lowering every spec, in parallel, leaves
// the statements plans share (shared) as they were made, and
// each plan holds its own copies of them.
func TestSharedStatementsUnchanged(t *testing.T) {
	specs := repoSpecs(t)
	plans := make([]*Plan, 4*len(specs))
	Parallel(len(plans), func(i int) {
		p, err := Lower(specs[i%len(specs)])
		if err != nil {
			t.Error(err)
		}
		plans[i] = p
	})
	for name, made := range map[string]func(*lowerer){"state": (*lowerer).addState, "shared setup": (*lowerer).addSharedSetup, "advance": (*lowerer).addAdvanceAndRecord, "markers": (*lowerer).addMarkers} {
		l := &lowerer{p: &Plan{}}
		made(l)
		want := make([]Statement, len(l.p.Statements))
		for i, st := range l.p.Statements {
			want[i] = *st
		}
		got := map[string][]Statement{"state": stateStatements(), "shared setup": sharedSetup(), "advance": advanceStatements(), "markers": markerStatements()}[name]
		for i := range min(len(got), len(want)) {
			want[i].shared = &got[i] // each names itself (Statement.Shared)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("the %s statements changed after lowering", name)
		}
	}
	seen := map[*Statement]bool{}
	for _, p := range plans {
		for _, st := range p.Statements {
			if seen[st] {
				t.Fatalf("statement %s is in two plans", st.Name)
			}
			seen[st] = true
		}
	}
}

// repoSpecs loads the repository's specs: those of specs/ and the golden
// ones of dialects/all, test specs left out.
func repoSpecs(t *testing.T) []*Spec {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "specs", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob(filepath.Join("..", "dialects", "all", "testdata", "specs", "*.yaml"))
	var specFiles []string
	for _, f := range append(files, more...) {
		if !IsTestFile(f) {
			specFiles = append(specFiles, f)
		}
	}
	specs, diags := LoadSpecs(specFiles)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	if len(specs) < 10 {
		t.Fatalf("only %d specs", len(specs))
	}
	return specs
}
