package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinks: every relative link of the user documentation names a
// file of the repository, and a #fragment names a heading of the file it
// points into, as GitHub spells heading anchors. A guide moved or a
// heading renamed breaks the test, not the reader's click.
func TestDocLinks(t *testing.T) {
	root, _ := filepath.Abs("../..")
	docs, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	for _, f := range []string{"README.md", "CONTRIBUTING.md", "BENCHMARKS.md", "dialects/README.md"} {
		docs = append(docs, filepath.Join(root, f))
	}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	checked := 0
	for _, doc := range docs {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Error(err)
			continue
		}
		rel, _ := filepath.Rel(root, doc)
		for _, m := range link.FindAllStringSubmatch(proseOnly(string(data)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			file := doc
			if path != "" {
				file = filepath.Join(filepath.Dir(doc), filepath.FromSlash(path))
			}
			checked++
			info, err := os.Stat(file)
			if err != nil {
				t.Errorf("%s: link %q: no such file", rel, target)
				continue
			}
			if frag == "" || info.IsDir() || !strings.HasSuffix(file, ".md") {
				continue
			}
			body, err := os.ReadFile(file)
			if err != nil {
				t.Error(err)
				continue
			}
			if !headingAnchors(string(body))[frag] {
				t.Errorf("%s: link %q: no heading of %s has the anchor #%s", rel, target, filepath.Base(file), frag)
			}
		}
	}
	if checked == 0 {
		t.Error("no link found: the test reads the documents wrong")
	}
}

// proseOnly drops fenced code blocks, where a ](x) is code, not a link.
func proseOnly(doc string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

// headingAnchors are the fragments GitHub gives a document's headings:
// lowercased, punctuation dropped, spaces made hyphens; a repeated
// heading gets -1, -2, ...
func headingAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(proseOnly(doc), "\n") {
		text, ok := strings.CutPrefix(line, "#")
		if !ok {
			continue
		}
		text = strings.TrimLeft(text, "#")
		if !strings.HasPrefix(text, " ") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(text)) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[a+"-"+strconv.Itoa(n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}
