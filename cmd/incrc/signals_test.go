//go:build unix

package main

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/runner"
)

// waitFor polls cond until it holds; a minute without it fails the test
// (what it waits for happens in milliseconds: the bound only keeps a
// broken build from hanging the suite).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("still waiting for %s after a minute", what)
}

// sleeping counts the sessions of the PostgreSQL source that run the
// slow query of the test: marker is a LIKE pattern that holds the source
// table, named after the test process, since another process may run the
// same test on the same server at once; since (the server's clock, read
// before the run started) leaves out every session older than the run,
// such as a read a killed run of an earlier test left sleeping.
func sleeping(t *testing.T, db *sql.DB, marker string, since time.Time) int {
	return len(sleepers(t, db, marker, since))
}

// sleepers describes the sessions sleeping counts (pid, start, query),
// for a failure message.
func sleepers(t *testing.T, db *sql.DB, marker string, since time.Time) []string {
	t.Helper()
	rows, err := db.Query("SELECT pid, backend_start, query FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND datname = current_database() AND backend_start >= $1 AND query LIKE '%"+marker+"%'", since)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var pid int
		var start time.Time
		var query string
		if err := rows.Scan(&pid, &start, &query); err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("session %d since %s: %s", pid, start.Format(time.RFC3339Nano), query))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// serverNow is the source server's clock, for sleeping's since.
func serverNow(t *testing.T, db *sql.DB) time.Time {
	t.Helper()
	var now time.Time
	if err := db.QueryRow("SELECT clock_timestamp()").Scan(&now); err != nil {
		t.Fatal(err)
	}
	return now
}

