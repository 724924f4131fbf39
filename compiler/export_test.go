package compiler

import "strings"

// ParamLine is a parameter as the compiled file's header writes it
// (WriteParamLine), for the tests.
func ParamLine(p SpecParam) string {
	var b strings.Builder
	WriteParamLine(&b, p)
	return b.String()
}
