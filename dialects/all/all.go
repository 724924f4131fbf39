// Package all names every dialect incrc knows, in one static table: no
// init-time registration, so the set is what this file says.
package all

import (
	"fmt"
	"sort"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/bigquery"
	"github.com/incrc/incrc/dialects/duckdb"
	"github.com/incrc/incrc/dialects/mysql"
	"github.com/incrc/incrc/dialects/postgres"
	"github.com/incrc/incrc/dialects/redshift"
	"github.com/incrc/incrc/dialects/snowflake"
	"github.com/incrc/incrc/dialects/spark"
	"github.com/incrc/incrc/dialects/sqlite"
	"github.com/incrc/incrc/dialects/trino"
)

var known = map[dialects.Name]dialects.Dialect{
	"duckdb":   &duckdb.Dialect{},
	"mysql":    &mysql.Dialect{},
	"postgres": &postgres.Dialect{},
	"sqlite":   &sqlite.Dialect{},

	"bigquery":  &bigquery.Dialect{},
	"redshift":  &redshift.Dialect{},
	"snowflake": &snowflake.Dialect{},
	// Spark's table format is part of the dialect: Delta Lake by default.
	"spark":         &spark.Dialect{},
	"spark_iceberg": &spark.Dialect{Iceberg: true},
	"trino":         &trino.Dialect{},
}

// Names returns every dialect's name, sorted.
func Names() []string {
	names := make([]string, 0, len(known))
	for n := range known {
		names = append(names, string(n))
	}
	sort.Strings(names)
	return names
}

// Lookup returns the dialect called name.
func Lookup(name string) (dialects.Dialect, error) {
	if d, ok := known[dialects.Name(name)]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("unknown dialect %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Parse expands a --dialect value: one name, a comma-separated list, or
// "all".
func Parse(value string) ([]dialects.Dialect, error) {
	var names []string
	if value == "all" {
		names = Names()
	} else {
		names = strings.Split(value, ",")
	}
	var out []dialects.Dialect
	for _, n := range names {
		d, err := Lookup(strings.TrimSpace(n))
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// Source returns the dialect a plan's source outside the target is spelled
// in, among every dialect (see dialects.Source).
func Source(p *ir.Plan, dialectOf func(connection string) (string, bool)) (dialects.Dialect, error) {
	return dialects.Source(p, Lookup, dialectOf)
}
