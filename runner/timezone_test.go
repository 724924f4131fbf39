package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSessionsInUTC: a run gives the same target whatever the zone of the
// machine, of the client's environment or of the server: every session
// the runner opens runs in UTC, so a naive time in a file whose column is
// declared timestamptz is a UTC time on every target.
//
// DuckDB takes the process's zone once (TZ, at its first database), so
// the test runs itself again in a child process under TZ=Europe/Berlin and
// PGTZ=Europe/Berlin (which pgx, like libpq, sends as the session's
// zone); the server engines' sessions are checked there too, and in this
// process, under the machine's zone.
func TestSessionsInUTC(t *testing.T) {
	if os.Getenv("INCRC_TEST_TZ_CHILD") == "" {
		t.Run("Europe/Berlin", func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run=^TestSessionsInUTC$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), "INCRC_TEST_TZ_CHILD=1", "TZ=Europe/Berlin", "PGTZ=Europe/Berlin")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("under TZ=Europe/Berlin: %v\n%s", err, out)
			}
			// The child ran the engines' checks, not nothing.
			if !strings.Contains(string(out), "--- PASS: TestSessionsInUTC/duckdb") {
				t.Fatalf("under TZ=Europe/Berlin: the DuckDB check did not run:\n%s", out)
			}
		})
	} else if now := time.Now(); now.Format("-07") == "+00" && now.AddDate(0, 6, 0).Format("-07") == "+00" {
		t.Fatalf("the child process runs in UTC (TZ=%q): the test proves nothing", os.Getenv("TZ"))
	}
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			var zone, want string
			switch eng.name {
			case "duckdb":
				zone, want = "SELECT current_setting('TimeZone')", "UTC"
			case "postgres":
				zone, want = "SHOW TimeZone", "UTC"
			case "mysql":
				zone, want = "SELECT @@session.time_zone", "+00:00"
			}
			if zone != "" {
				// Each of a few connections: the zone is set on every new
				// one, not on the first only.
				for i := range 3 {
					conn, err := e.tg.DB.Conn(e.ctx)
					if err != nil {
						t.Fatal(err)
					}
					defer conn.Close()
					var got string
					if err := conn.QueryRowContext(e.ctx, zone).Scan(&got); err != nil {
						t.Fatal(err)
					}
					if got != want {
						t.Errorf("connection %d: the session's zone is %q, want %q", i, got, want)
					}
				}
			}
			// A landing folder's naive times, declared timestamptz, and a
			// run's window bound by one of them.
			dir := t.TempDir()
			csv := "id,at\n1,2026-03-01 10:00:00\n2,2026-07-01 23:30:00\n"
			if err := os.WriteFile(filepath.Join(dir, "a.csv"), []byte(csv), 0o644); err != nil {
				t.Fatal(err)
			}
			p := e.spec(`pipeline: tzfiles_{id}
source: { files: "` + filepath.ToSlash(dir) + `/*.csv", format: csv }
target: { table: dw_{id}.tzfiles }
columns:
  id: bigint
  at: timestamptz
strategy: append
watermark: { files: new }
`)
			checkCounts(t, "files", mustRun(t, e, p, Options{}), counts{Read: 2, Inserted: 2})
			wantRows := []string{
				"1 | " + Canon(time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)),
				"2 | " + Canon(time.Date(2026, 7, 1, 23, 30, 0, 0, time.UTC)),
			}
			got := e.rows("dw_{id}.tzfiles", []string{"id", "at"})
			if strings.Join(got, "\n") != strings.Join(wantRows, "\n") {
				t.Errorf("the files' naive times read as UTC:\n got %q\nwant %q", got, wantRows)
			}
		})
	}
}
