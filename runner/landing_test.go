package runner

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"
)

// Landing folders of CSV files loaded by file (watermark: {files: new}):
// names that look like patterns, brace patterns, symbolic links, a glob
// that matches nothing, files renamed or delivered twice. Each test runs on
// every executed target and ends with the promise: the target equals a
// full refresh of the folder.

const landingSpec = `
pipeline: {name}_{id}
source: { files: "{glob}", format: csv }
target: { table: {table} }
columns:
  id: bigint
  note: text
strategy: append
watermark: { files: new }
`

// landing is one landing folder and the pipelines that load it.
type landing struct {
	t        *testing.T
	e        *env
	dir      string
	inc, ref *ir.Plan
	table    string
}

// newLanding loads glob into table: the target's name is the pipeline's,
// and the full refresh's is it with _ref.
func newLanding(t *testing.T, e *env, dir, glob, table string) *landing {
	name := strings.TrimSuffix(table[strings.LastIndex(table, ".")+1:], "_{id}")
	spec := strings.ReplaceAll(landingSpec, "{glob}", filepath.ToSlash(glob))
	return &landing{t: t, e: e, dir: dir, table: table,
		inc: e.spec(strings.NewReplacer("{name}", name, "{table}", table).Replace(spec)),
		ref: e.spec(strings.NewReplacer("{name}", name+"_ref", "{table}", table+"_ref").Replace(spec))}
}

// file writes a CSV file of the given ids below the folder.
func (l *landing) file(name string, ids ...int) {
	l.t.Helper()
	var b strings.Builder
	b.WriteString("id,note\n")
	for _, id := range ids {
		fmt.Fprintf(&b, "%d,%s\n", id, name)
	}
	p := filepath.Join(l.dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		l.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		l.t.Fatal(err)
	}
}

func (l *landing) run(what string, want counts, note string) *Result {
	l.t.Helper()
	res := mustRun(l.t, l.e, l.inc, Options{})
	checkCounts(l.t, what, res, want)
	if !strings.Contains(res.Note, note) {
		l.t.Errorf("%s: note %q, want it to say %q", what, res.Note, note)
	}
	return res
}

// target reads the incremental target; promise compares it with a full
// refresh of the folder.
func (l *landing) target() []string {
	return sorted(l.e.rows(strings.ReplaceAll(l.table, "{id}", l.e.id), []string{"id", "note"}))
}

func (l *landing) promise(what string) {
	l.t.Helper()
	mustRun(l.t, l.e, l.ref, Options{FullRefresh: true})
	full := sorted(l.e.rows(strings.ReplaceAll(l.table, "{id}", l.e.id)+"_ref", []string{"id", "note"}))
	if diff := cmp.Diff(full, l.target()); diff != "" {
		l.t.Errorf("%s: the target differs from a full refresh of the folder (-full +incremental):\n%s", what, diff)
	}
}

// TestLandingUnqualifiedTarget: a DuckDB (or SQLite) target named without
// a schema is written by the copy straight into it; a run that fails says
// it loaded nothing, on every target.
func TestLandingUnqualifiedTarget(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			dir := t.TempDir()
			table := "dw_{id}.landed"
			if eng.name == "duckdb" || eng.name == "sqlite" {
				table = "landed_{id}" // a file of its own: nothing to clean up
			}
			l := newLanding(t, e, dir, dir+"/*.csv", table)
			l.file("a.csv", 1, 2)
			l.run("first run", counts{Read: 2, Inserted: 2}, "1 new file(s) loaded")

			l.file("b.csv", 3)
			res, err := e.tg.Run(e.ctx, l.inc, Options{BeforeStatement: func(name string) error {
				if name == "commit" {
					return fmt.Errorf("killed")
				}
				return nil
			}})
			if err == nil {
				t.Fatal("the killed run succeeded")
			}
			if strings.Contains(res.Note, "loaded;") || strings.HasSuffix(res.Note, "loaded") || !strings.Contains(res.Note, "none loaded") {
				t.Errorf("a failed run's note: %q; it must say it loaded nothing", res.Note)
			}
			if st := e.state(l.inc); st.Runs[0].Status != "failed" || st.Runs[0].Note != res.Note {
				t.Errorf("the run log of the failed run: %+v", st.Runs[0])
			}
			l.run("after the failure", counts{Read: 1, Inserted: 1}, "1 new file(s) loaded")
			if got := l.target(); len(got) != 3 {
				t.Errorf("target: %q", got)
			}
			l.promise("end")
		})
	}
}

