package compiler

import (
	"fmt"
	"path"
	"reflect"
	"strings"
	"unicode"

	"github.com/incrc/incrc/compiler/ir"
)

// SourceDialects are the dialects a source outside the target may be
// written in: the engines incrc executes.
var SourceDialects = []string{"duckdb", "mysql", "postgres", "sqlite"}

// FileFormats are the formats a files source reads.
var FileFormats = []string{"parquet", "csv", "json"}

// FileFormat is the format of a files source: the spec's, or the one its
// glob's extension says ("" when it says none).
func FileFormat(src Source) string {
	if src.Format.Value != "" {
		return src.Format.Value
	}
	ext := strings.ToLower(path.Ext(strings.TrimSuffix(strings.TrimSuffix(src.Files.Value, ".gz"), ".zst")))
	switch ext {
	case ".parquet", ".pq":
		return "parquet"
	case ".csv", ".tsv":
		return "csv"
	case ".json", ".jsonl", ".ndjson":
		return "json"
	}
	return ""
}

// IsForeign reports whether a spec's source lives outside the target
// database: in another database (connection) or in files.
func (s *Spec) IsForeign() bool {
	return s.Source.Connection.Set() || s.Source.Files.Set()
}

// foreign checks a source outside the target: a connection's name and
// dialect, a files glob, its format and its bookmark, and what does not
// work with such a source yet.
func (v *validator) foreign() {
	s := v.s
	src := s.Source
	if c := src.Connection; c.Set() && c.Value != "" {
		if !ir.IsPipelineName(c.Value) {
			v.errf(c.Pos, "source.connection %s must be a name of incrc.yaml's connections: lower case letters, digits and _, as in app", quote(c.Value))
		}
		if src.Files.Set() {
			v.errf(c.Pos, "source: give connection or files, not both (files are read on this machine)")
		}
	}
	if d := src.Dialect; d.Set() {
		switch {
		case !src.Connection.Set():
			v.errf(d.Pos, "source.dialect applies to a source with connection: without one the source is read in the target's dialect")
		case !contains(SourceDialects, d.Value):
			v.errf(d.Pos, "source.dialect %s: a source is read by incrc, so it is an engine incrc executes%s", quote(d.Value), suggest(d.Value, SourceDialects))
		}
	}
	if f := src.Files; f.Set() && f.Value != "" {
		switch {
		case strings.HasPrefix(f.Value, "s3://"), strings.HasPrefix(f.Value, "gs://"), strings.HasPrefix(f.Value, "gcs://"), strings.HasPrefix(f.Value, "az://"):
			v.errf(f.Pos, "source.files %s: object stores (s3://, gs://) are a later step; today files are read from a local folder (mount the bucket, or sync it to one)", quote(f.Value))
		case strings.Contains(f.Value, "://"):
			v.errf(f.Pos, "source.files %s: a local folder glob, as in landing/orders/**/*.parquet", quote(f.Value))
		case strings.IndexFunc(f.Value, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0:
			v.errf(f.Pos, "source.files %s holds a control character: a glob is one line of printable text", quote(f.Value))
		}
		if !src.ByFile.Set() && strings.ContainsAny(f.Value, "{}") {
			// Read by a column's window, the glob is DuckDB's own, which has
			// no braces: it would look for a file named with them.
			v.errf(f.Pos, "source.files %s: a brace pattern is read with watermark: {files: new}; by a column's window the glob is DuckDB's, which has no {a,b}: give one glob (a pipeline per folder), or load by file", quote(f.Value))
		}
		if fm := src.Format; fm.Set() && !contains(FileFormats, fm.Value) {
			v.errf(fm.Pos, "source.format %s: parquet, csv or json%s", quote(fm.Value), suggest(fm.Value, FileFormats))
		} else if FileFormat(src) == "" {
			v.errf(f.Pos, "source.files %s: the extension does not say the format: add format: parquet, csv or json", quote(f.Value))
		}
	} else if fm := src.Format; fm.Set() {
		v.errf(fm.Pos, "source.format applies to a files source")
	}
	if b := src.ByFile; b.Set() {
		switch {
		case b.Value != "new":
			v.errf(b.Pos, "watermark.files %s: the one bookmark is new (each run loads the files not loaded before)", quote(b.Value))
		case !src.Files.Set():
			v.errf(b.Pos, "watermark.files: new picks up new files: it needs source.files")
		}
		switch st := ir.Strategy(s.Strategy.Value); st {
		case ir.Append, ir.Merge, ir.FullRefresh, "":
		default:
			v.errf(b.Pos, "watermark.files: new loads each file once, for strategy append, merge or full_refresh; strategy %s reads by a column's window: give watermark.column", st)
		}
	}
	if w := s.Watermark; w != nil && w.Files.Set() {
		v.errf(w.Files.Pos, "watermark: give files: new, or column (with start), not both")
	}
	if !s.IsForeign() {
		return
	}
	where := "another database"
	if src.Files.Set() {
		where = "files"
	}
	if len(s.Lookups) > 0 {
		v.errf(s.Lookups[0].Pos, "lookups join tables of the target database, and the source is in %s: a later step (load the source with a pipeline of its own, then look up from that target)", where)
	}
	if s.Strategy.Value == string(ir.OverwritePartitions) && s.Quality != nil && s.Quality.OnInvalid.Value != "fail" {
		v.errf(s.Quality.Pos, "overwrite_partitions quarantines a partition's rows straight from the source, and the source is in %s: a later step; use on_invalid: fail, or strategy merge", where)
	}
	if s.Strategy.Value == string(ir.SCD2Strategy) && s.SCD2 != nil && (s.SCD2.Deletes.Value == "close" || s.SCD2.Deletes.Value == "new_record") {
		v.errf(s.SCD2.Pos, "scd2.deletes %s compares the target with the whole source in the write, and the source is in %s: a later step", s.SCD2.Deletes.Value, where)
	}
}

var pFiles = ir.Param{Name: "file_list", Type: ir.PFiles}

// filesColumns are incrc_files' columns: one row per file a pipeline
// loaded, written in the transaction of the write that loaded it.
var filesColumns = []ir.Col{
	{Name: "pipeline", Type: varchar(64), NotNull: true},
	{Name: "path", Type: varchar(512), NotNull: true},
	{Name: "size", Type: ir.Type{Kind: ir.Bigint}},
	{Name: "mtime", Type: varchar(40)},
	{Name: "run_id", Type: varchar(64)},
	{Name: "loaded_at", Type: varchar(40)},
	{Name: "content_hash", Type: varchar(64)},
}

// addedFilesColumns are the bookmark's columns an older incrc did not
// create: setup adds them.
var addedFilesColumns = []string{"content_hash"}

func addFilesColumn(name string) string { return "add_files_" + name }

// filesColumnPrefix names the registers probe_files sets.
const filesColumnPrefix = "files."

// files adds the bookmark's statements: the table of loaded files, the
// files a pipeline loaded, and each file's record.
func (l *lowerer) files() {
	p := l.p
	if p.From == nil || !p.From.ByFile {
		return
	}
	pPath, pSize, pMtime, pHash := ir.Param{Name: "path", Type: ir.PText}, ir.Param{Name: "size", Type: ir.PInt}, ir.Param{Name: "mtime", Type: ir.PText}, ir.Param{Name: "content_hash", Type: ir.PText}
	l.add(ir.StmtCreateFiles, ir.PhaseSetup, "The bookmark of files sources: each file a pipeline loaded, with its size, modification time and the SHA-256 of its content.",
		ir.CreateTable{Table: ir.FilesTable, Columns: filesColumns, PrimaryKey: []string{"pipeline", "path"}})
	l.add(ir.StmtProbeFiles, ir.PhaseSetup, "The bookmark's columns: a table an older incrc created lacks the newer ones.",
		ir.ProbeColumns{Source: ir.Relation{Table: ir.FilesTable}})
	l.addColumns(ir.FilesTable, filesColumns, addedFilesColumns, addFilesColumn, "a bookmark an older incrc created")
	l.add(ir.StmtReadFiles, ir.PhaseState, "The files this pipeline loaded: the run loads the others, but a file whose size and content are a loaded one's.",
		ir.SelectRows{Table: ir.FilesTable, Columns: []string{"path", "size", "mtime", "content_hash"}, Where: colEq("pipeline", pPipeline), OrderBy: []ir.Order{{Column: "path", Desc: false}}}, pPipeline)
	l.add(ir.StmtClearFiles, ir.PhaseWrite, "Full refresh: forget every file loaded (all are loaded again, in this transaction).",
		ir.DeleteRows{Table: ir.FilesTable, Where: colEq("pipeline", pPipeline)}, pPipeline)
	l.add(ir.StmtForgetFile, ir.PhaseWrite, "A file loaded again (rewritten in place, --reload-rewritten): its old record goes.",
		ir.DeleteRows{Table: ir.FilesTable, Where: and(colEq("pipeline", pPipeline), colEq("path", pPath))}, pPipeline, pPath)
	l.add(ir.StmtRecordFile, ir.PhaseWrite, "Each file the run loaded (or found loaded before under another name), in the transaction of its write: a run that dies loads it again, and nothing twice.",
		ir.InsertValues{Table: ir.FilesTable, Columns: []string{"pipeline", "path", "size", "mtime", "run_id", "loaded_at", "content_hash"},
			Values: []ir.Expr{ref(pPipeline), ref(pPath), ref(pSize), ref(pMtime), ref(pRunID), ref(pNow), ref(pHash)}}, pPipeline, pPath, pSize, pMtime, pRunID, pNow, pHash)
}

// sourceOf returns the relation an operation reads rows from, when it
// reads one that may be the source.
func sourceOf(op ir.Op) (ir.Relation, bool) {
	switch op := op.(type) {
	case ir.StageRows:
		return op.Source, true
	case ir.CountSource:
		return op.Source, true
	case ir.SourceMax:
		return op.Source, true
	case ir.ProbeColumns:
		return op.Source, true
	case ir.DistinctPartitions:
		return op.Source, true
	case ir.VersionedKeys:
		return op.Source, true
	case ir.Aggregate:
		return op.Source, true
	case ir.QuarantineRows:
		return op.From, true
	case ir.VanishedVersions:
		return op.Source, true
	}
	return ir.Relation{}, false
}

// foreign moves what reads a source outside the target to the source:
// each statement that reads only the source runs there, in its dialect;
// each that stages its rows becomes a read there and a copy step into the
// same target table. A statement that would read the source together
// with tables of the target cannot run on either side: refused.
func (l *lowerer) foreign() error {
	p := l.p
	if p.From == nil {
		return nil
	}
	copies := map[string]ir.Table{}
	for _, st := range p.Statements {
		rel, ok := sourceOf(st.Op)
		if !ok || !reflect.DeepEqual(rel, p.Source) {
			continue
		}
		switch op := st.Op.(type) {
		case ir.StageRows:
			copies[st.Name] = op.Into
			st.Op = ir.ReadSource{Source: op.Source, Columns: op.Columns, Window: op.Window, Where: op.Where, Dedupe: op.Dedupe, Range: op.Range}
			st.Doc += " Read on the source; the rows stream into " + op.Into.Name() + "."
		case ir.CountSource, ir.SourceMax, ir.ProbeColumns, ir.DistinctPartitions, ir.VersionedKeys, ir.Aggregate:
		default:
			return fmt.Errorf("statement %s reads the source together with tables of the target, and the source is outside the target: not supported yet", st.Name)
		}
		st.On = ir.OnSource
		st.SetShared(nil) // changed: not the statement every plan has
		if p.From.ByFile {
			st.Params = append(st.Params, pFiles)
		}
	}
	unfit := false // a copy stages rows, and there is a quarantine for the ones the target cannot hold
	for _, into := range copies {
		unfit = unfit || !p.Quarantine.IsZero() && !reflect.DeepEqual(into, p.Target)
	}
	if unfit {
		l.unfitStatement()
	}
	for _, pr := range p.Programs {
		var steps []ir.Step
		for _, s := range pr.Steps {
			st := p.Statement(s.Stmt)
			if st != nil && st.On == ir.OnSource {
				s.On = ir.OnSource
				if into, ok := copies[s.Stmt]; s.Tx && !(ok && reflect.DeepEqual(into, p.Target)) {
					// A copy into the target itself streams in the write
					// transaction (an append that stages nothing); any
					// other read of the source there is not supported.
					return fmt.Errorf("program %s: step %s reads the source inside the write transaction, and the source is outside the target: not supported yet", pr.Mode, s.Stmt)
				}
				if into, ok := copies[s.Stmt]; ok {
					s.Read, s.Copy = ir.ReadCopy, into
				}
				if p.From.ByFile && (s.If == "" || s.If == ir.RegWindow) {
					s.If = ir.RegFiles // no file to read: nothing to read
				}
			}
			steps = append(steps, s)
		}
		pr.Steps = steps
		if unfit {
			pr.Steps = unfitSteps(pr.Steps)
		}
		if p.From.ByFile {
			l.fileSteps(pr)
		}
	}
	return nil
}

// unfitStatement is the quarantine of a row a copy held back: a value the
// target cannot hold as it is (a date outside its range, MariaDB's zero
// date), which it would store as another value. The row goes to the
// quarantine with that column NULL and the reason naming it and its value,
// one row per execution.
func (l *lowerer) unfitStatement() {
	p := l.p
	reason := ir.Param{Name: "unfit_reason", Type: ir.PText}
	cols := []string{"incrc_run_id", "incrc_reason"}
	vals := []ir.Expr{ref(pRunID), ref(reason)}
	params := []ir.Param{pRunID, reason}
	for _, c := range p.Columns {
		cp := ir.Param{Name: ir.UnfitParam(c.Name), Type: ir.PValue}
		cols, vals, params = append(cols, c.Name), append(vals, ref(cp)), append(params, cp)
	}
	l.add(ir.StmtQuarantineUnfit, ir.PhaseWrite, "A row the copy held back, once per row: a value the target cannot hold as it is (a date outside its range, MariaDB's zero date 0000-00-00) would be stored as another value, so the row is quarantined, that column NULL, the reason naming it and its value.",
		ir.InsertValues{Table: p.Quarantine, Columns: cols, Values: vals}, params...)
}

// unfitSteps quarantine the rows the copies held back, in the
// transaction that follows them (the write's, or each partition's). A copy
// that counts its rows as ignored until a dedupe stages them (Into holds
// rows_ignored) takes its held rows out of the ignored ones.
func unfitSteps(steps []ir.Step) []ir.Step {
	var out []ir.Step
	var pending *ir.Step
	for _, s := range steps {
		if pending != nil && s.Tx {
			q := *pending
			q.Each = s.Each
			out = append(out, q)
			pending = nil
		}
		out = append(out, s)
		if s.Read == ir.ReadCopy {
			q := ir.Step{Stmt: ir.StmtQuarantineUnfit, Tx: true, If: ir.RegUnfit, Read: ir.ReadHeld, Into: []string{ir.RegQuarantined}}
			if contains(s.Into, ir.RegIgnored) {
				q.Into = append(q.Into, "-"+ir.RegIgnored)
			}
			if pending == nil || len(q.Into) > len(pending.Into) {
				pending = &q
			}
		}
	}
	if pending != nil {
		out = append(out, *pending)
	}
	return out
}

// fileSteps adds the bookmark to a program: the file list first, and in a
// write's transaction the record of each file loaded.
func (l *lowerer) fileSteps(pr *ir.Program) {
	list := ir.Step{Stmt: ir.StmtReadFiles, Read: ir.ReadNewFiles, Into: []string{ir.RegFiles}}
	rebuild := false // the program rebuilds the target from the whole source
	for _, st := range pr.Steps {
		rebuild = rebuild || st.Stmt == ir.StmtStageAll
	}
	switch {
	case rebuild, pr.Mode == ir.ModeReconcile:
		// A full refresh (and every run of a full_refresh pipeline) loads
		// every file; a reconciliation compares them all.
		list.Read = ir.ReadAllFiles
	case pr.Mode == ir.ModeRun, pr.Mode == ir.ModePreview:
	default:
		return
	}
	at := 0
	for at < len(pr.Steps) && (pr.Steps[at].Stmt == ir.StmtRecordStart) {
		at++
	}
	steps := append(append(append([]ir.Step(nil), pr.Steps[:at]...), list), pr.Steps[at:]...)
	if pr.Record != "" {
		// Just before the run's own record: in the write's transaction.
		for i, s := range steps {
			if s.Stmt != ir.StmtRecordFinish {
				continue
			}
			var rec []ir.Step
			if rebuild {
				rec = append(rec, ir.Step{Stmt: ir.StmtClearFiles, Tx: true})
			} else {
				rec = append(rec, ir.Step{Stmt: ir.StmtForgetFile, Tx: true, EachFile: true})
			}
			rec = append(rec, ir.Step{Stmt: ir.StmtRecordFile, Tx: true, EachFile: true})
			steps = append(steps[:i], append(rec, steps[i:]...)...)
			break
		}
	}
	pr.Steps = steps
}
