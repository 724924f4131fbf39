package compiler

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

var update = flag.Bool("update", false, "rewrite docs/incrc.schema.json and docs/incrc.project.schema.json")

// exampleYAML writes a document that holds every key of the table once,
// each with its example value, in block style.
func exampleYAML(t *testing.T, keys []Key, indent string) string {
	t.Helper()
	var b strings.Builder
	for _, k := range keys {
		switch k.Kind {
		case KindMapping:
			fmt.Fprintf(&b, "%s%s:\n%s", indent, k.Name, exampleYAML(t, k.Children, indent+"  "))
		case KindMappingList:
			inner := exampleYAML(t, k.Children, indent+"    ")
			fmt.Fprintf(&b, "%s%s:\n%s  - %s", indent, k.Name, indent, strings.TrimPrefix(inner, indent+"    "))
		case KindColumns:
			var long []string
			for _, c := range k.Children {
				long = append(long, c.Name+": "+c.Example)
			}
			fmt.Fprintf(&b, "%s%s:\n%s  short_form: bigint\n%s  long_form: {%s}\n", indent, k.Name, indent, indent, strings.Join(long, ", "))
		default:
			if k.Example == "" {
				t.Errorf("key %s has no example", k.Name)
			}
			fmt.Fprintf(&b, "%s%s: %s\n", indent, k.Name, k.Example)
		}
		if k.Doc == "" {
			t.Errorf("key %s has no doc", k.Name)
		}
	}
	return b.String()
}

// TestKeyTable parses a spec that uses every key of the table: each must
// be read by the parser (a key in the table without its case in the
// parser's switch is reported as unread), and the schema must accept the
// same document.
func TestKeyTable(t *testing.T) {
	doc := exampleYAML(t, SpecKeys, "")
	s, err := Parse("all.yaml", []byte(doc))
	if err != nil {
		t.Fatalf("the parser refuses keys of the table:\n%v\n\n%s", err, doc)
	}
	if s.Watermark == nil || !s.Watermark.Lag.Set() || s.CDC == nil || s.CDC.Ops == nil || len(s.CDC.Ops.Delete) == 0 || len(s.Lookups) != 1 || !s.Lookups[0].OpenEnd.Set() {
		t.Errorf("keys of the table were not read into the spec:\n%s", doc)
	}
	if errs := validateSchema(t, Schema(), doc); len(errs) > 0 {
		t.Errorf("the schema refuses keys of the table: %v\n\n%s", errs, doc)
	}

	cfg := exampleYAML(t, ConfigKeys, "")
	path := filepath.Join(t.TempDir(), "incrc.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadConfig(path, func(string) (string, bool) { return "", false }); err != nil {
		t.Errorf("the project file's parser refuses keys of its table: %v\n\n%s", err, cfg)
	}
	if errs := validateSchema(t, ConfigSchema(), cfg); len(errs) > 0 {
		t.Errorf("the project schema refuses keys of its table: %v", errs)
	}
}

// TestSchemaAgreesWithParser: the repository's specs pass both; every
// broken spec of the corpus whose unknown key the parser reports is
// refused by the schema too, and a key the schema does not know is one the
// parser reports.
func TestSchemaAgreesWithParser(t *testing.T) {
	valid, _ := filepath.Glob("../specs/*.yaml")
	scaffold, _ := filepath.Glob("../cmd/incrc/scaffold/specs/*.yaml") // what incrc init writes
	if len(valid) == 0 || len(scaffold) < 6 {
		t.Fatalf("no specs in ../specs (%d) or incrc init's examples (%d)", len(valid), len(scaffold))
	}
	valid = append(valid, scaffold...)
	for _, f := range valid {
		if IsTestFile(f) {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if errs := validateSchema(t, Schema(), string(data)); len(errs) > 0 {
			t.Errorf("%s: the schema refuses a valid spec: %v", f, errs)
		}
	}
	invalid, _ := filepath.Glob("testdata/invalid/*.yaml")
	unknown := 0
	for _, f := range invalid {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var probe yaml.Node
		if yaml.Unmarshal(data, &probe) != nil {
			continue // not YAML: nothing for a schema to say
		}
		_, perr := Parse(f, data)
		// A type split at its comma in a { } mapping leaves a stray key
		// that the parser explains instead of calling it unknown.
		parserUnknown := perr != nil && (strings.Contains(perr.Error(), "unknown key") || strings.Contains(perr.Error(), "a comma ends a value"))
		schemaUnknown := false
		for _, e := range validateSchema(t, Schema(), string(data)) {
			if strings.Contains(e, "not allowed") {
				schemaUnknown = true
			}
		}
		if parserUnknown != schemaUnknown {
			t.Errorf("%s: the parser reports an unknown key: %v; the schema: %v\nparser: %v", f, parserUnknown, schemaUnknown, perr)
		}
		if parserUnknown {
			unknown++
		}
	}
	if unknown == 0 {
		t.Error("no broken spec of the corpus has an unknown key: the comparison tested nothing")
	}
}

// TestSchemaFiles keeps the checked-in schemas equal to what incrc schema
// writes (go test ./compiler -run TestSchemaFiles -update rewrites them).
func TestSchemaFiles(t *testing.T) {
	for path, want := range map[string][]byte{
		"../docs/incrc.schema.json":         Schema(),
		"../docs/incrc.project.schema.json": ConfigSchema(),
	} {
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test ./compiler -run TestSchemaFiles -update writes it)", err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Errorf("%s is not what the key table generates (-generated +file):\n%s", path, diff)
		}
	}
}