// TestSignalCancelsRun runs incrc run as a real process whose window's
// read (on a PostgreSQL source) never ends, and sends it SIGTERM, SIGINT
// or SIGHUP: the statement is cancelled, the run is recorded as cancelled,
// its lease is free (the next run is not locked out), nothing is written,
// and incrc exits 4. On PostgreSQL, a second signal while the cleanup
// waits exits at once, with 128 plus the signal's number. The run log is
// on each executed engine: the target.
func TestSignalCancelsRun(t *testing.T) {
	pgURL := serverURL(t, "INCRC_TEST_POSTGRES_URL")
	if pgURL == "" {
		t.Skip("the slow source is on PostgreSQL")
	}
	incrc, err := exec.LookPath("incrc") // the test binary, as testscript.Main set it up
	if err != nil {
		t.Fatal(err)
	}
	src, err := sql.Open("pgx", pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	suffix := fmt.Sprintf("%d", os.Getpid())
	srcTable := "sig_src_" + suffix
	if _, err := src.Exec("CREATE TABLE IF NOT EXISTS " + srcTable + " (id bigint, updated_at timestamp); INSERT INTO " + srcTable + " VALUES (1, '2026-01-01 10:00:00')"); err != nil {
		t.Fatal(err)
	}
	defer src.Exec("DROP TABLE IF EXISTS " + srcTable)

	base := t.TempDir()
	engines := []struct{ name, url string }{
		{"duckdb", "duckdb:" + filepath.Join(base, "wh.duckdb")},
		{"sqlite", "sqlite:" + filepath.Join(base, "wh.db")},
		{"postgres", pgURL},
		{"mysql", serverURL(t, "INCRC_TEST_MYSQL_URL")},
	}
	for i, eng := range engines {
		for j, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP} {
			t.Run(eng.name+"/"+sig.String(), func(t *testing.T) {
				if eng.url == "" {
					t.Skip("not configured")
				}
				dir := t.TempDir()
				pipeline := fmt.Sprintf("dw_sig_%s_%d_%d", suffix, i, j)
				// Each run's query is told apart by a comment-free marker.
				marker := fmt.Sprintf("pg_sleep(600.%d%d)", i, j)
				os.MkdirAll(filepath.Join(dir, "specs"), 0o755)
				writeFile(t, filepath.Join(dir, "specs", "s.yaml"), "pipeline: "+pipeline+`
source: {connection: app, dialect: postgres, query: "SELECT id, updated_at FROM `+srcTable+` WHERE (SELECT 1 FROM `+marker+`) = 1"}
target: {table: dw.sig_`+suffix+fmt.Sprintf("_%d_%d", i, j)+`}
columns: {id: bigint, updated_at: timestamp}
strategy: merge
unique_key: [id]
watermark: {column: updated_at, start: 2026-01-01}
`)
				cmd := exec.Command(incrc, "run", "--target", eng.url, "--source", "app="+pgURL, "--until", "2026-01-02")
				cmd.Dir = dir
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				since := serverNow(t, src)
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				var seen []string
				waitFor(t, "the run's read on the source", func() bool {
					seen = sleepers(t, src, srcTable+"%"+marker, since)
					return len(seen) > 0
				})
				if err := cmd.Process.Signal(sig); err != nil {
					t.Fatal(err)
				}
				var exitErr *exec.ExitError
				if err := <-done; !errors.As(err, &exitErr) || exitErr.ExitCode() != exitCancelled {
					t.Fatalf("%v: %v, want exit %d; the read seen on the source was %q\n%s%s", sig, err, exitCancelled, seen, &stdout, &stderr)
				}
				if !strings.Contains(stderr.String(), "cancelling") || !strings.Contains(stdout.String(), pipeline+": run cancelled") {
					t.Errorf("the output does not say it was cancelled:\n%s%s", &stdout, &stderr)
				}
				// The server ends the statement once it reads the cancel
				// request (or the closed connection): soon, not at once.
				waitFor(t, "the source's statement to end", func() bool { return sleeping(t, src, srcTable+"%"+marker, since) == 0 })
				tg, err := runner.Open(context.Background(), all.Lookup, eng.url, "")
				if err != nil {
					t.Fatal(err)
				}
				defer tg.Close()
				defer tg.Forget(context.Background(), pipeline)
				var status string
				var owner sql.NullString
				if err := tg.DB.QueryRow("SELECT status FROM incrc_runs WHERE pipeline = '" + pipeline + "'").Scan(&status); err != nil || status != runner.StatusCancelled {
					t.Errorf("the run log says %q (%v), want %q", status, err, runner.StatusCancelled)
				}
				if err := tg.DB.QueryRow("SELECT lease_owner FROM incrc_state WHERE pipeline = '" + pipeline + "'").Scan(&owner); err != nil || owner.Valid {
					t.Errorf("the lease is held by %v (%v), want it free", owner, err)
				}
				var n int
				if err := tg.DB.QueryRow("SELECT count(*) FROM " + map[bool]string{true: "dw_sig_", false: "dw.sig_"}[eng.name == "sqlite"] + suffix + fmt.Sprintf("_%d_%d", i, j)).Scan(&n); err == nil && n != 0 {
					t.Errorf("the cancelled run wrote %d rows", n)
				}
			})
		}
	}

	t.Run("postgres/second signal", func(t *testing.T) {
		dir := t.TempDir()
		pipeline := "dw_sig2_" + suffix
		marker := "pg_sleep(600.99)"
		os.MkdirAll(filepath.Join(dir, "specs"), 0o755)
		writeFile(t, filepath.Join(dir, "specs", "s.yaml"), "pipeline: "+pipeline+`
source: {connection: app, dialect: postgres, query: "SELECT id, updated_at FROM `+srcTable+` WHERE (SELECT 1 FROM `+marker+`) = 1"}
target: {table: dw.sig2_`+suffix+`}
columns: {id: bigint, updated_at: timestamp}
strategy: merge
unique_key: [id]
watermark: {column: updated_at, start: 2026-01-01}
`)
		cmd := exec.Command(incrc, "run", "--target", pgURL, "--source", "app="+pgURL, "--until", "2026-01-02")
		cmd.Dir = dir
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		since := serverNow(t, src)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		waitFor(t, "the run's read on the source", func() bool { return sleeping(t, src, srcTable+"%"+marker, since) > 0 })
		// The run log is locked: the cancelled run's record waits, and the
		// second signal finds it waiting.
		tx, err := src.Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.Exec("LOCK TABLE incrc_runs IN EXCLUSIVE MODE"); err != nil {
			t.Fatal(err)
		}
		cmd.Process.Signal(syscall.SIGTERM)
		// The first signal cancels the read before the run records
		// itself; wait for that, since another test process writing the
		// run log (go test runs packages side by side on one database)
		// also waits for the lock below.
		waitFor(t, "the source's statement to end", func() bool { return sleeping(t, src, srcTable+"%"+marker, since) == 0 })
		waitFor(t, "the cancelled run's record", func() bool {
			var n int
			src.QueryRow("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE c.relname = 'incrc_runs' AND NOT l.granted").Scan(&n)
			return n > 0
		})
		cmd.Process.Signal(syscall.SIGTERM)
		var exitErr *exec.ExitError
		if err := <-done; !errors.As(err, &exitErr) || exitErr.ExitCode() != 128+int(syscall.SIGTERM) {
			t.Errorf("%v, want exit %d\n%s%s", err, 128+int(syscall.SIGTERM), &stdout, &stderr)
		}
		// The command the message gives works when pasted: it names the
		// target as given.
		if want := "(free it with: incrc state --target " + shellQuote(pgURL) + " --release " + pipeline + ")"; !strings.Contains(stderr.String(), want) {
			t.Errorf("the second signal's message does not give %q:\n%s", want, &stderr)
		}
		tx.Rollback()
		tg, err := runner.Open(context.Background(), all.Lookup, pgURL, "")
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		tg.Forget(context.Background(), pipeline)
	})
}

