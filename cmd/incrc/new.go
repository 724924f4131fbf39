package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/incrc/incrc/compiler/ir"

	"go.yaml.in/yaml/v3"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/runner"
)

var pipelineNameRe = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func newCmd() *command {
	c := &command{
		name:    "new",
		summary: "Write the spec of one pipeline: from flags, or from a source table (--from-table: its columns, key, a recommended watermark and start).",
		usage:   "PIPELINE --strategy S --source SCHEMA.TABLE [flags]",
		example: "incrc new dw_orders --strategy merge --source app.orders --key order_id --watermark updated_at \\\n  --columns order_id:bigint,order_date:date,amount:decimal(12,2),updated_at:timestamp\n" +
			"incrc new dw_orders --source app.orders --from-table --target duckdb:wh.duckdb   # columns, key, watermark and start from the table",
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
		fs.StringVar(&o.strategy, "strategy", "", "append, merge, overwrite_partitions, full_refresh, cdc or scd2 (default with --from-table: the one the table's columns recommend)")
		fs.StringVar(&o.source, "source", "", "the source table, schema.table")
		fs.StringVar(&o.targetTable, "target-table", "", "the table the pipeline writes (default: dw.<the source's table name>)")
		fs.StringVar(&columns, "columns", "", "the columns: name:type,name:type (types as in a spec: bigint, decimal(12,2), timestamp, ...)")
		fs.BoolVar(&fromTable, "from-table", false, "read the source table's columns and primary key from the catalog of --target")
		fs.StringVar(&o.key, "key", "", "unique_key: comma-separated columns (default with --from-table: the primary key)")
		fs.StringVar(&o.watermark, "watermark", "", "watermark column (default with --from-table: the best candidate, a change time such as updated_at first)")
		fs.StringVar(&o.start, "start", "", "watermark.start (default with --from-table: the watermark column's oldest value; else the first of this month, UTC)")
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
		case o.strategy == "" && !fromTable:
			return c.fail(e, "say the strategy: --strategy %s (or --from-table, which recommends one from the table's columns)", strings.Join(compilerStrategies, "|"))
		case o.strategy != "" && !contains(compilerStrategies, o.strategy):
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
		startGiven := o.start != ""
		cfg, err := compiler.LoadConfig(p.config, e.getenv)
		if err != nil {
			fmt.Fprintln(e.stderr, err)
			return exitError
		}
		e.keepSecrets(cfg)
		if fromTable {
			if code := o.describe(ctx, c, e, cfg, tf, startGiven); code != exitOK {
				return code
			}
		} else if err := o.parseColumns(columns); err != nil {
			return c.fail(e, "--columns: %v", err)
		}
		if o.start == "" {
			now := e.now().UTC()
			o.start = time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).Format("2006-01-02")
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
			if fromTable {
				o.explain(e.stderr)
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
		show(e.stdout, format, newView{spec: &o, file: out, fromTable: fromTable})
		return exitOK
	}
	return c
}

// newView is what incrc new prints: the file written and, for a spec read
// from a table, what the catalog and the rows said.
type newView struct {
	spec      *newSpec
	file      string
	fromTable bool
}

func (v newView) json() any {
	o := v.spec
	res := map[string]any{"file": v.file, "pipeline": o.pipeline, "strategy": o.strategy, "columns": len(o.cols)}
	if v.fromTable {
		res["rows"] = o.rows
		res["watermark"] = o.watermark
		res["start"] = o.start
		res["why"] = o.why
		res["candidates"] = orNoCandidates(o.candidates)
		res["nullable"] = orEmpty(o.nullable)
	}
	return res
}

func (v newView) text(w io.Writer) {
	o := v.spec
	if v.fromTable {
		o.explain(w)
	}
	fmt.Fprintf(w, "wrote %s (%s, %d columns); next: incrc validate, and a test in %s\n", v.file, o.strategy, len(o.cols), strings.TrimSuffix(v.file, ".yaml")+".test.yaml")
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
	// What --from-table read and recommends.
	rows       int64
	candidates []candidate
	why        string   // the strategy and watermark picked, and why
	startWhy   string   // where watermark.start comes from
	nullable   []string // the columns that hold NULLs, with how many
}

type newColumn struct {
	name, typ string
	comment   string
	nulls     int64 // rows holding NULL (--from-table)
	key       bool  // a unique_key column
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
		if _, err := ir.ParseType(typ); err != nil {
			return fmt.Errorf("column %s: %v", name, err)
		}
		o.cols = append(o.cols, newColumn{name: name, typ: typ})
	}
	o.note = "the columns given on the command line"
	return nil
}