// validateSchema checks a YAML document against a JSON Schema: the subset
// of draft-07 that Schema writes (type, enum, pattern, minimum,
// properties, required, additionalProperties, minProperties, items,
// minItems, anyOf). It returns one message per violation.
func validateSchema(t *testing.T, schema []byte, doc string) []string {
	t.Helper()
	var s map[string]any
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	if len(n.Content) == 0 {
		return nil
	}
	var errs []string
	check(s, jsonValue(n.Content[0]), "", &errs)
	return errs
}

// jsonValue reads a YAML node as a language server does (YAML 1.2: a
// date is a string).
func jsonValue(n *yaml.Node) any {
	switch n.Kind {
	case yaml.AliasNode:
		return jsonValue(n.Alias)
	case yaml.MappingNode:
		m := map[string]any{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = jsonValue(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		l := []any{}
		for _, c := range n.Content {
			l = append(l, jsonValue(c))
		}
		return l
	}
	switch n.Tag {
	case "!!null":
		return nil
	case "!!bool":
		return n.Value == "true"
	case "!!int", "!!float":
		var f float64
		fmt.Sscan(n.Value, &f)
		return f
	}
	return n.Value
}

func check(s map[string]any, v any, path string, errs *[]string) {
	fail := func(format string, args ...any) {
		*errs = append(*errs, fmt.Sprintf("%s: %s", orRoot(path), fmt.Sprintf(format, args...)))
	}
	if alts, ok := s["anyOf"].([]any); ok {
		// As language servers do: when one form has the value's type,
		// its errors are the ones to show.
		var shaped [][]string
		for _, a := range alts {
			var sub []string
			check(a.(map[string]any), v, path, &sub)
			if len(sub) == 0 {
				return
			}
			if typ, ok := a.(map[string]any)["type"]; ok && hasType(typ, v) {
				shaped = append(shaped, sub)
			}
		}
		if len(shaped) == 1 {
			*errs = append(*errs, shaped[0]...)
			return
		}
		fail("matches none of the allowed forms")
		return
	}
	if typ, ok := s["type"]; ok && !hasType(typ, v) {
		fail("%v is not of type %v", v, typ)
		return
	}
	if enum, ok := s["enum"].([]any); ok {
		found := false
		for _, e := range enum {
			if e == v {
				found = true
			}
		}
		if !found {
			fail("%v is not one of %v", v, enum)
		}
	}
	if p, ok := s["pattern"].(string); ok {
		if str, ok := v.(string); ok && !regexp.MustCompile(p).MatchString(str) {
			fail("%q does not match %s", str, p)
		}
	}
	if min, ok := s["minimum"].(float64); ok {
		if f, ok := v.(float64); ok && f < min {
			fail("%v is below %v", f, min)
		}
	}
	switch v := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for _, r := range asStrings(s["required"]) {
			if _, ok := v[r]; !ok {
				fail("missing required key %q", r)
			}
		}
		if min, ok := s["minProperties"].(float64); ok && float64(len(v)) < min {
			fail("fewer than %v keys", min)
		}
		for k, val := range v {
			if sub, ok := props[k].(map[string]any); ok {
				check(sub, val, path+"."+k, errs)
				continue
			}
			switch ap := s["additionalProperties"].(type) {
			case bool:
				if !ap {
					fail("key %q is not allowed", k)
				}
			case map[string]any:
				check(ap, val, path+"."+k, errs)
			}
		}
	case []any:
		if min, ok := s["minItems"].(float64); ok && float64(len(v)) < min {
			fail("fewer than %v items", min)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, e := range v {
				check(items, e, fmt.Sprintf("%s[%d]", path, i), errs)
			}
		}
	}
}

func orRoot(path string) string {
	if path == "" {
		return "(document)"
	}
	return strings.TrimPrefix(path, ".")
}

func asStrings(v any) []string {
	l, _ := v.([]any)
	out := make([]string, len(l))
	for i, s := range l {
		out[i], _ = s.(string)
	}
	return out
}

func hasType(typ any, v any) bool {
	var names []string
	switch t := typ.(type) {
	case string:
		names = []string{t}
	case []any:
		names = asStrings(t)
	}
	for _, n := range names {
		switch n {
		case "string":
			if _, ok := v.(string); ok {
				return true
			}
		case "number":
			if _, ok := v.(float64); ok {
				return true
			}
		case "integer":
			if f, ok := v.(float64); ok && f == float64(int64(f)) {
				return true
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return true
			}
		case "object":
			if _, ok := v.(map[string]any); ok {
				return true
			}
		case "array":
			if _, ok := v.([]any); ok {
				return true
			}
		}
	}
	return false
}
