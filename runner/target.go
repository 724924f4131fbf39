// Package runner executes compiled plans against a real database and keeps
// the pipeline state (watermark, lease, run log) there.
//
// It is the only package that imports database/sql, dburl and the database
// drivers. It executes exactly the statements the compiler planned and the
// dialect spelled — the ones users read in the compiled files — on one
// pinned connection per run; it writes no SQL of its own. It reads the
// plan (compiler/ir), never the spec, and imports no dialect: the command
// hands Open the dialects it may speak (dialects/all.Lookup).
package runner

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"log"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/trinodb/trino-go-client/trino"
	"github.com/xo/dburl"

	// Drivers: DuckDB embedded (the default), SQLite pure Go; PostgreSQL
	// through pgx and MariaDB/MySQL are opened through their connectors.
	"github.com/duckdb/duckdb-go/v2"
	_ "modernc.org/sqlite"

	"github.com/incrc/incrc/dialects"
)

// Target is an open target database and the dialect that speaks to it.
type Target struct {
	DB      *sql.DB
	Dialect dialects.Dialect
	URL     string // with any password redacted
	// StatementTimeout bounds each statement a program runs (zero: no
	// bound). Open sets DefaultStatementTimeout.
	StatementTimeout time.Duration
	// PingInterval is how often a run on a server engine checks that the
	// server still answers, on a connection of its own, and how long it
	// waits for the answer (zero: never). Open sets DefaultPingInterval.
	PingInterval time.Duration
	// SourceURL resolves a spec's source.connection to its URL (incrc.yaml's
	// connections, --source NAME=URL); SourceURLs, when SourceURL is nil.
	SourceURL  func(name string) (string, error)
	SourceURLs map[string]string

	src sources
	// known finds a dialect by name: the target's sources' (see Open).
	known dialects.Lookup
	// scrub holds the passwords of the target's URL and of the sources
	// opened: the run log records an error without them.
	scrub Scrubber
	// driverLog is where the drivers of the sources it opens log.
	driverLog io.Writer
}

// DefaultStatementTimeout bounds one statement when the user sets no
// --timeout: far longer than any statement of a healthy run, short enough
// that a server that stopped answering does not hold a run forever.
const DefaultStatementTimeout = time.Hour

// DefaultConnectTimeout bounds connecting to a server target. A healthy
// server answers in milliseconds, and ten seconds leave room for a distant
// one, TLS and authentication under load; a server that accepts the
// connection and never answers (a hung process, a half-open proxy) then
// fails a scheduled run in seconds instead of holding it until the
// scheduler gives up, and the error names the target.
const DefaultConnectTimeout = 10 * time.Second

// OpenOption changes how Open connects.
type OpenOption func(*openOptions)

type openOptions struct {
	connectTimeout time.Duration
	driverLog      io.Writer
	scrub          *Scrubber // the URL's secrets, for the driver's log
}

// DriverLog is where a driver's own log lines go (the MySQL driver's
// "[mysql] closing bad idle connection" and the like), each with the
// URL's passwords masked, as in every message of Open and of the run.
// Without it they go to the process's standard error, as the driver's
// would.
func DriverLog(w io.Writer) OpenOption {
	return func(o *openOptions) {
		if w != nil {
			o.driverLog = w
		}
	}
}

// ConnectTimeout bounds each new connection to a PostgreSQL or MariaDB/MySQL
// target, from the TCP dial to the end of authentication: the first one
// and every one the pool opens later. Zero means no bound. A
// connect_timeout (postgres, seconds) or timeout (mysql) in the URL is the
// user's own choice and wins. Statements have a bound of their own
// (Target.StatementTimeout), far longer. DuckDB and SQLite are local files: nothing to bound.
func ConnectTimeout(d time.Duration) OpenOption {
	return func(o *openOptions) { o.connectTimeout = d }
}

