package runner

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	duckdb "github.com/duckdb/duckdb-go/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
)

// heldRow is a row a copy held back: its values as the quarantine takes
// them (the column that does not fit NULL), and why.
type heldRow struct {
	values map[string]any // by column
	reason string
}

// quarantineHeld writes each row the copies held back to the quarantine,
// one execution of the step's statement per row.
func (m *machine) quarantineHeld(ctx context.Context, q querier, s compiler.Step, vals params) error {
	held := m.held
	m.held, m.vals[compiler.RegUnfit] = nil, int64(0)
	for _, h := range held {
		v := make(params, len(vals)+len(h.values)+1)
		for k, x := range vals {
			v[k] = x
		}
		v["unfit_reason"] = h.reason
		for _, c := range m.c.plan.Columns {
			v[compiler.UnfitParam(c.Name)] = h.values[c.Name]
		}
		n, err := m.c.exec(ctx, q, s.Stmt, v)
		if err != nil {
			return err
		}
		m.into(s, n)
	}
	return nil
}

// copy runs a copy step: the rows the source statement returns stream
// into the target table of the step, through the target's bulk path (the
// DuckDB appender, PostgreSQL's COPY FROM STDIN, batched INSERTs on
// MariaDB/MySQL and SQLite). One row is held at a time (a batch of them
// for the INSERTs): a window of any size runs in bounded memory. Each
// value is converted to its declared column's type; one that does not fit
// fails the copy, naming the row's key and the column, but for a time the
// target cannot hold as it is when the plan quarantines such rows: the row
// is held back for the quarantine (compiler.StmtQuarantineUnfit) and
// counted with the rows copied, as read.
func (m *machine) copy(ctx context.Context, src querier, s compiler.Step, vals params) (int64, error) {
	c := m.c
	st, err := c.statement(s.Stmt)
	if err != nil {
		return 0, err
	}
	op, ok := st.Op.(compiler.ReadSource)
	if !ok {
		return 0, fmt.Errorf("%s: a copy step reads a source statement, not %T", s.Stmt, st.Op)
	}
	cols := make([]compiler.Col, len(op.Columns))
	for i, name := range op.Columns {
		cols[i] = compiler.Col{Name: name, Type: compiler.Type{Kind: compiler.Text}}
		for _, dc := range c.plan.Columns {
			if dc.Name == name {
				cols[i] = dc
			}
		}
	}
	conv := &converter{cols: cols, key: keyIndexes(c.plan.Key, op.Columns), flavor: string(c.d.Name()), bind: c.d.BindTime}
	conv.hold = c.plan.Statement(compiler.StmtQuarantineUnfit) != nil
	if c.src != nil {
		conv.source = string(c.src.Name())
	}
	var n int64
	err = c.rows(ctx, src, s.Stmt, vals, func(rows *sql.Rows) error {
		rs := &rowSource{rows: rows, conv: conv, raw: make([]any, len(cols))}
		rs.start()
		defer rs.finish()
		var sinkErr error
		n, sinkErr = m.sink(ctx, s.Copy, op.Columns, rs)
		rs.finish()
		m.held = append(m.held, rs.held...)
		m.vals[compiler.RegUnfit] = int64(len(m.held))
		n += int64(len(rs.held))
		return sinkErr
	})
	if err != nil {
		return n, err
	}
	return n, nil
}

// rowSource reads the source's rows, converted, for a sink. A goroutine
// reads and converts them ahead, a batch at a time, into a channel of a
// few batches: the source's decoding and the conversions overlap the
// target's bulk path, and what is held is those few batches, whatever the
// window's size.
type rowSource struct {
	rows *sql.Rows
	conv *converter
	raw  []any
	out  []any
	n    int64
	err  error
	// held are the rows the reading goroutine held back; read them after
	// finish.
	held []heldRow

	batches chan rowBatch
	cur     [][]any
	pos     int
	stop    chan struct{}
	stopped chan struct{}
}

type rowBatch struct {
	rows [][]any
	err  error
}

// copyBatchRows is how many rows the reading goroutine hands over at once.
const copyBatchRows = 512

