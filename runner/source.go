package runner

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects"
)

// sources are the databases a target's pipelines read outside it: the
// connections (source.connection), opened once and kept until the target
// closes, and the embedded DuckDB that reads files sources.
type sources struct {
	mu    sync.Mutex
	open  map[string]*Target // by connection name
	files *sql.DB            // an in-memory DuckDB: reads files, holds nothing
}

// sourceURL is the URL of a source connection.
func (t *Target) sourceURL(name string) (string, error) {
	if t.SourceURL != nil {
		return t.SourceURL(name)
	}
	url, ok := t.SourceURLs[name]
	if !ok {
		return "", fmt.Errorf("source.connection %s: no URL for it: add it to connections: in incrc.yaml, or give --source %s=URL", name, name)
	}
	return url, nil
}

// sourceDialect names the dialect of a connection from its URL.
func (t *Target) sourceDialect(name string) (string, bool) {
	url, err := t.sourceURL(name)
	if err != nil {
		return "", false
	}
	return ir.DialectOfURL(url)
}

// sourceConn pins a connection of the source of a plan: the named
// connection's database, or the files reader.
func (t *Target) sourceConn(ctx context.Context, f *ir.Foreign) (*sql.Conn, error) {
	t.src.mu.Lock()
	defer t.src.mu.Unlock()
	if f.Files != "" {
		if t.src.files == nil {
			db, err := openDuckDB("")
			if err != nil {
				return nil, fmt.Errorf("open the files reader (an in-memory DuckDB): %w", err)
			}
			t.src.files = db
		}
		return t.src.files.Conn(ctx)
	}
	st, ok := t.src.open[f.Connection]
	if !ok {
		url, err := t.sourceURL(f.Connection)
		if err != nil {
			return nil, err
		}
		t.scrub.Add(url)
		if st, err = Open(ctx, t.known, url, f.Dialect, DriverLog(t.driverLog)); err != nil {
			return nil, fmt.Errorf("source.connection %s: %w", f.Connection, err)
		}
		if t.src.open == nil {
			t.src.open = map[string]*Target{}
		}
		t.src.open[f.Connection] = st
	}
	conn, err := st.DB.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("source.connection %s: connect to %s: %w", f.Connection, st.URL, err)
	}
	return conn, nil
}

// closeSources closes what sourceConn opened.
func (t *Target) closeSources() {
	t.src.mu.Lock()
	defer t.src.mu.Unlock()
	for name, st := range t.src.open {
		st.Close()
		delete(t.src.open, name)
	}
	if t.src.files != nil {
		t.src.files.Close()
		t.src.files = nil
	}
}

// sourceOf is the dialect of a plan's source outside the target (nil when
// it is in the target).
func (t *Target) sourceOf(plan *ir.Plan) (dialects.Dialect, error) {
	if f := plan.From; f != nil && f.Connection != "" && f.Dialect == "" {
		// The URL says the dialect: an unknown connection or an unset
		// ${ENV} in it is the error to show.
		if _, err := t.sourceURL(f.Connection); err != nil {
			return nil, err
		}
	}
	return dialects.Source(plan, t.known, t.sourceDialect)
}

// source returns the pinned connection to the plan's source, opening it
// on first use. Sessions release it with release.
func (c *compiled) source(ctx context.Context) (*sql.Conn, error) {
	if c.srcConn != nil {
		return c.srcConn, nil
	}
	if c.openSource == nil {
		return nil, fmt.Errorf("pipeline %s: its source is outside the target and no source is open", c.plan.Pipeline)
	}
	conn, err := c.openSource(ctx)
	if err != nil {
		return nil, err
	}
	c.srcConn = conn
	return conn, nil
}

// release gives back the source's connection, when one was pinned.
func (c *compiled) release() {
	if c.srcConn != nil {
		c.srcConn.Close()
		c.srcConn = nil
	}
}

// sourceVals are the values of a statement that runs on the source: the
// times of the window, partitions and bounds bound as the source's engine
// reads them (the target's spelling of a time, SQLite's text, is not
// necessarily the source's).
func (c *compiled) sourceVals(name string, vals params) params {
	st, ok := c.stmts[name]
	if !ok || st.On != ir.OnSource || c.src == nil {
		return vals
	}
	out := make(params, len(vals))
	for k, v := range vals {
		out[k] = v
	}
	for _, p := range st.Params {
		var typ *ir.Type
		switch p.Type {
		case ir.PWatermark:
			if c.plan.Watermark != nil {
				typ = &c.plan.Watermark.Type
			}
		case ir.PPartition:
			if c.plan.Partition != nil {
				typ = &c.plan.Partition.Type
			}
		case ir.PBound:
			for i := range c.plan.Columns {
				if c.plan.Columns[i].Name == c.plan.ReconcileBy {
					typ = &c.plan.Columns[i].Type
				}
			}
		}
		if typ == nil || !typ.IsTime() {
			continue
		}
		switch v := out[p.Name].(type) {
		case time.Time:
			out[p.Name] = c.src.BindTime(v, typ.Kind)
		case string:
			if t, err := parseBoundText(v); err == nil {
				out[p.Name] = c.src.BindTime(t, typ.Kind)
			}
		}
	}
	return out
}

// parseBoundText reads a time the target bound as text (SQLite's).
func parseBoundText(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02 15:04:05.999999999", "2006-01-02", time.RFC3339Nano} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not a time: %q", s)
}
