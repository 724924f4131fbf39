package runner

import (
	"bytes"
	"context"
	"log"
	"strings"
	"testing"

	"github.com/incrc/incrc/dialects/all"
)

// TestDriverLogMasked: a line the MySQL driver logs goes through the
// target's secret mask, in every form Secrets finds the password.
func TestDriverLogMasked(t *testing.T) {
	var sc Scrubber
	sc.Add("mysql://etl:Hx7Qp#zz%41Wk@db:3306/wh")
	var buf bytes.Buffer
	l := log.New(scrubWriter{w: &buf, s: &sc}, "[mysql] ", 0)
	l.Print("could not connect to etl:Hx7Qp#zz%41Wk@db (Hx7Qp#zzAWk): refused")
	if got := buf.String(); strings.Contains(got, "Hx7Qp") || !strings.Contains(got, "[mysql] could not connect") {
		t.Errorf("the driver's log line is %q: want it kept, its password masked", got)
	}
}

// TestMySQLDriverLog: the lines the MySQL driver logs about a connection
// the server closed go where DriverLog says (the command's stderr, through
// the mask), not straight to the process's stderr past it.
func TestMySQLDriverLog(t *testing.T) {
	var url string
	for _, e := range engines() {
		if e.name == "mysql" {
			url = e.url(t)
		}
	}
	ctx := context.Background()
	var buf bytes.Buffer
	tg, err := Open(ctx, all.Lookup, url, "", DriverLog(&buf))
	if err != nil {
		t.Fatal(err)
	}
	defer tg.DB.Close()
	victim, err := tg.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close()
	var id int64
	if err := victim.QueryRowContext(ctx, "SELECT CONNECTION_ID()").Scan(&id); err != nil {
		t.Fatal(err)
	}
	admin, err := tg.DB.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "KILL CONNECTION ?", id); err != nil {
		t.Fatal(err)
	}
	// The server closes the killed connection's socket once its thread
	// is gone from the process list; the next read of it then meets EOF,
	// which the driver logs.
	for gone := false; !gone; {
		var n int
		if err := admin.QueryRowContext(ctx, "SELECT COUNT(*) FROM information_schema.processlist WHERE id = ?", id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		gone = n == 0
	}
	if _, err := victim.ExecContext(ctx, "SELECT 1"); err == nil {
		t.Fatal("a statement on a killed connection succeeded")
	}
	if !strings.Contains(buf.String(), "[mysql] ") {
		t.Errorf("the driver's log went elsewhere: DriverLog got %q", buf.String())
	}
}
