//go:build bench

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// BenchmarkCompileProcess: `incrc compile` of 1000 specs as a user runs
// it, one process per compile into an empty folder (a first compile, or
// one in a fresh CI checkout), for one dialect and for all. Besides the
// wall time it reports the process's CPU time (user + system: on a shared
// machine the wall time counts the others' turns too) and its peak RSS.
//
//	go test -tags bench ./cmd/incrc -run '^$' -bench CompileProcess -benchtime 1x -count 10 | tee new.txt
//	go run golang.org/x/perf/cmd/benchstat@latest old.txt new.txt
func BenchmarkCompileProcess(b *testing.B) {
	dir := b.TempDir()
	writeSpecs(b, dir, 1000)
	if err := os.WriteFile(filepath.Join(dir, "none.yaml"), []byte("specs: specs\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	bin := filepath.Join(dir, "incrc")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, dialect := range []string{"duckdb", "all"} {
		b.Run(dialect, func(b *testing.B) {
			var cpu, rss int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				out := filepath.Join(dir, "sql")
				if err := os.RemoveAll(out); err != nil {
					b.Fatal(err)
				}
				cmd := exec.Command(bin, "compile", "--config", filepath.Join(dir, "none.yaml"), "--specs", filepath.Join(dir, "specs"), "--dialect", dialect, "--out", out)
				b.StartTimer()
				if msg, err := cmd.CombinedOutput(); err != nil {
					b.Fatalf("incrc compile: %v\n%s", err, msg)
				}
				b.StopTimer()
				ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
				if !ok {
					b.Skip("no resource usage on this system")
				}
				cpu += ru.Utime.Nano() + ru.Stime.Nano()
				rss = max(rss, int64(ru.Maxrss)) // kilobytes on Linux
			}
			b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(rss)/1024, "maxrss-MB")
		})
	}
}