// TestLandingExactNames: names that hold a glob's characters are read as
// the one file they name: a[1].csv beside a1.csv, x*.csv beside xa.csv,
// q?.csv beside qz.csv, each file's rows once.
func TestLandingExactNames(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			dir := t.TempDir()
			l := newLanding(t, e, dir, dir+"/*.csv", "dw_{id}.landed")
			l.file("a1.csv", 1)
			l.file("a[1].csv", 2)
			l.file("xa.csv", 3)
			l.file("x*.csv", 4)
			l.file("qz.csv", 5)
			l.file("q?.csv", 6)
			l.run("first run", counts{Read: 6, Inserted: 6}, "6 new file(s) loaded")
			want := []string{line(1, "a1.csv"), line(2, "a[1].csv"), line(3, "xa.csv"), line(4, "x*.csv"), line(5, "qz.csv"), line(6, "q?.csv")}
			if diff := cmp.Diff(sorted(want), l.target()); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
			l.promise("end")
		})
	}
}

// TestLandingGlobs: a brace pattern loads the files of each of its
// alternatives; a landing folder that is a symbolic link, and a linked
// folder under **, are followed; a link that loops back is entered once; a
// first run whose glob matches nothing fails naming the pattern, and a
// later run that finds no new file says so.
func TestLandingGlobs(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			real, links := t.TempDir(), t.TempDir()

			// Braces, in a folder reached through a link.
			braces := newLanding(t, e, real, links+"/braces/{a,b}.csv", "dw_{id}.braces")
			if err := os.Symlink(real, filepath.Join(links, "braces")); err != nil {
				t.Fatal(err)
			}
			_, err := e.tg.Run(e.ctx, braces.inc, Options{})
			if err == nil || !strings.Contains(err.Error(), "braces/{a,b}.csv matches no file") {
				t.Fatalf("a first run over an empty folder: %v, want a failure naming the pattern", err)
			}
			braces.file("a.csv", 1)
			braces.file("b.csv", 2)
			braces.file("c.csv", 3)
			braces.run("braces", counts{Read: 2, Inserted: 2}, "2 new file(s) loaded")
			braces.run("nothing new", counts{}, "no new file in "+links+"/braces/{a,b}.csv (2 loaded before)")
			braces.promise("braces")

			// ** through a linked folder, and a link back up that loops.
			tree := t.TempDir()
			deep := newLanding(t, e, tree, tree+"/**/*.csv", "dw_{id}.deep")
			deep.file("day=1/a.csv", 10)
			if err := os.Symlink(filepath.Join(real), filepath.Join(tree, "day=2")); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tree, filepath.Join(tree, "day=1", "loop")); err != nil {
				t.Fatal(err)
			}
			// day=2 is the braces folder: a.csv, b.csv, c.csv.
			deep.run("** through links", counts{Read: 4, Inserted: 4}, "4 new file(s) loaded")
			deep.promise("** through links")
		})
	}
}

