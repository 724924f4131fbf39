package compiler

import (
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// ParamLine is a parameter as the compiled file's header writes it
// (ir.WriteParamLine), for the tests.
func ParamLine(p ir.SpecParam) string {
	var b strings.Builder
	ir.WriteParamLine(&b, p)
	return b.String()
}