// describe reads the columns and key of the source table from the
// catalog, then one aggregate of its rows (the NULLs of each column, the
// oldest value of each watermark candidate), and recommends: a strategy
// when none was given, the watermark, and its start.
func (o *newSpec) describe(ctx context.Context, c *command, e *env, cfg *compiler.Config, tf targetFlags, startGiven bool) int {
	tg, code := c.open(ctx, e, cfg, tf, "")
	if code != exitOK {
		return code
	}
	defer tg.Close()
	table := ir.Table{Parts: strings.Split(o.source, ".")}
	info, err := tg.Describe(ctx, table)
	if err != nil {
		return c.fail(e, "--from-table: %v", err)
	}
	keyGiven := o.key != ""
	if !keyGiven {
		o.key = strings.Join(info.Key, ", ")
	}
	var names, mins []string
	for _, col := range info.Columns {
		names = append(names, col.Name)
		if col.Type.IsTime() || col.Type.IsInteger() {
			mins = append(mins, col.Name)
		}
	}
	prof, err := tg.Profile(ctx, table, names, mins)
	if err != nil {
		return c.fail(e, "--from-table: read the rows of %s: %v", o.source, err)
	}
	o.rows = prof.Rows
	key := splitKey(o.key)
	for _, col := range info.Columns {
		nc := newColumn{name: col.Name}
		if col.Type.Kind == "" {
			nc.typ = "text"
			nc.comment = fmt.Sprintf("the source's %s has no portable type: declare one that holds it, or cast it in a source.query", col.TypeName)
		} else {
			nc.typ = col.Type.String()
		}
		if n := prof.Nulls[col.Name]; n > 0 {
			nc.nulls = n
			o.nullable = append(o.nullable, fmt.Sprintf("%s (%d of %d rows)", excerpt(col.Name), n, prof.Rows))
		}
		nc.key = contains(key, col.Name)
		o.cols = append(o.cols, nc)
	}
	o.candidates = rankWatermarks(info, prof)
	if code := o.recommend(c, e, info, prof); code != exitOK {
		return code
	}
	if o.watermark != "" && !startGiven {
		o.start, o.startWhy = startFrom(o.watermark, info, prof, e.now())
	}
	o.note = fmt.Sprintf("the catalog of %s (incrc new --from-table)", tg.URL)
	return exitOK
}

func splitKey(s string) []string {
	var out []string
	for _, k := range strings.Split(s, ",") {
		if k = strings.TrimSpace(k); k != "" {
			out = append(out, k)
		}
	}
	return out
}

// candidate is a column a watermark could be, with what it is taken for.
type candidate struct {
	Column string `json:"column"`
	Type   string `json:"type"`
	Kind   string `json:"kind"` // change time, creation time, monotonic id, other time
	Reason string `json:"reason"`
	Nulls  int64  `json:"nulls"`
	Picked bool   `json:"picked,omitempty"`
}

func orNoCandidates(c []candidate) []candidate {
	if c == nil {
		return []candidate{}
	}
	return c
}

// The kinds of candidate, best first: how practitioners choose a
// watermark. A change time sees every update (mutable rows, merged by
// key); a creation time or an id assigned in order sees only new rows
// (rows that never change, appended); a time named like neither may be a
// business date, set once and never a sign of change, so it is listed and
// never picked.
const (
	kindChange   = "change time"
	kindCreation = "creation time"
	kindID       = "monotonic id"
	kindOther    = "other time"
)

var (
	changeLike   = regexp.MustCompile(`(?i)(updated|modified|changed|last_?upd|last_?mod|mtime|etl|loaded|ingested|synced|refreshed|touched)`)
	creationLike = regexp.MustCompile(`(?i)(created|inserted|creation|added|occurred|recorded|received|logged|event_?(time|ts|at)|(^|_)(ts|timestamp)$)`)
	idLike       = regexp.MustCompile(`(?i)^(id|seq|sequence|lsn|offset|serial|row_?id|.*_(id|seq|sequence|lsn|offset))$`)
)

