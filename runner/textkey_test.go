package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/google/go-cmp/cmp"

	"github.com/incrc/incrc/dialects"
)

// This file checks a merge keyed on a text column on every executed
// engine. MariaDB/MySQL cannot index LONGTEXT, so the mysql dialect makes
// the key a VARCHAR sized to InnoDB's 3072-byte key limit (768 characters
// of utf8mb4 for a key of one column); a longer key must fail the run,
// never be cut. The other engines index text of any length up to their
// own limits, which fail loudly too.

const codesSpec = `
pipeline: codes_{target}_{id}
source:
  table: app_{id}.codes
target:
  table: dw_{id}.codes_{target}
columns:
  code: text
  label: text
  updated_at: timestamp
strategy: merge
unique_key: [code]
watermark:
  column: updated_at
  start: 2026-01-01
`

// hexText is n characters that do not compress: a key longer than an
// engine's index entry even after compression (PostgreSQL compresses
// index entries before checking their size).
func hexText(n int) string {
	var b strings.Builder
	sum := sha256.Sum256([]byte("seed"))
	for b.Len() < n {
		b.WriteString(hex.EncodeToString(sum[:]))
		sum = sha256.Sum256(sum[:])
	}
	return b.String()[:n]
}

// abbrev shortens the long keys in rows, so that a diff stays readable.
func abbrev(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		vals := strings.Split(r, " | ")
		for j, v := range vals {
			if n := utf8.RuneCountInString(v); n > 40 {
				sum := sha256.Sum256([]byte(v))
				vals[j] = fmt.Sprintf("<%d characters, %d bytes, %x>", n, len(v), sum[:4])
			}
		}
		out[i] = strings.Join(vals, " | ")
	}
	return out
}

