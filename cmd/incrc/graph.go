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

// printGraph lists the pipelines that feed each other, one edge a line:
// what incrc run orders, and which watermark holds which hi back.
func printGraph(w io.Writer, edges []compiler.Edge, markdown bool) {
	if len(edges) == 0 {
		return
	}
	if markdown {
		fmt.Fprintf(w, "\n#### Pipelines that feed each other\n\n")
		for _, e := range edges {
			fmt.Fprintf(w, "- %s -> %s (%s)\n", mdCode(e.From), mdCode(e.To), mdText(e.Via))
		}
		return
	}
	fmt.Fprintf(w, "\nPipelines that feed each other (incrc run runs upstream first):\n")
	for _, e := range edges {
		fmt.Fprintf(w, "  %s\n", e)
	}
}
