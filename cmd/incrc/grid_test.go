package main

import (
	"os"
	"testing"
)

// TestIsTerminalNotDevNull: /dev/null is a character device, and output
// sent there is not a terminal: no colour, no progress lines.
func TestIsTerminalNotDevNull(t *testing.T) {
	f, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("no %s: %v", os.DevNull, err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Errorf("isTerminal(%s) = true", os.DevNull)
	}
}