func (r *rowSource) start() {
	r.batches, r.stop, r.stopped = make(chan rowBatch, 4), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.stopped)
		defer close(r.batches)
		ptrs := make([]any, len(r.raw))
		for i := range r.raw {
			ptrs[i] = &r.raw[i]
		}
		send := func(b rowBatch) bool {
			select {
			case r.batches <- b:
				return true
			case <-r.stop:
				return false
			}
		}
		var n int64
		batch := make([][]any, 0, copyBatchRows)
		for r.rows.Next() {
			if err := r.rows.Scan(ptrs...); err != nil {
				send(rowBatch{rows: batch, err: err})
				return
			}
			n++
			out, held, err := r.conv.row(r.raw, n)
			if err != nil {
				send(rowBatch{rows: batch, err: err})
				return
			}
			if held != nil {
				r.held = append(r.held, *held)
				continue
			}
			batch = append(batch, out)
			if len(batch) == copyBatchRows {
				if !send(rowBatch{rows: batch}) {
					return
				}
				batch = make([][]any, 0, copyBatchRows)
			}
		}
		send(rowBatch{rows: batch, err: r.rows.Err()})
	}()
}

// finish stops the reading goroutine and waits for it: the rows are
// closed after it, never while it reads them.
func (r *rowSource) finish() {
	if r.stop == nil {
		return
	}
	close(r.stop)
	<-r.stopped
	r.stop = nil
}

func (r *rowSource) next() bool {
	if r.err != nil {
		return false
	}
	for r.pos >= len(r.cur) {
		b, ok := <-r.batches
		if !ok {
			return false
		}
		r.cur, r.pos = b.rows, 0
		if b.err != nil {
			r.err = b.err
			return false
		}
	}
	r.out = r.cur[r.pos]
	r.cur[r.pos] = nil
	r.pos++
	r.n++
	return true
}

func (r *rowSource) done() error { return r.err }

// pgx.CopyFromSource
func (r *rowSource) Next() bool             { return r.next() }
func (r *rowSource) Values() ([]any, error) { return r.out, nil }
func (r *rowSource) Err() error             { return r.done() }

// sink streams the rows into table through the target's bulk path.
func (m *machine) sink(ctx context.Context, table compiler.Table, cols []string, rs *rowSource) (int64, error) {
	c := m.c
	switch c.d.Name() {
	case "duckdb":
		err := m.conn.Raw(func(dc any) error {
			conn, ok := dc.(driver.Conn)
			if !ok {
				return fmt.Errorf("the DuckDB driver's connection is a %T", dc)
			}
			// Staging tables are temporary: DuckDB keeps them in temp.main. A
			// copy straight into the target (an unqualified name of the
			// database's own schema) goes where the name resolves.
			catalog, schema := "temp", "main"
			if s := table.Schema(); len(s) > 0 {
				catalog, schema = "", strings.Join(s, ".")
			} else if reflect.DeepEqual(table, c.plan.Target) {
				catalog = ""
			}
			a, err := duckdb.NewAppender(conn, catalog, schema, table.Name())
			if err != nil {
				return err
			}
			row := make([]driver.Value, len(cols))
			for rs.next() {
				for i, v := range rs.out {
					row[i] = v
				}
				if err := a.AppendRow(row...); err != nil {
					a.Close()
					return fmt.Errorf("row %d: %w", rs.n, err)
				}
			}
			if err := rs.done(); err != nil {
				a.Close()
				return err
			}
			return a.Close()
		})
		return rs.n, err
	case "postgres":
		err := m.conn.Raw(func(dc any) error {
			conn, ok := dc.(*stdlib.Conn)
			if !ok {
				return fmt.Errorf("the PostgreSQL driver's connection is a %T", dc)
			}
			usePGDecimal(conn.Conn().TypeMap())
			_, err := conn.Conn().CopyFrom(ctx, pgx.Identifier(table.Parts), cols, rs)
			return err
		})
		if err == nil {
			err = rs.done()
		}
		return rs.n, err
	}
	return m.insertBatches(ctx, table, cols, rs)
}

