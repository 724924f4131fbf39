package main

import (
	"bytes"
	"html"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	gmhtml "github.com/yuin/goldmark/renderer/html"
)

// render is markdown as a pull request shows it: GitHub's flavour (tables,
// autolinks, strikethrough), raw HTML passed through as GitHub passes an
// <img> or a <details>.
func render(t *testing.T, md string) string {
	t.Helper()
	var out bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(gmhtml.WithUnsafe()))
	if err := gm.Convert([]byte(md), &out); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

var codeRe = regexp.MustCompile(`(?s)<code>(.*?)</code>`)

// codeTexts are the texts of the rendered code spans and blocks.
func codeTexts(rendered string) []string {
	var out []string
	for _, m := range codeRe.FindAllStringSubmatch(rendered, -1) {
		out = append(out, html.UnescapeString(m[1]))
	}
	return out
}

// hostile is a check literal that closes an inline code span early and
// says something in bold, with an image, as if incrc had said it.
const hostile = "note <> 'x` **No changes: this PR only reformats.** <img src=\"https://e.example/a.png\"> ``` `'"

// TestPlanMarkdownEscapes: a value of a spec in incrc plan --format
// markdown, the pull-request comment, renders as the text it is, in a code
// span, and nothing of it as markup.
func TestPlanMarkdownEscapes(t *testing.T) {
	t.Chdir(t.TempDir())
	os.MkdirAll("specs", 0o755)
	spec := `pipeline: dw_o
source: {table: app.o}
target: {table: dw.o}
columns: {id: bigint, note: text, updated_at: timestamp}
strategy: merge
unique_key: [id]
watermark: {column: updated_at, start: 2026-01-01}
`
	writeFile(t, "specs/o.yaml", spec)
	mustCmd(t, exitOK, "compile")
	quoted := strings.ReplaceAll(strings.ReplaceAll(hostile, `\`, `\\`), `"`, `\"`)
	writeFile(t, "specs/o.yaml", spec+`quality: {checks: ["`+quoted+`"]}`+"\n")
	md := mustCmd(t, exitChanges, "plan", "--format", "markdown")
	out := render(t, md)
	if strings.Contains(out, "<img") {
		t.Errorf("the check's image renders:\n%s", out)
	}
	if strings.Contains(out, "<strong>No changes") {
		t.Errorf("the check's bold text renders:\n%s", out)
	}
	found := false
	for _, c := range codeTexts(out) {
		found = found || strings.Contains(c, `quality.checks: + "`) && strings.Contains(c, strings.ReplaceAll(quoted, `\"`, `\"`))
	}
	if !found {
		t.Errorf("no code span holds the check as the spec says it:\n%s\n%s", md, out)
	}
}

// TestPlanMarkdownTableCells: values read from a target (a saved
// watermark, a source's folder, partitions) stay in their cells of the
// next-runs table and render as text.
func TestPlanMarkdownTableCells(t *testing.T) {
	var b strings.Builder
	nextView{{
		Pipeline:   "dw_o",
		Watermark:  "2026 | <img src=x> | **done**",
		WindowLo:   "`a`",
		WindowHi:   "[link](https://e.example)",
		Stale:      []string{"www.e.example", "a@e.example"},
		Source:     "landing/`x`|y/*.csv",
		Partitions: []string{"<b>p</b>", "_q_"},
	}}.markdown(&b)
	out := render(t, b.String())
	for _, bad := range []string{"<img", "<strong>", "<b>", "<a ", "<em>", "<code>"} {
		if strings.Contains(out, bad) {
			t.Errorf("%s renders:\n%s\n%s", bad, b.String(), out)
		}
	}
	rows := regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(out, -1)
	if len(rows) != 2 {
		t.Fatalf("want a header and one row, got %d:\n%s", len(rows), out)
	}
	if n := strings.Count(rows[1][1], "<td"); n != 5 {
		t.Errorf("the row has %d cells, want 5:\n%s", n, out)
	}
	for _, want := range []string{"2026 | &lt;img src=x&gt; | **done**", "landing/`x`|y/*.csv", "[`a`, [link](https://e.example))", "&lt;b&gt;p&lt;/b&gt;, _q_; 2 stale (www.e.example .. a@e.example)"} {
		if !strings.Contains(rows[1][1], want) {
			t.Errorf("the row does not say %q:\n%s", want, rows[1][1])
		}
	}
}

// TestMarkdownCode: a code span holds any text whole, backticks and
// spaces at its ends too.
func TestMarkdownCode(t *testing.T) {
	for _, s := range []string{"plain", "`", "a`b", "``x``", " lead", "trail ", " both ", "x\ny", "<i>i</i>", "a|b"} {
		out := render(t, "- "+mdCode(s)+"\n")
		got := codeTexts(out)
		want := strings.ReplaceAll(s, "\n", " ")
		if len(got) != 1 || got[0] != want {
			t.Errorf("mdCode(%q) renders as %q, want one span of %q:\n%s", s, got, want, out)
		}
	}
}
