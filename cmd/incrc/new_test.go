package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/runner"
)

// TestNewFromTableQuotesNames: incrc new --from-table writes the catalog's
// column names through the YAML encoder. A name YAML would read as
// something else (null, a number) is quoted and stays the column's name; a
// name holding ": " and a line break stays one name, which validation
// refuses, so no spec is written.
func TestNewFromTableQuotesNames(t *testing.T) {
	t.Chdir(t.TempDir())
	os.MkdirAll("specs", 0o755)
	ctx := context.Background()
	tg, err := runner.Open(ctx, "duckdb:wh.duckdb", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []string{
		`CREATE SCHEMA app`,
		`CREATE TABLE app.plain (id BIGINT PRIMARY KEY, "null" VARCHAR, "true" VARCHAR, updated_at TIMESTAMP)`,
		`CREATE TABLE app.hostile (id BIGINT PRIMARY KEY, "note: text` + "\n" + `  amount" VARCHAR, updated_at TIMESTAMP)`,
	} {
		if _, err := tg.DB.ExecContext(ctx, st); err != nil {
			t.Fatal(err)
		}
	}
	tg.Close()

	mustCmd(t, exitOK, "new", "dw_plain", "--strategy", "merge", "--source", "app.plain", "--from-table", "--target", "duckdb:wh.duckdb")
	s, err := compiler.LoadSpec("specs/plain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range s.Columns {
		names = append(names, c.Name.Value)
	}
	if got := strings.Join(names, ","); got != "id,null,true,updated_at" {
		t.Errorf("columns %s, want id,null,true,updated_at", got)
	}

	code, stdout, stderr := cmdOut(t, "new", "dw_hostile", "--strategy", "merge", "--source", "app.hostile", "--from-table", "--target", "duckdb:wh.duckdb")
	if code != exitError {
		t.Errorf("exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat("specs/hostile.yaml"); err == nil {
		data, _ := os.ReadFile("specs/hostile.yaml")
		t.Errorf("written:\n%s", data)
	}
	if !strings.Contains(stderr, `"note: text\n  amount"`) || strings.Contains(stderr, `column "amount"`) {
		t.Errorf("the error does not name the one column:\n%s", stderr)
	}
}
