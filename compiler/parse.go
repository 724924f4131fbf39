package compiler

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Parse reads one spec file. It reports every structural problem at once
// (unknown keys, wrong shapes, bad scalars); Validate checks the meaning.
// The returned spec is usable for positions even when err is not nil.
func Parse(file string, data []byte) (*Spec, error) {
	sum := sha256.Sum256(data)
	s := &Spec{File: file, Hash: hex.EncodeToString(sum[:])}
	p := &parser{file: file}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		p.diags.add(Pos{File: file, Line: max(yamlErrLine(err), 1), Col: 1}, "invalid YAML: %s", yamlErrMsg(err))
		return s, p.diags.Err()
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		p.diags.add(p.pos(&extra), "a spec file holds one pipeline: found a second YAML document")
	}
	root := &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) == 1 {
		root = root.Content[0]
	}
	s.Pos = p.pos(root)
	p.spec(s, root)
	return s, p.diags.Err()
}

type parser struct {
	file  string
	diags Diagnostics
}

func (p *parser) pos(n *yaml.Node) Pos {
	return Pos{File: p.file, Line: n.Line, Col: n.Column}
}

var specKeys = []string{"pipeline", "description", "source", "target", "columns", "strategy", "unique_key", "watermark", "dedupe_by", "partition", "quality", "reconcile", "cdc", "scd2"}

func (p *parser) spec(s *Spec, n *yaml.Node) {
	p.mapping(n, "spec", specKeys, func(key string, k, v *yaml.Node) {
		switch key {
		case "pipeline":
			s.Pipeline = p.str(key, v)
		case "description":
			s.Description = p.str(key, v)
		case "source":
			s.Source.Pos = p.pos(k)
			p.mapping(v, key, []string{"table", "query"}, func(key string, _, v *yaml.Node) {
				switch key {
				case "table":
					s.Source.Table = p.str("source."+key, v)
				case "query":
					s.Source.Query = p.str("source."+key, v)
				}
			})
		case "target":
			s.Target.Pos = p.pos(k)
			p.mapping(v, key, []string{"table"}, func(key string, _, v *yaml.Node) {
				s.Target.Table = p.str("target.table", v)
			})
		case "columns":
			s.Columns = p.columns(v)
		case "strategy":
			s.Strategy = p.str(key, v)
		case "unique_key":
			s.UniqueKey = p.strList(key, v)
		case "watermark":
			w := &Watermark{Pos: p.pos(k)}
			s.Watermark = w
			p.mapping(v, key, []string{"column", "start", "lookback", "lag"}, func(key string, _, v *yaml.Node) {
				switch key {
				case "column":
					w.Column = p.str("watermark.column", v)
				case "start":
					w.Start = p.str("watermark.start", v)
				case "lookback":
					// An integer watermark looks back by a count of ids, so
					// the unit is checked against the column type later.
					w.Lookback = p.durationOrCount("watermark.lookback", v)
				case "lag":
					w.Lag = p.duration("watermark.lag", v)
				}
			})
		case "dedupe_by":
			s.DedupeBy = p.str(key, v)
		case "partition":
			pt := &Partition{Pos: p.pos(k)}
			s.Partition = pt
			p.mapping(v, key, []string{"column", "granularity", "finalize_after"}, func(key string, _, v *yaml.Node) {
				switch key {
				case "column":
					pt.Column = p.str("partition.column", v)
				case "granularity":
					pt.Granularity = p.str("partition.granularity", v)
				case "finalize_after":
					pt.FinalizeAfter = p.duration("partition.finalize_after", v)
				}
			})
		case "quality":
			q := &Quality{Pos: p.pos(k)}
			s.Quality = q
			p.mapping(v, key, []string{"not_null", "checks", "on_invalid"}, func(key string, _, v *yaml.Node) {
				switch key {
				case "not_null":
					q.NotNull = p.strList("quality.not_null", v)
				case "checks":
					q.Checks = p.strList("quality.checks", v)
				case "on_invalid":
					q.OnInvalid = p.str("quality.on_invalid", v)
				}
			})
		case "reconcile":
			r := &Reconcile{Pos: p.pos(k)}
			s.Reconcile = r
			p.mapping(v, key, []string{"by", "measures"}, func(key string, _, v *yaml.Node) {
				switch key {
				case "by":
					r.By = p.str("reconcile.by", v)
				case "measures":
					r.Measures = p.strList("reconcile.measures", v)
				}
			})
		case "cdc":
			c := &CDC{Pos: p.pos(k)}
			s.CDC = c
			p.mapping(v, key, []string{"op", "sequence", "deletes"}, func(key string, _, v *yaml.Node) {
				switch key {
				case "op":
					c.Op = p.str("cdc.op", v)
				case "sequence":
					c.Sequence = p.str("cdc.sequence", v)
				case "deletes":
					c.Deletes = p.str("cdc.deletes", v)
				}
			})
		case "scd2":
			c := &SCD2{Pos: p.pos(k)}
			s.SCD2 = c
			p.mapping(v, key, []string{"valid_from", "valid_to", "tracked"}, func(key string, _, v *yaml.Node) {
				switch key {
				case "valid_from":
					c.ValidFrom = p.str("scd2.valid_from", v)
				case "valid_to":
					c.ValidTo = p.str("scd2.valid_to", v)
				case "tracked":
					c.Tracked = p.strList("scd2.tracked", v)
				}
			})
		}
	})
}

