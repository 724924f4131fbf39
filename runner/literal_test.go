package runner

import (
	"database/sql/driver"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/compiler/sqllex"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
)

func args(vs ...any) []driver.NamedValue {
	out := make([]driver.NamedValue, len(vs))
	for i, v := range vs {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return out
}

// TestInlineSpellsLiterals: on the engines whose clients bind nothing,
// each marker becomes the literal the dialect spells, and only markers do
// (a "?" in a string or a quoted name stays).
func TestInlineSpellsLiterals(t *testing.T) {
	day := time.Date(2026, 1, 20, 0, 0, 0, 0, time.UTC)
	at := time.Date(2026, 1, 25, 12, 30, 0, 500000000, time.UTC)
	dec := ir.Type{Kind: ir.Decimal, Precision: 12, Scale: 2}
	cases := []struct {
		dialect, query string
		args           []any
		want           string
	}{
		{"spark", "SELECT a FROM t WHERE a = ? AND b = '?' AND `?` = ?", []any{int64(-5), "x"},
			"SELECT a FROM t WHERE a =  (-5)  AND b = '?' AND `?` =  'x' "},
		{"spark", "SELECT ?-?", []any{int64(1), int64(-2)}, "SELECT  1 - (-2) "},
		{"spark", "INSERT INTO t VALUES (?, ?, ?, ?, ?)",
			[]any{`it's \ "q"`, nil, true, 1.5, dialects.Instant{T: at, Kind: ir.Timestamp}},
			`INSERT INTO t VALUES ( 'it\'s \\ "q"' ,  NULL ,  TRUE ,  CAST('1.5' AS DOUBLE) ,  TIMESTAMP_NTZ '2026-01-25 12:30:00.500000' )`},
		{"spark", "SELECT ?, ?", []any{dialects.Instant{T: day, Kind: ir.Date}, dialects.Instant{T: at, Kind: ir.TimestampTZ}},
			"SELECT  DATE '2026-01-20' ,  TIMESTAMP '2026-01-25 12:30:00.500000+00:00' "},
		{"trino", `SELECT "?" FROM t WHERE a = ? AND b = CAST(? AS TIMESTAMP(6))`, []any{"it's", dialects.Instant{T: at, Kind: ir.Timestamp}},
			`SELECT "?" FROM t WHERE a =  'it''s'  AND b = CAST( TIMESTAMP '2026-01-25 12:30:00.500000'  AS TIMESTAMP(6))`},
		{"trino", "INSERT INTO t VALUES (?, ?)", []any{dialects.Typed{Value: "12.50", Type: dec}, dialects.Instant{T: at, Kind: ir.TimestampTZ}},
			"INSERT INTO t VALUES ( CAST('12.50' AS DECIMAL(12,2)) ,  TIMESTAMP '2026-01-25 12:30:00.500000 UTC' )"},
	}
	for _, c := range cases {
		d, err := all.Lookup(c.dialect)
		if err != nil {
			t.Fatal(err)
		}
		got, err := inline(d, c.query, args(c.args...))
		if err != nil {
			t.Errorf("%s: %s: %v", c.dialect, c.query, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: %s\n got %q\nwant %q", c.dialect, c.query, got, c.want)
		}
	}
}

// TestInlineKeepsShape: whatever a text value holds (quotes, backslashes,
// comment openers, a ';', line ends), the statement keeps its tokens and
// the value comes back as one string literal holding it exactly.
func TestInlineKeepsShape(t *testing.T) {
	hostile := []string{
		`'); DROP TABLE t; --`, `\'; DROP TABLE t; --`, `\\' OR 1=1 --`, "a\nb\r\n--c", `/* x */`, `*/`, `?`, `''`, `\`, "x\x00y",
		"tab\there", `" OR "1"="1`, "`x`",
	}
	for _, name := range []string{"spark", "spark_iceberg", "trino"} {
		d, err := all.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		refused := 0
		for _, v := range hostile {
			q := "SELECT x FROM t WHERE a = ? AND b = ?"
			got, err := inline(d, q, args(v, int64(1)))
			if err != nil {
				// Refusing a value is allowed; changing the shape is not.
				refused++
				continue
			}
			toks, err := sqllex.LexExact(d.Lexer(), got)
			if err != nil {
				t.Errorf("%s: %q: the result does not lex: %v", name, v, err)
				continue
			}
			var strs []string
			for _, tk := range toks {
				switch tk.Kind {
				case sqllex.String:
					strs = append(strs, tk.Value)
				case sqllex.Comment:
					t.Errorf("%s: %q: a comment in %s", name, v, got)
				case sqllex.Punct:
					if tk.Text == ";" {
						t.Errorf("%s: %q: a ';' in %s", name, v, got)
					}
				}
			}
			if len(strs) != 1 || strs[0] != v {
				t.Errorf("%s: %q: the string literals of %s are %q", name, v, got, strs)
			}
			if n := len(toks); n != 13 {
				t.Errorf("%s: %q: %d tokens in %s, want 13", name, v, n, got)
			}
		}
		if refused > 1 {
			t.Errorf("%s: %d of %d values refused: text a user's data holds must be spelled", name, refused, len(hostile))
		}
	}
}

// TestInlineRefuses: a marker count that does not match, a value of a type
// the dialect has no literal for, and dialects that spell no literals.
func TestInlineRefuses(t *testing.T) {
	spark, _ := all.Lookup("spark")
	duck, _ := all.Lookup("duckdb")
	for _, c := range []struct {
		d     dialects.Dialect
		query string
		args  []any
		want  string
	}{
		{spark, "SELECT ?", []any{int64(1), int64(2)}, "1 marker(s) for 2 argument(s)"},
		{spark, "SELECT ?, ?", []any{int64(1)}, "more markers"},
		{spark, "SELECT ?", []any{struct{}{}}, "no literal for a value of type struct {}"},
		{spark, "SELECT ?", []any{time.Now()}, ""},
		{duck, "SELECT ?", []any{int64(1)}, "spells no literals"},
	} {
		_, err := inline(c.d, c.query, args(c.args...))
		if c.want == "" {
			if err != nil {
				t.Errorf("%s %v: %v", c.query, c.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.query, c.args, err, c.want)
		}
	}
}

// TestTargetURLs: the Spark Connect and Trino URLs a user writes, what
// incrc takes from them, and what it refuses.
func TestTargetURLs(t *testing.T) {
	st, err := parseSparkURL("sc://spark.example:443/;token=abc;format=iceberg;catalog=lake;x-databricks-cluster-id=0123")
	if err != nil {
		t.Fatal(err)
	}
	if st.format != "iceberg" || st.catalog != "lake" || st.remote != "sc://spark.example:443/;token=abc;x-databricks-cluster-id=0123" {
		t.Errorf("parsed %+v", st)
	}
	if st, err := parseSparkURL("sc://127.0.0.1:15002"); err != nil || st.format != "delta" || st.remote != "sc://127.0.0.1:15002" {
		t.Errorf("default: %+v, %v", st, err)
	}
	for raw, want := range map[string]string{
		"sc://h:1/;format=parquet": "delta or iceberg",
		"sc://h:1/db":              "parameters after /;",
		"sc:///;format=delta":      "names a host",
		"sc://h:1/;catalog=":       "names a catalog",
		"sc://h:1/;catalog=a.b=c":  "letters, digits and _",
	} {
		if _, err := parseSparkURL(raw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
	cfg, err := trinoConfig("trino://etl@trino.example:8080/lake/analytics")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.ServerURI != "http://etl@trino.example:8080" || cfg.Catalog != "lake" || cfg.Schema != "analytics" || cfg.TimeZone != "UTC" {
		t.Errorf("trino config %+v", cfg)
	}
	if cfg, err := trinoConfig("trinos://etl@trino.example/lake/analytics?timezone=Europe/Paris"); err != nil || cfg.ServerURI != "https://etl@trino.example" || cfg.TimeZone != "Europe/Paris" {
		t.Errorf("trinos: %+v, %v", cfg, err)
	}
	for raw, want := range map[string]string{
		"trino://trino.example:8080/lake/analytics": "names its user",
		"trino://etl@trino.example:8080/lake":       "catalog and schema",
	} {
		if _, err := trinoConfig(raw); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", raw, err, want)
		}
	}
}

// TestConflictRetries: a lost commit on Delta Lake or Iceberg runs a
// bookkeeping statement again; a write to the pipeline's own tables, an
// error that is not a conflict, and engines without optimistic commits
// are not retried.
func TestConflictRetries(t *testing.T) {
	yaml := strings.NewReplacer("{target}", "inc", "{id}", "x").Replace(productsSpec)
	s, err := compiler.Parse("test.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if d := compiler.Validate(s); len(d) > 0 {
		t.Fatal(d.Err())
	}
	p, err := compiler.Lower(s)
	if err != nil {
		t.Fatal(err)
	}
	conflict := errors.New("execution error: [DELTA_CONCURRENT_APPEND.WITHOUT_HINT] Transaction conflict detected")
	iceberg := errors.New("org.apache.iceberg.exceptions.CommitFailedException: Cannot commit")
	trinoConflict := errors.New(`trino: query failed (200 OK): "ICEBERG_COMMIT_ERROR: Failed to commit"`)
	other := errors.New("[TABLE_OR_VIEW_NOT_FOUND] The table or view cannot be found")
	for _, c := range []struct {
		dialect, stmt string
		err           error
		want          bool
	}{
		{"spark", ir.StmtInitState, conflict, true},
		{"spark", ir.StmtAcquireLease, conflict, true},
		{"spark", ir.StmtAdvance, conflict, true},
		{"spark_iceberg", ir.StmtRecordStart, iceberg, true},
		{"trino", ir.StmtReleaseLease, trinoConflict, true},
		{"spark", ir.StmtAcquireLease, other, false},
		{"spark", ir.StmtCountSource, conflict, false},
		{"duckdb", ir.StmtAcquireLease, conflict, false},
	} {
		d, err := all.Lookup(c.dialect)
		if err != nil {
			t.Fatal(err)
		}
		cp, err := compile(d, p, 0)
		if err != nil {
			t.Fatal(err)
		}
		if p.Statement(c.stmt) == nil {
			t.Fatalf("the plan has no %s", c.stmt)
		}
		if got := cp.retriesConflict(c.stmt, c.err); got != c.want {
			t.Errorf("%s %s %q: retried %v, want %v", c.dialect, c.stmt, c.err, got, c.want)
		}
	}
}
