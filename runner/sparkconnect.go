package runner

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	sparksql "github.com/apache/spark-connect-go/spark/sql"
	sparktypes "github.com/apache/spark-connect-go/spark/sql/types"

	"github.com/incrc/incrc/dialects"
)

// Spark Connect behind database/sql: the runner walks its programs on a
// *sql.Conn whatever the engine, so Spark is one more driver.Connector,
// and the Go client is used here only (sparkSession): swapping it for
// another touches this file alone.
//
// One connection is one Spark Connect session, so the session's settings
// (time zone, current catalog) hold for a run's pinned connection. The
// client binds no parameters: every statement's values are spelled as
// literals by the dialect and lexed back (inline). Spark has no
// multi-statement transactions: Begin fails, and the runner opens none
// (dialects.Caps.Transactions is false).

// sparkSession is what the adapter needs of a Spark Connect client: run
// one SQL text and return its result as Arrow, with (when schema is set)
// the result's columns when it has no rows.
type sparkSession interface {
	sql(ctx context.Context, query string, schema bool) (arrow.Table, []sparkField, error)
}

// sparkField is a result column as Spark types it.
type sparkField struct {
	name             string
	typ              string // Spark's name: BIGINT, DECIMAL, TIMESTAMP_NTZ, ...
	precision, scale int64
	decimal          bool
}

// sparkTarget is a parsed sc:// target URL.
type sparkTarget struct {
	remote  string // the URL the client takes: incrc's parameters removed
	format  string // delta or iceberg
	catalog string // the current catalog of each session; empty: the server's
}

// parseSparkURL reads sc://host:port/;format=delta|iceberg;catalog=NAME;...
// (the form Spark's own clients take: parameters after "/;"). format and
// catalog are incrc's and are not passed on; the client's own (token,
// user_id, and headers such as x-databricks-cluster-id) are.
func parseSparkURL(raw string) (sparkTarget, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return sparkTarget{}, err
	}
	if u.Hostname() == "" {
		return sparkTarget{}, errors.New("a Spark Connect URL names a host: sc://host:port/;format=delta")
	}
	if u.Path != "" && !strings.HasPrefix(u.Path, "/;") {
		return sparkTarget{}, fmt.Errorf("the path %q must be empty or parameters after /; (sc://host:port/;format=delta)", u.Path)
	}
	t := sparkTarget{format: "delta"}
	var kept []string
	for _, p := range strings.Split(strings.TrimPrefix(u.Path, "/"), ";") {
		if p == "" {
			continue
		}
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			return sparkTarget{}, fmt.Errorf("parameter %q is not name=value", p)
		}
		switch k {
		case "format":
			if v != "delta" && v != "iceberg" {
				return sparkTarget{}, fmt.Errorf("format=%s: the table format is delta or iceberg", v)
			}
			t.format = v
		case "catalog":
			if v == "" {
				return sparkTarget{}, errors.New("catalog= names a catalog")
			}
			if !plainName.MatchString(v) {
				// The name is also spelled in a SET key (icebergCatalog).
				return sparkTarget{}, fmt.Errorf("catalog=%s: a catalog name here is letters, digits and _", v)
			}
			t.catalog = v
		default:
			kept = append(kept, p)
		}
	}
	t.remote = "sc://" + u.Host
	if len(kept) > 0 {
		t.remote += "/;" + strings.Join(kept, ";")
	}
	return t, nil
}

// icebergCatalog names the catalog whose tables a Spark + Iceberg target
// writes: the URL's, or the session catalog. parseSparkURL admits only
// names that can be spelled in a SET key.
func icebergCatalog(t sparkTarget) string {
	if t.catalog == "" {
		return "spark_catalog"
	}
	return t.catalog
}

var plainName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// sparkConnector opens Spark Connect sessions.
type sparkConnector struct {
	target sparkTarget
	d      dialects.Dialect
	// init runs on each new session: UTC, and the catalog.
	init []string
	// open makes a session; the Go client's by default (tests of the
	// adapter itself give it no other).
	open func(ctx context.Context, remote string) (sparkSession, error)
}