// copyBatchValues bounds the markers of one INSERT of a copy: far below
// SQLite's (32766) and MariaDB's (65535) limits.
const copyBatchValues = 6000

func (m *machine) insertBatches(ctx context.Context, table compiler.Table, cols []string, rs *rowSource) (int64, error) {
	per := max(1, min(500, copyBatchValues/len(cols)))
	parts := map[int]dialects.Part{}
	args := make([]any, 0, per*len(cols))
	rowsIn := 0
	flush := func() error {
		if rowsIn == 0 {
			return nil
		}
		part, ok := parts[rowsIn]
		if !ok {
			var err error
			if part, err = dialects.CopyInsert(m.c.d, table, cols, rowsIn); err != nil {
				return err
			}
			parts[rowsIn] = part
		}
		if _, err := m.conn.ExecContext(ctx, part.SQL, args...); err != nil {
			return err
		}
		args, rowsIn = args[:0], 0
		return nil
	}
	for rs.next() {
		args = append(args, rs.out...)
		rowsIn++
		if rowsIn == per {
			if err := flush(); err != nil {
				return rs.n, err
			}
		}
	}
	if err := rs.done(); err != nil {
		return rs.n, err
	}
	return rs.n, flush()
}

func keyIndexes(key, cols []string) []int {
	var out []int
	for _, k := range key {
		for i, c := range cols {
			if c == k {
				out = append(out, i)
			}
		}
	}
	return out
}

// converter turns a source row into the values the target's bulk path
// takes for the declared columns.
type converter struct {
	cols   []compiler.Col
	key    []int
	flavor string // the target dialect: duckdb and postgres take their own decimal types
	source string // the source's dialect
	bind   func(time.Time, compiler.TypeKind) any
	// hold: a row with a time the target cannot hold as it is is held
	// back for the quarantine instead of failing the copy.
	hold bool
}

// outOfRange is a time the target cannot hold as it is.
type outOfRange struct{ error }

// mysqlFirstDay is the first day of MariaDB's and MySQL's DATE and
// DATETIME range: an earlier one is stored as the zero date 0000-00-00.
var mysqlFirstDay = time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)

// timeInRange refuses a time the target cannot hold as it is, and
// MariaDB's zero date, which is no time at all (its driver reads it as
// 0001-01-01): each engine would write another value in its place.
func (cv *converter) timeInRange(tm time.Time) error {
	if cv.source == "mysql" && tm.IsZero() {
		return outOfRange{fmt.Errorf("0000-00-00 (MariaDB's zero date) is not a date, and %s would write it as %s: fix the source, or leave the column NULL there", cv.flavor, tm.Format("2006-01-02"))}
	}
	if cv.flavor == "mysql" && (tm.Before(mysqlFirstDay) || tm.Year() > 9999) {
		return outOfRange{fmt.Errorf("%s is outside the range of MariaDB's dates (1000-01-01 to 9999-12-31), which would store it as 0000-00-00", tm.Format(time.RFC3339Nano))}
	}
	return nil
}

// row converts a source row for the bulk path; with hold, a row with a
// time the target cannot hold comes back as held instead, converted for
// the quarantine's statement.
func (cv *converter) row(raw []any, n int64) (out []any, held *heldRow, err error) {
	out = make([]any, len(raw))
	var unfit []bool
	for i, v := range raw {
		x, err := cv.value(v, cv.cols[i].Type)
		if _, ok := err.(outOfRange); ok && cv.hold {
			if held == nil {
				held, unfit = &heldRow{reason: fmt.Sprintf("range(%s): %v; quarantined with %s NULL", cv.cols[i].Name, err, cv.cols[i].Name)}, make([]bool, len(raw))
			}
			unfit[i] = true
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s, column %s: %v", cv.describe(raw, n), cv.cols[i].Name, err)
		}
		out[i] = x
	}
	if held == nil {
		return out, nil, nil
	}
	// The quarantine's statement binds plain values (decimals and json as
	// text), not the bulk path's own types.
	plain := *cv
	plain.flavor = ""
	held.values = make(map[string]any, len(raw))
	for i, v := range raw {
		if unfit[i] {
			continue
		}
		x, err := plain.value(v, cv.cols[i].Type)
		if err != nil {
			return nil, nil, fmt.Errorf("%s, column %s: %v", cv.describe(raw, n), cv.cols[i].Name, err)
		}
		held.values[cv.cols[i].Name] = x
	}
	return nil, held, nil
}

