package compiler

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/incrc/incrc/compiler/ir"

	"go.yaml.in/yaml/v3"
)

// MaxSpecSize bounds a spec file. A pipeline spec is a page of YAML; a
// file a thousand times larger is a mistake (a data file in the specs
// folder), and refusing it keeps validation fast on any input.
const MaxSpecSize = 1 << 20

// Parse reads one spec file. It reports every structural problem at once
// (unknown keys, wrong shapes, bad scalars); Validate checks the meaning.
// The returned spec is usable for positions even when err is not nil; its
// Pos is zero when the file holds no mapping to validate.
func Parse(file string, data []byte) (*Spec, error) {
	sum := sha256.Sum256(data)
	s := &Spec{File: file, Hash: hex.EncodeToString(sum[:])}
	p := &parser{file: file, src: data, reported: map[string]bool{}}
	s.reported = p.reported
	if len(data) > MaxSpecSize {
		p.diags.add(ir.Pos{File: file, Line: 1, Col: 1}, "the file is %d bytes, more than a spec can be (%d): is it a pipeline spec?", len(data), MaxSpecSize)
		return s, p.diags.Err()
	}
	root, ok := p.document(data, "a spec file holds one pipeline: found a second YAML document; move it to a file of its own")
	if !ok {
		return s, p.diags.Err()
	}
	before := len(p.diags)
	if p.visible(root); len(p.diags) > before {
		return s, p.diags.Err() // what a reviewer cannot see, first
	}
	if root == nil {
		p.diags.add(ir.Pos{File: file, Line: 1, Col: 1}, "the file is empty: a spec needs at least pipeline, source, target, columns and strategy")
		return s, p.diags.Err()
	}
	if root.Kind != yaml.MappingNode {
		p.diags.add(p.pos(root), "a spec is a mapping of keys (pipeline:, source:, target:, ...), got %s", kindName(root))
		return s, p.diags.Err()
	}
	if !p.specLike(root) {
		return s, p.diags.Err()
	}
	s.Pos = p.pos(root)
	p.spec(s, root)
	return s, p.diags.Err()
}

// specLike reports a mapping none of whose keys is a spec's as one error,
// instead of one "unknown key" per line: a file that is not a spec (a
// credentials file named *.yaml) is not echoed line by line into a log.
func (p *parser) specLike(root *yaml.Node) bool {
	for i := 0; i+1 < len(root.Content); i += 2 {
		if contains(specKeys, root.Content[i].Value) {
			return true
		}
	}
	if len(root.Content) == 0 {
		return true // {}: every key is missing, as validation says
	}
	first := root.Content[0]
	p.diags.add(p.pos(root), "not a pipeline spec: none of its %d key(s) is a key of a spec (the first, on line %d, begins %s); a spec has pipeline:, source:, target:, columns: and strategy:",
		len(root.Content)/2, first.Line, excerpt(first.Value, 12))
	return false
}

// document decodes the single YAML document of a file. It returns nil and
// true for a file without content (empty, comments only, or "---"), and
// false after reporting a syntax error.
func (p *parser) document(data []byte, second string) (*yaml.Node, bool) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, true
		}
		pos, msg := p.yamlError(err)
		p.diags.add(pos, "invalid YAML: %s", msg)
		return nil, false
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		p.diags.add(p.pos(&extra), "%s", second)
	} else if !errors.Is(err, io.EOF) {
		pos, msg := p.yamlError(err)
		p.diags.add(pos, "invalid YAML: %s", msg)
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	if root.Kind == yaml.ScalarNode && root.Tag == "!!null" && root.Value == "" {
		return nil, true
	}
	return root, true
}

type parser struct {
	file     string
	src      []byte // the file, to find what a YAML error or a string offset points at
	diags    Diagnostics
	reported map[string]bool   // see Spec.reported
	split    map[ir.Pos]string // a type a flow mapping split at its comma, whole (joinFlowTypes)
	lines    [][]byte          // src split at "\n", once (srcLines)
}

// srcLines is the file split into lines, split on first use: locate
// looks at them for every string of the spec.
func (p *parser) srcLines() [][]byte {
	if p.lines == nil {
		p.lines = bytes.Split(p.src, []byte("\n"))
	}
	return p.lines
}

