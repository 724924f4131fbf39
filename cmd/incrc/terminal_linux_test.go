package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/incrc/incrc/compiler/ir"
)

// pty is a pseudo-terminal: what incrc writes to tty, a terminal, is read
// from the master side into out.
type pty struct {
	tty  *os.File
	mu   sync.Mutex
	out  bytes.Buffer
	done chan struct{}
}

func openPTY(t *testing.T) *pty {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	var unlock int32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); errno != 0 {
		t.Fatalf("unlockpt: %v", errno)
	}
	var n uint32
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, master.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); errno != 0 {
		t.Fatalf("ptsname: %v", errno)
	}
	tty, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &pty{tty: tty, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		buf := make([]byte, 4096)
		for {
			k, err := master.Read(buf)
			p.mu.Lock()
			p.out.Write(buf[:k])
			p.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() {
		tty.Close()
		<-p.done
		master.Close()
	})
	return p
}

// text closes the terminal side and returns all it showed: the master
// reads EIO once the terminal side is closed and drained.
func (p *pty) text() string {
	p.tty.Close()
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// TestProgressAndColourOnATerminal: incrc run on a terminal shows a
// progress line on stderr (the statement, rows read, partitions, elapsed)
// and colours the run's status on stdout; NO_COLOR turns the colour off;
// written to a file or a pipe, neither appears.
func TestProgressAndColourOnATerminal(t *testing.T) {
	engines := []struct{ name, url string }{
		{"duckdb", "duckdb"},
		{"sqlite", "sqlite"},
		{"postgres", serverURL(t, "INCRC_TEST_POSTGRES_URL")},
		{"mysql", serverURL(t, "INCRC_TEST_MYSQL_URL")},
	}
	for _, eng := range engines {
		t.Run(eng.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			url := eng.url
			switch url {
			case "duckdb":
				url = "duckdb:" + filepath.Join(dir, "wh.duckdb")
			case "sqlite":
				url = "sqlite:" + filepath.Join(dir, "wh.db")
			case "":
				t.Skip("not configured")
			}
			id := fmt.Sprintf("p%d", time.Now().UnixNano()%1e9)
			pipeline := "dw_events_" + id
			f := newFixture(t, url, []string{"app_" + id, "dw_" + id}, pipeline)
			f.create("app_"+id+".events", []ir.Col{
				{Name: "event_id", Type: ir.Type{Kind: ir.Bigint}},
				{Name: "event_date", Type: ir.Type{Kind: ir.Date}},
				{Name: "ingested_at", Type: ir.Type{Kind: ir.Timestamp}},
			}, nil, "1, '2026-01-10', '2026-01-10 09:00:00'", "2, '2026-01-11', '2026-01-11 09:00:00'", "3, '2026-01-12', '2026-01-12 09:00:00'")
			os.MkdirAll("specs", 0o755)
			writeFile(t, "specs/events.yaml", `
pipeline: `+pipeline+`
source: { table: app_`+id+`.events }
target: { table: dw_`+id+`.events }
columns: { event_id: bigint, event_date: date, ingested_at: timestamp }
strategy: overwrite_partitions
watermark: { column: ingested_at, start: 2026-01-01 }
partition: { column: event_date, granularity: day }
`)
			runOn := func(stdout, stderr *os.File, until string) int {
				return run(context.Background(), []string{"run", "--target", url, pipeline, "--until", until}, strings.NewReader(""), stdout, stderr)
			}

			out, errs := openPTY(t), openPTY(t)
			if code := runOn(out.tty, errs.tty, "2026-01-12"); code != exitOK {
				t.Fatalf("exit %d", code)
			}
			progress := pipeline + ": stage_partition, 0 rows read, partition 0/2, "
			if got := errs.text(); !strings.Contains(got, "\r\033[K"+progress) || !strings.Contains(got, "partition 1/2") || !strings.Contains(got, " elapsed") {
				t.Errorf("stderr on a terminal shows no progress line %q...:\n%q", progress, got)
			}
			if got := out.text(); !strings.Contains(got, pipeline+": run \033[32msucceeded\033[0m, window") {
				t.Errorf("stdout on a terminal has no coloured status:\n%q", got)
			}

			t.Setenv("NO_COLOR", "1")
			out, errs = openPTY(t), openPTY(t)
			if code := runOn(out.tty, errs.tty, "2026-01-13"); code != exitOK {
				t.Fatalf("exit %d", code)
			}
			if got := out.text(); strings.Contains(got, "\033[") || !strings.Contains(got, pipeline+": run succeeded, window") {
				t.Errorf("NO_COLOR: stdout is coloured, or has no summary:\n%q", got)
			}
			if got := errs.text(); !strings.Contains(got, pipeline+": ") {
				t.Errorf("NO_COLOR turned the progress line off too:\n%q", got)
			}

			// Not a terminal: a file each.
			fo, err := os.Create(filepath.Join(dir, "out.txt"))
			if err != nil {
				t.Fatal(err)
			}
			fe, err := os.Create(filepath.Join(dir, "err.txt"))
			if err != nil {
				t.Fatal(err)
			}
			os.Unsetenv("NO_COLOR")
			if code := runOn(fo, fe, "2026-01-14"); code != exitOK {
				t.Fatalf("exit %d", code)
			}
			fo.Close()
			fe.Close()
			for _, name := range []string{"out.txt", "err.txt"} {
				b, _ := os.ReadFile(filepath.Join(dir, name))
				if bytes.ContainsAny(b, "\r\033") {
					t.Errorf("%s, not a terminal, holds a progress line or colour:\n%q", name, b)
				}
			}
		})
	}
}
