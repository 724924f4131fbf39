package compiler

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// libraryYAML is what the YAML library reads of src: the root node, or
// an error (a syntax error, a second document).
func libraryYAML(src []byte) (*yaml.Node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("a second document, or an error after the first: %v", err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		return nil, fmt.Errorf("not one document")
	}
	return doc.Content[0], nil
}

// sameNodes reports the first difference between the node plainYAML read
// and the library's, in every field the parser reads.
func sameNodes(path string, got, want *yaml.Node) error {
	switch {
	case got.Kind != want.Kind, got.Style != want.Style, got.Value != want.Value, got.Line != want.Line, got.Column != want.Column,
		got.ShortTag() != want.ShortTag(), (got.Tag == "!!null") != (want.Tag == "!!null"), got.Anchor != want.Anchor,
		(got.Alias == nil) != (want.Alias == nil), len(got.Content) != len(want.Content):
		return fmt.Errorf("%s: plainYAML read kind %v style %v tag %q (%s) %q at %d:%d with %d children; the library: kind %v style %v tag %q (%s) %q at %d:%d with %d children",
			path, got.Kind, got.Style, got.Tag, got.ShortTag(), got.Value, got.Line, got.Column, len(got.Content),
			want.Kind, want.Style, want.Tag, want.ShortTag(), want.Value, want.Line, want.Column, len(want.Content))
	}
	for i := range got.Content {
		if err := sameNodes(fmt.Sprintf("%s/%d", path, i), got.Content[i], want.Content[i]); err != nil {
			return err
		}
	}
	return nil
}

// checkPlainYAML: when plainYAML reads src, the library reads it without
// error into the same nodes, and Parse gives the same spec and the same
// diagnostics either way. It reports whether plainYAML read src.
func checkPlainYAML(t testing.TB, name string, src []byte) bool {
	t.Helper()
	got, ok := plainYAML(src)
	if !ok {
		return false
	}
	want, err := libraryYAML(src)
	if err != nil {
		t.Fatalf("%s: plainYAML read what the library refuses (%v):\n%s", name, err, src)
	}
	if err := sameNodes("", got, want); err != nil {
		t.Fatalf("%s: %v\n%s", name, err, src)
	}
	fast, fastErr := Parse(name, src)
	fastYAML = false
	slow, slowErr := Parse(name, src)
	fastYAML = true
	if !reflect.DeepEqual(fast, slow) || fmt.Sprint(fastErr) != fmt.Sprint(slowErr) {
		t.Fatalf("%s: Parse differs with plainYAML:\n%+v\n%v\nwith the library:\n%+v\n%v", name, fast, fastErr, slow, slowErr)
	}
	if fastErr == nil {
		fv, sv := Validate(fast), Validate(slow)
		if fmt.Sprint(fv) != fmt.Sprint(sv) {
			t.Fatalf("%s: Validate differs: %v, with the library: %v", name, fv, sv)
		}
	}
	return true
}