// report records that what was reported, so that Validate does not say it
// is missing too.
func (p *parser) report(what string) {
	if p.reported != nil {
		p.reported[what] = true
	}
}

// unread reports a key that the key table (keys.go) lists for a mapping
// but the parser's switch for it does not read: a key added to the table
// without its case. TestKeyTable parses every key of the table and fails
// on it; a user never sees it.
func (p *parser) unread(key string) {
	p.diags.add(ir.Pos{File: p.file, Line: 1, Col: 1}, "internal error: key %q is in the key table but the parser does not read it", key)
}

func (p *parser) pos(n *yaml.Node) ir.Pos {
	return ir.Pos{File: p.file, Line: n.Line, Col: n.Column}
}

// specKeys and the lists below are the key table's (keys.go): the parser
// and the JSON Schema read the same names.
var specKeys = keysAt(SpecKeys, "")

var (
	sourceKeys        = keysAt(SpecKeys, "source")
	targetKeys        = keysAt(SpecKeys, "target")
	watermarkKeys     = keysAt(SpecKeys, "watermark")
	partitionKeys     = keysAt(SpecKeys, "partition")
	qualityKeys       = keysAt(SpecKeys, "quality")
	reconcileKeys     = keysAt(SpecKeys, "reconcile")
	cdcKeys           = keysAt(SpecKeys, "cdc")
	cdcSoftDeleteKeys = keysAt(SpecKeys, "cdc.soft_delete")
	cdcOpsKeys        = keysAt(SpecKeys, "cdc.ops")
	mergeKeys         = keysAt(SpecKeys, "merge")
	columnsKeys       = keysAt(SpecKeys, "columns")
)

// spec reads a spec's top-level mapping: each section has a function of
// its own, which reports what it cannot read and reads on.
func (p *parser) spec(s *Spec, n *yaml.Node) {
	p.mapping(n, "spec", specKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "pipeline":
			s.Pipeline = p.str(key, v)
		case "description":
			s.Description = p.str(key, v)
		case "source":
			p.source(s, k, v)
		case "target":
			p.target(s, k, v)
		case "columns":
			s.Columns = p.columns(v)
		case "strategy":
			s.Strategy = p.str(key, v)
		case "unique_key":
			s.UniqueKey = p.strList(key, v)
		case "watermark":
			p.watermark(s, k, v)
		case "dedupe_by":
			s.DedupeBy = p.str(key, v)
		case "partition":
			p.partition(s, k, v)
		case "quality":
			p.quality(s, k, v)
		case "reconcile":
			p.reconcile(s, k, v)
		case "cdc":
			p.cdc(s, k, v)
		case "scd2":
			p.scd2(s, k, v)
		case "merge":
			p.merge(s, k, v)
		case "lookups":
			s.Lookups = p.lookups(v)
		case "silence":
			s.Silence = p.silence(v)
		default:
			p.unread(key)
		}
	})
}

// source reads the source section: the relation a pipeline reads.
func (p *parser) source(s *Spec, k, v *yaml.Node) {
	s.Source.Pos = p.pos(k)
	p.mapping(v, "source", sourceKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "table":
			s.Source.Table = p.str("source."+key, v)
		case "query":
			s.Source.Query = p.str("source."+key, v)
		case "connection":
			s.Source.Connection = p.str("source."+key, v)
		case "dialect":
			s.Source.Dialect = p.str("source."+key, v)
		case "files":
			s.Source.Files = p.str("source."+key, v)
		case "format":
			s.Source.Format = p.str("source."+key, v)
		case "unique":
			s.Source.Unique = p.str("source."+key, v)
			if b := s.Source.Unique.Value; b != "true" && b != "false" && b != "" {
				p.diags.add(s.Source.Unique.Pos, "source.unique must be true or false, got %s", quote(b))
			}
		default:
			p.unread(key)
		}
	})
}

// target reads the target section: the table it writes.
func (p *parser) target(s *Spec, k, v *yaml.Node) {
	s.Target.Pos = p.pos(k)
	p.mapping(v, "target", targetKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "table":
			s.Target.Table = p.str("target.table", v)
		default:
			p.unread(key)
		}
	})
}