func newSparkConnector(t sparkTarget, d dialects.Dialect) *sparkConnector {
	c := &sparkConnector{target: t, d: d, open: openSparkSession}
	// Windows and partition starts are read in the session's zone: UTC,
	// as the compiled header asks, whatever the server's default.
	c.init = append(c.init, "SET TIME ZONE 'UTC'")
	if t.format == "iceberg" {
		// Iceberg's Spark catalog caches each table's metadata per session
		// by default: a session then reads the snapshot it first loaded,
		// blind to what other sessions committed since (the state row
		// another run moved, rows written to a source, the markers of a
		// backfill). Off before the catalog is first loaded, every
		// statement reads the table's current snapshot.
		c.init = append(c.init, "SET `spark.sql.catalog."+icebergCatalog(t)+".cache-enabled` = false")
	}
	if t.catalog != "" {
		c.init = append(c.init, "SET CATALOG "+d.QuoteIdent(t.catalog))
	}
	return c
}

func (c *sparkConnector) Connect(ctx context.Context) (driver.Conn, error) {
	s, err := c.open(ctx, c.target.remote)
	if err != nil {
		return nil, err
	}
	conn := &sparkConn{s: s, d: c.d}
	for _, q := range c.init {
		if _, _, err := s.sql(ctx, q, false); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
	}
	return conn, nil
}

func (c *sparkConnector) Driver() driver.Driver { return sparkDriver{} }

type sparkDriver struct{}

func (sparkDriver) Open(string) (driver.Conn, error) {
	return nil, errors.New("spark connect: open a target through runner.Open")
}

// sparkConn is one session.
type sparkConn struct {
	s sparkSession
	d dialects.Dialect
	// gone: a statement was given up on while it may still run; the
	// session is not used again.
	gone bool
	// waitFor replaces sparkWait (tests of the adapter).
	waitFor time.Duration
}

var (
	_ driver.ExecerContext     = (*sparkConn)(nil)
	_ driver.QueryerContext    = (*sparkConn)(nil)
	_ driver.Pinger            = (*sparkConn)(nil)
	_ driver.NamedValueChecker = (*sparkConn)(nil)
)

func (c *sparkConn) Prepare(string) (driver.Stmt, error) {
	return nil, errors.New("spark connect: no prepared statements")
}

func (c *sparkConn) Close() error { return nil }

// sparkWait bounds how long a statement the caller gave up on (its
// context ended: --timeout, the cleanup's bound, a signal) is still waited
// for. Spark Connect does not stop an operation when its client goes: the
// server goes on and commits a write the client was told had failed
// (SPARK-43331: an interrupt stops running Spark jobs, not a commit), and
// the next statement then loses a commit conflict against it on the state
// tables. Waiting for the server's answer keeps each answer the truth
// and the statements of a session one after another; past this bound the
// session is given up (driver.ErrBadConn) and the error says the write
// may still land. The lease's time to live: a write that lands later
// races a run that took the pipeline over.
var sparkWait = DefaultLeaseTTL

// errSparkGivenUp says a statement was given up on while Spark may still
// be executing it.
var errSparkGivenUp = errors.New("spark connect: the statement did not end within the wait after it was cancelled: Spark may still execute it")

// sql runs one statement, and when ctx ends first, waits for the server to
// end it (sparkWait): its answer then is the statement's, success included
// (the write was made). Until then the session is busy.
func (c *sparkConn) sql(ctx context.Context, q string, schema bool) (arrow.Table, []sparkField, error) {
	if c.gone {
		return nil, nil, driver.ErrBadConn
	}
	type answer struct {
		tbl    arrow.Table
		fields []sparkField
		err    error
	}
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	done := make(chan answer, 1)
	go func() {
		tbl, fields, err := c.s.sql(run, q, schema)
		done <- answer{tbl, fields, err}
	}()
	select {
	case a := <-done:
		return a.tbl, a.fields, a.err
	case <-ctx.Done():
	}
	wait := time.NewTimer(c.wait())
	defer wait.Stop()
	select {
	case a := <-done:
		if a.err != nil {
			return nil, nil, fmt.Errorf("%w (and %v)", a.err, context.Cause(ctx))
		}
		return a.tbl, a.fields, nil
	case <-wait.C:
		c.gone = true
		return nil, nil, fmt.Errorf("%w: %v", errSparkGivenUp, context.Cause(ctx))
	}
}

func (c *sparkConn) wait() time.Duration {
	if c.waitFor > 0 {
		return c.waitFor
	}
	return sparkWait
}

func (c *sparkConn) Begin() (driver.Tx, error) {
	return nil, errors.New("spark: no multi-statement transactions (each statement commits on its own)")
}

// CheckNamedValue takes every value as it is: inline spells it, or says
// it cannot.
func (c *sparkConn) CheckNamedValue(*driver.NamedValue) error { return nil }

