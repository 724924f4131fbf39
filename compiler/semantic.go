package compiler

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler/sqllex"
)

// lineBreaks spells the line breaks of a literal of a query.
var lineBreaks = strings.NewReplacer("\r", `\r`, "\n", `\n`)

// Params lists the semantic parameters of a spec, in a fixed order: what
// the compiled file's header keeps (so a diff of the files shows them)
// and what incrc plan compares with the header of the file on disk.
func Params(s *Spec) []ir.SpecParam {
	out := make([]ir.SpecParam, 0, 24+len(s.Columns))
	add := func(key, value string, logic bool) {
		if value != "" {
			// A value goes into a comment line: a line break in it (a
			// file glob, say) must not end the comment.
			value = ir.OneLine(value)
			out = append(out, ir.SpecParam{Key: key, Value: value, Logic: logic})
		}
	}
	list := func(ss []ir.String) string {
		if len(ss) == 0 {
			return ""
		}
		return "[" + strings.Join(values(ss), ", ") + "]"
	}
	add("source.table", s.Source.Table.Value, true)
	add("source.query", canonicalQuery(s.Source.Query.Value), true)
	add("source.connection", s.Source.Connection.Value, true)
	add("source.dialect", s.Source.Dialect.Value, false)
	add("source.files", s.Source.Files.Value, true)
	add("source.format", s.Source.Format.Value, true)
	add("target.table", s.Target.Table.Value, false)
	add("strategy", s.Strategy.Value, true)
	add("unique_key", list(s.UniqueKey), true)
	for _, c := range s.Columns {
		v := c.Name.Value + " " + c.Type.String()
		if c.NullableSet && c.Nullable {
			v += " nullable"
		}
		add("columns", v, true)
	}
	if w := s.Watermark; w != nil {
		add("watermark.column", w.Column.Value, false)
		// A tiebreak writes the rows without a time that a watermark alone
		// quarantines: it decides the rows.
		add("watermark.tiebreak", w.Tiebreak.Value, true)
		add("watermark.start", w.Start.Value, false)
		add("watermark.lookback", w.Lookback.Text, false)
		add("watermark.lag", w.Lag.Text, false)
		add("watermark.batch", w.Batch.Text, false)
	}
	add("watermark.files", s.Source.ByFile.Value, false)
	add("dedupe_by", s.DedupeBy.Value, true)
	if m := s.MergeOpts; m != nil {
		// A partition rebuilt writes every column from the source either
		// way: the lists change what runs keep, not what a rebuild makes.
		add("merge.update_columns", list(m.UpdateColumns), false)
		add("merge.exclude_columns", list(m.ExcludeColumns), false)
	}
	if pt := s.Partition; pt != nil {
		add("partition.column", pt.Column.Value, true)
		add("partition.granularity", pt.Granularity.Value, true)
		add("partition.timezone", pt.Timezone.Value, true)
		add("partition.finalize_after", pt.FinalizeAfter.Text, false)
	}
	if q := s.Quality; q != nil {
		add("quality.not_null", list(q.NotNull), true)
		for _, c := range q.Checks {
			add("quality.checks", strconv.Quote(c.Value), true)
		}
		add("quality.on_invalid", q.OnInvalid.Value, true)
	}
	if r := s.Reconcile; r != nil {
		add("reconcile.by", r.By.Value, false)
		add("reconcile.granularity", r.Granularity.Value, false)
		add("reconcile.measures", list(r.Measures), false)
	}
	if c := s.CDC; c != nil {
		add("cdc.op", c.Op.Value, true)
		add("cdc.sequence", c.Sequence.Value, true)
		add("cdc.at", c.At.Value, true)
		add("cdc.deletes", c.Deletes.Value, true)
		if sd := c.SoftDelete; sd != nil {
			add("cdc.soft_delete", sd.Flag.Value+", "+sd.At.Value, true)
		}
		if o := c.Ops; o != nil {
			ops := "insert " + list(o.Insert) + ", update " + list(o.Update) + ", delete " + list(o.Delete)
			if len(o.Truncate) > 0 {
				ops += ", truncate " + list(o.Truncate)
			}
			add("cdc.ops", ops, true)
		}
		add("cdc.exclude", list(c.Exclude), true)
	}
	if d := s.SCD2; d != nil {
		add("scd2.by", d.By.Value, true)
		add("scd2.tracked", list(d.Tracked), true)
		add("scd2.snapshot", d.Snapshot.Value, true)
		add("scd2.deletes", d.Deletes.Value, true)
		add("scd2.valid_from", d.ValidFrom.Value, true)
		add("scd2.valid_to", d.ValidTo.Value, true)
		add("scd2.open_end", d.OpenEnd.Value, true)
		add("scd2.deleted", d.Deleted.Value, true)
	}
	for _, l := range s.Lookups {
		var on, cols []string
		for _, p := range l.On {
			on = append(on, p.Left.Value+": "+p.Right.Value)
		}
		for _, p := range l.Columns {
			cols = append(cols, p.Left.Value+": "+p.Right.Value)
		}
		v := l.Table.Value + " on {" + strings.Join(on, ", ") + "} columns {" + strings.Join(cols, ", ") + "}"
		if l.AsOf.Value != "" {
			v += " as_of " + l.AsOf.Value
		}
		add("lookups", v, true)
	}
	if len(out) == 0 {
		return nil // as without the room made ahead
	}
	return out
}

