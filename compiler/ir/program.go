package ir

import (
	"fmt"
	"strings"
)

// Mode names a program: one thing the runner can be asked to do with a
// pipeline.
type Mode string

const (
	ModeSetup       Mode = "setup"        // idempotent DDL, before every program that writes
	ModeRun         Mode = "run"          // incrc run
	ModeFullRefresh Mode = "full_refresh" // incrc run --full-refresh
	ModeBackfill    Mode = "backfill"     // incrc backfill: the program of one partition
	ModeReconcile   Mode = "reconcile"    // incrc reconcile, and backfill --only-drifted
	ModePreview     Mode = "preview"      // incrc plan --target: what the next run would read
	ModeRewind      Mode = "rewind"       // incrc state --rewind
)

// Program is the ordered steps of one mode of a pipeline: which statement
// runs, inside the write transaction or not, once or once per partition,
// under which condition, and what is read back into which register. The
// runner walks it and knows no strategy: what differs between strategies
// is here, where the compiled file shows it to a reviewer.
type Program struct {
	Mode Mode
	Doc  string
	// Setup: the setup program runs first.
	Setup bool
	// Lease: the program holds the pipeline's lease from before its first
	// step until after its cleanup.
	Lease bool
	// Record is the run log's kind for this program; "" records nothing.
	Record string
	// Force, when set, is why the program must not run unless the user
	// passes --force: what it would destroy.
	Force string
	// Lo and Hi say how the runner fixes the window before the first step.
	Lo LoBound
	Hi HiBound
	// Steps run in order. Consecutive Tx steps form one transaction;
	// consecutive Each steps repeat together, once per partition.
	Steps []Step
	// Cleanup runs after the steps, whether they failed or not (session
	// tables a pooled connection would otherwise keep).
	Cleanup []string
}

// LoBound is where a program's window starts.
type LoBound string

const (
	LoNone      LoBound = ""          // no lower bound is bound
	LoStart     LoBound = "start"     // watermark.start: binds "start"
	LoWatermark LoBound = "watermark" // the saved watermark minus the lookback (start on the first run): binds "start" and "lo"
)

// HiBound is where a program's window ends.
type HiBound string

const (
	HiNone  HiBound = ""      // no upper bound is bound
	HiNow   HiBound = "now"   // --until, or now minus the lag; for an integer watermark the largest id present plus one: binds "hi" and "watermark"
	HiSaved HiBound = "saved" // the saved watermark: what the runs have covered (an error before the first run): binds "hi"
)

// Step is one statement of a program and what the runner does with it.
type Step struct {
	Stmt string // a statement of the plan
	Tx   bool   // inside the program's write transaction
	Each bool   // once per partition of the program's list (see ReadPartitions)
	// If names a register that must not be zero for the step to run;
	// "!name", one that must be zero; terms joined by "&" must all hold
	// (see When and Guards). Empty: always.
	If   string
	Read Read
	// Into lists the registers the value read is added to; "-name"
	// subtracts it. Registers hold the run's counts (RegRead, ...) and the
	// values later statements bind by the same name.
	Into []string
	// Fail, with ReadCount: a count other than zero fails the program with
	// this message (%d is the count). With ReadRows: a row read fails it
	// (%s is the first row's key, as key=value, and its count).
	Fail string
	// On is where the statement runs: the target (zero) or the source's
	// own database (OnSource), in the source's dialect.
	On On
	// Copy, with ReadCopy, is the target table the rows the source
	// statement returns are streamed into, through the target's bulk path.
	Copy Table
	// EachFile: once per file of the list a ReadFiles step made (a files
	// source with the bookmark), binding path, size and mtime.
	EachFile bool
	// Note, when the step runs, is added to the run's note in the run log:
	// which of two variants ran.
	Note string
}

// Guard is one term of a step's If: a register that must not be zero, or
// with Not one that must be zero.
type Guard struct {
	Reg string
	Not bool
}

// When joins guard terms ("window", "!unique") into a step's If: the step
// runs when every term holds.
func When(terms ...string) string { return strings.Join(terms, "&") }