// TestLandingRenamed: a file renamed after it was loaded, or delivered
// again under another name, is recognised by its size and content: not
// loaded again (an append would double its rows), recorded under its new
// name and reported; a full refresh loads each content once.
func TestLandingRenamed(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			dir := t.TempDir()
			l := newLanding(t, e, dir, dir+"/*.csv", "dw_{id}.landed")
			l.file("a.csv", 1, 2)
			l.run("first run", counts{Read: 2, Inserted: 2}, "1 new file(s) loaded")
			if err := os.Rename(filepath.Join(dir, "a.csv"), filepath.Join(dir, "a-renamed.csv")); err != nil {
				t.Fatal(err)
			}
			l.run("renamed", counts{}, "1 file(s) with the size and content of a file loaded before (renamed, or delivered again), not loaded again (a-renamed.csv)")
			l.run("after the rename", counts{}, "no new file")
			// The same content delivered again beside it, and a new file.
			data, err := os.ReadFile(filepath.Join(dir, "a-renamed.csv"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "a-again.csv"), data, 0o644); err != nil {
				t.Fatal(err)
			}
			l.file("b.csv", 3)
			l.run("delivered again", counts{Read: 1, Inserted: 1}, "1 new file(s) loaded; 1 file(s) with the size and content")
			if got := l.target(); len(got) != 3 {
				t.Errorf("target: %q", got)
			}
			l.promise("end")
		})
	}
}

// TestLandingTargetLost: a target dropped, emptied or created again while
// the bookmark lists the files loaded into it: a run would load only the
// new files and leave out the rows of every other, so it is refused (the
// table missing, before the setup creates it) or fails before it writes
// (the table there and empty), naming the way on, and a full refresh
// loads every file again.
func TestLandingTargetLost(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			dir := t.TempDir()
			l := newLanding(t, e, dir, dir+"/*.csv", "dw_{id}.landed")
			l.file("a.csv", 1, 2)
			l.run("first run", counts{Read: 2, Inserted: 2}, "1 new file(s) loaded")
			target := l.inc.Target
			lost := []struct {
				what, err string
				lose      func()
			}{
				{"dropped", "does not exist, but the bookmark (incrc_files) still lists the files it loaded",
					func() { e.exec(e.render(ir.DropTable{Table: target}), nil) }},
				{"emptied", "holds no rows, but the run that last loaded files left rows in it (incrc_state.target_filled = 1)",
					func() { e.exec(e.render(ir.DeleteRows{Table: target}), nil) }},
				{"created again", "was emptied (TRUNCATE, DELETE) or dropped and created again since, and the bookmark (incrc_files) still lists the files it loaded",
					func() {
						e.exec(e.render(ir.DropTable{Table: target}), nil)
						e.exec(e.render(l.inc.Statement(ir.StmtCreateTarget).Op), nil)
					}},
			}
			for i, c := range lost {
				c.lose()
				name := fmt.Sprintf("%c.csv", 'b'+i)
				l.file(name, 10+i)
				_, err := e.tg.Run(e.ctx, l.inc, Options{})
				if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), "incrc run --full-refresh") {
					t.Fatalf("%s: %v, want a refusal with %q", c.what, err, c.err)
				}
				if got, _ := e.read(strings.ReplaceAll(l.table, "{id}", e.id), []string{"id", "note"}); len(got) != 0 {
					t.Errorf("%s: the refused run wrote %q", c.what, got)
				}
				res := mustRun(t, e, l.inc, Options{FullRefresh: true})
				checkCounts(t, c.what+": full refresh", res, counts{Read: int64(3 + i), Inserted: int64(3 + i)})
				l.run(c.what+": next run", counts{}, "no new file")
				l.promise(c.what)
			}
		})
	}
}

