package main

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/incrc/incrc/compiler/ir"

	"go.yaml.in/yaml/v3"

	"github.com/incrc/incrc/compiler"
)

// A pipeline test file, NAME.test.yaml next to the specs: the tests of one
// pipeline. Each test gives the source rows (and optionally the target's
// rows, the saved watermark and other tables), runs one or several windows,
// and says what it expects: counts, target rows, quarantined rows.
//
//	pipeline: dw_orders
//	tests:
//	  - name: a late payment is caught by the lookback
//	    given:
//	      source:
//	        - {order_id: 1, order_date: 2026-01-20, amount: 50.00, updated_at: "2026-01-20 09:00:00"}
//	    runs:
//	      - until: 2026-01-21
//	        expect: {read: 1, inserted: 1}
//	      - update:
//	          - {order_id: 1, order_date: 2026-01-20, amount: 22.00, updated_at: "2026-01-20 12:00:00"}
//	        until: 2026-01-22
//	    expect:
//	      target:
//	        - {order_id: 1, amount: 22}
type testFile struct {
	Pipeline string     `yaml:"pipeline"`
	Tests    []testCase `yaml:"tests"`

	path string
}

type testCase struct {
	Name   string      `yaml:"name"`
	Given  testGiven   `yaml:"given"`
	Runs   []testStep  `yaml:"runs"`
	Expect *testExpect `yaml:"expect"`

	line int
}

type testGiven struct {
	Source    []testRow            `yaml:"source"`
	Target    []testRow            `yaml:"target"`
	Watermark string               `yaml:"watermark"`
	Tables    map[string]testTable `yaml:"tables"`
}

// testTable is a table the pipeline reads besides its source table: a
// lookup table, or a table its source.query reads.
type testTable struct {
	Columns map[string]string `yaml:"columns"`
	Rows    []testRow         `yaml:"rows"`
}

// testRow is a row: column name to value, as written (null is NULL).
type testRow map[string]yaml.Node

type testStep struct {
	Until       string      `yaml:"until"`
	FullRefresh bool        `yaml:"full_refresh"`
	Force       bool        `yaml:"force"`
	Insert      []testRow   `yaml:"insert"` // appended to the source before the run
	Update      []testRow   `yaml:"update"` // replace the source rows of their unique_key
	Delete      []testRow   `yaml:"delete"` // the source rows of their unique_key are deleted
	Expect      *testExpect `yaml:"expect"`
}

type testExpect struct {
	Read        *int64 `yaml:"read"`
	Inserted    *int64 `yaml:"inserted"`
	Updated     *int64 `yaml:"updated"`
	Deleted     *int64 `yaml:"deleted"`
	Quarantined *int64 `yaml:"quarantined"`
	Skipped     *int64 `yaml:"skipped"`
	Ignored     *int64 `yaml:"ignored"`
	// Fails: the run fails, with an error that contains this text.
	Fails      string     `yaml:"fails"`
	Watermark  string     `yaml:"watermark"`
	Target     *[]testRow `yaml:"target"`     // absent: not checked; []: empty
	Quarantine *[]testRow `yaml:"quarantine"` // the quarantine table's rows (incrc_reason is a column)
}

var (
	yamlLineRe     = regexp.MustCompile(`line (\d+): (.*)`)
	unknownFieldRe = regexp.MustCompile(`^field (\S+) not found in type`)
)

