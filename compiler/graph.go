package compiler

import (
	"container/heap"
	"fmt"
	"sort"
	"strings"
)

// Upstream is a pipeline of the project whose target this pipeline reads.
type Upstream struct {
	Pipeline string
	// Via says how the target is read: "source" (source.table) or
	// "lookup" (a lookup's table).
	Via string
	// Bounds: the upstream's saved watermark bounds this pipeline's hi, so
	// that a window only covers what the upstream has finished writing.
	// Set for a source; a lookup only orders the runs.
	Bounds bool
	// Watermark is the type of the upstream's saved watermark (a
	// pipeline without a watermark saves its run's time: a timestamp).
	Watermark Type
}

// Edge is one dependency of the project's graph: From's target is read by To.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
	Via  string `json:"via"` // source | lookup
}

func (e Edge) String() string { return e.From + " -> " + e.To + " (" + e.Via + ")" }

// tableKey is how a table name is compared with another: identifiers are
// plain and unquoted (validate.go), and every engine folds them, so case
// does not tell two tables apart.
func tableKey(name string) string { return strings.ToLower(strings.TrimSpace(name)) }

// savedType is the type of the watermark a pipeline saves.
func savedType(s *Spec) Type {
	if s.Watermark != nil {
		if c := s.Column(s.Watermark.Column.Value); c != nil {
			return c.Type
		}
	}
	return Type{Kind: Timestamp}
}

// linkUpstreams sets each spec's upstreams: the pipelines whose target it
// reads as its source or through a lookup. It reports a source whose
// upstream keeps a watermark that cannot bound this pipeline's (an
// integer against a time), and every cycle, naming its pipelines.
func linkUpstreams(specs []*Spec) Diagnostics {
	var diags Diagnostics
	writers := make(map[string]*Spec, len(specs))
	for _, s := range specs {
		if s == nil {
			continue
		}
		if key := tableKey(s.Target.Table.Value); writers[key] == nil {
			writers[key] = s
		}
	}
	for _, s := range specs {
		if s == nil {
			continue
		}
		s.upstream = nil
		add := func(u *Spec, via string) {
			for _, have := range s.upstream {
				if have.Pipeline == u.Pipeline.Value {
					return
				}
			}
			up := Upstream{Pipeline: u.Pipeline.Value, Via: via, Watermark: savedType(u)}
			if via == "source" && s.Watermark != nil {
				mine := savedType(s)
				if mine.IsInteger() != up.Watermark.IsInteger() {
					diags.addFor([]string{u.Pipeline.Value, s.Pipeline.Value}, s.Source.Table.Pos, "source %s is the target of pipeline %q (%s), whose saved watermark is a%s %s, and this pipeline's watermark %s is a%s %s: a window cannot be bounded by what %s has written; give both integer watermarks or both time watermarks",
						quote(s.Source.Table.Value), u.Pipeline.Value, u.File, article(up.Watermark.String()), up.Watermark, s.Watermark.Column.Value, article(mine.String()), mine, u.Pipeline.Value)
					return
				}
				if s.Watermark.Tiebreak.Set() {
					// hi would be cut at the upstream's time with no id to
					// go with it, and the rows without a time would wait for
					// a run that is not held back.
					diags.addFor([]string{u.Pipeline.Value, s.Pipeline.Value}, s.Watermark.Tiebreak.Pos, "watermark.tiebreak: source %s is the target of pipeline %q (%s), whose watermark bounds this pipeline's window by time alone: remove the tiebreak, or read a table no pipeline of the project writes",
						quote(s.Source.Table.Value), u.Pipeline.Value, u.File)
					return
				}
				up.Bounds = true
			} else if via == "source" {
				// A pipeline without a watermark reads the whole source: it
				// is ordered after its upstream, nothing bounds it.
				up.Bounds = false
			}
			s.upstream = append(s.upstream, up)
		}
		// A source in another database (source.connection) is not a
		// target of this project, whatever its name.
		if t := s.Source.Table.Value; t != "" && !s.Source.Connection.Set() {
			if u := writers[tableKey(t)]; u != nil && u != s {
				add(u, "source")
			}
		}
		for _, l := range s.Lookups {
			if u := writers[tableKey(l.Table.Value)]; u != nil && u != s {
				add(u, "lookup")
			}
		}
	}
	return append(diags, cycles(specs)...)
}

