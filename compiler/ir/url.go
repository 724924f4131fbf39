package ir

import "strings"

// DialectOfURL is the dialect a database URL's scheme names: postgres://,
// mysql:// (MariaDB too), duckdb:, sqlite:, trino://, and sc:// (Spark
// Connect), whose format= parameter says spark (Delta Lake, the default)
// or spark_iceberg, as the runner reads it.
func DialectOfURL(url string) (string, bool) {
	scheme, rest, ok := strings.Cut(url, ":")
	if !ok {
		return "", false
	}
	switch strings.ToLower(scheme) {
	case "sc":
		return sparkDialect(rest)
	case "trino", "tr", "trinos", "trs":
		return "trino", true
	case "postgres", "postgresql", "pg", "pgx":
		return "postgres", true
	case "mysql", "mariadb", "my":
		return "mysql", true
	case "duckdb", "dk":
		return "duckdb", true
	case "sqlite", "sqlite3", "sq", "file":
		return "sqlite", true
	}
	return "", false
}

// sparkDialect reads the format of an sc:// URL (after the scheme's
// colon): parameters after "/;", format=delta or format=iceberg.
func sparkDialect(rest string) (string, bool) {
	_, params, _ := strings.Cut(rest, "/;")
	name := "spark"
	for _, p := range strings.Split(params, ";") {
		k, v, _ := strings.Cut(p, "=")
		if k != "format" {
			continue
		}
		switch v {
		case "delta":
			name = "spark"
		case "iceberg":
			name = "spark_iceberg"
		default:
			return "", false
		}
	}
	return name, true
}
