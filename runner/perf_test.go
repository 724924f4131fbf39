package runner

import (
	"context"
	neturl "net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/dialects"
)

// TestDurationCoversCommit: the run log's duration_ms and finished_at are
// written after the write transaction committed, so a slow commit (a
// DuckDB checkpoint, a PostgreSQL flush) shows in them. The clock jumps an
// hour at the commit: a duration taken before it would miss that hour.
func TestDurationCoversCommit(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := ordersPlan(e, "dur", "lookback: 2d")
			seedOrders(e, p)
			var mu sync.Mutex
			clock := time.Date(2026, 1, 24, 12, 0, 0, 0, time.UTC)
			now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
			hook := func(name string) error {
				if name == "commit" {
					mu.Lock()
					clock = clock.Add(time.Hour)
					mu.Unlock()
				}
				return nil
			}
			for _, full := range []bool{true, false} {
				res := mustRun(t, e, p, Options{Until: until("2026-01-24"), Now: now, BeforeStatement: hook, FullRefresh: full})
				if res.DurationMS < time.Hour.Milliseconds() {
					t.Errorf("full refresh %v: the result's duration %d ms misses the commit", full, res.DurationMS)
				}
				st := e.state(p)
				if len(st.Runs) == 0 || st.Runs[0].RunID != res.RunID {
					t.Fatalf("full refresh %v: the run log's latest run is not this one: %+v", full, st.Runs)
				}
				got := st.Runs[0]
				if got.DurationMS != res.DurationMS || got.FinishedAt != res.FinishedAt || got.Status != "succeeded" {
					t.Errorf("full refresh %v: the run log says %d ms, finished %s, %s; the result %d ms, finished %s",
						full, got.DurationMS, got.FinishedAt, got.Status, res.DurationMS, res.FinishedAt)
				}
			}
			if st := e.state(p); st.LeaseOwner != "" {
				t.Errorf("the lease is still held by %s", st.LeaseOwner)
			}
		})
	}
}

// TestDurationCoversWholeRun: the run log's started_at and duration_ms
// cover the whole of a run as a scheduler sees it: from Options.Since
// (when incrc began opening the target) to after the checkpoint that
// follows the commit on DuckDB, which would otherwise be the close's,
// after the duration was written. The clock jumps an hour at the
// checkpoint: a duration taken before it would miss that hour. Elsewhere
// there is no checkpoint to run, and the run says none.
func TestDurationCoversWholeRun(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			p := ordersPlan(e, "whole", "lookback: 2d")
			seedOrders(e, p)
			var mu sync.Mutex
			clock := time.Date(2026, 1, 24, 12, 0, 0, 0, time.UTC)
			now := func() time.Time { mu.Lock(); defer mu.Unlock(); return clock }
			var names []string
			hook := func(name string) error {
				mu.Lock()
				defer mu.Unlock()
				names = append(names, name)
				if name == ir.StmtCheckpoint {
					clock = clock.Add(time.Hour)
				}
				return nil
			}
			since := clock.Add(-time.Minute)
			res := mustRun(t, e, p, Options{Until: until("2026-01-24"), Now: now, Since: since, BeforeStatement: hook})
			got := e.state(p).Runs[0]
			if got.RunID != res.RunID || got.StartedAt != stateTime(since) || got.DurationMS != res.DurationMS {
				t.Errorf("the run log says started %s, %d ms; want started %s (Since), %d ms as the result says", got.StartedAt, got.DurationMS, stateTime(since), res.DurationMS)
			}
			checkpoints := slices.Index(names, ir.StmtCheckpoint)
			want := time.Minute.Milliseconds()
			if eng.name == "duckdb" {
				want += time.Hour.Milliseconds()
				if commit := slices.Index(names, "commit"); checkpoints < 0 || checkpoints < commit {
					t.Errorf("DuckDB: no checkpoint after the commit: %v", names)
				}
			} else if checkpoints >= 0 {
				t.Errorf("%s ran a checkpoint, which it spells as nothing: %v", eng.name, names)
			}
			if got.DurationMS != want {
				t.Errorf("duration %d ms, want %d (from Since to the end, the checkpoint included)", got.DurationMS, want)
			}

			// In batches, the open is the first batch's alone.
			pb := ordersPlan(e, "whole_batch", "lookback: 2d\n  batch: 1d")
			since = clock.Add(-time.Minute)
			res = mustRun(t, e, pb, Options{Until: until("2026-01-04"), Now: now, Since: since})
			runs := e.state(pb).Runs
			if len(res.Batches) < 2 || len(runs) != len(res.Batches) {
				t.Fatalf("%d batches, %d runs logged: want several, one row each", len(res.Batches), len(runs))
			}
			for i, r := range runs { // newest first
				if first := i == len(runs)-1; (r.StartedAt == stateTime(since)) != first {
					t.Errorf("batch %d of %d started %s; only the first starts at Since (%s)", len(runs)-i, len(runs), r.StartedAt, stateTime(since))
				}
			}
		})
	}
}