// Guards are the terms of the step's If, all of which must hold; none for
// a step that always runs.
func (s Step) Guards() []Guard {
	if s.If == "" {
		return nil
	}
	terms := strings.Split(s.If, "&")
	out := make([]Guard, len(terms))
	for i, t := range terms {
		reg, not := strings.CutPrefix(t, "!")
		out[i] = Guard{Reg: reg, Not: not}
	}
	return out
}

// On is the database a statement runs on.
type On string

const (
	OnTarget On = ""       // the target database, in its dialect
	OnSource On = "source" // the source's database, in its dialect (source.connection, or the files reader)
)

// Read is what the runner reads back from a step.
type Read string

const (
	ReadNothing  Read = ""         // executes; the result is not read
	ReadAffected Read = "affected" // the rows the statement changed, summed over its parts
	ReadCount    Read = "count"    // one integer
	// ReadCounts reads one row of integers, one per register of Into,
	// each column named as its register: the i-th is added to Into[i].
	ReadCounts Read = "counts"
	// ReadRows keeps the rows for the program's caller, under the first
	// register of Into.
	ReadRows Read = "rows"
	// ReadPartitions reads (partition start, rows) pairs: the partitions
	// that Each steps repeat over. Rows of partitions that are finalized
	// (older than hi minus finalize_after) are added to RegSkipped, and
	// their partitions are left out; rows without a partition (NULL) to
	// RegUnpartitioned; the rows of both kinds, which no Each step reads
	// again, also to Into. RegPartitions counts the partitions listed.
	ReadPartitions Read = "partitions"
	// ReadColumns reads no rows, only the names of the columns: each sets
	// the register Into[0] + name to 1.
	ReadColumns Read = "columns"
	// ReadSwap is a compare-and-set: exactly one row must change, or the
	// program fails (another run moved the state, or the lease was lost).
	ReadSwap Read = "swap"
	// ReadTypes reads no rows, only the types of the columns: each must
	// fit the declared column of the same name without loss.
	ReadTypes Read = "types"
	// ReadSchema reads no rows, only a table's columns, and compares them
	// with the statement's declared ones (ProbeColumns.Declared): a column
	// the table lacks is added, a type the engine can widen in place is
	// widened; a column narrowed, retyped or no longer declared fails the
	// program with the DDL it needs (incrc migrate applies it).
	ReadSchema Read = "schema"
	// ReadCopy streams the rows of a source statement into the target
	// table Copy (DuckDB's appender, PostgreSQL's COPY FROM STDIN, batched
	// INSERTs elsewhere), never holding them in memory; the rows copied are
	// added to Into. A value that does not fit its declared column fails
	// the step, naming the row's key and the column.
	ReadCopy Read = "copy"
	// ReadNewFiles lists the files of a files source's glob (path, size,
	// modification time) and reads the statement's rows, the files loaded
	// before: the files not loaded yet are the program's file list, bound
	// as "files", counted into Into. A file loaded before whose size or
	// time changed is rewritten: reported, and listed only when the run
	// asks to reload rewritten files.
	ReadNewFiles Read = "new_files"
	// ReadAllFiles lists every file of the glob: a full refresh loads
	// them all, a reconciliation compares them all.
	ReadAllFiles Read = "all_files"
	// ReadHeld executes the statement once for each row the copies held
	// back since (a value the target cannot hold as it is), binding the
	// row's values and reason (UnfitParam, unfit_reason); the rows are
	// added to Into, and RegUnfit goes back to zero.
	ReadHeld Read = "held"
)