// Open opens a target URL: duckdb:PATH, sqlite:PATH, postgres://...,
// mysql://... (MariaDB too), a Spark Connect server
// (sc://host:port/;format=delta|iceberg;catalog=NAME) or Trino
// (trino://user@host:port/catalog/schema). The dialect follows from the URL; when
// dialect is not empty it must agree. known finds the dialect by name
// (dialects/all.Lookup): the runner is handed the dialects it speaks and
// imports none of them; the target's sources are looked up in it too.
//
// No error of Open holds a password of the URL: a driver's message that
// quotes the URL, or the password, has it masked.
func Open(ctx context.Context, known dialects.Lookup, rawURL, dialect string, opts ...OpenOption) (*Target, error) {
	sc := &Scrubber{}
	sc.Add(rawURL)
	t, err := open(ctx, known, rawURL, dialect, append(opts, func(o *openOptions) { o.scrub = sc })...)
	if err != nil {
		return nil, sc.ScrubError(err)
	}
	t.scrub.Add(rawURL)
	return t, nil
}

func open(ctx context.Context, known dialects.Lookup, rawURL, dialect string, opts ...OpenOption) (*Target, error) {
	o := openOptions{connectTimeout: DefaultConnectTimeout, driverLog: os.Stderr}
	for _, opt := range opts {
		opt(&o)
	}
	var (
		driverName, dsn, name string
		connector             driver.Connector // server engines
		timeout               time.Duration    // bounds each connect of the connector
		initSQL               []string         // run on each new connection
	)
	scheme, _, _ := strings.Cut(rawURL, ":")
	u := &dburl.URL{}
	switch strings.ToLower(scheme) {
	case "sc":
		// Spark Connect, the URL form Spark's clients take; dburl has no
		// scheme for it.
		st, err := parseSparkURL(rawURL)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", redact(rawURL), err)
		}
		name = "spark"
		if st.format == "iceberg" {
			name = "spark_iceberg"
		}
		d, err := known(name)
		if err != nil {
			return nil, err
		}
		connector, timeout = newSparkConnector(st, d), serverSessionTimeout(o.connectTimeout)
		u.Driver = "sc"
	case "trino", "tr", "trinos", "trs":
		cfg, err := trinoConfig(rawURL)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", redact(rawURL), err)
		}
		c, err := trino.NewConnector(cfg)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", redact(rawURL), err)
		}
		d, err := known("trino")
		if err != nil {
			return nil, err
		}
		name, connector, timeout = "trino", literalConnector{Connector: c, d: d}, serverSessionTimeout(o.connectTimeout)
		u.Driver = "trino"
	default:
		var err error
		u, err = dburl.Parse(rawURL)
		var ue *url.Error
		if errors.As(err, &ue) {
			// The parser's message quotes the URL up to where it stopped,
			// which is inside a password that holds a # or a %: say what is
			// wrong without it.
			return nil, fmt.Errorf("target %q: not a URL that parses: a password (or a name) that holds one of # %% / ? @ : must be percent-encoded (%%23 %%25 %%2F %%3F %%40 %%3A), or come from ${ENV} in incrc.yaml, which encodes it", redact(rawURL))
		}
		if err != nil {
			return nil, fmt.Errorf("target %q: %w (expected duckdb:PATH, sqlite:PATH, postgres://..., mysql://..., sc://HOST:PORT/;format=delta, trino://USER@HOST:PORT/CATALOG/SCHEMA)", redact(rawURL), err)
		}
	}
	switch u.Driver {
	case "sc", "trino":
	case "duckdb":
		driverName, dsn, name = "duckdb", u.DSN, "duckdb"
	case "sqlite3", "moderncsqlite":
		// modernc.org/sqlite registers "sqlite"; dburl names mattn's driver.
		path := u.Opaque
		if path == "" {
			path = u.Path
		}
		driverName, name = "sqlite", "sqlite"
		// _dqs=0 turns off SQLite's legacy double-quoted-string rule on
		// every connection: a quoted name that resolves to no column is an
		// error, as on every other engine, never the string of its own
		// text (a missing key column would make every row one key).
		dsn = path + "?_pragma=busy_timeout(10000)&_txlock=immediate&_dqs=0"
	case "pgx", "postgres":
		name = "postgres"
		cfg, err := pgx.ParseConfig(u.DSN)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", redact(rawURL), err)
		}
		// pgx's own bound covers the dial, TLS and authentication of each
		// host it tries; PGCONNECT_TIMEOUT set it too.
		if _, set := u.Query()["connect_timeout"]; !set && cfg.ConnectTimeout == 0 {
			cfg.ConnectTimeout = o.connectTimeout
		}
		timeout = cfg.ConnectTimeout
		// The session's zone is UTC, whatever the server's default, PGTZ
		// or the URL say (docs/targets.md): a naive time cast to
		// timestamptz, or a timestamptz printed, must not move with them.
		cfg.RuntimeParams["timezone"] = "UTC"
		// TCP keepalive that notices a vanished peer in seconds (pgx's
		// dialer probes after 5 minutes); the connect bound is the
		// context's (boundedConnector).
		cfg.DialFunc = dial
		// Each statement in one round trip, its parameters typed by the
		// server from where they stand, as a prepared statement's are:
		// pgx's default prepares every new text first, a second round
		// trip, and a run's connection is new, so nothing prepared is
		// reused (an empty window: 12 fewer ms of 49, BENCHMARKS.md). A
		// default_query_exec_mode of the URL is kept.
		if _, set := u.Query()["default_query_exec_mode"]; !set {
			cfg.DefaultQueryExecMode = pgx.QueryExecModeExec
		}
		connector = stdlib.GetConnector(*cfg)
	case "mysql":
		name = "mysql"
		cfg, err := mysql.ParseDSN(u.DSN)
		if err != nil {
			return nil, fmt.Errorf("target %q: %w", redact(rawURL), err)
		}
		// UTC end to end, and affected rows that count matched rows, so a
		// compare-and-set that changes nothing still reports its match.
		cfg.Loc = timeUTC
		cfg.ParseTime = true
		cfg.ClientFoundRows = true
		// The driver logs a connection's errors itself, and an error may
		// quote what the server or the DSN said.
		cfg.Logger = log.New(scrubWriter{w: o.driverLog, s: o.scrub}, "[mysql] ", log.Ldate|log.Ltime)
		if cfg.Params == nil {
			cfg.Params = map[string]string{}
		}
		cfg.Params["sql_mode"] = strictMode(u.Query())
		// UTC sessions, as on PostgreSQL: TIMESTAMP columns convert from
		// and to the session's zone, which is the server's (SYSTEM) unless
		// set. The driver sends its params in one SET with sql_mode.
		cfg.Params["time_zone"] = "'+00:00'"
		// The driver's timeout bounds the dial only: a server that accepts
		// and never sends its greeting would hang the handshake, which only
		// the context of Connect bounds (boundedConnector).
		if _, set := u.Query()["timeout"]; !set {
			cfg.Timeout = o.connectTimeout
		}
		timeout = cfg.Timeout
		if cfg.DialFunc == nil {
			cfg.DialFunc = dial // TCP keepalive, as for PostgreSQL
		}
		if connector, err = mysql.NewConnector(cfg); err != nil {
			return nil, fmt.Errorf("target %q: %w", redact(rawURL), err)
		}
		// READ COMMITTED, as PostgreSQL: under InnoDB's default REPEATABLE
		// READ an UPDATE locks every row it scans, so abandon_runs over the
		// run log every pipeline shares would wait for any other
		// pipeline's open write. The statement is spelled the same on
		// MariaDB and MySQL 8, whose variables for it differ.
		initSQL = []string{"SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"}
	default:
		return nil, fmt.Errorf("target %q: unsupported database %q (supported: duckdb, sqlite, postgres, mysql, spark (sc://), trino)", redact(rawURL), u.Driver)
	}
	if dialect != "" && dialect != name {
		return nil, fmt.Errorf("--dialect %s does not match the target %s, which is %s", dialect, redact(rawURL), name)
	}
	d, err := known(name)
	if err != nil {
		return nil, err
	}
	var db *sql.DB
	switch {
	case connector != nil:
		db = sql.OpenDB(boundedConnector{Connector: connector, timeout: timeout, init: initSQL})
	case driverName == "duckdb":
		db, err = openDuckDB(dsn) // DuckDB opens its file here
	default:
		db, err = sql.Open(driverName, dsn)
	}
	timedOut := false
	if err == nil {
		// The ping's own deadline also bounds database/sql's retries of a
		// connection the driver calls bad.
		pingCtx, cancel := ctx, context.CancelFunc(func() {})
		if timeout > 0 {
			pingCtx, cancel = context.WithTimeout(ctx, timeout)
		}
		err = db.PingContext(pingCtx)
		timedOut = errors.Is(pingCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil
		cancel()
		if err != nil {
			db.Close()
		}
	}
	if err != nil {
		if name == "duckdb" && strings.Contains(err.Error(), "Conflicting lock") {
			// DuckDB allows one writing process per file: another incrc
			// (or anything else) has it open, which is a lock, not a failure.
			return nil, &LockedError{Reason: fmt.Sprintf("%s is locked by another process (DuckDB allows one writer per database file): %v", redact(rawURL), err)}
		}
		if timedOut {
			return nil, fmt.Errorf("connect to %s: no answer within the connect timeout of %s: %w", redact(rawURL), timeout, err)
		}
		return nil, fmt.Errorf("connect to %s: %w", redact(rawURL), err)
	}
	return &Target{DB: db, Dialect: d, URL: redact(rawURL), StatementTimeout: DefaultStatementTimeout, PingInterval: DefaultPingInterval,
		known: known, driverLog: o.driverLog}, nil
}