// describe names a row by its key, or by its place in the read.
func (cv *converter) describe(raw []any, n int64) string {
	if len(cv.key) == 0 {
		return fmt.Sprintf("row %d of the source", n)
	}
	parts := make([]string, len(cv.key))
	for i, k := range cv.key {
		parts[i] = cv.cols[k].Name + "=" + shortValue(raw[k])
	}
	return "row " + strings.Join(parts, ", ")
}

func shortValue(v any) string {
	s := "NULL"
	if v != nil {
		s, _ = text(v)
	}
	if len(s) > 40 {
		s = s[:40] + "..."
	}
	return s
}

// value converts one source value to the declared type: exactly, or an
// error saying why it does not fit.
func (cv *converter) value(v any, t compiler.Type) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Kind {
	case compiler.Smallint, compiler.Integer, compiler.Bigint:
		n, err := asInteger(v)
		if err != nil {
			return nil, err
		}
		lim := int64(math.MaxInt64)
		switch t.Kind {
		case compiler.Smallint:
			lim = math.MaxInt16
		case compiler.Integer:
			lim = math.MaxInt32
		}
		if n > lim || n < -lim-1 {
			return nil, fmt.Errorf("%d does not fit %s", n, t)
		}
		return n, nil
	case compiler.Decimal:
		if s, ok := v.(string); ok {
			// A number as text (PostgreSQL's numeric, MariaDB's decimal)
			// that fits an int64 is read and rescaled without a big.Int;
			// anything else, or a value that does not fit, takes the
			// exact path below (and its error).
			if u, from, ok := parseDecimal64(s); ok {
				if r, ok, err := rescale64(u, from, t.Precision, t.Scale); ok && err == nil {
					return cv.decimal64(r, t), nil
				}
			}
		}
		d, err := asDecimal(v)
		if err != nil {
			return nil, err
		}
		if u, ok, err := d.fit64(t.Precision, t.Scale); ok {
			// Most values fit an int64: no big.Int for PostgreSQL, whose
			// COPY encodes them without one (pgNumericCodec).
			if err != nil {
				return nil, fmt.Errorf("%s does not fit %s: %v", d, t, err)
			}
			return cv.decimal64(u, t), nil
		}
		unscaled, err := d.fit(t.Precision, t.Scale)
		if err != nil {
			return nil, fmt.Errorf("%s does not fit %s: %v", d, t, err)
		}
		switch cv.flavor {
		case "duckdb":
			return duckdb.Decimal{Width: uint8(t.Precision), Scale: uint8(t.Scale), Value: unscaled}, nil
		case "postgres":
			return pgtype.Numeric{Int: unscaled, Exp: int32(-t.Scale), Valid: true}, nil
		}
		return decimalText(unscaled, t.Scale), nil
	case compiler.Double:
		switch x := v.(type) {
		case float64:
			return x, nil
		case float32:
			return float64(x), nil
		}
		s, _ := text(v)
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", s)
		}
		return f, nil
	case compiler.Boolean:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int64:
			if x == 0 || x == 1 {
				return x == 1, nil
			}
		}
		s, _ := text(v)
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "true", "t", "1":
			return true, nil
		case "false", "f", "0":
			return false, nil
		}
		return nil, fmt.Errorf("%q is not a boolean", s)
	case compiler.Text, compiler.Varchar, compiler.JSON:
		var s string
		switch x := v.(type) {
		case string:
			s = x
		case []byte:
			s = string(x)
		case time.Time:
			s = x.UTC().Format("2006-01-02 15:04:05.999999")
		case map[string]any, []any:
			b, err := json.Marshal(x)
			if err != nil {
				return nil, err
			}
			s = string(b)
		default:
			s, _ = text(v)
		}
		if t.Kind == compiler.JSON {
			dec := json.NewDecoder(strings.NewReader(s))
			dec.UseNumber()
			var doc any
			if err := dec.Decode(&doc); err != nil || dec.More() {
				return nil, fmt.Errorf("the value is not one JSON document")
			}
			if cv.flavor == "duckdb" {
				// The appender writes a Go string into a JSON column as
				// a JSON string: the document goes in parsed.
				return doc, nil
			}
		}
		if t.Kind == compiler.Varchar && utf8.RuneCountInString(s) > t.Length {
			return nil, fmt.Errorf("%d characters do not fit %s", utf8.RuneCountInString(s), t)
		}
		if !utf8.ValidString(s) {
			return nil, fmt.Errorf("the value is not valid UTF-8 text")
		}
		return s, nil
	case compiler.Date, compiler.Timestamp, compiler.TimestampTZ:
		tm, err := asTime(v)
		if err != nil {
			return nil, err
		}
		tm = tm.UTC()
		if err := cv.timeInRange(tm); err != nil {
			return nil, err
		}
		if t.Kind == compiler.Date && tm != tm.Truncate(24*time.Hour) {
			return nil, fmt.Errorf("%s has a time of day, and %s holds none", tm.Format(time.RFC3339Nano), t)
		}
		return cv.bind(tm, t.Kind), nil
	}
	return v, nil
}

