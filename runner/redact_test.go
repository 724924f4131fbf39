package runner

import (
	"strings"
	"testing"
)

// TestRedact: a password is masked in every form a driver takes, whether
// the URL parses or not, and Secrets finds it as written and decoded.
func TestRedact(t *testing.T) {
	tests := []struct {
		raw, want string
		secrets   []string // each must be gone from Redact's output
	}{
		{"postgres://etl:S3cr3t@db/wh", "postgres://etl:xxxxx@db/wh", []string{"S3cr3t"}},
		{"postgres://etl:p#ss%41wd@db/wh?sslmode=disable", "postgres://etl:xxxxx@db/wh?sslmode=disable", []string{"p#ss%41wd", "p#ssAwd"}},
		{"postgres://etl:a@b/c?d@db.internal:5432/wh", "postgres://etl:xxxxx@db.internal:5432/wh", []string{"a@b/c?d"}},
		{"postgres://etl@db/wh?sslmode=disable&password=Hunter22", "postgres://etl@db/wh?sslmode=disable&password=xxxxx", []string{"Hunter22"}},
		{"postgres://etl@db/wh?PASSWORD=Hu%23nter", "postgres://etl@db/wh?PASSWORD=xxxxx", []string{"Hu%23nter", "Hu#nter"}},
		{"host=db port=5432 user=etl password=Hunter22 dbname=wh", "host=db port=5432 user=etl password=xxxxx dbname=wh", []string{"Hunter22"}},
		{"host=db password='Hun ter\\'22' dbname=wh", "host=db password=xxxxx dbname=wh", []string{"Hun ter'22"}},
		{"root:Hunter22@tcp(127.0.0.1:3306)/wh", "root:xxxxx@tcp(127.0.0.1:3306)/wh", []string{"Hunter22"}},
		{"mysql://root:Hunter22@127.0.0.1:3306/wh", "mysql://root:xxxxx@127.0.0.1:3306/wh", []string{"Hunter22"}},
		{"duckdb:/data/a@b.duckdb", "duckdb:/data/a@b.duckdb", nil},
		{"sqlite:wh.db", "sqlite:wh.db", nil},
		{"postgres://etl@db/wh", "postgres://etl@db/wh", nil},
	}
	for _, tt := range tests {
		got := Redact(tt.raw)
		if got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.raw, got, tt.want)
		}
		found := Secrets(tt.raw)
		for _, s := range tt.secrets {
			if strings.Contains(got, s) {
				t.Errorf("Redact(%q) holds %q", tt.raw, s)
			}
			var sc Scrubber
			sc.Add(tt.raw)
			if msg := sc.Scrub("driver said: " + s + " was wrong"); strings.Contains(msg, s) {
				t.Errorf("Secrets(%q) = %q: %q is not scrubbed", tt.raw, found, s)
			}
		}
		if len(tt.secrets) == 0 && len(found) > 0 {
			t.Errorf("Secrets(%q) = %q, want none", tt.raw, found)
		}
	}
}