// TestLandingCSVDeclaredTypes: a CSV column declared decimal(12,2) is read
// as one, on every target: the reader takes the declared types by name
// (the sniffer alone read DOUBLE, which the probe refused as inexact),
// from files that order their columns differently and hold one more than
// is declared.
func TestLandingCSVDeclaredTypes(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "a.csv"), []byte("id,amount\n1,10.10\n2,0.70\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "b.csv"), []byte("amount,extra,id\n1234567890.99,x,3\n"), 0o644)
			p := e.spec(`pipeline: csvdec_{id}
source: { files: "` + filepath.ToSlash(dir) + `/*.csv", format: csv }
target: { table: dw_{id}.csvdec }
columns:
  id: bigint
  amount: decimal(12,2)
strategy: append
watermark: { files: new }
`)
			res := mustRun(t, e, p, Options{})
			checkCounts(t, "run", res, counts{Read: 3, Inserted: 3})
			var got []string
			for _, r := range sorted(e.rows("dw_{id}.csvdec", []string{"id", "amount"})) {
				id, amount, _ := strings.Cut(r, " | ")
				if strings.Contains(amount, ".") {
					amount = strings.TrimRight(strings.TrimRight(amount, "0"), ".")
				}
				got = append(got, id+" "+amount)
			}
			if diff := cmp.Diff([]string{"1 10.1", "2 0.7", "3 1234567890.99"}, got); diff != "" {
				t.Errorf("amounts (-want +got):\n%s", diff)
			}
			// A declared column no file holds fails the run, named, and
			// loads nothing.
			missing := e.spec(`pipeline: csvmiss_{id}
source: { files: "` + filepath.ToSlash(dir) + `/*.csv", format: csv }
target: { table: dw_{id}.csvmiss }
columns:
  id: bigint
  amount: decimal(12,2)
  discount: decimal(12,2)
strategy: append
watermark: { files: new }
`)
			res, err := e.tg.Run(e.ctx, missing, Options{})
			if err == nil || !strings.Contains(err.Error(), `"discount"`) || res.RowsInserted != 0 {
				t.Errorf("a declared column no file holds: %v, %d rows inserted; want an error naming it and none", err, res.RowsInserted)
			}
		})
	}
}

// TestLandingTargetReadsFiles: a DuckDB target reads a files source with
// its own reader, in the statement its compiled file shows (INSERT ...
// SELECT from the reader over the run's exact list of files, the declared
// types in it); the rows never cross into incrc, and the embedded reader
// is never opened. The other targets read through it and copy the rows.
// Either way every new file is read once, names that look like patterns
// included.
func TestLandingTargetReadsFiles(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			dir := t.TempDir()
			l := newLanding(t, e, dir, dir+"/*.csv", "dw_{id}.own")
			l.file("a.csv", 1, 2)
			l.file("b[1].csv", 3)
			l.run("first", counts{Read: 3, Inserted: 3}, "2 new file(s) loaded")
			l.file("c*.csv", 4, 5)
			l.run("second", counts{Read: 2, Inserted: 2}, "1 new file(s) loaded")
			l.promise("target's own reader")
			e.tg.src.mu.Lock()
			opened := e.tg.src.files != nil
			e.tg.src.mu.Unlock()
			if own := eng.name == "duckdb"; opened == own {
				t.Errorf("the embedded files reader opened: %v; want %v (the target reads the files itself: %v)", opened, !own, own)
			}
			src, err := e.tg.sourceOf(l.inc)
			if err != nil {
				t.Fatal(err)
			}
			c, err := compile(e.tg.Dialect, l.inc, 0, src)
			if err != nil {
				t.Fatal(err)
			}
			reads := 0
			for _, s := range c.plan.Program(ir.ModeRun).Steps {
				st, _ := c.statement(s.Stmt)
				if len(st.Parts) == 0 || !strings.Contains(st.Parts[0].SQL, "read_csv($1") || s.Stmt == ir.StmtProbeSource {
					continue
				}
				reads++
				sql := st.Parts[0].SQL
				if eng.name == "duckdb" {
					if s.On != "" || s.Read != ir.ReadAffected || !strings.HasPrefix(sql, "INSERT INTO ") || !strings.Contains(sql, "types = {'id': 'BIGINT'") {
						t.Errorf("%s on DuckDB: on %q, read %q, %s; want the target's INSERT ... SELECT from read_csv over the file list, with the declared types", s.Stmt, s.On, s.Read, sql)
					}
				} else if s.On != ir.OnSource || s.Read != ir.ReadCopy || strings.HasPrefix(sql, "INSERT") {
					t.Errorf("%s on %s: on %q, read %q, %s; want a read on the source, copied", s.Stmt, eng.name, s.On, s.Read, sql)
				}
			}
			if reads != 1 {
				t.Errorf("the run program reads the files in %d steps, want 1", reads)
			}
		})
	}
}
