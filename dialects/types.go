package dialects

import (
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler"
)

// TypeNames maps the portable types to an engine's names: a dialect's
// ColumnType is usually one of these tables. The decimal entry takes the
// precision and scale as %d verbs, the varchar entry the length; other
// entries take none.
type TypeNames map[compiler.TypeKind]string

// Spell returns the engine's name of t, or an error naming the dialect
// when the engine has none.
func (m TypeNames) Spell(d Name, t compiler.Type) (string, error) {
	name, ok := m[t.Kind]
	if !ok {
		return "", fmt.Errorf("%s: no type for %s", d, t)
	}
	switch {
	case t.Kind == compiler.Decimal && strings.Count(name, "%d") == 2:
		return fmt.Sprintf(name, t.Precision, t.Scale), nil
	case t.Kind == compiler.Varchar && strings.Count(name, "%d") == 1:
		return fmt.Sprintf(name, t.Length), nil
	}
	return name, nil
}