// mapping checks that n is a mapping whose keys are all known and calls f
// for each entry in file order. Unknown and repeated keys are reported.
func (p *parser) mapping(n *yaml.Node, what string, known []string, f func(key string, k, v *yaml.Node)) {
	if n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n.Kind != yaml.MappingNode {
		p.diags.add(p.pos(n), "%s must be a mapping, got %s", what, kindName(n))
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := k.Value
		if !contains(known, key) {
			prefix := ""
			if what != "spec" {
				prefix = what + ": "
			}
			p.diags.add(p.pos(k), "%sunknown key %q%s", prefix, key, suggest(key, known))
			continue
		}
		if seen[key] {
			p.diags.add(p.pos(k), "key %q repeated", key)
			continue
		}
		seen[key] = true
		f(key, k, v)
	}
}

func (p *parser) str(what string, n *yaml.Node) String {
	if n.Kind != yaml.ScalarNode {
		p.diags.add(p.pos(n), "%s must be a single value, got %s", what, kindName(n))
		return String{Pos: p.pos(n)}
	}
	if n.Tag == "!!null" {
		p.diags.add(p.pos(n), "%s is empty", what)
		return String{Pos: p.pos(n)}
	}
	return String{Value: n.Value, Pos: p.pos(n)}
}

// strList accepts a sequence of scalars, or one scalar as a list of one.
func (p *parser) strList(what string, n *yaml.Node) []String {
	switch n.Kind {
	case yaml.ScalarNode:
		return []String{p.str(what, n)}
	case yaml.SequenceNode:
		out := make([]String, 0, len(n.Content))
		for _, e := range n.Content {
			out = append(out, p.str(what+" entry", e))
		}
		if len(out) == 0 {
			p.diags.add(p.pos(n), "%s is empty", what)
		}
		return out
	}
	p.diags.add(p.pos(n), "%s must be a list, got %s", what, kindName(n))
	return nil
}

func (p *parser) duration(what string, n *yaml.Node) Duration {
	s := p.str(what, n)
	if s.Value == "" {
		return Duration{Pos: s.Pos}
	}
	d, err := ParseDuration(s.Value)
	if err != nil {
		p.diags.add(s.Pos, "%s: %v", what, err)
	}
	return Duration{Value: d, Text: s.Value, Pos: s.Pos}
}

func (p *parser) durationOrCount(what string, n *yaml.Node) Duration {
	s := p.str(what, n)
	if c, err := strconv.ParseInt(s.Value, 10, 64); err == nil && c >= 0 {
		return Duration{Count: c, IsCount: true, Text: s.Value, Pos: s.Pos}
	}
	if s.Value == "" {
		return Duration{Pos: s.Pos}
	}
	d, err := ParseDuration(s.Value)
	if err != nil {
		p.diags.add(s.Pos, "%s: %v (or a whole number of ids for an integer watermark)", what, err)
	}
	return Duration{Value: d, Text: s.Value, Pos: s.Pos}
}

// columns reads the columns mapping: "name: type", or
// "name: {type: T, nullable: true|false}".
func (p *parser) columns(n *yaml.Node) []Column {
	if n.Kind != yaml.MappingNode {
		p.diags.add(p.pos(n), "columns must be a mapping of column name to type, got %s", kindName(n))
		return nil
	}
	var cols []Column
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		c := Column{Name: String{Value: k.Value, Pos: p.pos(k)}}
		if seen[strings.ToLower(k.Value)] {
			p.diags.add(p.pos(k), "column %q declared twice", k.Value)
			continue
		}
		seen[strings.ToLower(k.Value)] = true
		switch v.Kind {
		case yaml.ScalarNode:
			c.TypeText = p.str("column "+k.Value, v)
		case yaml.MappingNode:
			p.mapping(v, "column "+k.Value, []string{"type", "nullable"}, func(key string, _, v *yaml.Node) {
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
					default:
						p.diags.add(b.Pos, "nullable must be true or false, got %q", b.Value)
					}
				}
			})
			if !c.TypeText.Set() {
				p.diags.add(p.pos(k), "column %q has no type", k.Value)
			}
		default:
			p.diags.add(p.pos(v), "column %q: expected a type such as bigint, got %s", k.Value, kindName(v))
			continue
		}
		if c.TypeText.Value != "" {
			t, err := ParseType(c.TypeText.Value)
			if err != nil {
				p.diags.add(c.TypeText.Pos, "column %q: %v", k.Value, err)
			}
			c.Type = t
		}
		cols = append(cols, c)
	}
	return cols
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
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

// yamlErrLine extracts the line from a yaml error ("yaml: line 3: ...").
func yamlErrLine(err error) int {
	var line int
	msg := err.Error()
	if i := strings.Index(msg, "line "); i >= 0 {
		fmt.Sscanf(msg[i:], "line %d", &line)
	}
	return line
}

func yamlErrMsg(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if i := strings.Index(msg, ": "); i >= 0 && strings.HasPrefix(msg, "line ") {
		msg = msg[i+2:]
	}
	return msg
}