// watermark reads the watermark section: how runs are windowed, or the
// bookmark of a files source.
func (p *parser) watermark(s *Spec, k, v *yaml.Node) {
	w := &Watermark{Pos: p.pos(k)}
	s.Watermark = w
	p.mapping(v, "watermark", watermarkKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "column":
			w.Column = p.str("watermark.column", v)
		case "tiebreak":
			w.Tiebreak = p.str("watermark.tiebreak", v)
		case "start":
			w.Start = p.str("watermark.start", v)
		case "files":
			w.Files = p.str("watermark.files", v)
		case "lookback":
			// An integer watermark looks back by a count of ids, so
			// the unit is checked against the column type later.
			w.Lookback = p.durationOrCount("watermark.lookback", v)
		case "lag":
			w.Lag = p.duration("watermark.lag", v)
		case "batch":
			w.Batch = p.durationOrCount("watermark.batch", v)
		default:
			p.unread(key)
		}
	})
	if w.Files.Set() && !w.Column.Set() && !w.Tiebreak.Set() && !w.Start.Set() && !w.Lookback.Set() && !w.Lag.Set() && !w.Batch.Set() {
		// The bookmark of a files source: no column windows the
		// runs, the files loaded before do.
		s.Source.ByFile, s.Watermark = w.Files, nil
	}
}

// partition reads the partition section: how the target is cut into
// partitions.
func (p *parser) partition(s *Spec, k, v *yaml.Node) {
	pt := &Partition{Pos: p.pos(k)}
	s.Partition = pt
	p.mapping(v, "partition", partitionKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "column":
			pt.Column = p.str("partition.column", v)
		case "granularity":
			pt.Granularity = p.str("partition.granularity", v)
		case "finalize_after":
			pt.FinalizeAfter = p.duration("partition.finalize_after", v)
		case "timezone":
			pt.Timezone = p.str("partition.timezone", v)
		default:
			p.unread(key)
		}
	})
}

// quality reads the quality section: the rules a staged row must pass.
func (p *parser) quality(s *Spec, k, v *yaml.Node) {
	q := &Quality{Pos: p.pos(k)}
	s.Quality = q
	p.mapping(v, "quality", qualityKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "not_null":
			q.NotNull = p.strList("quality.not_null", v)
		case "checks":
			q.Checks = p.strList("quality.checks", v)
		case "on_invalid":
			q.OnInvalid = p.str("quality.on_invalid", v)
		default:
			p.unread(key)
		}
	})
}

// reconcile reads the reconcile section: what reconciliation compares.
func (p *parser) reconcile(s *Spec, k, v *yaml.Node) {
	r := &Reconcile{Pos: p.pos(k)}
	s.Reconcile = r
	p.mapping(v, "reconcile", reconcileKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "by":
			r.By = p.str("reconcile.by", v)
		case "granularity":
			r.Granularity = p.str("reconcile.granularity", v)
		case "measures":
			r.Measures = p.strList("reconcile.measures", v)
		default:
			p.unread(key)
		}
	})
}

// cdc reads the cdc section: how a change log is applied.
func (p *parser) cdc(s *Spec, k, v *yaml.Node) {
	c := &CDC{Pos: p.pos(k)}
	s.CDC = c
	p.mapping(v, "cdc", cdcKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "op":
			c.Op = p.str("cdc.op", v)
		case "sequence":
			c.Sequence = p.str("cdc.sequence", v)
		case "at":
			c.At = p.str("cdc.at", v)
		case "deletes":
			c.Deletes = p.str("cdc.deletes", v)
		case "soft_delete":
			c.SoftDelete = p.softDelete(k, v)
		case "ops":
			c.Ops = p.cdcOps(k, v)
		case "exclude":
			c.Exclude = p.strList("cdc.exclude", v)
		default:
			p.unread(key)
		}
	})
}

// softDelete reads cdc.soft_delete: the columns that mark a deleted row.
func (p *parser) softDelete(k, v *yaml.Node) *SoftDelete {
	sd := &SoftDelete{Pos: p.pos(k)}
	p.mapping(v, "cdc.soft_delete", cdcSoftDeleteKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "flag":
			sd.Flag = p.str("cdc.soft_delete.flag", v)
		case "at":
			sd.At = p.str("cdc.soft_delete.at", v)
		default:
			p.unread(key)
		}
	})
	return sd
}

