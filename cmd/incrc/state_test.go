package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/runner"
)

// TestStateLease: incrc state reads a lease as the next run would, with
// the clock of its env: held through the last microsecond of its expiry,
// expired after it. A run at the same instant agrees: refused while held,
// taking the lease once expired.
func TestStateLease(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll("specs", 0o755); err != nil {
		t.Fatal(err)
	}
	specYAML := "pipeline: dw_orders\nsource: {table: app.orders}\ntarget: {table: dw.orders}\ncolumns: {order_id: bigint, updated_at: timestamp}\n" +
		"strategy: merge\nunique_key: [order_id]\nwatermark: {column: updated_at, start: 2026-01-01}\n"
	if err := os.WriteFile(filepath.Join("specs", "orders.yaml"), []byte(specYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	target := "duckdb:" + filepath.Join(dir, "wh.duckdb")
	sql := func(stmts ...string) {
		t.Helper()
		tg, err := runner.Open(context.Background(), all.Lookup, target, "")
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		for _, s := range stmts {
			if _, err := tg.DB.Exec(s); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	sql("CREATE SCHEMA app", "CREATE TABLE app.orders (order_id BIGINT, updated_at TIMESTAMP)")
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"run", "--target", target, "--until", "2026-01-02"}, strings.NewReader(""), &out, &errs); code != exitOK {
		t.Fatalf("run: exit %d\n%s%s", code, &out, &errs)
	}
	const expires = "2026-03-01T12:00:00.000000Z"
	setLease := "UPDATE incrc_state SET lease_owner = 'ghost:1:dead', lease_expires_at = '" + expires + "'"
	spec, err := compiler.LoadSpec(filepath.Join("specs", "orders.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := compiler.Lower(spec)
	if err != nil {
		t.Fatal(err)
	}

	at, _ := time.Parse(time.RFC3339Nano, expires)
	held := "  lease:     held by ghost:1:dead until " + expires + "\n"
	expired := "  lease:     expired (was held by ghost:1:dead until " + expires + ")\n"
	tests := []struct {
		name string
		now  time.Time
		want string
	}{
		{"an hour before", at.Add(-time.Hour), held},
		{"its last microsecond", at.Add(999 * time.Nanosecond), held},
		{"a microsecond after", at.Add(time.Microsecond), expired},
		{"a day after", at.Add(24 * time.Hour), expired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sql(setLease)
			var stdout, stderr bytes.Buffer
			e := &env{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr, getenv: os.LookupEnv,
				now: func() time.Time { return tt.now }}
			if code := stateCmd().run(context.Background(), e, []string{"--target", target}); code != exitOK {
				t.Fatalf("state: exit %d\n%s", code, &stderr)
			}
			if !strings.Contains(stdout.String(), tt.want) {
				t.Errorf("at %s, want %q in:\n%s", tt.now.Format(time.RFC3339Nano), tt.want, &stdout)
			}
			tg, err := runner.Open(context.Background(), all.Lookup, target, "")
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			_, err = tg.Run(context.Background(), plan, runner.Options{Now: func() time.Time { return tt.now }, Until: &at})
			if locked := errors.As(err, new(*runner.LockedError)); locked != (tt.want == held) {
				t.Errorf("at %s, state says %q but a run gets: %v", tt.now.Format(time.RFC3339Nano), strings.TrimSpace(tt.want), err)
			}
		})
	}
}
