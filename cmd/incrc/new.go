package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/runner"
)

var pipelineNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func newCmd() *command {
	c := &command{
		name:    "new",
		summary: "Write the spec of one pipeline: from flags, or from a source table's columns and key (--from-table).",
		usage:   "PIPELINE --strategy S --source SCHEMA.TABLE [flags]",
		example: "incrc new dw_orders --strategy merge --source app.orders --key order_id --watermark updated_at \\\n  --columns order_id:bigint,order_date:date,amount:decimal(12,2),updated_at:timestamp\n" +
			"incrc new dw_orders --strategy merge --source app.orders --from-table --target duckdb:wh.duckdb   # columns and key from the catalog",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var (
			p         projectFlags
			tf        targetFlags
			o         newSpec
			fromTable bool
			columns   string
			out       string
			output    outputFlags
		)
		fs := c.flags(e)
		fs.StringVar(&o.strategy, "strategy", "", "append, merge, overwrite_partitions, full_refresh, cdc or scd2")
		fs.StringVar(&o.source, "source", "", "the source table, schema.table")
		fs.StringVar(&o.targetTable, "target-table", "", "the table the pipeline writes (default: dw.<the source's table name>)")
		fs.StringVar(&columns, "columns", "", "the columns: name:type,name:type (types as in a spec: bigint, decimal(12,2), timestamp, ...)")
		fs.BoolVar(&fromTable, "from-table", false, "read the source table's columns and primary key from the catalog of --target")
		fs.StringVar(&o.key, "key", "", "unique_key: comma-separated columns (default with --from-table: the primary key)")
		fs.StringVar(&o.watermark, "watermark", "", "watermark column (default with --from-table: a timestamp column named like updated_at)")
		fs.StringVar(&o.start, "start", "", "watermark.start (default: the first of this month, UTC)")
		fs.StringVar(&o.partition, "partition", "", "overwrite_partitions: the partition column (a date or timestamp)")
		fs.StringVar(&out, "out", "", "the file to write (default: the specs folder's PIPELINE.yaml, without a dw_ prefix)")
		tf.register(fs, "with --from-table: the database that holds the source (a URL, or a target named in incrc.yaml)")
		output.register(fs)
		p.register(fs)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		format, ok := output.resolve(c, e)
		if !ok {
			return exitError
		}
		if fs.NArg() != 1 {
			return c.fail(e, "name the pipeline, as in  incrc new dw_orders --strategy merge --source app.orders")
		}
		o.pipeline = fs.Arg(0)
		switch {
		case !pipelineNameRe.MatchString(o.pipeline):
			return c.fail(e, "pipeline %q: use [a-z][a-z0-9_]*", o.pipeline)
		case !contains(compilerStrategies, o.strategy):
			return c.fail(e, "--strategy %q: expected one of %s", o.strategy, strings.Join(compilerStrategies, ", "))
		case strings.Count(o.source, ".") != 1:
			return c.fail(e, "--source %q: name the source table as schema.table", o.source)
		case !fromTable && tf.target != "":
			return c.fail(e, "--target is the database --from-table reads (as on every command); the table the pipeline writes is --target-table")
		case fromTable && columns != "":
			return c.fail(e, "--from-table and --columns: one at a time")
		case !fromTable && columns == "":
			return c.fail(e, "say the columns: --columns name:type,... or --from-table (with --target) to read them from the catalog")
		case fromTable && tf.target == "":
			return c.fail(e, "--from-table reads the catalog of --target: name the database that holds %s", o.source)
		}
		if o.targetTable == "" {
			o.targetTable = "dw." + o.source[strings.IndexByte(o.source, '.')+1:]
		}
		if o.start == "" {
			now := e.now().UTC()
			o.start = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
		}
		cfg, err := compiler.LoadConfig(p.config, e.getenv)
		if err != nil {
			fmt.Fprintln(e.stderr, err)
			return exitError
		}
		e.keepSecrets(cfg)
		if fromTable {
			if code := o.describe(ctx, c, e, cfg, tf); code != exitOK {
				return code
			}
		} else if err := o.parseColumns(columns); err != nil {
			return c.fail(e, "--columns: %v", err)
		}
		if out == "" {
			dir := cfg.Specs
			if len(p.specs) == 1 {
				dir = p.specs[0]
			}
			out = filepath.Join(dir, strings.TrimPrefix(o.pipeline, "dw_")+".yaml")
		}
		text, err := o.yaml()
		if err != nil {
			return c.fail(e, "write the spec: %v", err)
		}
		// What it writes validates: a spec that does not is not written.
		s, perr := compiler.Parse(out, []byte(text))
		diags := compiler.Validate(s)
		if perr != nil || len(diags) > 0 {
			if perr != nil {
				fmt.Fprintln(e.stderr, perr)
			}
			for _, d := range diags {
				fmt.Fprintln(e.stderr, d)
			}
			return c.fail(e, "the spec would not validate, so %s is not written: the flags --key, --watermark, --partition, --columns say what the catalog could not", out)
		}
		if _, err := os.Lstat(out); err == nil {
			return c.fail(e, "%s exists: incrc new never overwrites (--out names another file)", out)
		}
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return c.fail(e, "%v", err)
		}
		f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return c.fail(e, "%v", err)
		}
		_, werr := f.WriteString(text)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return c.fail(e, "%v", werr)
		}
		if format == "json" {
			json.NewEncoder(e.stdout).Encode(map[string]any{"file": out, "pipeline": o.pipeline, "strategy": o.strategy, "columns": len(o.cols)})
			return exitOK
		}
		fmt.Fprintf(e.stdout, "wrote %s (%s, %d columns); next: incrc validate, and a test in %s\n", out, o.strategy, len(o.cols), strings.TrimSuffix(out, ".yaml")+".test.yaml")
		return exitOK
	}
	return c
}