// cdcOps reads cdc.ops: the op codes of each kind of change.
func (p *parser) cdcOps(k, v *yaml.Node) *CDCOps {
	ops := &CDCOps{Pos: p.pos(k)}
	p.mapping(v, "cdc.ops", cdcOpsKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "insert":
			ops.Insert = p.strList("cdc.ops.insert", v)
		case "update":
			ops.Update = p.strList("cdc.ops.update", v)
		case "delete":
			ops.Delete = p.strList("cdc.ops.delete", v)
		case "truncate":
			ops.Truncate = p.strList("cdc.ops.truncate", v)
		default:
			p.unread(key)
		}
	})
	return ops
}

// scd2 reads the scd2 section: how a type-2 target keeps versions.
func (p *parser) scd2(s *Spec, k, v *yaml.Node) {
	c := &SCD2{Pos: p.pos(k)}
	s.SCD2 = c
	p.mapping(v, "scd2", scd2Keys, func(key string, _, v *yaml.Node) {
		switch key {
		case "by":
			c.By = p.str("scd2.by", v)
		case "tracked":
			c.Tracked = p.strList("scd2.tracked", v)
		case "snapshot":
			c.Snapshot = p.str("scd2.snapshot", v)
		case "deletes":
			c.Deletes = p.str("scd2.deletes", v)
		case "valid_from":
			c.ValidFrom = p.str("scd2.valid_from", v)
		case "valid_to":
			c.ValidTo = p.str("scd2.valid_to", v)
		case "open_end":
			c.OpenEnd = p.str("scd2.open_end", v)
		case "open_start":
			c.OpenStart = p.str("scd2.open_start", v)
		case "deleted":
			c.Deleted = p.str("scd2.deleted", v)
		default:
			p.unread(key)
		}
	})
}

// merge reads the merge section: what a merge updates.
func (p *parser) merge(s *Spec, k, v *yaml.Node) {
	m := &MergeOpts{Pos: p.pos(k)}
	s.MergeOpts = m
	p.mapping(v, "merge", mergeKeys, func(key string, _, v *yaml.Node) {
		switch key {
		case "update_columns":
			m.UpdateColumns = p.strList("merge.update_columns", v)
		case "exclude_columns":
			m.ExcludeColumns = p.strList("merge.exclude_columns", v)
		default:
			p.unread(key)
		}
	})
}

// silence reads the silence mapping: warning code: reason.
func (p *parser) silence(n *yaml.Node) []Silenced {
	at := n
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		p.diags.add(p.pos(at), "silence must be a mapping of warning code to the reason it does not apply, as in  no-lag: the source is a replica, got %s", kindName(n))
		p.report("silence")
		return nil
	}
	var out []Silenced
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k.Kind != yaml.ScalarNode {
			p.diags.add(p.pos(k), "silence: a warning code is a single value, got %s", kindName(k))
			continue
		}
		out = append(out, Silenced{Code: p.str("silence code", k), Reason: p.str("silence."+k.Value, n.Content[i+1])})
	}
	return out
}

// mapping checks that n is a mapping whose keys are all known and calls f
// for each entry in file order. Unknown and repeated keys are reported.
func (p *parser) mapping(n *yaml.Node, what string, known []string, f func(key string, k, v *yaml.Node)) {
	at := n
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		p.diags.add(p.pos(at), "%s must be a mapping (%s), got %s", what, keyList(known), kindName(n))
		p.report(what)
		return
	}
	path := what + "."
	if what == "spec" {
		path = ""
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if !contains(known, key) {
			prefix := ""
			if what != "spec" && what != "incrc.yaml" {
				prefix = what + ": "
			}
			p.diags.add(p.pos(k), "%sunknown key %s%s", prefix, quote(key), suggest(key, known))
			if best := closest(key, known); best != "" {
				p.report(path + best)
			}
			continue
		}
		if line, ok := seen[key]; ok {
			p.diags.add(p.pos(k), "key %q is repeated (first on line %d): keep one", key, line)
			continue
		}
		seen[key] = k.Line
		f(key, k, v)
	}
}

