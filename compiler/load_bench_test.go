//go:build bench

package compiler

import (
	"os"
	"path/filepath"
	"testing"
)

// benchSpecs are the specs BenchmarkCompile1000 copies.
var benchSpecs = []string{"orders", "events", "sales", "customers"}

// BenchmarkLower lowers the specs the compile benchmark copies, one after
// the other.
func BenchmarkLower(b *testing.B) {
	var specs []*Spec
	for _, name := range benchSpecs {
		s, err := LoadSpec(filepath.Join("..", "specs", name+".yaml"))
		if err != nil {
			b.Fatal(err)
		}
		specs = append(specs, s)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, s := range specs {
			if _, err := Lower(s); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// BenchmarkParse parses and validates them from their bytes.
func BenchmarkParse(b *testing.B) {
	var files [][]byte
	for _, name := range benchSpecs {
		data, err := os.ReadFile(filepath.Join("..", "specs", name+".yaml"))
		if err != nil {
			b.Fatal(err)
		}
		files = append(files, data)
	}
	b.ReportAllocs()
	for b.Loop() {
		for i, data := range files {
			s, err := Parse(benchSpecs[i], data)
			if err != nil {
				b.Fatal(err)
			}
			if d := Validate(s); len(d) > 0 {
				b.Fatal(d)
			}
		}
	}
}