// yamlCorpus is every YAML file of the repository: specs, invalid specs,
// project files.
func yamlCorpus(t testing.TB) map[string][]byte {
	corpus := map[string][]byte{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if !d.IsDir() && (strings.HasSuffix(path, ".yaml") || strings.HasSuffix(path, ".yml")) {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			corpus[path] = data
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(corpus) < 100 {
		t.Fatalf("only %d YAML files", len(corpus))
	}
	return corpus
}

// TestPlainYAML compares plainYAML with the library on every YAML file of
// the repository and on many mutations of them: whatever plainYAML reads,
// it reads as the library does; the rest it leaves to the library.
func TestPlainYAML(t *testing.T) {
	corpus := yamlCorpus(t)
	var names []string
	read := 0
	for name, src := range corpus {
		names = append(names, name)
		if checkPlainYAML(t, name, src) {
			read++
		}
	}
	// Hand-picked shapes, at the edges of the subset.
	for i, src := range []string{
		"a: b\nc:\n- x\n- y\n", "a:\n  - b: 1\n    c: 2\n  - d\n", "a:\n- b: 1\n  c:\n  - x\n", "a: b # c\n", "a: b#c\n",
		"a: 'x' # c\n", "a: \"x\"#c\n", "a: [x, 'y', \"z\"]\n", "a: []\n", "a: {}\n", "a: { }\n", "a: [ ]\n",
		"a: {x: 1, y: 'z'}\n", "a: x:y\n", "a: http://x\n", "a: x ? y\n", "a: [x ?y]\n", "a: [x? y]\n", "a: ~\n", "~: a\n",
		"null: x\n", "a: Null\n", "a: NULL\n", "a: nULL\n", "a: 1\n  # comment\nb: 2\n", "a:\n  b: 1\n c: 2\n",
		"a:    b   \n", "a: b\n\n\nc: d", "a-b: c\n", "a.b: c\n", "1: x\n", "_: x\n", "a: - x\n", "- a\n", " a: b\n",
		"a: [a, b]]\n", "a: {a: b}}\n", "a: [a, b] x\n", "a: 'it''s'\n", "a: \"a\\\"b\"\n", "a: b: c\n", "a:\n  - - x\n",
		"a:\n  -\n", "a:\n  - x\n  y: 1\n", "a:\n- x\nb: y\n", strings.Repeat("k", 200) + ": x\n", "a: b\n---\n",
		"a: 'b'c\n", "a: [b, c\n", "a: [b,c]\n", "a: [b , c ]\n", "a: {b:c}\n", "a: {b: }\n", "a: [-1]\n", "a: .inf\n",
		"a: 0x1F\n", "a: 1_000\n", "a: 2026-01-01T10:00:00Z\n", "a: b \n", "a:  \n  b: c\n", "a: # comment\n  b: c\n",
		"a: #comment\n  b: c\n", "a:#x\n", "a: x\n  - y\n", "a: x\n  y\n", "a:\n  b: 1\n  b: 2\n", "a: 1\na: 2\n",
		"a: [a b, c  d]\n", "a: {a b: c d}\n", "a: \"\"\n", "a: ''\n", "a: [\"\", '']\n", "a: <<\n", "<<: a\n",
		"a: true\nb: no\nc: 012\nd: +1\ne: 1e3\n", "a: [1, 2.5, true, null, ~]\n", "a: {b: null, c: ~}\n",
		"a:\n    - x\n    - y\nb: z\n", "a:\n  b:\n    c: d\n  e: f\ng: h\n", "a: b\n#\n  #\nc: d\n",
	} {
		checkPlainYAML(t, fmt.Sprintf("hand %d", i), []byte(src))
	}
	// The specs the compile benchmark copies must take the fast path.
	for _, name := range []string{"orders", "events", "sales", "customers"} {
		if _, ok := plainYAML(corpus[filepath.Join("..", "specs", name+".yaml")]); !ok {
			t.Errorf("plainYAML does not read specs/%s.yaml", name)
		}
	}
	t.Logf("plainYAML reads %d of %d files", read, len(corpus))
	if read < len(corpus)/2 {
		t.Errorf("plainYAML reads only %d of %d files", read, len(corpus))
	}
	// Mutations: a few edits of a file with what YAML gives meaning to.
	edits := []string{" ", "  ", "\n", "\n  ", ":", ": ", "- ", "-", "#", " #", "[", "]", "{", "}", ",", ", ", "\"", "'", "''", "\\",
		"a", "1", "0x1", "1.5", "-1", "null", "~", "Null", "true", "no", "&a ", "*a", "!!str ", "!x ", "---\n", "...\n", "%YAML 1.2\n",
		"|\n", ">\n", "? ", "\t", "\r", "é", "<<: ", "@", "`", "%", "a: b", "\n- x", "\n  - x", "{a: b}", "[a, b]", "'a'", "\"a\"", "\"a\\n\""}
	r := rand.New(rand.NewSource(12))
	mutants, readMutants := 0, 0
	for range 40000 {
		src := []byte(corpus[names[r.Intn(len(names))]])
		for range 1 + r.Intn(3) {
			if len(src) == 0 {
				break
			}
			at := r.Intn(len(src) + 1)
			switch r.Intn(4) {
			case 0, 1:
				src = append(src[:at:at], append([]byte(edits[r.Intn(len(edits))]), src[at:]...)...)
			case 2:
				end := min(len(src), at+1+r.Intn(6))
				src = append(src[:at:at], src[end:]...)
			case 3:
				// A line again, somewhere else.
				lines := bytes.Split(src, []byte("\n"))
				l := lines[r.Intn(len(lines))]
				src = append(src[:at:at], append(append(l, '\n'), src[at:]...)...)
			}
		}
		mutants++
		if checkPlainYAML(t, fmt.Sprintf("mutant %d", mutants), src) {
			readMutants++
		}
	}
	t.Logf("plainYAML reads %d of %d mutants", readMutants, mutants)
	if readMutants < mutants/10 {
		t.Errorf("plainYAML reads only %d of %d mutants: the mutations test little", readMutants, mutants)
	}
}

// FuzzPlainYAML: go test ./compiler -run '^$' -fuzz FuzzPlainYAML
func FuzzPlainYAML(f *testing.F) {
	for _, src := range yamlCorpus(f) {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		checkPlainYAML(t, "fuzz", src)
	})
}