// Registers the runner and the programs share. The run's counts are
// registers, recorded by record_finish under the same names.
const (
	RegRead        = "rows_read"
	RegInserted    = "rows_inserted"
	RegUpdated     = "rows_updated"
	RegDeleted     = "rows_deleted"
	RegQuarantined = "rows_quarantined"
	RegSkipped     = "rows_skipped"
	// RegIgnored counts the changes of a change log that a newer change of
	// their key supersedes: already applied, arriving after a newer one, or
	// followed by a newer one in the same window.
	RegIgnored       = "rows_ignored"
	RegWindow        = "window"        // 1 when the window [lo, hi) is not empty
	RegPartitions    = "partitions"    // the partitions a ReadPartitions step listed
	RegUnpartitioned = "unpartitioned" // rows of the window whose partition column is NULL
	RegInvalid       = "invalid"       // staged rows that break a quality rule
	RegVersioned     = "versioned"     // keys with more than one version in the source
	RegDuplicate     = "duplicate"     // a key with several staged rows (check_unique)
	RegWritten       = "rows_written"  // a backfilled partition's rows, for its marker
	RegSource        = "source"        // rows: a reconciliation's or a check's source side
	RegTarget        = "target"        // rows: its target side
	RegFiles         = "files"         // the files a ReadFiles step listed
	// RegTargetFilled is 1 when the target holds a row as the write
	// commits, kept in the state by advance_watermark; RegTargetFound, 1
	// when it holds one as a run starts.
	RegTargetFilled = "target_filled"
	RegTargetFound  = "target_found"
)

// FilledRebuilding is the state's target_filled while a run of an scd2
// target with tracked columns from a change log rebuilds the merged
// versions of its window's keys (mark_rebuilding, before retract_merged):
// on an engine where each statement commits alone, a run that stops
// before merge_versions may leave the target empty, and the next run,
// which rebuilds the same keys and more, must not be refused as for a
// target emptied by hand (check_target_kept asks for 1). The advance sets
// it again.
const FilledRebuilding = "2"

// Counters are the registers a run reports and records under the run
// log's columns of the same names, in the order they were added to it.
var Counters = []string{RegRead, RegInserted, RegUpdated, RegDeleted, RegQuarantined, RegSkipped, RegIgnored}

// Program returns the program of a mode, or nil when the pipeline has none
// (a pipeline without partitions has no backfill).
func (p *Plan) Program(m Mode) *Program {
	for _, pr := range p.Programs {
		if pr.Mode == m {
			return pr
		}
	}
	return nil
}

// StateSetup is the part of the setup program that creates (or upgrades)
// the state tables every pipeline shares, and nothing of the pipeline's
// own: what reading state needs.
func (p *Plan) StateSetup() *Program {
	out := &Program{Mode: ModeSetup}
	for _, s := range p.Program(ModeSetup).Steps {
		switch {
		case s.Stmt == StmtCreateState, s.Stmt == StmtProbeState, strings.HasPrefix(s.Stmt, addStateColumn("")), s.Stmt == StmtCreateRuns, s.Stmt == StmtProbeRuns, s.Stmt == StmtProbeRunsIndex, s.Stmt == StmtCreateRunsIndex, s.Stmt == StmtCreatePartitions, isAddRunsColumn(s.Stmt),
			s.Stmt == StmtProbePartitions, strings.HasPrefix(s.Stmt, addPartitionsColumn("")),
			s.Stmt == StmtCreateFiles, s.Stmt == StmtProbeFiles, strings.HasPrefix(s.Stmt, addFilesColumn("")):
			out.Steps = append(out.Steps, s)
		}
	}
	return out
}

// Listing is a program as the compiled file shows it: a header line, then
// one line per step, in order, with its transaction, repetition, guard and
// what it reads into which register. The text is stable: it changes only
// when what runs changes.
func (pr *Program) Listing() []string {
	var bounds []int
	b := pr.appendListing(nil, "", &bounds)
	text := string(b)
	lines := make([]string, len(bounds)/2)
	for i := range lines {
		lines[i] = text[bounds[2*i]:bounds[2*i+1]]
	}
	return lines
}

// AppendListing appends the program's Listing to dst, each line after
// prefix and followed by a newline: what a compiled file shows, without a
// string per line.
func (pr *Program) AppendListing(dst []byte, prefix string) []byte {
	return pr.appendListing(dst, prefix, nil)
}

