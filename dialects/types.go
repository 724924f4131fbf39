package dialects

import (
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// TypeNames maps the portable types to an engine's names: a dialect's
// ColumnType is usually one of these tables. The decimal entry takes the
// precision and scale as %d verbs, the varchar entry the length; other
// entries take none.
type TypeNames map[ir.TypeKind]string

// Spell returns the engine's name of t, or an error naming the dialect
// when the engine has none.
func (m TypeNames) Spell(d Name, t ir.Type) (string, error) {
	name, ok := m[t.Kind]
	if !ok {
		return "", fmt.Errorf("%s: no type for %s", d, t)
	}
	switch {
	case t.Kind == ir.Decimal && strings.Count(name, "%d") == 2:
		return fmt.Sprintf(name, t.Precision, t.Scale), nil
	case t.Kind == ir.Varchar && strings.Count(name, "%d") == 1:
		return fmt.Sprintf(name, t.Length), nil
	}
	return name, nil
}
