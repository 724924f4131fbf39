package runner

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/incrc/incrc/compiler/ir"
	"github.com/incrc/incrc/runner/transfer"

	"github.com/incrc/incrc/dialects"
)

// machine walks one program on one connection. It knows the step
// vocabulary (transactions, repetition per partition, guards, what to read
// back into which register) and nothing of strategies: what a program does
// is in the plan.
type machine struct {
	c    *compiled
	conn *sql.Conn
	vals params
	rows map[string][][]any // ReadRows results, by register
	// held are the rows the copies held back (a value the target cannot
	// hold as it is), until a ReadHeld step quarantines them.
	held []transfer.Held
	// parts are the partitions a ReadPartitions step listed, in order;
	// finalBound is where finalized partitions end (zero: none are).
	parts      []partition
	finalBound time.Time
	// hook, when set, runs before each statement by name (tests inject
	// failures with it), and before "commit".
	hook func(name string) error
	// between, when set, runs before each step outside a transaction and
	// before the transaction begins: lease renewal on engines where it
	// cannot run alongside the write.
	between func(ctx context.Context) error
	// before, when set, runs before each step (the run's clock values).
	before func()
	// progress, when set, is told each statement before it runs;
	// partsDone counts the partitions whose Each steps have all run.
	progress  func(stmt string)
	partsDone int
	// files is the list a ReadNewFiles or ReadAllFiles step made: the
	// files of a files source this program loads; rewritten, the files
	// loaded before that changed since; reloadRewritten lists those too.
	files           []transfer.File
	rewritten       []transfer.File
	reloadRewritten bool
	// known are the files new by their path whose size and content are a
	// loaded file's (renamed, delivered again): recorded, not loaded;
	// loadedBefore is how many files incrc_files held for the pipeline.
	known        []transfer.File
	loadedBefore int
	// readOnly: the program only looks (incrc plan --target, incrc state):
	// files are not hashed, and a glob that matches nothing fails nothing.
	readOnly bool
	// filesNoted is the note the file list wrote: a failed run says
	// instead that it loaded nothing.
	filesNoted string
	// schemaMode says what ReadSchema steps do with what they find;
	// schema collects what they found (and applied, unless a dry run).
	schemaMode schemaMode
	schema     []SchemaChange
	// planned, when set, is what a run found before its setup, by schema
	// check step: those steps apply it instead of reading again.
	planned map[string][]SchemaChange
	// landed names the write transaction's steps that changed data and
	// completed, on an engine without transactions (each statement
	// commits alone): what a failed run leaves behind.
	landed []string
	// stateTx, when set, is an open transaction of the run's bookkeeping
	// (dialects.Caps.GroupState): the program's leading setup and state
	// steps join it, and the first other step commits it.
	stateTx *sql.Tx
}

// q is what a step outside the write transaction runs on.
func (m *machine) q() querier {
	if m.stateTx != nil {
		return m.stateTx
	}
	return m.conn
}

