package runner

import (
	"testing"

	"github.com/incrc/incrc/compiler/ir"
)

// TestPartitionBounds: the --from and --to that reconcile suggests parse
// as --from and --to, for every granularity.
func TestPartitionBounds(t *testing.T) {
	tests := []struct {
		granularity, key, from, to string
	}{
		{"day", "2026-01-05", "2026-01-05", "2026-01-06"},
		{"day", "2026-01-31", "2026-01-31", "2026-02-01"},
		{"month", "2026-12-01", "2026-12-01", "2027-01-01"},
		{"hour", "2026-01-05 23:00:00", "2026-01-05T23:00:00Z", "2026-01-06T00:00:00Z"},
	}
	for _, tt := range tests {
		t.Run(tt.granularity+" "+tt.key, func(t *testing.T) {
			plan := &ir.Plan{Partition: &ir.Partitioning{Granularity: tt.granularity}}
			from, to := PartitionBounds(plan, tt.key)
			if from != tt.from || to != tt.to {
				t.Errorf("PartitionBounds(%s) = %s, %s; want %s, %s", tt.key, from, to, tt.from, tt.to)
			}
			for _, s := range []string{from, to} {
				if _, err := ir.ParseTime(s); err != nil {
					t.Errorf("%s does not parse as --from/--to: %v", s, err)
				}
			}
		})
	}
}
