package ir

import "testing"

// The dialect a source connection's URL names is the one the runner opens
// it with: Spark Connect's by its format, Trino's by its scheme.
func TestDialectOfURL(t *testing.T) {
	for url, want := range map[string]string{
		"postgres://u@h/db":                             "postgres",
		"mariadb://u@h/db":                              "mysql",
		"duckdb:wh.duckdb":                              "duckdb",
		"sqlite:wh.db":                                  "sqlite",
		"sc://spark:15002":                              "spark",
		"sc://spark:15002/;format=delta":                "spark",
		"sc://spark:15002/;token=x;format=iceberg":      "spark_iceberg",
		"SC://spark:15002/;format=iceberg;catalog=lake": "spark_iceberg",
		"sc://spark:15002/;format=orc":                  "",
		"trino://etl@trino:8080/lake/analytics":         "trino",
		"trinos://etl@trino:443/lake/analytics":         "trino",
		"snowflake://acct/db":                           "",
		"no scheme":                                     "",
	} {
		got, ok := DialectOfURL(url)
		if got != want || ok != (want != "") {
			t.Errorf("DialectOfURL(%q) = %q, %v; want %q", url, got, ok, want)
		}
	}
}
