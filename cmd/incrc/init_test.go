package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestInitProjectMovesData: a user runs incrc init, then the commands its
// output says to run next, as printed; every one succeeds, and every
// example pipeline's run reads and writes rows. On DuckDB the commands run
// as printed (the dev target); on SQLite, PostgreSQL and MariaDB with
// --target naming the engine, and the examples' schemas and pipelines
// renamed with a suffix, as the servers are shared.
func TestInitProjectMovesData(t *testing.T) {
	engines := []struct{ name, url string }{
		{"duckdb (dev)", ""},
		{"sqlite", "sqlite"},
		{"postgres", serverURL(t, "INCRC_TEST_POSTGRES_URL")},
		{"mysql", serverURL(t, "INCRC_TEST_MYSQL_URL")},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			url := eng.url
			if eng.name == "sqlite" {
				url = "sqlite:" + filepath.Join(dir, "wh.db")
			} else if eng.name != "duckdb (dev)" && url == "" {
				t.Skip("not configured")
			}
			out := mustCmd(t, exitOK, "init")
			_, next, ok := strings.Cut(out, "\nNext:\n")
			if !ok {
				t.Fatalf("incrc init says nothing to do next:\n%s", out)
			}
			pipelines := []string{"dw_orders", "dw_page_views", "dw_events", "dw_countries", "dw_customers", "dim_product"}
			if url != "" {
				id := fmt.Sprintf("i%d", time.Now().UnixNano()%1e9)
				pipelines = renameProject(t, id, pipelines)
				newFixture(t, url, []string{"app_" + id, "dw_" + id}, pipelines...)
			}
			ran := false
			for _, line := range strings.Split(strings.TrimSpace(next), "\n") {
				cmd, _, _ := strings.Cut(line, "#")
				args := strings.Fields(cmd)
				if len(args) == 0 || args[0] != "incrc" {
					t.Fatalf("not a command: %q", line)
				}
				args = args[1:]
				for i := range args {
					if args[i] == "dev" && i > 0 && args[i-1] == "--target" && url != "" {
						args[i] = url
					}
				}
				code, stdout, stderr := cmdOut(t, args...)
				if code != exitOK {
					t.Fatalf("incrc %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
				}
				if args[0] != "run" {
					continue
				}
				ran = true
				for _, p := range pipelines {
					m := regexp.MustCompile(`(?m)^` + p + `: (run|full refresh) succeeded, .*: read (\d+), inserted (\d+)`).FindStringSubmatch(stdout)
					if m == nil {
						t.Errorf("%s did not run:\n%s", p, stdout)
						continue
					}
					if read, _ := strconv.Atoi(m[2]); read == 0 {
						t.Errorf("%s read no row: %s", p, m[0])
					}
					if ins, _ := strconv.Atoi(m[3]); ins == 0 {
						t.Errorf("%s inserted no row: %s", p, m[0])
					}
				}
			}
			if !ran {
				t.Errorf("the commands after init run no pipeline:\n%s", next)
			}
		})
	}
}

// renameProject gives the examples' schemas and pipelines a suffix of
// their own (specs, tests and sample rows), for a shared server.
func renameProject(t *testing.T, id string, pipelines []string) []string {
	t.Helper()
	var renamed []string
	r := []string{"app.", "app_" + id + ".", "dw.", "dw_" + id + "."}
	for _, p := range pipelines {
		r = append(r, "pipeline: "+p+"\n", "pipeline: "+p+"_"+id+"\n")
		renamed = append(renamed, p+"_"+id)
	}
	rep := strings.NewReplacer(r...)
	for _, glob := range []string{"specs/*.yaml", "seeds/*.yaml"} {
		files, _ := filepath.Glob(glob)
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			writeFile(t, f, rep.Replace(string(data)))
		}
	}
	for _, p := range pipelines {
		if err := os.Rename(filepath.Join("seeds", p+".yaml"), filepath.Join("seeds", p+"_"+id+".yaml")); err != nil {
			t.Fatal(err)
		}
	}
	return renamed
}