func (c *sparkConn) Ping(ctx context.Context) error {
	_, _, err := c.sql(ctx, "SELECT 1", false)
	return err
}

func (c *sparkConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	q, err := inline(c.d, query, args)
	if err != nil {
		return nil, err
	}
	tbl, _, err := c.sql(ctx, q, false)
	if err != nil {
		return nil, err
	}
	if tbl != nil {
		defer tbl.Release()
	}
	return sparkResult(tbl)
}

// sparkResult reads the rows a write reports: Delta's and Iceberg's
// UPDATE, DELETE and MERGE return num_affected_rows (Iceberg only from
// Spark 4.1 on); INSERT returns nothing. What is not reported is unknown,
// never zero.
func sparkResult(tbl arrow.Table) (driver.Result, error) {
	if tbl == nil || tbl.NumRows() != 1 {
		return unknownRows{}, nil
	}
	for i := 0; i < int(tbl.NumCols()); i++ {
		if tbl.Schema().Field(i).Name != "num_affected_rows" {
			continue
		}
		vals, err := columnValues(tbl.Column(i))
		if err != nil {
			return nil, err
		}
		if n, ok := vals[0].(int64); ok && n >= 0 {
			return driver.RowsAffected(n), nil
		}
	}
	return unknownRows{}, nil
}

// unknownRows is the result of a write whose engine did not say how many
// rows it changed.
type unknownRows struct{}

func (unknownRows) LastInsertId() (int64, error) { return 0, errors.New("no insert ids") }
func (unknownRows) RowsAffected() (int64, error) {
	return 0, errors.New("the engine does not report the rows this statement changed")
}

func (c *sparkConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	q, err := inline(c.d, query, args)
	if err != nil {
		return nil, err
	}
	tbl, fields, err := c.sql(ctx, q, true)
	if err != nil {
		return nil, err
	}
	r := &sparkRows{}
	if tbl == nil {
		r.fields = fields
		return r, nil
	}
	defer tbl.Release()
	for i := 0; i < int(tbl.NumCols()); i++ {
		r.fields = append(r.fields, arrowField(tbl.Schema().Field(i)))
		vals, err := columnValues(tbl.Column(i))
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", tbl.Schema().Field(i).Name, err)
		}
		r.cols = append(r.cols, vals)
	}
	r.n = int(tbl.NumRows())
	return r, nil
}

// sparkRows is a result read whole: the statements a run reads return
// counts, bounds and small lists.
type sparkRows struct {
	fields []sparkField
	cols   [][]any
	n, at  int
}

var (
	_ driver.RowsColumnTypeDatabaseTypeName = (*sparkRows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*sparkRows)(nil)
)

func (r *sparkRows) Columns() []string {
	out := make([]string, len(r.fields))
	for i, f := range r.fields {
		out[i] = f.name
	}
	return out
}

func (r *sparkRows) Close() error { return nil }

func (r *sparkRows) Next(dest []driver.Value) error {
	if r.at >= r.n {
		return io.EOF
	}
	for i := range dest {
		dest[i] = r.cols[i][r.at]
	}
	r.at++
	return nil
}

func (r *sparkRows) ColumnTypeDatabaseTypeName(i int) string { return r.fields[i].typ }

func (r *sparkRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	f := r.fields[i]
	return f.precision, f.scale, f.decimal
}

// arrowField names an Arrow column's type as Spark does.
func arrowField(f arrow.Field) sparkField {
	out := sparkField{name: f.Name}
	switch t := f.Type.(type) {
	case *arrow.BooleanType:
		out.typ = "BOOLEAN"
	case *arrow.Int8Type:
		out.typ = "TINYINT"
	case *arrow.Int16Type:
		out.typ = "SMALLINT"
	case *arrow.Int32Type:
		out.typ = "INT"
	case *arrow.Int64Type:
		out.typ = "BIGINT"
	case *arrow.Float32Type:
		out.typ = "FLOAT"
	case *arrow.Float64Type:
		out.typ = "DOUBLE"
	case *arrow.Decimal128Type:
		out.typ, out.precision, out.scale, out.decimal = "DECIMAL", int64(t.Precision), int64(t.Scale), true
	case *arrow.StringType, *arrow.LargeStringType:
		out.typ = "STRING"
	case *arrow.BinaryType, *arrow.LargeBinaryType:
		out.typ = "BINARY"
	case *arrow.Date32Type, *arrow.Date64Type:
		out.typ = "DATE"
	case *arrow.TimestampType:
		out.typ = "TIMESTAMP"
		if t.TimeZone == "" {
			out.typ = "TIMESTAMP_NTZ"
		}
	case *arrow.NullType:
		out.typ = "VOID"
	default:
		out.typ = strings.ToUpper(f.Type.Name())
	}
	return out
}