// appendListing writes the lines of Listing, each after prefix and
// followed by a newline; bounds, when not nil, gets where each line's text
// starts and ends in the result.
func (pr *Program) appendListing(b []byte, prefix string, bounds *[]int) []byte {
	var start int // where the current line's text starts
	begin := func() {
		b = append(b, prefix...)
		start = len(b)
	}
	end := func() {
		if bounds != nil {
			*bounds = append(*bounds, start, len(b))
		}
		b = append(b, '\n')
	}
	begin()
	b = append(b, "program "...)
	b = append(b, pr.Mode...)
	head := 0 // the parts of the title's parenthesis so far
	part := func(s string) {
		if head == 0 {
			b = append(b, " ("...)
		} else {
			b = append(b, "; "...)
		}
		b = append(b, s...)
		head++
	}
	if pr.Setup {
		part("after setup")
	}
	if pr.Lease {
		part("holds the lease")
	}
	if pr.Record != "" {
		part("records a ")
		b = append(b, pr.Record...)
		b = append(b, " in the run log"...)
	}
	if lo, hi := pr.bounds(); lo != "" || hi != "" {
		part("window [")
		b = append(b, lo...)
		b = append(b, ", "...)
		b = append(b, hi...)
		b = append(b, ')')
	}
	if head > 0 {
		b = append(b, ')')
	}
	b = append(b, ':')
	end()
	if pr.Force != "" {
		begin()
		b = append(b, "  refused without --force: "...)
		b = append(b, pr.Force...)
		end()
	}
	width := 0
	for _, s := range pr.Steps {
		width = max(width, len(stepIndent(s))+len(s.Stmt))
	}
	inTx := false
	for _, s := range pr.Steps {
		if s.Tx != inTx {
			begin()
			if s.Tx {
				b = append(b, "  begin"...)
			} else {
				b = append(b, "  commit"...)
			}
			end()
			inTx = s.Tx
		}
		begin()
		b = append(b, stepIndent(s)...)
		b = append(b, s.Stmt...)
		notes := 0 // the notes written so far
		note := func() {
			if notes == 0 {
				for n := width - (len(b) - start) + 2; n > 0; n-- {
					b = append(b, ' ')
				}
			} else {
				b = append(b, "; "...)
			}
			notes++
		}
		if s.On == OnSource {
			note()
			b = append(b, "on source"...)
		}
		if s.Each {
			note()
			b = append(b, "each partition"...)
		}
		if s.EachFile {
			note()
			b = append(b, "each file"...)
		}
		if s.If != "" {
			note()
			b = append(b, "if "...)
			for rest, more := s.If, true; more; {
				var t string
				t, rest, more = strings.Cut(rest, "&")
				if reg, not := strings.CutPrefix(t, "!"); not {
					b = append(b, "no "...)
					b = append(b, reg...)
				} else {
					b = append(b, t...)
				}
				if more {
					b = append(b, " and "...)
				}
			}
		}
		// The separator goes before the read's text, and away again
		// when the step reads nothing.
		at, n := len(b), notes
		note()
		after := len(b)
		if b = s.appendRead(b); len(b) == after {
			b, notes = b[:at], n
		}
		if s.Note != "" {
			note()
			b = append(b, "run log note: "...)
			b = append(b, s.Note...)
		}
		for len(b) > start && b[len(b)-1] == ' ' {
			b = b[:len(b)-1]
		}
		end()
	}
	if inTx {
		begin()
		b = append(b, "  commit"...)
		end()
	}
	if len(pr.Cleanup) > 0 {
		begin()
		b = append(b, "  then, failed or not: "...)
		for i, c := range pr.Cleanup {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, c...)
		}
		end()
	}
	return b
}

// stepIndent shows a step's transaction: steps inside it are indented
// under its begin.
func stepIndent(s Step) string {
	if s.Tx {
		return "    "
	}
	return "  "
}

// bounds are the ends of the program's window as its listing names them;
// both empty when the program binds no window.
func (pr *Program) bounds() (lo, hi string) {
	switch pr.Lo {
	case LoStart:
		lo = "start"
	case LoWatermark:
		lo = "watermark - lookback"
	}
	switch pr.Hi {
	case HiNow:
		hi = "hi"
	case HiSaved:
		hi = "saved watermark"
	}
	return lo, hi
}