// TestFullRefreshSkipsProvenDedupe: a full refresh reads the source's
// catalog, and when a primary key (or unique constraint on NOT NULL
// columns) on exactly the unique key proves the dedupe a no-op, it runs
// the statements without it and says so in the run log; the target, the
// quarantine and the counts are those of the deduped variant on the same
// rows. A key over more columns proves nothing. SQLite and MariaDB read no
// catalog: the dedupe always runs there.
func TestFullRefreshSkipsProvenDedupe(t *testing.T) {
	cols := []string{"order_id", "order_date", "amount", "updated_at"}
	rows := append(append([][]any(nil), orders5...),
		[]any{106, "2026-01-21", "-1.00", "2026-01-21 08:00:00"}, // breaks amount >= 0
		[]any{107, "2026-01-22", "5.00", nil},                    // no watermark
	)
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			type outcome struct {
				Counts           counts
				Note             string
				Rows, Quarantine []string
			}
			run := func(src string, pk []string) outcome {
				spec := strings.ReplaceAll(orders("", amountCheck), "app_{id}.orders", "app_{id}.orders_"+src)
				p := e.spec(strings.ReplaceAll(spec, "{target}", src))
				tb := e.table("app_{id}.orders_" + src)
				if s := tb.Schema(); s != nil {
					e.exec(e.render(ir.CreateSchema{Schema: s}), nil)
				}
				e.exec(e.render(ir.CreateTable{Table: tb, Columns: nullableCols(p.Columns), PrimaryKey: pk}), nil)
				e.insert("app_{id}.orders_"+src, p.Columns, rows...)
				res := mustRun(t, e, p, Options{Until: until("2026-01-24"), FullRefresh: true})
				// And again, over the target the first one wrote.
				res = mustRun(t, e, p, Options{Until: until("2026-01-25"), FullRefresh: true})
				q := e.rows("dw_{id}.orders_"+src+"_quarantine", append([]string{"incrc_reason"}, cols...))
				return outcome{countsOf(res), res.Note, e.rows("dw_{id}.orders_"+src, cols), sorted(q)}
			}
			flat := run("flat", nil)
			pk := run("pk", []string{"order_id"})
			wide := run("wide", []string{"order_id", "order_date"})
			if diff := cmp.Diff(flat, outcome{Counts: pk.Counts, Note: flat.Note, Rows: pk.Rows, Quarantine: pk.Quarantine}); diff != "" {
				t.Errorf("a source keyed by order_id (-deduped +without the dedupe):\n%s", diff)
			}
			if len(flat.Rows) != 5 || len(flat.Quarantine) != 4 {
				t.Errorf("target %v, quarantine %v: want 5 rows written, 2 quarantined per run", flat.Rows, flat.Quarantine)
			}
			skips := eng.name == "duckdb" || eng.name == "postgres"
			if got := strings.Contains(pk.Note, "dedupe skipped"); got != skips {
				t.Errorf("a source keyed by order_id: the run log's note is %q", pk.Note)
			}
			if flat.Note != "" || wide.Note != "" {
				t.Errorf("a source that does not enforce the key: the run log's note is %q, %q", flat.Note, wide.Note)
			}
		})
	}
}

