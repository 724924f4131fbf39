package main

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/runner"
)

// serverURL is the URL of a test server engine, or "" (the test then
// skips it, and fails under CI=true).
func serverURL(t *testing.T, env string) string {
	t.Helper()
	u := os.Getenv(env)
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI must run this test on it", env)
		}
		t.Logf("%s not set: skipping that engine (see README, Tests)", env)
	}
	return u
}

// hostPort is a server URL's host and port, its database, and its user.
func hostPort(t *testing.T, raw string) (host, db, user string) {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host, strings.TrimPrefix(u.Path, "/"), u.User.Username()
}

// secretParts are the passwords of the tests below, and what of them must
// never be printed or recorded: as written, as decoded, and the parts a
// URL parser that stops at # or % would leave.
var secretParts = []string{"Hx7Qp", "zz%41Wk", "zzAWk", "Pw9Lm3Rt"}

func noSecret(t *testing.T, where, text string) {
	t.Helper()
	for _, s := range secretParts {
		if strings.Contains(text, s) {
			t.Errorf("%s holds the password (%q):\n%s", where, s, text)
		}
	}
}

const sourcedSpec = `pipeline: dw_src
source: {connection: app, table: public.o, dialect: postgres}
target: {table: dw.src}
columns: {id: bigint, updated_at: timestamp}
strategy: merge
unique_key: [id]
watermark: {column: updated_at, start: 2026-01-01}
`

// TestPasswordsNeverPrinted: a password reaches neither stdout, stderr nor
// the target's run log (incrc_runs.error), in any form a driver takes: a
// URL's userinfo with a # and a % in it (which no URL parser reads back),
// ?password=, a key=value DSN, MySQL's own DSN, and --source NAME=URL in
// both of pflag's forms; on every executed engine, as the target the run
// log is on.
func TestPasswordsNeverPrinted(t *testing.T) {
	engines := []struct{ name, url string }{
		{"duckdb", ""},
		{"sqlite", ""},
		{"postgres", serverURL(t, "INCRC_TEST_POSTGRES_URL")},
		{"mysql", serverURL(t, "INCRC_TEST_MYSQL_URL")},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			os.MkdirAll("specs", 0o755)
			writeFile(t, "specs/o.yaml", `pipeline: dw_o
source: {table: app.missing_source}
target: {table: dw.o}
columns: {id: bigint, updated_at: timestamp}
strategy: merge
unique_key: [id]
watermark: {column: updated_at, start: 2026-01-01}
`)
			target := map[string]string{"duckdb": "duckdb:" + filepath.Join(dir, "wh.duckdb"), "sqlite": "sqlite:" + filepath.Join(dir, "wh.db")}[eng.name]
			var forms map[string]string // target URLs that hold a password
			switch eng.name {
			case "postgres", "mysql":
				if eng.url == "" {
					t.Skip("not configured")
				}
				target = eng.url
				host, db, user := hostPort(t, eng.url)
				h, _, _ := strings.Cut(host, ":")
				if eng.name == "postgres" {
					// The server trusts local connections: a password that
					// is there connects, so the hint of a failed run shows
					// the target as given, minus its password.
					forms = map[string]string{
						"userinfo with # and %":   "postgres://" + user + ":Hx7Qp#zz%41Wk@" + host + "/" + db + "?sslmode=disable",
						"?password=":              eng.url + "&password=Pw9Lm3Rt",
						"key=value DSN":           "host=" + h + " port=1 user=" + user + " password=Pw9Lm3Rt dbname=" + db,
						"?password=, no server":   "postgres://" + user + "@" + h + ":1/" + db + "?sslmode=disable&password=Pw9Lm3Rt",
						"userinfo, no server":     "postgres://" + user + ":Pw9Lm3Rt@" + h + ":1/" + db + "?sslmode=disable",
						"userinfo with #, no url": "postgres://" + user + ":Hx7Qp#zz%41Wk@" + h + ":1/" + db,
					}
				} else {
					forms = map[string]string{
						"userinfo with # and %": "mysql://" + user + ":Hx7Qp#zz%41Wk@" + host + "/" + db,
						"?password=":            "mysql://" + user + "@" + h + ":1/" + db + "?password=Pw9Lm3Rt",
						"MySQL DSN":             user + ":Pw9Lm3Rt@tcp(" + h + ":1)/" + db,
						"userinfo, wrong":       "mysql://" + user + ":Pw9Lm3Rt@" + host + "/" + db,
					}
				}
			}
			for name, form := range forms {
				code, stdout, stderr := cmdOut(t, "run", "--target", form, "--until", "2026-01-02", "--connect-timeout", "5s")
				if code == exitOK {
					t.Errorf("%s: the run of a missing source succeeded", name)
				}
				noSecret(t, name+": the output", stdout+stderr)
				code, stdout, stderr = cmdOut(t, "state", "--target="+form)
				noSecret(t, name+": incrc state", stdout+stderr)
			}

			// A source connection whose URL no parser reads (a # in the
			// password): the run fails at the source, and its error is in
			// the run log.
			writeFile(t, "specs/o.yaml", sourcedSpec)
			for _, args := range [][]string{
				{"--source", "app=postgres://etl:Hx7Qp#zz%41Wk@127.0.0.1:1/app"},
				{"--source=app=postgres://etl:Pw9Lm3Rt@127.0.0.1:1/app?connect_timeout=2"},
				{"--source", "app=host=127.0.0.1 port=1 user=etl password=Pw9Lm3Rt"},
			} {
				full := append([]string{"run", "--target", target, "--until", "2026-01-02"}, args...)
				code, stdout, stderr := cmdOut(t, full...)
				if code != exitError {
					t.Errorf("%v: exit %d, want 1\n%s%s", args, code, stdout, stderr)
				}
				noSecret(t, strings.Join(args, " ")+": the output", stdout+stderr)
			}
			tg, err := runner.Open(context.Background(), all.Lookup, target, "")
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			defer tg.DB.Exec("DELETE FROM incrc_runs WHERE pipeline = 'dw_src'")
			defer tg.DB.Exec("DELETE FROM incrc_state WHERE pipeline = 'dw_src'")
			rows, err := tg.DB.Query("SELECT error FROM incrc_runs WHERE pipeline = 'dw_src'")
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				var msg *string
				if err := rows.Scan(&msg); err != nil {
					t.Fatal(err)
				}
				n++
				if msg == nil {
					t.Errorf("a failed run without its error")
					continue
				}
				noSecret(t, "incrc_runs.error", *msg)
			}
			if n != 2 {
				// The key=value form is refused before the run: --source
				// takes a URL.
				t.Errorf("%d runs recorded, want 2", n)
			}
		})
	}
}