// cycles reports each cycle of the graph once, at the source (or lookup)
// of each pipeline in it.
func cycles(specs []*Spec) Diagnostics {
	byName := make(map[string]*Spec, len(specs))
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		if s != nil {
			byName[s.Pipeline.Value] = s
			names = append(names, s.Pipeline.Value)
		}
	}
	sort.Strings(names)
	const (
		white = iota
		grey
		black
	)
	color := make(map[string]int, len(specs))
	var stack []string
	var diags Diagnostics
	var visit func(n string)
	visit = func(n string) {
		color[n] = grey
		stack = append(stack, n)
		s := byName[n]
		for _, u := range s.upstream {
			switch color[u.Pipeline] {
			case white:
				visit(u.Pipeline)
			case grey:
				// The cycle is the stack from u back to n: u feeds the
				// next one on the stack, ..., n feeds u.
				i := len(stack) - 1
				for stack[i] != u.Pipeline {
					i--
				}
				loop := append([]string(nil), stack[i:]...)
				// Written in the direction data flows: each feeds the next.
				for a, b := 0, len(loop)-1; a < b; a, b = a+1, b-1 {
					loop[a], loop[b] = loop[b], loop[a]
				}
				loop = rotateToMin(loop)
				text := strings.Join(append(loop, loop[0]), " -> ")
				for i, name := range loop {
					p := byName[name]
					// At the table it reads of the one before it in the loop.
					prev := byName[loop[(i+len(loop)-1)%len(loop)]]
					pos := p.Pipeline.Pos
					if tableKey(p.Source.Table.Value) == tableKey(prev.Target.Table.Value) {
						pos = p.Source.Table.Pos
					} else {
						for _, l := range p.Lookups {
							if tableKey(l.Table.Value) == tableKey(prev.Target.Table.Value) {
								pos = l.Table.Pos
								break
							}
						}
					}
					diags.addFor(loop, pos, "pipelines %s form a cycle (each reads the target of the one before it): no order runs each after its upstream; break the cycle", text)
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[n] = black
	}
	for _, n := range names {
		if color[n] == white {
			visit(n)
		}
	}
	return diags
}

func rotateToMin(loop []string) []string {
	m := 0
	for i := range loop {
		if loop[i] < loop[m] {
			m = i
		}
	}
	return append(append([]string(nil), loop[m:]...), loop[:m]...)
}

// Upstreams returns the pipelines whose target this spec reads, as the
// project's check found them (none for a spec checked on its own).
func (s *Spec) Upstreams() []Upstream { return append([]Upstream(nil), s.upstream...) }

// Graph returns the project's dependencies, upstream first, in a stable
// order: by downstream pipeline name, then upstream name.
func Graph(specs []*Spec) []Edge {
	var edges []Edge
	for _, s := range specs {
		for _, u := range s.upstream {
			edges = append(edges, Edge{From: u.Pipeline, To: s.Pipeline.Value, Via: u.Via})
		}
	}
	sort.Slice(edges, func(i, j int) bool {
		if edges[i].From != edges[j].From {
			return edges[i].From < edges[j].From
		}
		return edges[i].To < edges[j].To
	})
	return edges
}

// RunOrder returns specs in dependency order: each after every upstream it
// has among specs, otherwise in the order given. The graph has no cycle
// (LoadSpecs refuses one); if it had, the rest keep their order.
//
// The order is the one that takes, again and again, the first spec in the
// given order whose upstreams among specs have all been taken: a heap of
// the ready specs' indexes gives it without a scan of the list for each.
func RunOrder(specs []*Spec) []*Spec {
	index := make(map[string]int, len(specs))
	for i, s := range specs {
		if _, ok := index[s.Pipeline.Value]; !ok {
			index[s.Pipeline.Value] = i
		}
	}
	waits := make([]int, len(specs))  // upstreams among specs not yet taken
	down := make([][]int, len(specs)) // the specs each is an upstream of
	for i, s := range specs {
		for _, u := range s.upstream {
			if j, ok := index[u.Pipeline]; ok {
				waits[i]++
				down[j] = append(down[j], i)
			}
		}
	}
	ready := &intHeap{}
	for i, n := range waits {
		if n == 0 {
			heap.Push(ready, i)
		}
	}
	taken := make([]bool, len(specs))
	out := make([]*Spec, 0, len(specs))
	for ready.Len() > 0 {
		i := heap.Pop(ready).(int)
		taken[i] = true
		out = append(out, specs[i])
		for _, j := range down[i] {
			if waits[j]--; waits[j] == 0 {
				heap.Push(ready, j)
			}
		}
	}
	// A cycle: what it holds keeps the order given.
	for i, s := range specs {
		if !taken[i] {
			out = append(out, s)
		}
	}
	return out
}

// intHeap is a min-heap of ints (container/heap): the specs ready to
// take, the first given first.
type intHeap []int

func (h intHeap) Len() int           { return len(h) }
func (h intHeap) Less(i, j int) bool { return h[i] < h[j] }
func (h intHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *intHeap) Push(v any)        { *h = append(*h, v.(int)) }
func (h *intHeap) Pop() any {
	a := *h
	v := a[len(a)-1]
	*h = a[:len(a)-1]
	return v
}

// Select expands dbt-style selectors over the project's specs: NAME,
// NAME+ (with every pipeline downstream of it), +NAME (with every one
// upstream), +NAME+ (both). The result is in dependency order.
func Select(all []*Spec, selectors []string) ([]*Spec, error) {
	byName := map[string]*Spec{}
	var known []string
	for _, s := range all {
		byName[s.Pipeline.Value] = s
		known = append(known, s.Pipeline.Value)
	}
	down := map[string][]string{}
	for _, s := range all {
		for _, u := range s.upstream {
			down[u.Pipeline] = append(down[u.Pipeline], s.Pipeline.Value)
		}
	}
	chosen := map[string]bool{}
	var order []*Spec
	pick := func(n string) {
		if !chosen[n] {
			chosen[n] = true
			order = append(order, byName[n])
		}
	}
	var walk func(n string, next func(string) []string, seen map[string]bool)
	walk = func(n string, next func(string) []string, seen map[string]bool) {
		if seen[n] {
			return
		}
		seen[n] = true
		pick(n)
		for _, m := range next(n) {
			walk(m, next, seen)
		}
	}
	ups := func(n string) []string {
		var out []string
		for _, u := range byName[n].upstream {
			if byName[u.Pipeline] != nil {
				out = append(out, u.Pipeline)
			}
		}
		return out
	}
	downs := func(n string) []string { return down[n] }
	for _, sel := range selectors {
		name := strings.TrimSuffix(strings.TrimPrefix(sel, "+"), "+")
		switch {
		case byName[name] != nil:
		case name == sel:
			return nil, fmt.Errorf("unknown pipeline %q (known: %s)", name, strings.Join(known, ", "))
		default:
			return nil, fmt.Errorf("unknown pipeline %q in %q (known: %s)", name, sel, strings.Join(known, ", "))
		}
		pick(name)
		if strings.HasPrefix(sel, "+") {
			walk(name, ups, map[string]bool{})
		}
		if strings.HasSuffix(sel, "+") {
			walk(name, downs, map[string]bool{})
		}
	}
	return RunOrder(order), nil
}