// TestKilledRunFreesLease: a run killed with SIGKILL (no cleanup at all)
// held the engine's session lock of its pipeline; its connection died with
// it, so the next run takes the lease over at once instead of exiting 3
// until the TTL runs out, and the killed run is marked abandoned. On the
// engines with session locks (PostgreSQL, MariaDB/MySQL).
func TestKilledRunFreesLease(t *testing.T) {
	pgURL := serverURL(t, "INCRC_TEST_POSTGRES_URL")
	if pgURL == "" {
		t.Skip("the slow source is on PostgreSQL")
	}
	incrc, err := exec.LookPath("incrc")
	if err != nil {
		t.Fatal(err)
	}
	src, err := sql.Open("pgx", pgURL)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	suffix := fmt.Sprintf("%d", os.Getpid())
	srcTable := "kill_src_" + suffix
	if _, err := src.Exec("CREATE TABLE IF NOT EXISTS " + srcTable + " (id bigint, updated_at timestamp); INSERT INTO " + srcTable + " VALUES (1, '2026-01-01 10:00:00')"); err != nil {
		t.Fatal(err)
	}
	defer src.Exec("DROP TABLE IF EXISTS " + srcTable)
	for i, eng := range []struct{ name, url string }{{"postgres", pgURL}, {"mysql", serverURL(t, "INCRC_TEST_MYSQL_URL")}} {
		t.Run(eng.name, func(t *testing.T) {
			if eng.url == "" {
				t.Skip("not configured")
			}
			pipeline := fmt.Sprintf("dw_kill_%s_%d", suffix, i)
			marker := fmt.Sprintf("pg_sleep(600.7%d)", i)
			spec := func(where string) string {
				return "pipeline: " + pipeline + `
source: {connection: app, dialect: postgres, query: "SELECT id, updated_at FROM ` + srcTable + where + `"}
target: {table: dw.kill_` + suffix + fmt.Sprintf("_%d", i) + `}
columns: {id: bigint, updated_at: timestamp}
strategy: merge
unique_key: [id]
watermark: {column: updated_at, start: 2026-01-01}
`
			}
			slow, fast := t.TempDir(), t.TempDir()
			for dir, where := range map[string]string{slow: " WHERE (SELECT 1 FROM " + marker + ") = 1", fast: ""} {
				os.MkdirAll(filepath.Join(dir, "specs"), 0o755)
				writeFile(t, filepath.Join(dir, "specs", "s.yaml"), spec(where))
			}
			cmd := exec.Command(incrc, "run", "--target", eng.url, "--source", "app="+pgURL, "--until", "2026-01-02")
			cmd.Dir = slow
			since := serverNow(t, src)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the run's read on the source", func() bool { return sleeping(t, src, srcTable+"%"+marker, since) > 0 })
			cmd.Process.Kill()
			cmd.Wait()
			// PostgreSQL does not notice a client gone while a statement
			// sleeps: end the killed run's read on the source, which would
			// hold its table.
			src.Exec("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND query LIKE '%" + marker + "%'")
			again := exec.Command(incrc, "run", "--target", eng.url, "--source", "app="+pgURL, "--until", "2026-01-02")
			again.Dir = fast
			out, err := again.CombinedOutput()
			if err != nil {
				t.Fatalf("the run after a killed one: %v\n%s", err, out)
			}
			tg, err := runner.Open(context.Background(), all.Lookup, eng.url, "")
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			defer tg.Forget(context.Background(), pipeline)
			rows, err := tg.DB.Query("SELECT status FROM incrc_runs WHERE pipeline = '" + pipeline + "' ORDER BY started_at")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var statuses []string
			for rows.Next() {
				var s string
				rows.Scan(&s)
				statuses = append(statuses, s)
			}
			if strings.Join(statuses, ",") != "abandoned,succeeded" {
				t.Errorf("the run log says %v, want the killed run abandoned and the next one succeeded", statuses)
			}
		})
	}
}
