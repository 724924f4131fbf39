package compiler

import (
	"net/url"
	"strings"
	"testing"
)

// TestExpandURL: a variable's value is one component of the URL, escaped
// for where it stands, or refused where it would change what the URL
// names.
func TestExpandURL(t *testing.T) {
	env := map[string]string{
		"PGPW":  "x@127.0.0.1:5432/other?sslmode=disable#",
		"USER":  "etl:admin@",
		"HOST":  "db.internal",
		"PORT":  "5433",
		"DB":    "wh/../other?x",
		"MODE":  "require&host=evil",
		"EVIL":  "evil.example/other?",
		"DIR":   "/data/my dir",
		"QDIR":  "/data?x=1",
		"EMPTY": "",
	}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	tests := []struct {
		template, want, err string
	}{
		{"postgres://postgres:${PGPW}@db.internal/wh", "postgres://postgres:x%40127.0.0.1%3A5432%2Fother%3Fsslmode=disable%23@db.internal/wh", ""},
		{"postgres://${USER}:${PGPW}@${HOST}:${PORT}/wh", "postgres://etl%3Aadmin%40:x%40127.0.0.1%3A5432%2Fother%3Fsslmode=disable%23@db.internal:5433/wh", ""},
		{"postgres://etl@${HOST}/${DB}", "postgres://etl@db.internal/wh%2F..%2Fother%3Fx", ""},
		{"postgres://etl@db/wh?sslmode=${MODE}", "postgres://etl@db/wh?sslmode=require%26host%3Devil", ""},
		{"postgres://etl@${EVIL}/wh", "", "${EVIL} stands in the host"},
		{"postgres://etl@${EMPTY}/wh", "", "${EMPTY} stands in the host"},
		{"duckdb:${DIR}/wh.duckdb", "duckdb:/data/my dir/wh.duckdb", ""},
		{"duckdb:${QDIR}/wh.duckdb", "", "${QDIR} stands in a file path"},
		{"${HOST}://x", "", "${HOST} stands in the scheme"},
		{"postgres://etl@db/wh#${HOST}", "", "${HOST} stands in the fragment"},
		{"mysql://root:${PGPW}@127.0.0.1:3306/test", "mysql://root:x%40127.0.0.1%3A5432%2Fother%3Fsslmode=disable%23@127.0.0.1:3306/test", ""},
	}
	for _, tt := range tests {
		got, _, err := ExpandURL(tt.template, lookup)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%s: got %q, %v; want an error %q", tt.template, got, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("%s:\n got %q, %v\nwant %q", tt.template, got, err, tt.want)
		}
	}
	// The password reads back as the variable's value, the host as written.
	got, _, _ := ExpandURL("postgres://postgres:${PGPW}@db.internal/wh", lookup)
	u, err := url.Parse(got)
	if err != nil {
		t.Fatal(err)
	}
	if pw, _ := u.User.Password(); pw != env["PGPW"] || u.Host != "db.internal" || u.Path != "/wh" {
		t.Errorf("parsed back: password %q, host %q, path %q", pw, u.Host, u.Path)
	}
}
