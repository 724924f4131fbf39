// Package runner executes compiled plans against a real database and keeps
// the pipeline state (watermark, lease, run log) there.
//
// It is the only package that imports database/sql, dburl and the database
// drivers. It executes exactly the statements the compiler planned and the
// dialect spelled — the ones users read in the compiled files — on one
// pinned connection per run; it writes no SQL of its own.
package runner

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/xo/dburl"

	// Drivers: DuckDB embedded (the default), SQLite pure Go, PostgreSQL
	// through pgx, MariaDB/MySQL.
	_ "github.com/duckdb/duckdb-go/v2"
	_ "github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite"

	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
)

// Target is an open target database and the dialect that speaks to it.
type Target struct {
	DB      *sql.DB
	Dialect dialects.Dialect
	URL     string // with any password redacted
}

// Open opens a target URL: duckdb:PATH, sqlite:PATH, postgres://...,
// mysql://... (MariaDB too). The dialect follows from the URL; when
// dialect is not empty it must agree.
func Open(ctx context.Context, rawURL, dialect string) (*Target, error) {
	u, err := dburl.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("target %q: %w (expected duckdb:PATH, sqlite:PATH, postgres://..., mysql://...)", redact(rawURL), err)
	}
	var driver, dsn, name string
	switch u.Driver {
	case "duckdb":
		driver, dsn, name = "duckdb", u.DSN, "duckdb"
	case "sqlite3", "moderncsqlite":
		// modernc.org/sqlite registers "sqlite"; dburl names mattn's driver.
		path := u.Opaque
		if path == "" {
			path = u.Path
		}
		driver, name = "sqlite", "sqlite"
		dsn = path + "?_pragma=busy_timeout(10000)&_txlock=immediate"
	case "pgx", "postgres":
		driver, dsn, name = "pgx", u.DSN, "postgres"
	case "mysql":
		cfg, err := mysql.ParseDSN(u.DSN)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", redact(rawURL), err)
		}
		// UTC end to end, and affected rows that count matched rows, so a
		// compare-and-set that changes nothing still reports its match.
		cfg.Loc = timeUTC
		cfg.ParseTime = true
		cfg.ClientFoundRows = true
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params["sql_mode"] = strictMode(u.Query())
		driver, dsn, name = "mysql", cfg.FormatDSN(), "mysql"
	default:
		return nil, fmt.Errorf("target %q: unsupported database %q (supported: duckdb, sqlite, postgres, mysql)", redact(rawURL), u.Driver)
	}
	if dialect != "" && dialect != name {
		return nil, fmt.Errorf("--dialect %s does not match the target %s, which is %s", dialect, redact(rawURL), name)
	}
	d, err := all.Lookup(name)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(driver, dsn)
	if err == nil {
		if err = db.PingContext(ctx); err != nil {
			db.Close()
		}
	}
	if err != nil {
		if name == "duckdb" && strings.Contains(err.Error(), "Conflicting lock") {
			// DuckDB allows one writing process per file: another incrc
			// (or anything else) has it open, which is a lock, not a failure.
			return nil, &LockedError{Reason: fmt.Sprintf("%s is locked by another process (DuckDB allows one writer per database file): %v", redact(rawURL), err)}
		}
		return nil, fmt.Errorf("connect to %s: %w", redact(rawURL), err)
	}
	return &Target{DB: db, Dialect: d, URL: redact(rawURL)}, nil
}

// strictMode is the session's sql_mode on a MariaDB/MySQL target: the
// server's (or the URL's sql_mode) plus STRICT_ALL_TABLES, so that a value
// that does not fit its column (a text key longer than its VARCHAR) fails
// the statement instead of being cut with a warning, which could also turn
// two keys into one. dburl's default ANSI mode is not taken: the dialect
// quotes with backticks.
func strictMode(q url.Values) string {
	base := "@@SESSION.sql_mode"
	if v, asked := q["sql_mode"]; asked && len(v) > 0 {
		mode := strings.Trim(v[0], `'"`)
		base = "'" + strings.NewReplacer(`\`, `\\`, "'", "''").Replace(mode) + "'"
	}
	return "CONCAT_WS(',', NULLIF(" + base + ", ''), 'STRICT_ALL_TABLES')"
}

// Close closes the database.
func (t *Target) Close() error { return t.DB.Close() }

func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return strings.Replace(u.String(), "%7B", "{", -1)
}