// structFields names the columns of an empty result, from the schema
// Spark sent for it.
func structFields(st *sparktypes.StructType) []sparkField {
	if st == nil {
		return nil
	}
	out := make([]sparkField, len(st.Fields))
	for i, f := range st.Fields {
		sf := sparkField{name: f.Name}
		switch t := f.DataType.(type) {
		case sparktypes.BooleanType:
			sf.typ = "BOOLEAN"
		case sparktypes.ByteType:
			sf.typ = "TINYINT"
		case sparktypes.ShortType:
			sf.typ = "SMALLINT"
		case sparktypes.IntegerType:
			sf.typ = "INT"
		case sparktypes.LongType:
			sf.typ = "BIGINT"
		case sparktypes.FloatType:
			sf.typ = "FLOAT"
		case sparktypes.DoubleType:
			sf.typ = "DOUBLE"
		case sparktypes.DecimalType:
			sf.typ, sf.precision, sf.scale, sf.decimal = "DECIMAL", int64(t.Precision), int64(t.Scale), true
		case sparktypes.StringType:
			sf.typ = "STRING"
		case sparktypes.BinaryType:
			sf.typ = "BINARY"
		case sparktypes.DateType:
			sf.typ = "DATE"
		case sparktypes.TimestampType:
			sf.typ = "TIMESTAMP"
		case sparktypes.TimestampNtzType:
			sf.typ = "TIMESTAMP_NTZ"
		default:
			sf.typ = strings.ToUpper(f.DataType.TypeName())
		}
		out[i] = sf
	}
	return out
}

// columnValues reads an Arrow column as the Go values database/sql
// scans: int64, float64, bool, string (a decimal, exact, in its text),
// []byte, time.Time in UTC, nil for NULL.
func columnValues(col *arrow.Column) ([]any, error) {
	var out []any
	for _, chunk := range col.Data().Chunks() {
		for i := 0; i < chunk.Len(); i++ {
			if chunk.IsNull(i) {
				out = append(out, nil)
				continue
			}
			v, err := arrowValue(chunk, i)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	return out, nil
}

func arrowValue(a arrow.Array, i int) (any, error) {
	switch a := a.(type) {
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Int8:
		return int64(a.Value(i)), nil
	case *array.Int16:
		return int64(a.Value(i)), nil
	case *array.Int32:
		return int64(a.Value(i)), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Float32:
		return float64(a.Value(i)), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale), nil
	case *array.String:
		return a.Value(i), nil
	case *array.LargeString:
		return a.Value(i), nil
	case *array.Binary:
		return append([]byte(nil), a.Value(i)...), nil
	case *array.Date32:
		return a.Value(i).ToTime().UTC(), nil
	case *array.Date64:
		return a.Value(i).ToTime().UTC(), nil
	case *array.Timestamp:
		unit := a.DataType().(*arrow.TimestampType).Unit
		return a.Value(i).ToTime(unit).UTC(), nil
	case *array.Null:
		return nil, nil
	}
	return nil, fmt.Errorf("a value of Arrow type %s, which incrc does not read", a.DataType())
}

// clientSession is the Spark Connect Go client's session.
type clientSession struct{ s sparksql.SparkSession }

func openSparkSession(ctx context.Context, remote string) (sparkSession, error) {
	s, err := sparksql.NewSessionBuilder().Remote(remote).Build(ctx)
	if err != nil {
		return nil, err
	}
	return clientSession{s}, nil
}

func (c clientSession) sql(ctx context.Context, query string, schema bool) (arrow.Table, []sparkField, error) {
	df, err := c.s.Sql(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	tbl, err := df.ToArrow(ctx)
	if err != nil {
		return nil, nil, err
	}
	if tbl != nil && *tbl != nil {
		return *tbl, nil, nil
	}
	if !schema {
		return nil, nil, nil
	}
	// No rows came, and with them no schema: ask for it, so the columns
	// of an empty result are still known.
	st, err := df.Schema(ctx)
	if err != nil {
		return nil, nil, err
	}
	return nil, structFields(st), nil
}