func (p *parser) str(what string, n *yaml.Node) ir.String {
	at := n
	n = resolve(n)
	if n.Kind != yaml.ScalarNode {
		p.diags.add(p.pos(at), "%s must be a single value, got %s", what, kindName(n))
		p.report(what)
		return ir.String{Pos: p.pos(at)}
	}
	if n.Tag == "!!null" || strings.TrimSpace(n.Value) == "" {
		if strings.HasSuffix(what, " entry") {
			p.diags.add(p.pos(at), "%s is empty: give it a value or remove the entry", what)
		} else {
			p.diags.add(p.pos(at), "%s is empty: give it a value or remove the key", what)
		}
		p.report(what)
		return ir.String{Pos: p.pos(at)}
	}
	s := ir.String{Value: n.Value, Pos: p.pos(n)}
	p.locate(&s, n)
	return s
}

// locate records how offsets inside a scalar map to the file, when that
// is certain: a one-line plain or quoted scalar whose text is written as
// is (no escapes), or a literal block (|). String.At uses it to point at
// the offending character of a check or query rather than its start.
func (p *parser) locate(s *ir.String, n *yaml.Node) {
	lines := p.srcLines()
	if n.Line < 1 || n.Line > len(lines) {
		return
	}
	switch n.Style {
	case 0, yaml.SingleQuotedStyle, yaml.DoubleQuotedStyle:
		if strings.Contains(n.Value, "\n") {
			return
		}
		line := string(lines[n.Line-1])
		start := byteIndex(line, n.Column-1)
		quote := 0
		if n.Style != 0 {
			quote = 1
		}
		if start < 0 || !strings.HasPrefix(line[start+quote:], n.Value) {
			return
		}
		s.SetLayout(ir.LayoutLine, quote)
	case yaml.LiteralStyle:
		indent := -1
		for k, v := range strings.Split(strings.TrimRight(n.Value, "\n"), "\n") {
			if n.Line+k >= len(lines) {
				return
			}
			src := strings.TrimRight(string(lines[n.Line+k]), "\r")
			if v == "" {
				continue
			}
			if indent < 0 {
				indent = len(src) - len(strings.TrimLeft(src, " "))
			}
			if len(src) < indent || src[indent:] != v {
				return
			}
		}
		if indent >= 0 {
			s.SetLayout(ir.LayoutBlock, indent)
		}
	}
}

// byteIndex converts a 0-based column in runes to a byte index in line.
func byteIndex(line string, col int) int {
	for i := range line {
		if col == 0 {
			return i
		}
		col--
	}
	if col == 0 {
		return len(line)
	}
	return -1
}