// rankWatermarks lists the columns a watermark could be, best first; a
// column that is NULL in every row is no candidate (it is in no window).
func rankWatermarks(info *runner.TableInfo, prof *runner.TableProfile) []candidate {
	rank := map[string]int{kindChange: 0, kindCreation: 1, kindID: 2, kindOther: 3}
	var out []candidate
	soleIntKey := len(info.Key) == 1
	for _, col := range info.Columns {
		nulls := prof.Nulls[col.Name]
		if prof.Rows > 0 && nulls == prof.Rows {
			continue
		}
		cd := candidate{Column: col.Name, Type: col.Type.String(), Nulls: nulls}
		switch {
		case col.Type.IsTime() && changeLike.MatchString(col.Name):
			cd.Kind, cd.Reason = kindChange, "moves when a row changes: a merge by the key sees every update"
		case col.Type.IsTime() && creationLike.MatchString(col.Name):
			cd.Kind, cd.Reason = kindCreation, "never moves when a row changes: for rows that never change (append)"
		case col.Type.IsInteger() && soleIntKey && info.Key[0] == col.Name:
			cd.Kind, cd.Reason = kindID, "the integer primary key: grows if ids are assigned in order; for rows that never change (append)"
		case col.Type.IsInteger() && len(info.Key) == 0 && idLike.MatchString(col.Name):
			cd.Kind, cd.Reason = kindID, "an integer named like an id: grows if ids are assigned in order; for rows that never change (append)"
		case col.Type.IsTime():
			cd.Kind, cd.Reason = kindOther, "named like neither a change nor a creation time (a business date?): never picked"
		default:
			continue
		}
		if nulls > 0 {
			cd.Reason += fmt.Sprintf("; NULL in %d row(s), which no window reads", nulls)
		}
		out = append(out, cd)
	}
	sort.SliceStable(out, func(i, j int) bool {
		ri, rj := rank[out[i].Kind], rank[out[j].Kind]
		if ri != rj {
			return ri < rj
		}
		// A column with no NULL first: every row is in a window.
		return out[i].Nulls == 0 && out[j].Nulls > 0
	})
	return out
}

// recommend picks the strategy (when --strategy was not given) and the
// watermark (when --watermark was not), saying why in o.why.
func (o *newSpec) recommend(c *command, e *env, info *runner.TableInfo, prof *runner.TableProfile) int {
	best := func(kinds ...string) *candidate {
		for _, k := range kinds {
			for i := range o.candidates {
				if o.candidates[i].Kind == k {
					return &o.candidates[i]
				}
			}
		}
		return nil
	}
	keyed := o.key != ""
	if o.watermark != "" {
		for i := range o.candidates {
			o.candidates[i].Picked = o.candidates[i].Column == o.watermark
		}
		if o.strategy == "" {
			return c.fail(e, "--watermark %s: say the strategy too (--strategy), or leave both to --from-table", o.watermark)
		}
		o.why = fmt.Sprintf("strategy %s and watermark %s, as given", o.strategy, excerpt(o.watermark))
		return exitOK
	}
	var pick *candidate
	switch o.strategy {
	case "":
		switch ch := best(kindChange); {
		case ch != nil && keyed:
			o.strategy, pick = "merge", ch
			o.why = fmt.Sprintf("strategy merge by %s, watermark %s: the rows change (%s), and the primary key says which row a change replaces", excerpt(o.key), excerpt(ch.Column), excerpt(ch.Column))
		case ch != nil:
			o.strategy = "full_refresh"
			o.why = fmt.Sprintf("strategy full_refresh: the rows change (%s), and without a primary key no merge can tell which row a change replaces (name one with --key and --strategy merge)", excerpt(ch.Column))
		default:
			if pick = best(kindCreation, kindID); pick != nil {
				o.strategy = "append"
				o.why = fmt.Sprintf("strategy append, watermark %s: no column is named like a change time, so the rows are taken to never change, and new rows are read by their %s", excerpt(pick.Column), pick.Kind)
			} else {
				o.strategy = "full_refresh"
				o.why = "strategy full_refresh: no column is a change time, a creation time or an integer key, so a run cannot tell new rows from old; each run rebuilds the target"
			}
		}
	case "merge", "cdc", "scd2":
		if pick = best(kindChange); pick == nil && o.strategy == "merge" {
			o.explain(e.stderr)
			return c.fail(e, "--strategy merge: no column of %s is named like a change time, and a merge must see the rows that change: name the column every update sets with --watermark, or use --strategy full_refresh", excerpt(o.source))
		}
	case "append", "overwrite_partitions":
		pick = best(kindCreation, kindID, kindChange)
	}
	if pick != nil {
		pick.Picked = true
		o.watermark = pick.Column
		if o.why == "" {
			o.why = fmt.Sprintf("strategy %s, watermark %s: the best %s for it", o.strategy, excerpt(pick.Column), pick.Kind)
		}
	} else if o.why == "" {
		o.why = fmt.Sprintf("strategy %s, no watermark: no column suits one", o.strategy)
	}
	return exitOK
}

