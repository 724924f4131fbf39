package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/runner"
)

// TestPipelineTestsOnEngines runs the repository's pipeline tests
// (specs/*.test.yaml) with incrc test on each executed engine, and checks
// that they leave nothing behind on the shared server databases: no
// schema of a test, no row in the state tables.
func TestPipelineTestsOnEngines(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	server := func(env string) string {
		u := os.Getenv(env)
		if u == "" {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is not set: CI must run incrc test on it", env)
			}
			t.Logf("%s not set: skipping that engine (see README, Tests)", env)
		}
		return u
	}
	engines := []struct{ name, url string }{
		{"duckdb (default)", ""},
		{"sqlite", "sqlite:" + filepath.Join(t.TempDir(), "t.db")},
		{"postgres", server("INCRC_TEST_POSTGRES_URL")},
		{"mysql", server("INCRC_TEST_MYSQL_URL")},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			if eng.url == "" && eng.name != "duckdb (default)" {
				t.Skip("not configured")
			}
			args := []string{"test", "--specs", filepath.Join(root, "specs")}
			if eng.url != "" {
				args = append(args, "--target", eng.url)
			}
			var before []string
			if eng.url != "" {
				before = leftovers(t, eng.url)
			}
			var stdout, stderr bytes.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: os.LookupEnv, now: time.Now}
			code := testCmd().run(context.Background(), e, args[1:])
			if code != exitOK || !strings.Contains(stdout.String(), " passed, 0 failed") {
				t.Fatalf("incrc %s: exit %d\n%s%s", strings.Join(args, " "), code, &stdout, &stderr)
			}
			if eng.url != "" {
				if after := leftovers(t, eng.url); strings.Join(after, ",") != strings.Join(before, ",") {
					t.Errorf("incrc test left behind: %v (before: %v)", after, before)
				}
			}
		})
	}
}

// leftovers lists what incrc test's tests would leave on a database: the
// state rows of dw_ pipelines with a test's suffix, and for SQLite the
// tables besides the state tables. Only this process's suffixes count (they
// carry its pid): a MariaDB server's schemas are its databases, seen by
// every test process on the server, and another package's tests may run
// incrc test at the same time.
func leftovers(t *testing.T, url string) []string {
	t.Helper()
	tg, err := runner.Open(context.Background(), url, "")
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	var out []string
	mine := regexp.MustCompile(fmt.Sprintf(`_t[0-9]+_%d_[0-9]+$`, os.Getpid()%1e4))
	rows, err := tg.DB.Query("SELECT pipeline FROM incrc_state WHERE pipeline LIKE 'dw_orders_t%'")
	if err == nil {
		for rows.Next() {
			var p string
			rows.Scan(&p)
			if mine.MatchString(p) {
				out = append(out, "state row "+p)
			}
		}
		rows.Close()
	}
	q := ""
	switch tg.Dialect.Name() {
	case "postgres":
		q = "SELECT nspname FROM pg_namespace WHERE nspname ~ '^(app|dw|incrc_test)_t[0-9]+_[0-9]+_[0-9]+$'"
	case "mysql":
		q = "SELECT schema_name FROM information_schema.schemata WHERE schema_name REGEXP '^(app|dw|incrc_test)_t[0-9]+_[0-9]+_[0-9]+$'"
	case "sqlite":
		q = "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'incrc_%'"
	}
	rows, err = tg.DB.Query(q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		rows.Scan(&s)
		if tg.Dialect.Name() == "sqlite" || mine.MatchString(s) {
			out = append(out, s)
		}
	}
	return out
}
