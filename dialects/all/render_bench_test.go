//go:build bench

package all_test

import (
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler"
	"github.com/incrc/incrc/dialects"
	"github.com/incrc/incrc/dialects/all"
)

// BenchmarkRender renders every golden spec for every dialect: the part of
// `incrc compile` that runs once per spec and dialect (see
// cmd/incrc's BenchmarkCompile1000 for the whole command).
func BenchmarkRender(b *testing.B) {
	plans, srcs := goldenPlans(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for k, plan := range plans {
			for _, name := range all.Names() {
				d, _ := all.Lookup(name)
				if _, err := dialects.Render(d, plan, srcs[k]); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkCheckPart is the lex-back alone, of every statement of every
// golden spec rendered for every dialect.
func BenchmarkCheckPart(b *testing.B) {
	plans, srcs := goldenPlans(b)
	type checked struct {
		d dialects.Dialect
		p dialects.Part
	}
	var parts []checked
	size := 0
	for k, plan := range plans {
		for _, name := range all.Names() {
			d, _ := all.Lookup(name)
			rendered, err := dialects.Render(d, plan, srcs[k])
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range rendered {
				on := d
				if r.On == ir.OnSource {
					on = srcs[k]
				}
				for _, p := range r.Parts {
					parts = append(parts, checked{on, p})
					size += len(p.SQL)
				}
			}
		}
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range parts {
			if err := dialects.CheckPart(c.d, c.p); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func goldenPlans(b *testing.B) ([]*ir.Plan, []dialects.Dialect) {
	var (
		plans []*ir.Plan
		srcs  []dialects.Dialect
	)
	for _, s := range goldenSpecs(b) {
		plan, err := compiler.Lower(s)
		if err != nil {
			b.Fatal(err)
		}
		plans = append(plans, plan)
		srcs = append(srcs, sourceOf(b, plan))
	}
	return plans, srcs
}