func asInteger(v any) (int64, error) {
	switch x := v.(type) {
	case int64:
		return x, nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case int:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint16:
		return int64(x), nil
	case uint32:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return 0, fmt.Errorf("%d does not fit bigint", x)
		}
		return int64(x), nil
	case bool:
		return 0, fmt.Errorf("a boolean is not an integer")
	}
	d, err := asDecimal(v)
	if err != nil {
		return 0, err
	}
	n, err := d.fit(19, 0)
	if err != nil || !n.IsInt64() {
		return 0, fmt.Errorf("%s is not an integer", d)
	}
	return n.Int64(), nil
}

// decimal is an exact number: unscaled * 10^-scale.
type decimal struct {
	unscaled *big.Int
	scale    int
}

func (d decimal) String() string { return decimalText(d.unscaled, d.scale) }

func decimalText(unscaled *big.Int, scale int) string {
	s := new(big.Int).Abs(unscaled).String()
	if scale > 0 {
		for len(s) <= scale {
			s = "0" + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if unscaled.Sign() < 0 {
		s = "-" + s
	}
	return s
}

// fit rescales the number to scale, exactly (digits dropped must be
// zeros), within precision digits.
func (d decimal) fit(precision, scale int) (*big.Int, error) {
	if u, ok, err := d.fit64(precision, scale); ok {
		if err != nil {
			return nil, err
		}
		return big.NewInt(u), nil
	}
	u := new(big.Int).Set(d.unscaled)
	switch {
	case d.scale < scale:
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale-d.scale)), nil))
	case d.scale > scale:
		q, r := new(big.Int).QuoRem(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.scale-scale)), nil), new(big.Int))
		if r.Sign() != 0 {
			return nil, fmt.Errorf("more than %d decimal(s)", scale)
		}
		u = q
	}
	if digits := len(new(big.Int).Abs(u).String()); precision > 0 && digits > precision && u.Sign() != 0 {
		return nil, fmt.Errorf("more than %d digit(s)", precision)
	}
	return u, nil
}

var pow10 = func() (p [19]int64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// decimal64 is the value the target's bulk path takes for the decimal
// u * 10^-t.Scale.
func (cv *converter) decimal64(u int64, t compiler.Type) any {
	switch cv.flavor {
	case "duckdb":
		return duckdb.Decimal{Width: uint8(t.Precision), Scale: uint8(t.Scale), Value: big.NewInt(u)}
	case "postgres":
		return pgDecimal{unscaled: u, scale: int16(t.Scale)}
	}
	return decimalText(big.NewInt(u), t.Scale)
}

// parseDecimal64 reads [-+]digits[.digits] of at most 18 digits into an
// int64 and its scale; ok is false for anything else (parseDecimal
// decides then).
func parseDecimal64(s string) (u int64, scale int, ok bool) {
	i, neg := 0, false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg, i = s[i] == '-', i+1
	}
	digits, dot := 0, false
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			if digits++; digits > 18 {
				return 0, 0, false
			}
			u = u*10 + int64(c-'0')
			if dot {
				scale++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, 0, false
		}
	}
	if digits == 0 {
		return 0, 0, false
	}
	if neg {
		u = -u
	}
	return u, scale, true
}