// TestDeclaredUniqueSource: source.unique: true removes the dedupe from
// every run (the plan has no raw stage), and reconcile checks the
// declaration: keys with several rows fail it, naming the count.
func TestDeclaredUniqueSource(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			spec := strings.Replace(orders("", ""), "  table: app_{id}.orders\n", "  table: app_{id}.orders\n  unique: true\n", 1)
			p := e.spec(strings.ReplaceAll(spec, "{target}", "uniq"))
			if p.Statement(ir.StmtDedupeStage) != nil || p.Statement(ir.StmtCreateRaw) != nil {
				t.Fatalf("a source declared unique still dedupes")
			}
			seedOrders(e, p)
			res := mustRun(t, e, p, Options{Until: until("2026-01-24")})
			if res.RowsRead != 5 || res.RowsInserted != 5 {
				t.Errorf("first run: %+v", countsOf(res))
			}
			mustRun(t, e, p, Options{Until: until("2026-01-24"), FullRefresh: true})
			if got := e.rows("dw_{id}.orders_uniq", orderCols); len(got) != 5 {
				t.Errorf("target after a full refresh: %v", got)
			}
			from, to := until("2026-01-01"), until("2026-02-01")
			if _, err := e.tg.Reconcile(e.ctx, p, *from, *to); err != nil {
				t.Fatalf("reconcile of a unique source: %v", err)
			}
			// A second version of order 101 breaks the declaration.
			e.insert("app_{id}.orders", p.Columns, []any{101, "2026-01-20", "55.00", "2026-01-23 09:00:00"})
			_, err := e.tg.Reconcile(e.ctx, p, *from, *to)
			if err == nil || !strings.Contains(err.Error(), "1 key(s) have several rows") {
				t.Fatalf("reconcile of a source with a duplicate key: %v", err)
			}
		})
	}
}

// TestSourceUniqueReadsTheCatalog: source_unique proves the key only for
// a primary key or unique constraint on exactly the key's columns, all
// NOT NULL, of the table named (not a same-named table of another
// schema); engines whose catalog is not read prove nothing.
func TestSourceUniqueReadsTheCatalog(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			reads := eng.name == "duckdb" || eng.name == "postgres"
			app, dw := "app_"+e.id, "dw_"+e.id
			if reads {
				for _, s := range []string{app, dw} {
					e.exec(e.render(ir.CreateSchema{Schema: []string{s}}), nil)
				}
			}
			ddl := map[string]string{
				app + ".pk":           "id BIGINT PRIMARY KEY, v BIGINT",
				app + ".uniq":         "id BIGINT NOT NULL UNIQUE, v BIGINT",
				app + ".uniq_null":    "id BIGINT UNIQUE, v BIGINT",
				app + ".uniq_null_v":  "id BIGINT UNIQUE, v BIGINT NOT NULL", // another column NOT NULL proves nothing of id
				app + ".wide":         "id BIGINT, v BIGINT, PRIMARY KEY (id, v)",
				app + ".none":         "id BIGINT NOT NULL, v BIGINT",
				dw + ".none":          "id BIGINT PRIMARY KEY, v BIGINT", // another schema's table of the same name
				app + ".pk_other_col": "id BIGINT, v BIGINT PRIMARY KEY",
				app + ".wide_uniq":    "id BIGINT NOT NULL, v BIGINT NOT NULL, w BIGINT, UNIQUE (v, id)",
				app + ".wide_null":    "id BIGINT NOT NULL, v BIGINT, UNIQUE (id, v)",
				app + ".two_uniq":     "id BIGINT NOT NULL UNIQUE, v BIGINT NOT NULL UNIQUE",
				app + ".wider":        "id BIGINT, v BIGINT, w BIGINT, PRIMARY KEY (id, v, w)",
			}
			want := map[string]bool{app + ".pk": reads, app + ".uniq": reads, app + ".two_uniq": reads}
			// A key of two columns, in another order than the constraint's:
			// proven by a constraint on exactly both, all NOT NULL.
			wide := map[string]bool{app + ".wide": reads, app + ".wide_uniq": reads}
			if !reads {
				// Nothing is read: a primary key proves nothing either.
				ddl = map[string]string{app + ".pk": ""}
				e.createTable(app+".pk", []ir.Col{{Name: "id", Type: ir.Type{Kind: ir.Bigint}, NotNull: true}}, "id")
			}
			for name, cols := range ddl {
				if reads {
					e.exec([]dialects.Part{{SQL: "CREATE TABLE " + name + " (" + cols + ")"}}, nil)
				}
			}
			for name := range ddl {
				if strings.HasPrefix(name, dw) {
					continue
				}
				for _, k := range []struct {
					key  []string
					want map[string]bool
				}{{[]string{"id"}, want}, {[]string{"v", "id"}, wide}} {
					parts := e.render(ir.SourceUnique{Source: e.table(name), Key: k.key})
					var n int64
					if err := e.tg.DB.QueryRowContext(e.ctx, parts[0].SQL).Scan(&n); err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					if (n != 0) != k.want[name] {
						t.Errorf("%s, key %v: source_unique counts %d, want proven %v", name, k.key, n, k.want[name])
					}
				}
			}
		})
	}
}