// appendRead appends what the listing says the step reads: nothing for a
// step that reads nothing.
func (s Step) appendRead(b []byte) []byte {
	into := func() {
		for i, r := range s.Into {
			if i > 0 {
				b = append(b, ", "...)
			}
			if name, ok := strings.CutPrefix(r, "-"); ok {
				b = append(b, "minus "...)
				r = name
			}
			b = append(b, r...)
		}
	}
	switch s.Read {
	case ReadAffected:
		b = append(b, "rows changed -> "...)
		into()
	case ReadCount:
		b = append(b, "count"...)
		if len(s.Into) > 0 {
			b = append(b, " -> "...)
			into()
		}
		if s.Fail != "" {
			b = append(b, "; fails if not 0"...)
		}
	case ReadCounts:
		b = append(b, "counts -> "...)
		into()
	case ReadRows:
		b = append(b, "rows -> "...)
		into()
		if s.Fail != "" {
			b = append(b, "; fails on a row"...)
		}
	case ReadPartitions:
		b = append(b, "partitions; rows of finalized ones -> "+RegSkipped...)
		if len(s.Into) > 0 {
			b = append(b, "; rows of partitions left out (finalized, none) -> "...)
			b = append(b, strings.Join(s.Into, ", ")...)
		}
	case ReadColumns:
		b = append(b, "column names -> "...)
		b = append(b, s.Into[0]...)
		b = append(b, "<column>"...)
	case ReadHeld:
		b = append(b, "once per held row; rows -> "...)
		into()
	case ReadSwap:
		b = append(b, "exactly one row must change"...)
	case ReadTypes:
		b = append(b, "column types must fit the declared ones"...)
	case ReadCopy:
		b = append(b, "copy rows -> "...)
		for i, part := range s.Copy.Parts {
			if i > 0 {
				b = append(b, '.')
			}
			b = append(b, part...)
		}
		if len(s.Into) > 0 {
			b = append(b, "; rows -> "...)
			into()
		}
	case ReadNewFiles:
		b = append(b, "files not loaded yet -> "...)
		into()
	case ReadAllFiles:
		b = append(b, "every file -> "...)
		into()
	case ReadSchema:
		b = append(b, "columns vs the spec: added, widened in place; else fails with the DDL (incrc migrate)"...)
	}
	return b
}

// Check verifies that every step names a statement of the plan (names
// holds theirs), so that a program can never refer to something the
// compiled file does not show.
func (pr *Program) Check(names map[string]bool) error {
	listed := false
	for _, s := range pr.Steps {
		switch {
		case !names[s.Stmt]:
			return fmt.Errorf("program %s: step %s is not a statement of the plan", pr.Mode, s.Stmt)
		case s.Fail != "" && s.Read != ReadCount && s.Read != ReadRows:
			return fmt.Errorf("program %s: step %s fails on a count it does not read", pr.Mode, s.Stmt)
		case s.Each && !listed:
			return fmt.Errorf("program %s: step %s repeats per partition before any step lists them", pr.Mode, s.Stmt)
		case s.Read == ReadCounts && len(s.Into) == 0:
			return fmt.Errorf("program %s: step %s reads counts into no register", pr.Mode, s.Stmt)
		case (s.Read == ReadRows || s.Read == ReadColumns) && len(s.Into) != 1:
			return fmt.Errorf("program %s: step %s reads into %d registers, not one", pr.Mode, s.Stmt, len(s.Into))
		}
		listed = listed || s.Read == ReadPartitions
	}
	for _, name := range pr.Cleanup {
		if !names[name] {
			return fmt.Errorf("program %s: cleanup %s is not a statement of the plan", pr.Mode, name)
		}
	}
	return nil
}

// RegRunsIndexed is 1 when the run log has its index (probe_runs_index).
const RegRunsIndexed = "runs_indexed"

func isAddRunsColumn(name string) bool {
	prefix := addRunsColumn("")
	return len(name) > len(prefix) && name[:len(prefix)] == prefix
}

// RegUnique is 1 when the source enforces the unique key (source_unique):
// the full refresh then runs the statements without the dedupe.
const RegUnique = "unique"