// compilerStrategies are the strategies a spec may name.
var compilerStrategies = func() []string {
	for _, k := range compiler.SpecKeys {
		if k.Name == "strategy" {
			return k.Enum
		}
	}
	return nil
}()

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// newSpec is what incrc new knows of the pipeline it writes.
type newSpec struct {
	pipeline, strategy, source, targetTable string
	key, watermark, start, partition        string
	cols                                    []newColumn
	note                                    string // where the columns came from
}

type newColumn struct {
	name, typ string
	comment   string
}

func (o *newSpec) parseColumns(s string) error {
	// decimal(12,2) holds a comma: split on commas outside parentheses.
	depth, start := 0, 0
	var parts []string
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	parts = append(parts, s[start:])
	for _, p := range parts {
		name, typ, ok := strings.Cut(strings.TrimSpace(p), ":")
		if !ok || name == "" || typ == "" {
			return fmt.Errorf("%q: write name:type, as in order_id:bigint", p)
		}
		if _, err := compiler.ParseType(typ); err != nil {
			return fmt.Errorf("column %s: %v", name, err)
		}
		o.cols = append(o.cols, newColumn{name: name, typ: typ})
	}
	o.note = "the columns given on the command line"
	return nil
}

// describe reads the columns and key of the source table from the catalog.
func (o *newSpec) describe(ctx context.Context, c *command, e *env, cfg *compiler.Config, tf targetFlags) int {
	tg, code := c.open(ctx, e, cfg, tf, "")
	if code != exitOK {
		return code
	}
	defer tg.Close()
	info, err := tg.Describe(ctx, compiler.Table{Parts: strings.Split(o.source, ".")})
	if err != nil {
		return c.fail(e, "--from-table: %v", err)
	}
	for _, col := range info.Columns {
		nc := newColumn{name: col.Name}
		if col.Type.Kind == "" {
			nc.typ = "text"
			nc.comment = fmt.Sprintf("the source's %s has no portable type: declare one that holds it, or cast it in a source.query", col.TypeName)
		} else {
			nc.typ = col.Type.String()
		}
		o.cols = append(o.cols, nc)
	}
	if o.key == "" {
		o.key = strings.Join(info.Key, ", ")
	}
	if o.watermark == "" {
		o.watermark = guessWatermark(info.Columns)
	}
	o.note = fmt.Sprintf("the catalog of %s (incrc new --from-table)", tg.URL)
	return exitOK
}

// guessWatermark picks the column that most likely grows when a row
// changes: a timestamp named like updated_at; else like ingested_at.
func guessWatermark(cols []runner.TableColumn) string {
	for _, words := range [][]string{{"updated", "modified", "changed"}, {"ingested", "loaded", "inserted", "committed"}} {
		for _, c := range cols {
			if !c.Type.IsTime() {
				continue
			}
			for _, w := range words {
				if strings.Contains(strings.ToLower(c.Name), w) {
					return c.Name
				}
			}
		}
	}
	return ""
}

// yaml writes the spec, commented, in the form incrc init's examples
// have, through the YAML library's encoder: a name from a catalog is a
// value it quotes as it must ("note: text\n  amount" stays one column's
// name, which validation then refuses), never text spliced into YAML.
func (o *newSpec) yaml() (string, error) {
	str := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }
	plain := func(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }
	mapping := func() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }
	set := func(m *yaml.Node, key string, v *yaml.Node, comment string) {
		if comment != "" {
			v.LineComment = "# " + excerpt(comment)
		}
		m.Content = append(m.Content, str(key), v)
	}
	table := func(name string) *yaml.Node {
		m := mapping()
		set(m, "table", str(name), "")
		return m
	}
	doc := mapping()
	doc.HeadComment = "# yaml-language-server: $schema=../incrc.schema.json\n# Written by incrc new from " + excerpt(o.note) + ": read it, then incrc validate."
	set(doc, "pipeline", str(o.pipeline), "")
	set(doc, "source", table(o.source), "")
	set(doc, "target", table(o.targetTable), "")
	cols := mapping()
	for _, c := range o.cols {
		set(cols, c.name, plain(c.typ), c.comment)
	}
	set(doc, "columns", cols, "")
	set(doc, "strategy", str(o.strategy), "")
	if o.key != "" {
		key := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, k := range strings.Split(o.key, ",") {
			key.Content = append(key.Content, str(strings.TrimSpace(k)))
		}
		set(doc, "unique_key", key, "")
	}
	if o.watermark != "" && o.strategy != "full_refresh" {
		wm := mapping()
		set(wm, "column", str(o.watermark), "")
		set(wm, "start", plain(o.start), "")
		if o.strategy != "append" {
			set(wm, "lookback", plain("1h"), "re-read behind the watermark: rows committed late")
		}
		set(wm, "lag", plain("5m"), "")
		set(doc, "watermark", wm, "")
	}
	if o.partition != "" {
		part := mapping()
		set(part, "column", str(o.partition), "")
		set(part, "granularity", plain("day"), "")
		set(doc, "partition", part, "")
	}
	switch o.strategy {
	case "cdc":
		cdc := mapping()
		set(cdc, "op", str("op"), "the column holding the op code (c r / u / d)")
		set(cdc, "sequence", str("lsn"), "the column that orders a key's changes")
		set(doc, "cdc", cdc, "")
	case "scd2":
		scd := mapping()
		if o.watermark == "" {
			set(scd, "by", plain("columns"), "a version opens at the run's hi when a column changes")
			set(scd, "deletes", plain("close"), "")
		} else {
			set(scd, "by", plain("time"), "each row's "+o.watermark+" is when its version became true")
		}
		set(doc, "scd2", scd, "")
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}