// TestRunsIndexedOnce: setup gives the run log its index by pipeline and
// status where the engine has one (abandon_runs reads a pipeline's running
// rows by it, not the whole log), and a later run only asks whether it is
// there: creating it again would lock the run log on PostgreSQL even when
// it exists. DuckDB creates none (see ir.CreateTable.Log). MariaDB
// gets it in the run log's CREATE TABLE (MySQL 8 has no CREATE INDEX IF
// NOT EXISTS, and two first runs would race to create it), so the test
// gives it a database of its own, whose run log is new.
func TestRunsIndexedOnce(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			if eng.name == "mysql" {
				eng = freshMySQL(t, eng)
			}
			e := newEnv(t, eng)
			p := ordersPlan(e, "ridx", "lookback: 2d")
			seedOrders(e, p)
			mustRun(t, e, p, Options{Until: until("2026-01-20")})
			var probe string
			switch eng.name {
			case "postgres":
				probe = "SELECT COUNT(*) FROM pg_indexes WHERE schemaname = current_schema() AND tablename = 'incrc_runs' AND indexname = 'incrc_runs_pipeline_status'"
			case "sqlite":
				probe = "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = 'incrc_runs_pipeline_status'"
			case "duckdb":
				probe = "SELECT COUNT(*) FROM duckdb_indexes() WHERE table_name = 'incrc_runs'"
			case "mysql":
				probe = "SELECT COUNT(DISTINCT index_name) FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = 'incrc_runs' AND index_name = 'incrc_runs_pipeline_status'"
			}
			var n int64
			if err := e.tg.DB.QueryRowContext(e.ctx, probe).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if want := eng.name != "duckdb"; (n == 1) != want || n > 1 {
				t.Errorf("the run log has %d index(es) incrc_runs_pipeline_status, want it: %v", n, want)
			}
			if eng.name != "postgres" {
				return
			}
			// A transaction that wrote the run log (another pipeline's run,
			// between its record_start and its commit) holds a lock that
			// CREATE INDEX waits on even when the index exists: a run must
			// not wait for it.
			tx, err := e.tg.DB.BeginTx(e.ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer tx.Rollback()
			if _, err := tx.ExecContext(e.ctx, "UPDATE incrc_runs SET status = status WHERE 1 = 0"); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(e.ctx, 10*time.Second)
			defer cancel()
			if _, err := e.tg.Run(ctx, p, Options{Until: until("2026-01-22")}); err != nil {
				t.Fatalf("a run beside another's open write of the run log: %v", err)
			}
		})
	}
}

// freshMySQL is eng on a database of its own, dropped after the test: the
// run log of the shared test database was created before its index, and a
// run log gets it only when it is created (MySQL has no CREATE INDEX IF
// NOT EXISTS: the index is declared in the CREATE TABLE).
func freshMySQL(t *testing.T, eng engine) engine {
	t.Helper()
	base := eng.url(t)
	tg, err := Open(context.Background(), all.Lookup, base, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	db := "incrc_fresh_" + uniq() // [a-z0-9_]: safe to spell
	if _, err := tg.DB.ExecContext(context.Background(), "CREATE DATABASE "+db); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		tg, err := Open(context.Background(), all.Lookup, base, "")
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		defer tg.Close()
		if _, err := tg.DB.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+db); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	u, err := neturl.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/" + db
	fresh := u.String()
	return engine{name: eng.name, url: func(*testing.T) string { return fresh }}
}
