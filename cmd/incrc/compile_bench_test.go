//go:build bench

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkCompile1000: `incrc compile` of a project of 1000 specs (the
// repository's orders, events, sales and customers specs, renamed), for
// one dialect and for all, into a folder already holding the same output
// (what a compile in CI does). It also checks that a compile with nothing
// changed touches no file. BenchmarkCompileProcess measures a first
// compile, as its own process.
//
//	go test -tags bench ./cmd/incrc -run '^$' -bench Compile1000 -benchtime 10x -v
func BenchmarkCompile1000(b *testing.B) {
	dir := b.TempDir()
	writeSpecs(b, dir, 1000)
	if err := os.WriteFile(filepath.Join(dir, "none.yaml"), []byte("specs: specs\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, dialect := range []string{"duckdb", "all"} {
		b.Run(dialect, func(b *testing.B) {
			out := filepath.Join(dir, "sql_"+dialect)
			args := []string{"compile", "--config", filepath.Join(dir, "none.yaml"), "--specs", filepath.Join(dir, "specs"), "--dialect", dialect, "--out", out}
			compileOnce(b, args) // the first compile writes every file
			mtimes := modTimes(b, out)
			cpu0 := cpuTime()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				compileOnce(b, args)
			}
			b.StopTimer()
			// CPU time (user + system) of the process: on a shared machine
			// the wall time also counts the others' turns on the cores.
			b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
			if after := modTimes(b, out); len(after) != len(mtimes) {
				b.Fatalf("%d files, then %d", len(mtimes), len(after))
			} else {
				for path, t := range mtimes {
					if !after[path].Equal(t) {
						b.Fatalf("%s was rewritten by a compile that changed nothing", path)
					}
				}
			}
		})
	}
}

// writeSpecs writes n specs, renamed copies of the repository's.
func writeSpecs(b *testing.B, dir string, n int) {
	b.Helper()
	if err := os.MkdirAll(filepath.Join(dir, "specs"), 0o755); err != nil {
		b.Fatal(err)
	}
	var srcs []string
	for _, name := range []string{"orders", "events", "sales", "customers"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "specs", name+".yaml"))
		if err != nil {
			b.Fatal(err)
		}
		srcs = append(srcs, string(data))
	}
	for i := 0; i < n; i++ {
		src := srcs[i%len(srcs)]
		var out []string
		for _, line := range strings.Split(src, "\n") {
			switch {
			case strings.HasPrefix(line, "pipeline: "):
				line += fmt.Sprintf("_%d", i)
			case strings.HasPrefix(line, "  table: dw."):
				line += fmt.Sprintf("_%d", i)
			}
			out = append(out, line)
		}
		if err := os.WriteFile(filepath.Join(dir, "specs", fmt.Sprintf("p%04d.yaml", i)), []byte(strings.Join(out, "\n")), 0o644); err != nil {
			b.Fatal(err)
		}
	}
}

func compileOnce(b *testing.B, args []string) {
	var stderr bytes.Buffer
	if code := run(context.Background(), args, strings.NewReader(""), io.Discard, &stderr); code != 0 {
		b.Fatalf("incrc %s: exit %d\n%s", strings.Join(args, " "), code, stderr.String())
	}
}

func modTimes(b *testing.B, dir string) map[string]time.Time {
	out := map[string]time.Time{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = info.ModTime()
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	return out
}
