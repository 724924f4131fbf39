package main

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDemoSpec keeps the demo's embedded spec equal to specs/orders.yaml:
// the demo runs the spec the README shows.
func TestDemoSpec(t *testing.T) {
	want, err := os.ReadFile("../../specs/orders.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), demoOrdersYAML); diff != "" {
		t.Errorf("demo spec differs from specs/orders.yaml (-file +demo):\n%s", diff)
	}
}