// resolve follows an alias to the node it names, so that an anchored
// value reads like the value written in place.
func resolve(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// strList accepts a sequence of scalars, or one scalar as a list of one.
func (p *parser) strList(what string, n *yaml.Node) []ir.String {
	at := n
	n = resolve(n)
	switch n.Kind {
	case yaml.ScalarNode:
		return []ir.String{p.str(what, n)}
	case yaml.SequenceNode:
		out := make([]ir.String, 0, len(n.Content))
		for _, e := range n.Content {
			out = append(out, p.str(what+" entry", e))
		}
		if len(out) == 0 {
			p.diags.add(p.pos(at), "%s is an empty list: name at least one, or remove the key", what)
			p.report(what)
		}
		return out
	}
	p.diags.add(p.pos(at), "%s must be a list, got %s", what, kindName(n))
	p.report(what)
	return nil
}

func (p *parser) duration(what string, n *yaml.Node) ir.Duration {
	s := p.str(what, n)
	if s.Value == "" {
		return ir.Duration{Pos: s.Pos}
	}
	d, err := ir.ParseDuration(s.Value)
	if err != nil {
		p.diags.add(s.Pos, "%s: %v", what, err)
	}
	return ir.Duration{Value: d, Text: s.Value, Pos: s.Pos}
}

func (p *parser) durationOrCount(what string, n *yaml.Node) ir.Duration {
	s := p.str(what, n)
	if c, err := strconv.ParseInt(s.Value, 10, 64); err == nil && c >= 0 {
		return ir.Duration{Count: c, IsCount: true, Text: s.Value, Pos: s.Pos}
	}
	if s.Value == "" {
		return ir.Duration{Pos: s.Pos}
	}
	d, err := ir.ParseDuration(s.Value)
	if err != nil {
		p.diags.add(s.Pos, "%s: %v (or a whole number of ids for an integer watermark)", what, err)
	}
	return ir.Duration{Value: d, Text: s.Value, Pos: s.Pos}
}

// columns reads the columns mapping: "name: type", or
// "name: {type: T, nullable: true|false}".
func (p *parser) columns(n *yaml.Node) []Column {
	at := n
	n = resolve(n)
	if n.Kind != yaml.MappingNode {
		p.diags.add(p.pos(at), "columns must be a mapping of column name to type, as in  order_id: bigint, got %s", kindName(n))
		p.report("columns")
		return nil
	}
	seen := map[string]int{}
	n = p.joinFlowTypes(n)
	cols := make([]Column, 0, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			p.diags.add(p.pos(k), "a column name must be a single value, got %s", kindName(k))
			continue
		}
		c := Column{Name: ir.String{Value: k.Value, Pos: p.pos(k)}}
		if line, ok := seen[strings.ToLower(k.Value)]; ok {
			p.diags.add(p.pos(k), "column %s is declared twice (first on line %d): keep one", quote(k.Value), line)
			continue
		}
		seen[strings.ToLower(k.Value)] = k.Line
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Tag == "!!null" || strings.TrimSpace(v.Value) == "" {
				// Kept without a type, so that references to it still resolve.
				p.diags.add(p.pos(v), "column %s has no type: write one, such as bigint or varchar(64)", quote(k.Value))
				cols = append(cols, c)
				continue
			}
			c.TypeText = p.str("column "+k.Value, v)
		case yaml.MappingNode:
			v = p.joinFlowTypes(v)
			p.mapping(v, "column "+k.Value, columnsKeys, func(key string, _, v *yaml.Node) {
				switch key {
				case "type":
					c.TypeText = p.str("type", v)
				case "nullable":
					b := p.str("nullable", v)
					switch b.Value {
					case "true":
						c.Nullable, c.NullableSet = true, true
					case "false":
						c.NullableSet = true
					case "":
					default:
						p.diags.add(b.Pos, "column %s: nullable must be true or false, got %s", quote(k.Value), quote(b.Value))
					}
				default:
					p.unread(key)
				}
			})
			if !c.TypeText.Set() {
				p.diags.add(p.pos(v), "column %s has no type: add  type: bigint  (or another type)", quote(k.Value))
			}
		default:
			p.diags.add(p.pos(v), "column %s: expected a type such as bigint, got %s", quote(k.Value), kindName(v))
			continue
		}
		if c.TypeText.Value != "" {
			t, err := ir.ParseType(c.TypeText.Value)
			switch {
			case err != nil && p.split[c.TypeText.Pos] != "":
				whole := p.split[c.TypeText.Pos]
				p.diags.add(c.TypeText.Pos, "column %s: in a { } mapping a comma ends a value, so the type reads %s: quote it, as in %q, or write the column as a block, one key a line", quote(k.Value), quote(c.TypeText.Value), whole)
			case err != nil:
				p.diags.add(c.TypeText.Pos, "column %s: %v", quote(k.Value), err)
			}
			c.Type = t
		}
		cols = append(cols, c)
	}
	if len(cols) == 0 {
		return nil // as without the room made ahead
	}
	return cols
}

// joinFlowTypes finds what YAML made of a type with a comma written
// unquoted in a { } mapping: {type: decimal(12,2)} is the key type with
// the value "decimal(12" and a key "2)" without a value. The stray key is
// dropped (it is no mistake of its own) and the value is remembered
// whole, so that the type's error says what happened and how to write it.
func (p *parser) joinFlowTypes(n *yaml.Node) *yaml.Node {
	if n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle == 0 {
		return n
	}
	out := *n
	out.Content = nil
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		out.Content = append(out.Content, k, v)
		open := v.Kind == yaml.ScalarNode && v.Style == 0 && strings.Count(v.Value, "(") > strings.Count(v.Value, ")")
		whole := v.Value
		for open && i+3 < len(n.Content) {
			sk, sv := n.Content[i+2], n.Content[i+3]
			if sk.Kind != yaml.ScalarNode || sk.Style != 0 || sv.Tag != "!!null" || sk.Line != v.Line {
				break
			}
			whole += "," + sk.Value
			i += 2
			open = strings.Count(whole, "(") > strings.Count(whole, ")")
		}
		if whole != v.Value {
			if p.split == nil {
				p.split = map[ir.Pos]string{}
			}
			p.split[p.pos(v)] = whole
		}
	}
	return &out
}

