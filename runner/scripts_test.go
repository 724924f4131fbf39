package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects/script"
)

// The PostgreSQL procedures (dialects/script) against the runner, on the
// real server: every conformance scenario whose steps a procedure can take
// runs twice, once through the runner and once through CALL
// incrc_run_<pipeline>(...) (and its full refresh and backfill), and after
// every step the target, the quarantine, the state and the run log must
// be the same; then once more with the runner and the procedure taking
// turns on one pipeline.

// scriptable reports whether a procedure can take every step that
// changes the target: the steps it cannot take (an injected crash, a
// killed process, a held lease, a rewind) make the scenario the runner's
// alone. Read-only steps (reconcile, preview) are left out.
func scriptable(sc scenario) (bool, string) {
	for _, s := range sc.steps {
		switch s := s.(type) {
		case insert, update, remove, corrupt, reconcile, preview:
		case run:
			if s.locked != "" || s.clock != 0 || s.refused != "" {
				return false, "a run under a held lease or a moved clock"
			}
		case rebuild:
			if s.onlyDrifted || s.parallel > 1 || s.failAt[0] != "" || s.addAt[0] != "" || s.refused != "" || s.locked != "" {
				return false, "a backfill with --only-drifted, --parallel or an injected failure"
			}
		default:
			return false, fmt.Sprintf("a %T step", s)
		}
	}
	return true, ""
}

func TestScriptsConformPostgres(t *testing.T) {
	eng := engines()[2]
	if eng.name != "postgres" {
		t.Fatal("engines() changed order")
	}
	for _, turns := range []bool{false, true} {
		for _, sc := range scenarios() {
			name := "procedure/" + sc.name
			if turns {
				name = "turns/" + sc.name
			}
			t.Run(name, func(t *testing.T) {
				if ok, why := scriptable(sc); !ok {
					t.Skip("not scriptable: " + why)
				}
				if sc.bug != "" {
					t.Skip("BUG: " + sc.bug)
				}
				t.Parallel()
				side(t, eng, sc, turns)
			})
		}
	}
}

// sided is one side of the comparison: a pipeline, its source, and how
// it runs.
type sided struct {
	e     *env
	plan  *compiler.Plan
	src   []compiler.Col
	tcols []string
}

func newSided(t *testing.T, eng engine, sc scenario) *sided {
	e := newEnv(t, eng)
	s := &sided{e: e, plan: e.spec(expand(e, sc, "inc"))}
	for _, col := range s.plan.Statement(compiler.StmtCreateTarget).Op.(compiler.CreateTable).Columns {
		s.tcols = append(s.tcols, col.Name)
	}
	s.src = s.plan.Columns
	if sc.nulls {
		s.src = nullableCols(s.src)
	}
	e.createTable(sc.source, s.src)
	e.insert(sc.source, s.src, sc.seed...)
	return s
}

// install creates the pipeline's procedures.
func (s *sided) install(t *testing.T) {
	files, err := script.Render(s.e.tg.Dialect, s.plan, "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := s.e.tg.DB.ExecContext(s.e.ctx, string(f.Data)); err != nil {
			t.Fatalf("create %s: %v\n%s", f.Suffix, err, f.Data)
		}
		name := script.ProcName(s.plan.Pipeline, f.Mode)
		t.Cleanup(func() { s.e.tg.DB.ExecContext(s.e.ctx, `DROP PROCEDURE IF EXISTS "`+name+`"`) })
	}
}

// call runs the procedure of a step; the error is the server's message.
func (s *sided) call(st run, until *time.Time) error {
	mode := compiler.ModeRun
	if st.full {
		mode = compiler.ModeFullRefresh
	}
	var arg any
	if until != nil {
		arg = until.UTC()
	}
	_, err := s.e.tg.DB.ExecContext(s.e.ctx, `CALL "`+script.ProcName(s.plan.Pipeline, mode)+`"($1)`, arg)
	return err
}

func (s *sided) backfill(b rebuild, from, to time.Time) error {
	_, err := s.e.tg.DB.ExecContext(s.e.ctx, `CALL "`+script.ProcName(s.plan.Pipeline, compiler.ModeBackfill)+`"($1, $2, $3, $4)`,
		from, to, b.restart, b.restate)
	return err
}