// TestTextKey: a merge keyed on a text column inserts, updates and reruns
// on every engine, with keys at the mysql bound (768 characters, of 1, 2
// and 4 bytes each: 3072 bytes of utf8mb4 fill the key exactly). Then a
// key longer than what the engine can index arrives: on mysql that is 769
// characters, on PostgreSQL an index entry above its 2704 bytes; the run
// fails naming the problem, the target and the watermark stay as they
// were, and the run succeeds again once the source is fixed. DuckDB and
// SQLite have no such limit: the same key is written.
func TestTextKey(t *testing.T) {
	tooLong := map[string]struct {
		key  string
		want []string // in the run's error
	}{
		"mysql":    {strings.Repeat("x", 769), []string{"Data too long for column 'code'"}},
		"postgres": {hexText(3000), []string{"index row size", "exceeds btree", "maximum 2704"}},
		"duckdb":   {hexText(100000), nil},
		"sqlite":   {hexText(100000), nil},
	}
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			plan := func(target string) *ir.Plan {
				return e.spec(strings.ReplaceAll(codesSpec, "{target}", target))
			}
			inc, ref := plan("inc"), plan("ref")
			cols := []string{"code", "label", "updated_at"}
			e.createTable("app_{id}.codes", inc.Columns)
			ins := func(rows ...[]any) { e.insert("app_{id}.codes", inc.Columns, rows...) }
			target := func() []string { return abbrev(e.rows("dw_{id}.codes_inc", cols)) }
			check := func(what, hi string, want []string) {
				t.Helper()
				got := target()
				if diff := cmp.Diff(sorted(abbrev(want)), sorted(got)); diff != "" {
					t.Errorf("%s: target (-want +got):\n%s", what, diff)
				}
				mustRun(t, e, ref, Options{Until: until(hi), FullRefresh: true})
				if diff := cmp.Diff(sorted(abbrev(e.rows("dw_{id}.codes_ref", cols))), sorted(got)); diff != "" {
					t.Errorf("%s: incremental differs from a full refresh (-full +incremental):\n%s", what, diff)
				}
			}

			ascii, accents, emoji := strings.Repeat("k", 768), strings.Repeat("é", 768), strings.Repeat("😀", 768)
			ins([]any{"a", "first", "2026-01-01 10:00:00"},
				[]any{ascii, "ascii", "2026-01-01 11:00:00"},
				[]any{accents, "accents", "2026-01-01 12:00:00"},
				[]any{emoji, "emoji", "2026-01-01 13:00:00"})
			r := mustRun(t, e, inc, Options{Until: until("2026-01-02")})
			checkCounts(t, "first run", r, counts{Lo: "2026-01-01T00:00:00Z", Hi: "2026-01-02T00:00:00Z", Read: 4, Inserted: 4})
			check("first run", "2026-01-02", []string{
				line("a", "first", "2026-01-01 10:00:00"),
				line(ascii, "ascii", "2026-01-01 11:00:00"),
				line(accents, "accents", "2026-01-01 12:00:00"),
				line(emoji, "emoji", "2026-01-01 13:00:00"),
			})

			// New versions of two keys, the longest one among them, and a new key.
			e.update("app_{id}.codes", inc.Columns, "code", "a", map[string]any{"label": "second", "updated_at": "2026-01-02 09:00:00"})
			e.update("app_{id}.codes", inc.Columns, "code", emoji, map[string]any{"label": "emoji 2", "updated_at": "2026-01-02 10:00:00"})
			ins([]any{"b", "new", "2026-01-02 11:00:00"})
			r = mustRun(t, e, inc, Options{Until: until("2026-01-03")})
			checkCounts(t, "second run", r, counts{Lo: "2026-01-02T00:00:00Z", Hi: "2026-01-03T00:00:00Z", Read: 3, Inserted: 1, Updated: 2})
			second := []string{
				line("a", "second", "2026-01-02 09:00:00"),
				line(ascii, "ascii", "2026-01-01 11:00:00"),
				line(accents, "accents", "2026-01-01 12:00:00"),
				line(emoji, "emoji 2", "2026-01-02 10:00:00"),
				line("b", "new", "2026-01-02 11:00:00"),
			}
			check("second run", "2026-01-03", second)
			r = mustRun(t, e, inc, Options{Until: until("2026-01-03")})
			checkCounts(t, "rerun", r, counts{Lo: "2026-01-03T00:00:00Z", Hi: "2026-01-03T00:00:00Z"})
			check("rerun", "2026-01-03", second)

			long := tooLong[eng.name]
			tg := e.tg
			if eng.name == "mysql" {
				// The most permissive mode a user can ask for: the runner
				// adds STRICT_ALL_TABLES to it, so the key is not cut.
				tg = openLax(t, e)
			}
			ins([]any{long.key, "too long?", "2026-01-03 09:00:00"})
			e.update("app_{id}.codes", inc.Columns, "code", "b", map[string]any{"label": "changed", "updated_at": "2026-01-03 10:00:00"})
			r, err := tg.Run(e.ctx, inc, Options{Until: until("2026-01-04")})
			if long.want == nil {
				if err != nil {
					t.Fatalf("a %d-character key: %v", len(long.key), err)
				}
				checkCounts(t, "a long key", r, counts{Lo: "2026-01-03T00:00:00Z", Hi: "2026-01-04T00:00:00Z", Read: 2, Inserted: 1, Updated: 1})
				check("a long key", "2026-01-04", append(second[:4:4], line("b", "changed", "2026-01-03 10:00:00"), line(long.key, "too long?", "2026-01-03 09:00:00")))
				return
			}
			if err == nil {
				t.Fatalf("a key of %d characters was written: %v", len(long.key), abbrev(e.rows("dw_{id}.codes_inc", cols)))
			}
			t.Logf("a key of %d characters: %v", utf8.RuneCountInString(long.key), err)
			for _, w := range long.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the error must say %q: %v", w, err)
				}
			}
			if r == nil || r.Status != "failed" {
				t.Errorf("run result: %+v", r)
			}
			// Nothing of the window was written, "b" included.
			if diff := cmp.Diff(sorted(abbrev(second)), sorted(target())); diff != "" {
				t.Errorf("after the failed run: target (-want +got):\n%s", diff)
			}
			if st := e.state(inc); st.Watermark != "2026-01-03T00:00:00Z" {
				t.Errorf("after the failed run: watermark %q, want 2026-01-03T00:00:00Z", st.Watermark)
			}
			// The fix is in the source; the same window is read again.
			e.deleteWhere("app_{id}.codes", "code", long.key)
			r = mustRun(t, e, inc, Options{Until: until("2026-01-04")})
			checkCounts(t, "after the fix", r, counts{Lo: "2026-01-03T00:00:00Z", Hi: "2026-01-04T00:00:00Z", Read: 1, Updated: 1})
			check("after the fix", "2026-01-04", append(second[:4:4], line("b", "changed", "2026-01-03 10:00:00")))

			if eng.name == "mysql" {
				var typ string
				var n int64
				q := "SELECT DATA_TYPE, CHARACTER_MAXIMUM_LENGTH FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = ? AND TABLE_NAME = ? AND COLUMN_NAME = 'code'"
				if err := e.tg.DB.QueryRowContext(e.ctx, q, "dw_"+e.id, "codes_inc").Scan(&typ, &n); err != nil {
					t.Fatal(err)
				}
				if typ != "varchar" || n != 768 {
					t.Errorf("the key column is %s(%d), want varchar(768)", typ, n)
				}
			}
		})
	}
}