func kindName(n *yaml.Node) string {
	n = resolve(n)
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return quote(n.Value)
	}
	return "nothing"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// yamlError turns a go-yaml error into a position and a message. go-yaml
// gives a line at best, and for a tab sometimes the line before it; the
// tab and control-character cases are found in the source instead, at
// their column, because they are invisible in an editor.
func (p *parser) yamlError(err error) (ir.Pos, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if strings.HasPrefix(msg, "line ") {
		fmt.Sscanf(msg, "line %d", &line)
		if i := strings.Index(msg, ": "); i >= 0 {
			msg = msg[i+2:]
		}
	}
	// go-yaml numbers a parser error (as opposed to a scanner error) by the
	// 0-based line of its context: one less than the editor's line.
	for _, m := range parserErrors {
		if line > 0 && strings.HasPrefix(msg, m) {
			line++
			break
		}
	}
	lines := strings.Split(string(p.src), "\n")
	switch {
	case strings.HasPrefix(msg, "did not find expected ',' or ']'"):
		msg += " (a [ list is not closed)"
	case strings.HasPrefix(msg, "did not find expected ',' or '}'"):
		msg += " (a { mapping is not closed)"
	case strings.HasPrefix(msg, "did not find expected key"), strings.HasPrefix(msg, "did not find expected '-' indicator"):
		msg += " (check the indentation of this block)"
	case strings.Contains(msg, "tab character") || strings.Contains(msg, "cannot start any token"):
		for i := max(line-2, 0); i < len(lines); i++ {
			if j := strings.IndexByte(lines[i], '\t'); j >= 0 && strings.Trim(lines[i][:j], " ") == "" {
				return ir.Pos{File: p.file, Line: i + 1, Col: j + 1}, "a tab indents this line: YAML indents with spaces only"
			}
		}
	case strings.Contains(msg, "control characters"):
		for i, l := range lines {
			for j, r := range l {
				if r < 0x20 && r != '\t' && r != '\r' || r == 0x7f {
					return ir.Pos{File: p.file, Line: i + 1, Col: utf8.RuneCountInString(l[:j]) + 1}, fmt.Sprintf("control character %U: a spec is plain text", r)
				}
			}
		}
	case strings.Contains(msg, "mapping values are not allowed"):
		msg += " (a value containing \": \" needs quotes, or a key is indented too far)"
	case strings.Contains(msg, "unexpected end of stream"):
		msg += " (a quote or bracket is not closed)"
	case strings.Contains(msg, "invalid leading UTF-8") || strings.Contains(msg, "incomplete UTF-8"):
		msg += " (save the file as UTF-8)"
	}
	return ir.Pos{File: p.file, Line: max(line, 1), Col: 1}, msg
}

var parserErrors = []string{
	"did not find expected <document start>",
	"did not find expected node content",
	"did not find expected '-' indicator",
	"did not find expected key",
	"did not find expected ',' or ']'",
	"did not find expected ',' or '}'",
}

// quote quotes s for a message, shortened: a message repeats what the
// user wrote, and a line of ten thousand characters helps no one.
func quote(s string) string { return excerpt(s, 60) }

// excerpt quotes at most limit characters of s, escaped as Go escapes
// them: a message never prints more of a value than it needs.
func excerpt(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return strconv.Quote(s)
	}
	r := []rune(s)
	return strconv.Quote(string(r[:limit])) + "..."
}

// keyList is the expected keys of a mapping, for a message.
func keyList(known []string) string {
	sorted := append([]string(nil), known...)
	sort.Strings(sorted)
	return "keys: " + strings.Join(sorted, ", ")
}
