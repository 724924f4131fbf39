package main

import (
	"fmt"
	"io"

	"github.com/incrc/incrc/compiler"
)

// graphEdges are the project's dependencies that touch a chosen pipeline.
func graphEdges(pr *project) []compiler.Edge {
	chosen := map[string]bool{}
	for _, s := range pr.chosen {
		chosen[s.Pipeline.Value] = true
	}
	var out []compiler.Edge
	for _, e := range compiler.Graph(pr.all) {
		if chosen[e.From] || chosen[e.To] {
			out = append(out, e)
		}
	}
	return out
}

// graphView lists the pipelines that feed each other, one edge a line:
// what incrc run orders, and which watermark holds which hi back. It
// ends plan's and state's text; its JSON is plan's "graph" (state's JSON
// lines are states only).
type graphView []compiler.Edge

func (v graphView) json() any { return nil }

func (v graphView) text(w io.Writer) {
	if len(v) == 0 {
		return
	}
	fmt.Fprintf(w, "\nPipelines that feed each other (incrc run runs upstream first):\n")
	for _, e := range v {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

func (v graphView) markdown(w io.Writer) {
	if len(v) == 0 {
		return
	}
	fmt.Fprintf(w, "\n#### Pipelines that feed each other\n\n")
	for _, e := range v {
		fmt.Fprintf(w, "- %s -> %s (%s)\n", mdCode(e.From), mdCode(e.To), mdText(e.Via))
	}
}