// fit64 is fit for the numbers that fit an int64 throughout (almost all):
// ok is false when the big path must decide.
func (d decimal) fit64(precision, scale int) (int64, bool, error) {
	if !d.unscaled.IsInt64() {
		return 0, false, nil
	}
	return rescale64(d.unscaled.Int64(), d.scale, precision, scale)
}

// rescale64 is fit64 for unscaled u at scale from.
func rescale64(u int64, from, precision, scale int) (int64, bool, error) {
	if scale-from > 18 || from-scale > 18 {
		return 0, false, nil
	}
	switch k := scale - from; {
	case k > 0:
		if u > math.MaxInt64/pow10[k] || u < math.MinInt64/pow10[k] {
			return 0, false, nil
		}
		u *= pow10[k]
	case k < 0:
		if u%pow10[-k] != 0 {
			return 0, true, fmt.Errorf("more than %d decimal(s)", scale)
		}
		u /= pow10[-k]
	}
	if precision > 0 && precision < 19 {
		if a := u; a >= pow10[precision] || a <= -pow10[precision] {
			return 0, true, fmt.Errorf("more than %d digit(s)", precision)
		}
	}
	return u, true, nil
}

func asDecimal(v any) (decimal, error) {
	switch x := v.(type) {
	case duckdb.Decimal:
		// fit never changes unscaled: no copy.
		return decimal{unscaled: x.Value, scale: int(x.Scale)}, nil
	case pgtype.Numeric:
		if !x.Valid || x.NaN || x.InfinityModifier != pgtype.Finite {
			return decimal{}, fmt.Errorf("not a finite number")
		}
		if x.Exp >= 0 {
			return decimal{unscaled: new(big.Int).Mul(x.Int, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Exp)), nil))}, nil
		}
		return decimal{unscaled: x.Int, scale: int(-x.Exp)}, nil
	case *big.Int:
		return decimal{unscaled: new(big.Int).Set(x)}, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return decimal{}, fmt.Errorf("%v is not a finite number", x)
		}
		return parseDecimal(strconv.FormatFloat(x, 'f', -1, 64))
	case float32:
		return parseDecimal(strconv.FormatFloat(float64(x), 'f', -1, 32))
	case int64, int32, int16, int8, int, uint8, uint16, uint32, uint64:
		return parseDecimal(fmt.Sprint(x))
	case string:
		return parseDecimal(x)
	case []byte:
		return parseDecimal(string(x))
	}
	return decimal{}, fmt.Errorf("a %T is not a number", v)
}

// parseDecimal reads [-+]digits[.digits][e[-+]digits] exactly.
func parseDecimal(s string) (decimal, error) {
	s = strings.TrimSpace(s)
	mant, exp := s, 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			return decimal{}, fmt.Errorf("%q is not a number", s)
		}
		mant, exp = s[:i], e
	}
	neg := strings.HasPrefix(mant, "-")
	mant = strings.TrimLeft(mant, "+-")
	whole, frac, _ := strings.Cut(mant, ".")
	digits := whole + frac
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return decimal{}, fmt.Errorf("%q is not a number", s)
	}
	var u *big.Int
	if len(digits) <= 18 {
		n, _ := strconv.ParseInt(digits, 10, 64)
		u = big.NewInt(n)
	} else {
		u, _ = new(big.Int).SetString(digits, 10)
	}
	if neg {
		u.Neg(u)
	}
	scale := len(frac) - exp
	if scale < 0 {
		u.Mul(u, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-scale)), nil))
		scale = 0
	}
	return decimal{unscaled: u, scale: scale}, nil
}