// openLax opens the mysql target again with an empty sql_mode in its URL, the
// mode in which MariaDB cuts a value too long for its column, and checks
// that the session is strict all the same.
func openLax(t *testing.T, e *env) *Target {
	t.Helper()
	u, err := url.Parse(e.url)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("sql_mode", "''")
	u.RawQuery = q.Encode()
	tg, err := Open(e.ctx, all.Lookup, u.String(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	var mode string
	if err := tg.DB.QueryRowContext(e.ctx, "SELECT @@SESSION.sql_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "STRICT_ALL_TABLES" {
		t.Errorf("sql_mode='' in the URL: the session's sql_mode is %q, want STRICT_ALL_TABLES", mode)
	}
	return tg
}

// TestMySQLKeyBudget runs the dialect's key tables on MariaDB/MySQL: each
// is accepted, and the same table with its text key one character longer
// is refused, so the VARCHAR the dialect chose is the longest that fits.
func TestMySQLKeyBudget(t *testing.T) {
	var mysql engine
	for _, eng := range engines() {
		if eng.name == "mysql" {
			mysql = eng
		}
	}
	e := newEnv(t, mysql)
	e.exec(e.render(ir.CreateSchema{Schema: []string{"dw_" + e.id}}), nil)
	tests := []struct {
		name string
		key  []ir.Col
		want string // the text key's type
	}{
		{"text", []ir.Col{{Name: "code", Type: ir.Type{Kind: ir.Text}}}, "VARCHAR(768)"},
		{"text and bigint", []ir.Col{{Name: "code", Type: ir.Type{Kind: ir.Text}}, {Name: "id", Type: ir.Type{Kind: ir.Bigint}}}, "VARCHAR(766)"},
		{"text and date", []ir.Col{{Name: "code", Type: ir.Type{Kind: ir.Text}}, {Name: "d", Type: ir.Type{Kind: ir.Date}}}, "VARCHAR(767)"},
		{"text and timestamp", []ir.Col{{Name: "code", Type: ir.Type{Kind: ir.Text}}, {Name: "ts", Type: ir.Type{Kind: ir.Timestamp}}}, "VARCHAR(766)"},
		{"text and decimal(38,10)", []ir.Col{{Name: "code", Type: ir.Type{Kind: ir.Text}}, {Name: "n", Type: ir.Type{Kind: ir.Decimal, Precision: 38, Scale: 10}}}, "VARCHAR(763)"},
		{"text and varchar(700)", []ir.Col{{Name: "code", Type: ir.Type{Kind: ir.Text}}, {Name: "v", Type: ir.Type{Kind: ir.Varchar, Length: 700}}}, "VARCHAR(68)"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := ir.CreateTable{Table: e.table(fmt.Sprintf("dw_{id}.budget%d", i))}
			for _, c := range tt.key {
				c.NotNull = true
				op.Columns = append(op.Columns, c)
				op.PrimaryKey = append(op.PrimaryKey, c.Name)
			}
			parts, err := dialects.RenderStatement(e.tg.Dialect, &ir.Statement{Name: "create_target", Op: op})
			if err != nil {
				t.Fatal(err)
			}
			sql := parts[0].SQL
			if !strings.Contains(sql, "`code` "+tt.want+" NOT NULL") {
				t.Fatalf("want code %s:\n%s", tt.want, sql)
			}
			if _, err := e.tg.DB.ExecContext(e.ctx, sql); err != nil {
				t.Fatalf("the dialect's key is refused: %v\n%s", err, sql)
			}
			var n int
			fmt.Sscanf(tt.want, "VARCHAR(%d)", &n)
			longer := strings.Replace(sql, tt.want, fmt.Sprintf("VARCHAR(%d)", n+1), 1)
			longer = strings.Replace(longer, fmt.Sprintf("budget%d", i), fmt.Sprintf("budget%d_longer", i), 1)
			_, err = e.tg.DB.ExecContext(e.ctx, longer)
			if err == nil || !strings.Contains(err.Error(), "max key length is 3072 bytes") {
				t.Errorf("one more character must not fit the key: %v\n%s", err, longer)
			}
		})
	}
}
