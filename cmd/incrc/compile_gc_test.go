package main

import (
	"runtime/debug"
	"testing"
)

// TestBatchGC: a compile runs without the collector up to its heap limit
// and puts both settings back; GOGC or GOMEMLIMIT in the environment win.
func TestBatchGC(t *testing.T) {
	settings := func() (percent int, limit int64) {
		percent = debug.SetGCPercent(-1)
		debug.SetGCPercent(percent)
		return percent, debug.SetMemoryLimit(-1)
	}
	for _, tc := range []struct {
		name, gogc, gomemlimit string
		percent                int   // during the compile; 0: as before
		limit                  int64 // during the compile; 0: as before
	}{
		{name: "default", percent: -1, limit: compileHeapLimit},
		{name: "GOGC set", gogc: "100"},
		{name: "GOMEMLIMIT set", gomemlimit: "1GiB", percent: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			t.Setenv("GOMEMLIMIT", tc.gomemlimit)
			defer debug.SetGCPercent(debug.SetGCPercent(150))
			defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 40))
			restore := batchGC()
			percent, limit := settings()
			wantPercent, wantLimit := tc.percent, tc.limit
			if wantPercent == 0 {
				wantPercent = 150
			}
			if wantLimit == 0 {
				wantLimit = 1 << 40
			}
			if percent != wantPercent || limit != wantLimit {
				t.Errorf("during the compile: GC percent %d, memory limit %d; want %d, %d", percent, limit, wantPercent, wantLimit)
			}
			restore()
			if percent, limit := settings(); percent != 150 || limit != 1<<40 {
				t.Errorf("after the compile: GC percent %d, memory limit %d; want 150, %d", percent, limit, int64(1<<40))
			}
		})
	}
}