func (s *sided) apply(t *testing.T, sc scenario, a act) {
	e := s.e
	switch a := a.(type) {
	case insert:
		e.insert(sc.source, s.src, a...)
	case update:
		e.update(sc.source, s.src, s.src[0].Name, a.key, a.set)
	case remove:
		if a.all {
			e.deleteWhere(sc.source, "", nil)
		} else {
			e.deleteWhere(sc.source, s.src[0].Name, a.key)
		}
	case corrupt:
		c := &conformer{t: t, e: e, inc: s.plan}
		c.corrupt(a)
	}
}

// snapshot is what both sides must agree on after a step.
type snapshot struct {
	Target     []string
	Quarantine []string
	Watermark  string
	Lease      string
	Runs       []Result
	Markers    []Marker
}

func (s *sided) snapshot(t *testing.T, timeFree bool, backfills map[string]bool) snapshot {
	st := s.e.state(s.plan)
	rows, _ := s.e.read(tableName(s.plan.Target), s.tcols)
	sn := snapshot{Target: sorted(rows), Watermark: st.Watermark, Lease: st.LeaseOwner, Markers: st.Partitions}
	if !s.plan.Quarantine.IsZero() {
		var cols []string
		for _, c := range s.plan.Columns {
			cols = append(cols, c.Name)
		}
		q, _ := s.e.read(tableName(s.plan.Quarantine), append([]string{"incrc_reason"}, cols...))
		sn.Quarantine = sorted(q)
	}
	for _, r := range st.Runs {
		r.RunID, r.StartedAt, r.FinishedAt, r.DurationMS, r.Pipeline = "", "", "", 0, ""
		if !timeFree {
			r.WindowLo, r.WindowHi, r.WatermarkBefore, r.WatermarkAfter = "", "", "", ""
		}
		sn.Runs = append(sn.Runs, r)
	}
	for i := range sn.Markers {
		sn.Markers[i].UpdatedAt = ""
		// The id names the pipeline: each side's must be the one the
		// runner derives for its own.
		if !backfills[sn.Markers[i].BackfillID] {
			t.Errorf("marker %+v: not the id of a backfill of this step's ranges", sn.Markers[i])
		}
		sn.Markers[i].BackfillID = ""
	}
	if !timeFree {
		sn.Watermark = ""
	}
	return sn
}

// side runs a scenario through the runner on one pipeline and through the
// procedures (or, with turns, the procedures and the runner in turns) on
// another, comparing them after every step.
func side(t *testing.T, eng engine, sc scenario, turns bool) {
	a, b := newSided(t, eng, sc), newSided(t, eng, sc)
	b.install(t)
	timeFree := true
	ids := [2]map[string]bool{{}, {}}
	for i, st := range sc.steps {
		what := fmt.Sprintf("step %d (%s)", i+1, describe(st))
		byScript := !turns || i%2 == 0
		var errA, errB error
		switch st := st.(type) {
		case run:
			var until *time.Time
			if st.until != "" {
				u, err := ParseUntil(st.until)
				if err != nil {
					t.Fatal(err)
				}
				until = &u
			} else if a.plan.Watermark == nil || !a.plan.Watermark.Type.IsInteger() {
				timeFree = false // hi is the clock's: the two sides' windows differ
			}
			_, errA = a.e.tg.Run(a.e.ctx, a.plan, Options{Until: until, FullRefresh: st.full})
			if byScript {
				errB = b.call(st, until)
			} else {
				_, errB = b.e.tg.Run(b.e.ctx, b.plan, Options{Until: until, FullRefresh: st.full})
			}
		case rebuild:
			from, _ := ParseUntil(st.from)
			to, _ := ParseUntil(st.to)
			o := BackfillOptions{From: from, To: to, Restart: st.restart, Restate: st.restate}
			ids[0][BackfillID(a.plan, from, to)], ids[1][BackfillID(b.plan, from, to)] = true, true
			_, errA = a.e.tg.Backfill(a.e.ctx, a.plan, o)
			if byScript {
				errB = b.backfill(st, from, to)
			} else {
				_, errB = b.e.tg.Backfill(b.e.ctx, b.plan, o)
			}
		case reconcile, preview:
			continue // read-only
		default:
			a.apply(t, sc, st)
			b.apply(t, sc, st)
			continue
		}
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%s: the runner says %v, the procedure %v", what, errA, errB)
		}
		if errA != nil && !strings.Contains(errB.Error(), firstLine(errA.Error())) {
			t.Errorf("%s: the runner fails with %q, the procedure with %q", what, errA, errB)
		}
		if diff := cmp.Diff(a.snapshot(t, timeFree, ids[0]), b.snapshot(t, timeFree, ids[1]), cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("%s: the runner's pipeline and the procedure's differ (-runner +procedure):\n%s", what, diff)
		}
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
