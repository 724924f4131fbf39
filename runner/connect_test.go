package runner

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/incrc/incrc/dialects/all"
)

// silentServer accepts TCP connections and never writes a byte: a hung
// server, or a proxy whose backend is gone. It returns its port.
func silentServer(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().(*net.TCPAddr).Port
}

// TestConnectTimeout: a server that accepts and never answers fails Open
// within the connect timeout, naming the target (password redacted); a
// timeout in the URL is the user's and wins over the option.
func TestConnectTimeout(t *testing.T) {
	port := silentServer(t)
	tests := []struct {
		name    string
		url     string
		timeout time.Duration
		want    string // in the error
	}{
		{"postgres", "postgres://u:secret@127.0.0.1:%d/db?sslmode=disable", time.Second, "within the connect timeout of 1s"},
		{"mysql", "mysql://u:secret@127.0.0.1:%d/db", time.Second, "within the connect timeout of 1s"},
		// The option says an hour: the URL's 1 second must be what ends it.
		{"postgres URL wins", "postgres://u:secret@127.0.0.1:%d/db?sslmode=disable&connect_timeout=1", time.Hour, "within the connect timeout of 1s"},
		{"mysql URL wins", "mysql://u:secret@127.0.0.1:%d/db?timeout=1s", time.Hour, "within the connect timeout of 1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			u := fmt.Sprintf(tt.url, port)
			type result struct {
				tg  *Target
				err error
			}
			done := make(chan result, 1)
			go func() {
				tg, err := Open(context.Background(), all.Lookup, u, "", ConnectTimeout(tt.timeout))
				done <- result{tg, err}
			}()
			select {
			case r := <-done:
				if r.err == nil {
					r.tg.Close()
					t.Fatal("Open succeeded against a server that never answers")
				}
				msg := r.err.Error()
				t.Log(msg)
				target := fmt.Sprintf("u:xxxxx@127.0.0.1:%d/db", port)
				if !strings.Contains(msg, target) || strings.Contains(msg, "secret") {
					t.Errorf("the error must name the target %s, password redacted: %v", target, msg)
				}
				if !strings.Contains(msg, tt.want) {
					t.Errorf("the error must say %q: %v", tt.want, msg)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Open still hangs after 20s on a server that never answers")
			}
		})
	}
}
