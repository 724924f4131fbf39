package compiler

import (
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// ParamLine is a parameter as the compiled file's header writes it
// (WriteParamLine), for the tests.
func ParamLine(p ir.SpecParam) string {
	var b strings.Builder
	WriteParamLine(&b, p)
	return b.String()
}