// endState commits the bookkeeping transaction, if one is open.
func (m *machine) endState() error {
	if m.stateTx == nil {
		return nil
	}
	err := m.stateTx.Commit()
	m.stateTx = nil
	if err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// joinsState: the step may run in the bookkeeping transaction.
func (m *machine) joinsState(s ir.Step) bool {
	if s.Tx || s.Each {
		return false
	}
	st := m.c.plan.Statement(s.Stmt)
	return st != nil && (st.Phase == ir.PhaseState || st.Phase == ir.PhaseSetup)
}

func newMachine(c *compiled, conn *sql.Conn, vals params) *machine {
	return &machine{c: c, conn: conn, vals: vals, rows: map[string][][]any{}}
}

// reg reads a register; a register nothing wrote is zero.
func (m *machine) reg(name string) int64 {
	n, _ := m.vals[name].(int64)
	return n
}

func (m *machine) add(name string, n int64) {
	if r, ok := strings.CutPrefix(name, "-"); ok {
		m.vals[r] = m.reg(r) - n
		return
	}
	m.vals[name] = m.reg(name) + n
}

// guard: every term of the step's If holds.
func (m *machine) guard(s ir.Step) bool {
	for _, g := range s.Guards() {
		if (m.reg(g.Reg) == 0) != g.Not {
			return false
		}
	}
	return true
}

// walk runs the program's steps. A failed step rolls back the open
// transaction and ends the walk; the cleanup is the caller's (it runs
// after a failure too).
func (m *machine) walk(ctx context.Context, pr *ir.Program) error {
	var tx *sql.Tx
	defer func() {
		if tx != nil {
			tx.Rollback()
		}
	}()
	steps := pr.Steps
	for i := 0; i < len(steps); {
		s := steps[i]
		if m.stateTx != nil && !m.joinsState(s) {
			if err := m.endState(); err != nil {
				return err
			}
		}
		switch {
		case s.Tx && tx == nil && m.c.d.Caps().Transactions:
			if err := m.betweenSteps(ctx); err != nil {
				return err
			}
			var err error
			if tx, err = m.conn.BeginTx(ctx, nil); err != nil {
				return fmt.Errorf("begin: %w", err)
			}
		case !s.Tx && tx != nil:
			if err := m.commit(tx); err != nil {
				return err
			}
			tx = nil
		}
		q := m.q()
		if tx != nil {
			q = tx
		} else if err := m.betweenSteps(ctx); err != nil {
			return err
		}
		if s.EachFile {
			for _, f := range m.recorded() {
				m.vals["path"], m.vals["size"], m.vals["mtime"], m.vals["content_hash"] = f.Rel, f.Size, f.Mtime, nullable(f.Hash)
				if err := m.step(ctx, q, s); err != nil {
					return fmt.Errorf("file %s: %w", f.Rel, err)
				}
			}
			i++
			continue
		}
		if !s.Each {
			if err := m.step(ctx, q, s); err != nil {
				return err
			}
			i++
			continue
		}
		// Consecutive Each steps in one transaction state repeat together,
		// once per partition, in the order listed.
		j := i
		for j < len(steps) && steps[j].Each && steps[j].Tx == s.Tx {
			j++
		}
		m.partsDone = 0
		for _, p := range m.parts {
			m.bindPartition(p)
			for _, each := range steps[i:j] {
				if err := m.step(ctx, q, each); err != nil {
					return fmt.Errorf("partition %s: %w", p.Key(grainOf(m.c.plan.Partition)), err)
				}
			}
			m.partsDone++
		}
		i = j
	}
	if tx != nil {
		err := m.commit(tx)
		tx = nil
		return err
	}
	return nil
}

func (m *machine) betweenSteps(ctx context.Context) error {
	if m.between == nil {
		return nil
	}
	return m.between(ctx)
}

// commit commits the write transaction; when the hook fails it rolls the
// transaction back, so that nothing of the failed program stays open on
// its connection (the failure's record runs on it next).
func (m *machine) commit(tx *sql.Tx) error {
	if m.hook != nil {
		if err := m.hook("commit"); err != nil {
			tx.Rollback()
			return fmt.Errorf("commit: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// step runs one statement and reads back what the step says.
func (m *machine) step(ctx context.Context, q querier, s ir.Step) error {
	if !m.guard(s) {
		return nil
	}
	if m.before != nil {
		m.before()
	}
	if m.progress != nil {
		m.progress(s.Stmt)
	}
	if m.hook != nil {
		if err := m.hook(s.Stmt); err != nil {
			return fmt.Errorf("%s: %w", s.Stmt, err)
		}
	}
	if s.Note != "" {
		m.note(s.Note)
	}
	c := m.c
	vals := m.vals
	if s.On == ir.OnSource {
		src, err := c.source(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", s.Stmt, err)
		}
		q, vals = src, c.sourceVals(s.Stmt, m.vals)
	}
	err := m.read(ctx, q, s, vals)
	if err == nil && s.Tx && s.On != ir.OnSource && !c.d.Caps().Transactions && changesData(s.Read) && !slices.Contains(m.landed, s.Stmt) {
		m.landed = append(m.landed, s.Stmt)
	}
	return err
}

// changesData: a step that reads this way may write (a statement that
// returns nothing, a write's count, a copy); the others only look.
func changesData(r ir.Read) bool {
	switch r {
	case ir.ReadNothing, ir.ReadAffected, ir.ReadCopy, ir.ReadHeld, ir.ReadSwap, ir.ReadCounts:
		return true
	}
	return false
}

// read runs a step's statement and reads back what the step says.
func (m *machine) read(ctx context.Context, q querier, s ir.Step, vals params) error {
	c := m.c
	switch s.Read {
	case ir.ReadNothing:
		return c.run(ctx, q, s.Stmt, vals)
	case ir.ReadAffected:
		n, err := c.exec(ctx, q, s.Stmt, vals)
		m.into(s, n)
		return err
	case ir.ReadCopy:
		n, err := m.copy(ctx, q, s, vals)
		m.into(s, n)
		return err
	case ir.ReadHeld:
		return m.quarantineHeld(ctx, q, s, vals)
	case ir.ReadNewFiles, ir.ReadAllFiles:
		return m.listFiles(ctx, q, s)
	case ir.ReadSwap:
		n, err := c.exec(ctx, q, s.Stmt, vals)
		if err == nil && n != 1 {
			err = fmt.Errorf("%s: the state of pipeline %s changed under this run, or its lease was lost (%d rows changed, expected 1): nothing committed", s.Stmt, c.plan.Pipeline, n)
		}
		return err
	case ir.ReadCount:
		n, _, err := c.count(ctx, q, s.Stmt, vals)
		if err != nil {
			return err
		}
		m.into(s, n)
		if s.Fail != "" && n != 0 {
			return fmt.Errorf(s.Fail, n)
		}
		return nil
	case ir.ReadCounts:
		ns, err := c.counts(ctx, q, s.Stmt, vals, len(s.Into))
		if err != nil {
			return err
		}
		for i, r := range s.Into {
			m.add(r, ns[i])
		}
		return nil
	case ir.ReadRows:
		rows, err := c.query(ctx, q, s.Stmt, vals)
		m.rows[s.Into[0]] = rows
		if err == nil && s.Fail != "" && len(rows) > 0 {
			return fmt.Errorf(s.Fail, keyText(c.plan.Key, rows[0]))
		}
		return err
	case ir.ReadPartitions:
		return m.partitions(ctx, q, s, vals)
	case ir.ReadColumns:
		cols, err := c.columns(ctx, q, s.Stmt, vals)
		for _, col := range cols {
			m.vals[s.Into[0]+strings.ToLower(col.Name)] = int64(1)
		}
		return err
	case ir.ReadSchema:
		return m.checkSchema(ctx, q, s)
	case ir.ReadTypes:
		cols, err := c.columns(ctx, q, s.Stmt, vals)
		if err != nil {
			return err
		}
		d := c.d
		if s.On == ir.OnSource {
			d = c.src
		}
		return checkTypes(c, d, cols)
	}
	return fmt.Errorf("%s: the runner does not know how to read %q", s.Stmt, s.Read)
}

// note adds to the run's note, which record_finish writes to the run log.
func (m *machine) note(text string) {
	if prev, _ := m.vals["note"].(string); prev != "" {
		text = prev + "; " + text
	}
	m.vals["note"] = text
}

func (m *machine) into(s ir.Step, n int64) {
	for _, r := range s.Into {
		m.add(r, n)
	}
}

// partitions reads (partition start, rows) pairs into the partition list.
func (m *machine) partitions(ctx context.Context, q querier, s ir.Step, vals params) error {
	pt := m.c.plan.Partition
	rows, err := m.c.query(ctx, q, s.Stmt, vals)
	if err != nil {
		return err
	}
	m.parts = nil
	for _, row := range rows {
		n, err := asInt(row[1])
		if err != nil {
			return fmt.Errorf("%s: %w", s.Stmt, err)
		}
		left := func(reg string) {
			m.add(reg, n)
			m.into(s, n)
		}
		if row[0] == nil {
			left(ir.RegUnpartitioned)
			continue
		}
		t, err := asTime(row[0])
		if err != nil {
			return fmt.Errorf("%s: %w", s.Stmt, err)
		}
		p := makePartition(t, grainOf(pt))
		if p.start.Before(m.finalBound) {
			left(ir.RegSkipped)
			continue
		}
		if n := len(m.parts); n > 0 && m.parts[n-1] == p {
			// Partitions in a zone come as UTC hours, in order: the
			// hours of one local day are one partition.
			continue
		}
		m.parts = append(m.parts, p)
	}
	m.vals[ir.RegPartitions] = int64(len(m.parts))
	return nil
}

// bindPartition sets plo and phi for one partition.
func (m *machine) bindPartition(p partition) {
	bindPartition(m.c, m.vals, p)
}

func bindPartition(c *compiled, vals params, p partition) {
	kind := c.plan.Partition.Type.Kind
	vals["plo"] = c.d.BindTime(p.start, kind)
	vals["phi"] = c.d.BindTime(p.end, kind)
	vals["partition_key"] = p.Key(grainOf(c.plan.Partition))
}

// checkTypes fails when a source column's type does not fit its declared
// type without loss: before anything is written, naming the column and
// both types. A type the dialect cannot read is not held against it.
func checkTypes(c *compiled, d dialects.Dialect, cols []dialects.ColumnInfo) error {
	typer, ok := d.(dialects.SourceTyper)
	if !ok {
		return nil
	}
	var problems []string
	for _, col := range cols {
		var declared *ir.Col
		for i := range c.plan.Columns {
			if strings.EqualFold(c.plan.Columns[i].Name, col.Name) {
				declared = &c.plan.Columns[i]
			}
		}
		if declared == nil {
			continue
		}
		src, ok := typer.SourceType(col)
		if !ok {
			continue
		}
		if fits, why := ir.Fits(src, declared.Type); !fits {
			problems = append(problems, fmt.Sprintf("column %s: the source's %s does not fit the declared %s without loss (%s): %s, or cast it in source.query",
				declared.Name, sourceTypeName(col), declared.Type, why, declareHint(declared.Name, src)))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s: %s", ir.StmtProbeSource, strings.Join(problems, "; "))
	}
	return nil
}

// declareHint names the spec type that holds the source's values, when
// the source's type has a portable spelling: a TIMESTAMP that is a point
// in time (MariaDB's, PostgreSQL's timestamptz) is the spec's timestamptz,
// which no one guesses from the engine's name for it.
func declareHint(column string, src ir.Type) string {
	if _, err := ir.ParseType(src.String()); err != nil || src.Kind == "" {
		return "declare a type that holds every source value"
	}
	hint := fmt.Sprintf("declare %s: %s in columns, a type that holds every source value", column, src)
	if src.Kind == ir.TimestampTZ {
		hint += " (the source's column is a point in time, which the engine converts to the session's time zone: timestamptz keeps the instant)"
	}
	return hint
}

func sourceTypeName(c dialects.ColumnInfo) string {
	name := c.TypeName
	switch strings.ToUpper(name) {
	case "NUMERIC", "DECIMAL":
		if !c.HasDecimal {
			return name
		}
		if c.Precision > 1000 {
			return name + " (unbounded)"
		}
		return fmt.Sprintf("%s(%d,%d)", name, c.Precision, c.Scale)
	case "VARCHAR", "BPCHAR":
		if c.HasLength && c.Length < 1<<20 {
			return fmt.Sprintf("%s(%d)", name, c.Length)
		}
	}
	return name
}

// keyText spells the first row of a ReadRows step that fails on a row: the
// key's columns, then a count, as "k=v, k2=v2 (n rows)".
func keyText(key []string, row []any) string {
	parts := make([]string, 0, len(key))
	for i, k := range key {
		if i < len(row) {
			parts = append(parts, k+"="+Canon(row[i]))
		}
	}
	text := strings.Join(parts, ", ")
	if len(row) > len(key) {
		text += " (" + Canon(row[len(key)]) + " rows)"
	}
	return text
}