// loadTestFile reads a test file, from inside roots (compiler.FileRule).
// Errors name file:line:col.
func loadTestFile(path string, roots []string) (*testFile, error) {
	data, err := compiler.ReadFile(path, compiler.FileRule{What: "a test file", Max: compiler.MaxDataFile, Roots: roots})
	if err != nil {
		return nil, err
	}
	var tf testFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&tf); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) {
			var lines []string
			src := strings.Split(string(data), "\n")
			for _, e := range te.Errors {
				m := yamlLineRe.FindStringSubmatch(e)
				if m == nil {
					lines = append(lines, path+": "+e)
					continue
				}
				line, _ := strconv.Atoi(m[1])
				msg, col := m[2], 1
				if u := unknownFieldRe.FindStringSubmatch(msg); u != nil {
					msg = fmt.Sprintf("unknown key %q (a test has name, given, runs, expect; given: source, target, watermark, tables; a run: until, insert, update, delete, full_refresh, force, expect)", u[1])
					if line >= 1 && line <= len(src) {
						col = strings.Index(src[line-1], u[1]) + 1
					}
				}
				lines = append(lines, fmt.Sprintf("%s:%d:%d: %s", path, line, max(col, 1), msg))
			}
			return nil, errors.New(strings.Join(lines, "\n"))
		}
		if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
			return nil, fmt.Errorf("%s:%s:1: invalid YAML: %s", path, m[1], m[2])
		}
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	tf.path = path
	// Each test's line, for messages: the decoder keeps no positions.
	var root yaml.Node
	if yaml.Unmarshal(data, &root) == nil && len(root.Content) == 1 {
		m := root.Content[0]
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == "tests" {
				for j, t := range m.Content[i+1].Content {
					if j < len(tf.Tests) {
						tf.Tests[j].line = t.Line
					}
				}
			}
		}
	}
	switch {
	case tf.Pipeline == "":
		return nil, fmt.Errorf("%s:1:1: missing required key \"pipeline\": the pipeline these tests run", path)
	case len(tf.Tests) == 0:
		return nil, fmt.Errorf("%s:1:1: missing required key \"tests\": a list of tests, each with given:, runs: and expect:", path)
	}
	for i, tc := range tf.Tests {
		at := fmt.Sprintf("%s:%d:1", path, tc.line)
		switch {
		case tc.Name == "":
			return nil, fmt.Errorf("%s: test %d has no name", at, i+1)
		case len(tc.Runs) == 0:
			return nil, fmt.Errorf("%s: test %q has no runs: give at least one, as in  runs: [{until: 2026-01-02}]", at, tc.Name)
		}
	}
	return &tf, nil
}

// cell is one value of a row as written in a test, or as read from the
// database, spelled as runner.Canon spells values so that the two compare.
func cellText(n yaml.Node) (text string, null bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", true
	}
	return n.Value, false
}

// bindValue converts a value written in a test to what the driver binds
// for a column of type t. bindTime spells a time for the target.
func bindValue(n yaml.Node, t ir.Type, bindTime func(string, ir.TypeKind) (any, error)) (any, error) {
	s, null := cellText(n)
	if null {
		return nil, nil
	}
	switch {
	case t.IsTime():
		return bindTime(s, t.Kind)
	case t.IsInteger():
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not an integer, and the column is %s", s, t)
		}
		return v, nil
	case t.Kind == ir.Double:
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number, and the column is %s", s, t)
		}
		return v, nil
	case t.Kind == ir.Boolean:
		v, err := strconv.ParseBool(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not true or false, and the column is %s", s, t)
		}
		return v, nil
	}
	return s, nil
}

// rowColumns lists the columns of expected rows in the order of cols (the
// pipeline's), then any other in name order.
func rowColumns(rows []testRow, order []string) ([]string, error) {
	seen := map[string]bool{}
	for _, r := range rows {
		for c := range r {
			seen[c] = true
		}
	}
	var out []string
	for _, c := range order {
		if seen[c] {
			out = append(out, c)
			delete(seen, c)
		}
	}
	var rest []string
	for c := range seen {
		rest = append(rest, c)
	}
	sort.Strings(rest)
	out = append(out, rest...)
	for i, r := range rows {
		if len(r) != len(out) {
			var missing []string
			for _, c := range out {
				if _, ok := r[c]; !ok {
					missing = append(missing, c)
				}
			}
			return nil, fmt.Errorf("expected row %d lacks %s: every expected row names the same columns", i+1, strings.Join(missing, ", "))
		}
	}
	return out, nil
}