// serverSessionTimeout bounds a new Spark Connect or Trino session: its
// first statements (the session's settings, the ping) are planned like
// any query by a cluster that may be busy or still starting (a Databricks
// cluster started by the connection takes minutes), so it gets thirty
// times the connect timeout; zero stays no bound.
func serverSessionTimeout(d time.Duration) time.Duration { return 30 * d }

// openDuckDB opens a DuckDB database whose every connection runs in UTC.
// DuckDB's TimeZone defaults to the machine's zone (TZ), and it decides
// how a naive time becomes a TIMESTAMPTZ (a file's column declared
// timestamptz, a cast) and how one prints: a run must give the same
// target on every machine.
func openDuckDB(dsn string) (*sql.DB, error) {
	c, err := duckdb.NewConnector(dsn, func(exec driver.ExecerContext) error {
		_, err := exec.ExecContext(context.Background(), "SET TimeZone = 'UTC'", nil)
		return err
	})
	if err != nil {
		return nil, err
	}
	return sql.OpenDB(c), nil
}

// boundedConnector gives each new connection at most timeout to connect,
// in all: a URL naming several PostgreSQL hosts shares it between them.
// It also runs init on each new connection: settings of the session that
// the driver has no parameter for.
type boundedConnector struct {
	driver.Connector
	timeout time.Duration
	init    []string
}

func (c boundedConnector) Connect(ctx context.Context) (driver.Conn, error) {
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	conn, err := c.Connector.Connect(ctx)
	if err != nil || len(c.init) == 0 {
		return conn, err
	}
	exec, ok := conn.(driver.ExecerContext)
	if !ok {
		conn.Close()
		return nil, fmt.Errorf("the driver cannot run %q on a new connection", c.init[0])
	}
	for _, stmt := range c.init {
		if _, err := exec.ExecContext(ctx, stmt, nil); err != nil {
			conn.Close()
			return nil, fmt.Errorf("%s: %w", stmt, err)
		}
	}
	return conn, nil
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
func (t *Target) Close() error {
	t.closeSources()
	return t.DB.Close()
}

func redact(raw string) string { return Redact(raw) }