// canonicalQuery is a source query on one line, its tokens as written
// (the Portable reading, which validation accepted) without its comments
// or layout: what the header shows and the logic hash reads, so that a
// comment or a line break is not a change of logic, and no comment of
// the query reaches the compiled file.
func canonicalQuery(q string) string {
	if strings.TrimSpace(q) == "" {
		return ""
	}
	toks, err := sqllex.Lex(sqllex.Portable, q)
	if err != nil {
		return "(unreadable)" // validation refused it already
	}
	var b strings.Builder
	prev := ""
	for _, t := range toks {
		if t.Kind == sqllex.Comment || t.Kind == sqllex.EOF || t.Text == "" {
			continue
		}
		if b.Len() > 0 && prev != "(" && prev != "." && t.Text != "," && t.Text != ")" && t.Text != "." {
			b.WriteByte(' ')
		}
		// A literal may span lines: the header's line must not end in it.
		lineBreaks.WriteString(&b, t.Text)
		prev = t.Text
	}
	return b.String()
}

// LogicHash is a hash over the parameters that decide the rows a run
// computes (SpecParam.Logic): two specs with the same logic hash write
// the same rows from the same source, whatever their lookback, lag or
// comments. Runs and backfill markers record it; a partition built with
// another one is stale.
func LogicHash(s *Spec) string {
	return LogicHashOf(Params(s))
}

// LogicHashOf hashes the logic parameters of a list.
func LogicHashOf(ps []ir.SpecParam) string {
	// The hashed text: "key: value" lines of the logic parameters, joined
	// by newlines, written into one buffer.
	size := 0
	for _, p := range ps {
		if p.Logic {
			size += len(p.Key) + 2 + len(p.Value) + 1
		}
	}
	text := make([]byte, 0, size)
	for _, p := range ps {
		if p.Logic {
			if len(text) > 0 {
				text = append(text, '\n')
			}
			text = append(text, p.Key...)
			text = append(text, ": "...)
			text = append(text, p.Value...)
		}
	}
	sum := sha256.Sum256(text)
	return hex.EncodeToString(sum[:8])
}

// ParamChange is one difference between two lists of parameters, said
// in the spec's words: "watermark.lookback: 2d -> 3d", "columns: + currency
// text".
type ParamChange struct {
	Key      string
	Old, New string // empty: absent on that side
	Logic    bool
}

func (c ParamChange) String() string {
	switch {
	case c.Old == "":
		return c.Key + ": + " + c.New
	case c.New == "":
		return c.Key + ": - " + c.Old
	}
	return c.Key + ": " + c.Old + " -> " + c.New
}

// listKeys hold one parameter per element; a column is matched by its
// name, so a changed type reads "columns: amount decimal(12,2) ->
// amount decimal(14,2)".
var listKeys = map[string]bool{"columns": true, "quality.checks": true, "lookups": true}

// DiffParams compares two lists of parameters (old, new) in the order of
// the new one, then what only the old one had.
func DiffParams(old, new []ir.SpecParam) []ParamChange {
	var out []ParamChange
	byKey := func(ps []ir.SpecParam) map[string][]ir.SpecParam {
		m := map[string][]ir.SpecParam{}
		for _, p := range ps {
			m[p.Key] = append(m[p.Key], p)
		}
		return m
	}
	o, n := byKey(old), byKey(new)
	var keys []string
	seen := map[string]bool{}
	for _, ps := range [][]ir.SpecParam{new, old} {
		for _, p := range ps {
			if !seen[p.Key] {
				seen[p.Key] = true
				keys = append(keys, p.Key)
			}
		}
	}
	for _, k := range keys {
		ov, nv := o[k], n[k]
		logic := len(nv) > 0 && nv[0].Logic || len(nv) == 0 && len(ov) > 0 && ov[0].Logic
		if !listKeys[k] {
			a, b := "", ""
			if len(ov) > 0 {
				a = ov[0].Value
			}
			if len(nv) > 0 {
				b = nv[0].Value
			}
			if a != b {
				out = append(out, ParamChange{Key: k, Old: a, New: b, Logic: logic})
			}
			continue
		}
		name := func(v string) string {
			if k == "columns" {
				if i := strings.IndexByte(v, ' '); i > 0 {
					return v[:i]
				}
			}
			return v
		}
		olds := map[string]string{}
		for _, p := range ov {
			olds[name(p.Value)] = p.Value
		}
		news := map[string]bool{}
		for _, p := range nv {
			news[name(p.Value)] = true
			switch was, ok := olds[name(p.Value)]; {
			case !ok:
				out = append(out, ParamChange{Key: k, New: p.Value, Logic: logic})
			case was != p.Value:
				out = append(out, ParamChange{Key: k, Old: was, New: p.Value, Logic: logic})
			}
		}
		var gone []string
		for _, p := range ov {
			if !news[name(p.Value)] {
				gone = append(gone, p.Value)
			}
		}
		for _, g := range gone {
			out = append(out, ParamChange{Key: k, Old: g, Logic: logic})
		}
	}
	return out
}
