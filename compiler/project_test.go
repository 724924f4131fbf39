package compiler

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"
)

func TestLoadConfigTargets(t *testing.T) {
	path := filepath.Join(t.TempDir(), "incrc.yaml")
	data := "targets:\n  local: duckdb:wh.duckdb\n  prod: postgres://${PGUSER}:${PGPASS}@db/wh\n  ci: 'postgres://${CI_USER}@ci/wh'\n"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"CI_USER": "runner"}
	cfg, err := LoadConfig(path, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatalf("an unset variable must not fail loading (compile needs no secrets): %v", err)
	}
	if url, err := cfg.Target("local"); err != nil || url != "duckdb:wh.duckdb" {
		t.Errorf("local: %q, %v", url, err)
	}
	if url, err := cfg.Target("ci"); err != nil || url != "postgres://runner@ci/wh" {
		t.Errorf("ci: %q, %v", url, err)
	}
	// The error points at the first unset variable inside the URL.
	want := path + `:3:20: target "prod": environment variable PGUSER, PGPASS is not set: export it, or use another target`
	if _, err := cfg.Target("prod"); err == nil || err.Error() != want {
		t.Errorf("prod: got %v\nwant %s", err, want)
	}
	if _, ok := cfg.Targets["prod"]; ok {
		t.Error("Targets holds a target that did not expand")
	}
	if _, err := cfg.Target("staging"); err == nil || !strings.Contains(err.Error(), "names: ci, local, prod") {
		t.Errorf("unknown target: %v", err)
	}
}

func TestLoadConfigDefaults(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"missing.yaml": "", "comments.yaml": "# nothing yet\n"} {
		path := filepath.Join(dir, name)
		if data != "" {
			if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		cfg, err := LoadConfig(path, func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cfg.Specs != "specs" || cfg.Out != "sql" || len(cfg.Dialects) != 1 || cfg.Dialects[0] != "duckdb" {
			t.Errorf("%s: not the defaults: %+v", name, cfg)
		}
	}
}

func TestStringAt(t *testing.T) {
	src := "a: x\nplain: amount >= 0\nquoted: \"amount >= 0\"\nescaped: \"amount\\t>= 0\"\nblock: |\n    SELECT 1\n      FROM t\n"
	// Read the scalars through the parser the way spec keys are read.
	p := &parser{file: "t.yaml", src: []byte(src)}
	root, _ := p.document([]byte(src), "")
	get := func(key string) ir.String {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == key {
				return p.str(key, root.Content[i+1])
			}
		}
		t.Fatalf("no key %s", key)
		return ir.String{}
	}
	tests := []struct {
		key       string
		off       int
		line, col int
	}{
		{"plain", 7, 2, 15},
		{"quoted", 7, 3, 17},
		{"escaped", 7, 4, 10}, // an escape: only the scalar's start is certain
		{"block", 0, 6, 5},
		{"block", 11, 7, 7},
	}
	for _, tt := range tests {
		got := get(tt.key).At(tt.off)
		if got.Line != tt.line || got.Col != tt.col {
			t.Errorf("%s at %d: %d:%d, want %d:%d", tt.key, tt.off, got.Line, got.Col, tt.line, tt.col)
		}
	}
}
