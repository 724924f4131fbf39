package compiler

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"
)

func graphSpecs(t *testing.T, yamls ...string) ([]*Spec, Diagnostics) {
	t.Helper()
	var specs []*Spec
	for i, y := range yamls {
		s, err := Parse(string(rune('a'+i))+".yaml", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		if d := Validate(s); len(d) > 0 {
			t.Fatal(d)
		}
		specs = append(specs, s)
	}
	return specs, CheckProject(specs)
}

func chainSpec(name, src, dst, wmType string) string {
	return "pipeline: " + name + "\nsource: {table: " + src + "}\ntarget: {table: " + dst + "}\ncolumns: {id: bigint, t: " + wmType + "}\nstrategy: merge\nunique_key: [id]\nwatermark: {column: t, start: 2026-01-01}\n"
}

func TestGraphOrderAndSelect(t *testing.T) {
	specs, d := graphSpecs(t,
		chainSpec("c", "X.B", "x.c", "timestamp"),
		chainSpec("b", "x.a", "x.b", "date"),
		chainSpec("a", "app.a", "x.a", "timestamp"),
		chainSpec("z", "app.z", "x.z", "timestamp"))
	if len(d) > 0 {
		t.Fatal(d)
	}
	names := func(ss []*Spec) string {
		var out []string
		for _, s := range ss {
			out = append(out, s.Pipeline.Value)
		}
		return strings.Join(out, " ")
	}
	if got := names(RunOrder(specs)); got != "a b c z" {
		t.Errorf("RunOrder = %s, want a b c z", got)
	}
	for sel, want := range map[string]string{"b+": "b c", "+b": "a b", "+b+": "a b c", "c": "c", "z+": "z", "+c": "a b c"} {
		got, err := Select(specs, []string{sel})
		if err != nil || names(got) != want {
			t.Errorf("Select(%s) = %s, %v; want %s", sel, names(got), err, want)
		}
	}
	if _, err := Select(specs, []string{"q+"}); err == nil || !strings.Contains(err.Error(), `unknown pipeline "q" in "q+"`) {
		t.Errorf("Select(q+): %v", err)
	}
	var edges []string
	for _, e := range Graph(specs) {
		edges = append(edges, e.String())
	}
	if got := strings.Join(edges, "; "); got != "a -> b (source); b -> c (source)" {
		t.Errorf("Graph = %s", got)
	}
	if up := specs[1].Upstreams(); len(up) != 1 || !up[0].Bounds || up[0].Watermark.Kind != ir.Timestamp {
		t.Errorf("b's upstreams: %+v", up)
	}
}

func TestGraphRefuses(t *testing.T) {
	_, d := graphSpecs(t, chainSpec("a", "x.c", "x.a", "timestamp"), chainSpec("b", "x.a", "x.b", "timestamp"), chainSpec("c", "x.b", "x.c", "timestamp"))
	if len(d) != 3 || !strings.Contains(d[0].Msg, "pipelines a -> b -> c -> a form a cycle") {
		t.Errorf("cycle: %v", d)
	}
	_, d = graphSpecs(t, strings.Replace(chainSpec("a", "app.a", "x.a", "bigint"), "2026-01-01", "0", 1), chainSpec("b", "x.a", "x.b", "timestamp"))
	if len(d) != 1 || !strings.Contains(d[0].String(), "b.yaml:2:") || !strings.Contains(d[0].Msg, "whose saved watermark is a bigint") {
		t.Errorf("integer upstream of a time watermark: %v", d)
	}
	tied := strings.Replace(chainSpec("b", "x.a", "x.b", "timestamp"), "column: t,", "column: t, tiebreak: id,", 1)
	_, d = graphSpecs(t, chainSpec("a", "app.a", "x.a", "timestamp"), tied)
	if len(d) != 1 || !strings.Contains(d[0].String(), "b.yaml:7:") || !strings.Contains(d[0].Msg, "bounds this pipeline's window by time alone") {
		t.Errorf("an upstream bounding a tiebreak watermark: %v", d)
	}
}

func TestParamsAndLogicHash(t *testing.T) {
	base := "pipeline: p\nsource: {query: \"SELECT id, t -- the ids\\nFROM app.a WHERE note <> 'x\\ny'\"}\ntarget: {table: x.a}\ncolumns: {id: bigint, t: timestamp}\nstrategy: merge\nunique_key: [id]\nwatermark: {column: t, start: 2026-01-01, lookback: 2d}\n"
	parse := func(y string) *Spec {
		s, err := Parse("p.yaml", []byte(y))
		if err != nil {
			t.Fatal(err)
		}
		if d := Validate(s); len(d) > 0 {
			t.Fatal(d)
		}
		return s
	}
	a := parse(base)
	var q string
	for _, p := range Params(a) {
		if p.Key == "source.query" {
			q = p.Value
		}
		if strings.ContainsAny(ParamLine(p), "\r\n") {
			t.Errorf("a header line spans lines: %q", ParamLine(p))
		}
	}
	if q != `SELECT id, t FROM app.a WHERE note <> 'x\ny'` {
		t.Errorf("source.query as the header shows it: %q", q)
	}
	// The lookback, a comment of the query and its layout are not logic.
	b := parse(strings.Replace(strings.Replace(base, "lookback: 2d", "lookback: 3d", 1), " -- the ids\\n", "\\n  ", 1))
	if LogicHash(a) != LogicHash(b) {
		t.Errorf("a lookback or a comment changed the logic hash")
	}
	c := parse(strings.Replace(base, "WHERE note", "WHERE t IS NOT NULL AND note", 1))
	if LogicHash(a) == LogicHash(c) {
		t.Errorf("a query change did not change the logic hash")
	}
	var got []string
	for _, ch := range DiffParams(Params(a), Params(b)) {
		got = append(got, ch.String())
	}
	if strings.Join(got, "; ") != "watermark.lookback: 2d -> 3d" {
		t.Errorf("DiffParams = %v", got)
	}
	back, ok := ir.ReadParams([]byte(ParamLine(Params(a)[0]) + "\n-- name: x\n"))
	if !ok || len(back) != 1 || back[0] != Params(a)[0] {
		t.Errorf("ReadParams = %v, %v", back, ok)
	}
}

func TestGraphLookupCycle(t *testing.T) {
	b := "pipeline: b\nsource: {table: x.a}\ntarget: {table: x.b}\ncolumns: {id: bigint, t: timestamp}\nstrategy: merge\nunique_key: [id]\nwatermark: {column: t, start: 2026-01-01}\n"
	a := "pipeline: a\nsource: {table: app.a}\ntarget: {table: x.a}\ncolumns: {id: bigint, t: timestamp, n: bigint}\nstrategy: merge\nunique_key: [id]\nwatermark: {column: t, start: 2026-01-01}\nlookups:\n  - table: x.b\n    on: {id: id}\n    columns: {n: id}\n"
	_, d := graphSpecs(t, a, b)
	var where []string
	for _, x := range d {
		if strings.Contains(x.Msg, "form a cycle") {
			where = append(where, x.Pos.String())
		}
	}
	if strings.Join(where, " ") != "a.yaml:9:12 b.yaml:2:17" {
		t.Errorf("cycle through a lookup reported at %v (%v)", where, d)
	}
}

// TestRunOrderFirstReady: RunOrder takes, again and again, the first spec
// in the given order whose upstreams among specs are all taken (and the
// rest in their order when a cycle leaves none ready), on random graphs,
// some with cycles and some with upstreams outside the specs.
func TestRunOrderFirstReady(t *testing.T) {
	firstReady := func(specs []*Spec) []*Spec {
		in, done := map[string]bool{}, map[string]bool{}
		for _, s := range specs {
			in[s.Pipeline.Value] = true
		}
		var out []*Spec
		for len(out) < len(specs) {
			progress := false
			for _, s := range specs {
				ready := !done[s.Pipeline.Value]
				for _, u := range s.upstream {
					ready = ready && !(in[u.Pipeline] && !done[u.Pipeline])
				}
				if ready {
					done[s.Pipeline.Value] = true
					out = append(out, s)
					progress = true
					break
				}
			}
			if !progress {
				for _, s := range specs {
					if !done[s.Pipeline.Value] {
						done[s.Pipeline.Value] = true
						out = append(out, s)
					}
				}
			}
		}
		return out
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 500 {
		n := 1 + rng.IntN(12)
		specs := make([]*Spec, n)
		for i := range specs {
			specs[i] = &Spec{}
			specs[i].Pipeline.Value = fmt.Sprintf("p%d", i)
		}
		cyclic := round%5 == 0
		for i, s := range specs {
			for range rng.IntN(3) {
				j := rng.IntN(n + 2) // n, n+1: a pipeline outside specs
				if j == i || (!cyclic && j < n && j > i) {
					continue
				}
				if !slices.ContainsFunc(s.upstream, func(u ir.Upstream) bool { return u.Pipeline == fmt.Sprintf("p%d", j) }) {
					s.upstream = append(s.upstream, ir.Upstream{Pipeline: fmt.Sprintf("p%d", j)})
				}
			}
		}
		rng.Shuffle(n, func(a, b int) { specs[a], specs[b] = specs[b], specs[a] })
		if got, want := RunOrder(specs), firstReady(specs); !slices.Equal(got, want) {
			t.Fatalf("round %d: RunOrder differs from first-ready order", round)
		}
	}
}