// startFrom is watermark.start: the column's oldest value (a time's UTC
// day), so that the first run reads the whole history; today, said so,
// when the table holds no value yet.
func startFrom(column string, info *runner.TableInfo, prof *runner.TableProfile, now time.Time) (start, why string) {
	var typ ir.Type
	for _, c := range info.Columns {
		if c.Name == column {
			typ = c.Type
		}
	}
	v, ok := prof.Min[column]
	if ok && typ.IsInteger() {
		return runner.Canon(v), "its smallest value"
	}
	if ok {
		if t, err := ir.ParseTime(runner.Canon(v)); err == nil {
			return t.UTC().Format("2006-01-02"), "the day of its oldest value, " + runner.Canon(v)
		}
	}
	if typ.IsInteger() {
		return "0", "the table holds no value yet: rows with an id below 0 would never be read"
	}
	return now.UTC().Format("2006-01-02"), "today: the table holds no value yet, and rows dated earlier would never be read"
}

// explain prints what --from-table read and why it chose what it chose.
func (o *newSpec) explain(w io.Writer) {
	fmt.Fprintf(w, "%s: %d row(s).", o.source, o.rows)
	if len(o.candidates) == 0 {
		fmt.Fprintln(w, " No watermark candidate: no time column, no integer key.")
	} else {
		fmt.Fprintln(w, " Watermark candidates, best first:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, cd := range o.candidates {
			mark := ""
			if cd.Picked {
				mark = "  <- picked"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s%s\n", excerpt(cd.Column), cd.Type, cd.Kind, cd.Reason, mark)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "Picked %s.\n", o.why)
	if o.watermark != "" && o.startWhy != "" {
		fmt.Fprintf(w, "watermark.start %s: %s.\n", o.start, excerpt(o.startWhy))
	}
	if len(o.nullable) > 0 {
		fmt.Fprintf(w, "Written nullable, as they hold NULLs: %s.\n", strings.Join(o.nullable, ", "))
	}
}

// columnType is the declared type of a column (the zero Type when the
// column is not declared, or its type does not parse).
func (o *newSpec) columnType(name string) ir.Type {
	for _, c := range o.cols {
		if c.name == name {
			t, _ := ir.ParseType(c.typ)
			return t
		}
	}
	return ir.Type{}
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
		if c.nulls == 0 || (c.key && (o.strategy == "cdc" || o.strategy == "scd2")) {
			// A change log's key, and a version's, is never NULL:
			// validation says so, naming the column.
			set(cols, c.name, plain(c.typ), c.comment)
			continue
		}
		// The source holds NULLs here. For a key column it matters: the
		// key matches NULL-safely, rather than the rows being refused.
		m := &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		set(m, "type", plain(c.typ), "")
		set(m, "nullable", plain("true"), "")
		set(cols, c.name, m, c.comment)
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
		set(wm, "start", plain(o.start), excerpt(o.startWhy))
		// An integer's window ends at the largest id present: no lag, and
		// a lookback would be a count of ids. A date's window is whole
		// days.
		switch kind := o.columnType(o.watermark).Kind; {
		case o.columnType(o.watermark).IsInteger():
		case kind == ir.Date:
			if o.strategy != "append" {
				set(wm, "lookback", plain("1d"), "re-read behind the watermark: rows committed late")
			}
		default:
			if o.strategy != "append" {
				set(wm, "lookback", plain("1h"), "re-read behind the watermark: rows committed late")
			}
			set(wm, "lag", plain("5m"), "")
		}
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