// TestEnvExpansionOneComponent: ${ENV} in a URL of incrc.yaml is one
// component. A password that spells "@host:port/db?...#" stays a password:
// the target is the host the file names (here a port nothing listens on),
// never the one the value spells (the test server, which would accept it).
func TestEnvExpansionOneComponent(t *testing.T) {
	for _, env := range []string{"INCRC_TEST_POSTGRES_URL", "INCRC_TEST_MYSQL_URL"} {
		t.Run(env, func(t *testing.T) {
			raw := serverURL(t, env)
			if raw == "" {
				t.Skip("not configured")
			}
			host, db, user := hostPort(t, raw)
			h, _, _ := strings.Cut(host, ":")
			t.Chdir(t.TempDir())
			os.MkdirAll("specs", 0o755)
			writeFile(t, "specs/o.yaml", `pipeline: dw_o
source: {table: app.o}
target: {table: dw.o}
columns: {id: bigint, updated_at: timestamp}
strategy: full_refresh
`)
			scheme, query := "postgres", "?sslmode=disable"
			if strings.HasPrefix(raw, "mysql:") {
				scheme, query = "mysql", ""
			}
			// The value names the test server; the file names port 1.
			t.Setenv("INCRC_T_PW", "Hx7Qp@"+host+"/"+db+query+"#")
			writeFile(t, "incrc.yaml", "targets:\n  prod: "+scheme+"://"+user+":${INCRC_T_PW}@"+h+":1/nowhere\n")
			code, stdout, stderr := cmdOut(t, "state", "--target", "prod", "--connect-timeout", "5s")
			if code != exitError {
				t.Fatalf("exit %d: the expanded URL reached a server\n%s%s", code, stdout, stderr)
			}
			if !strings.Contains(stderr, h+":1/nowhere") {
				t.Errorf("the error does not name the host the file names:\n%s", stderr)
			}
			noSecret(t, "the output", stdout+stderr)
		})
	}
}
