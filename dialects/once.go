package dialects

import (
	"reflect"
	"slices"
	"sync"

	"github.com/incrc/incrc/compiler"
)

// spelled keeps the parts of the statements every plan holds alike
// (compiler.Statement.Shared: the state tables' bookkeeping, a large share
// of a plan's statements), as a dialect spells them: a Render spells each
// once for all plans rather than once a plan, and the lex-back checked
// them that once. A statement's parts depend only on the dialect, its
// operation and parameters, and the types its typed parameters stand for
// (Writer.Param); one with a typed parameter is spelled every time.
var spelled perDialect[spelledTable]

// spelledTable is what spelled keeps for one dialect: the parts of each
// shared statement spelled so far. Their number is bounded by the
// compiler's shared statements.
type spelledTable struct {
	mu    sync.RWMutex
	parts map[*compiler.Statement][]Part
}

// spelledFor is what spelled keeps for d, nil when it keeps nothing for
// it (perDialect).
func spelledFor(d Dialect) *spelledTable {
	return spelled.of(d, func() *spelledTable {
		return &spelledTable{parts: map[*compiler.Statement][]Part{}}
	})
}

// perDialect keeps a table of T for each dialect that is a pointer, as
// one is the same dialect whenever it compares equal; for a dialect that
// is a value it keeps nothing.
type perDialect[T any] struct {
	mu     sync.Mutex
	tables []dialectTable[T] // one a dialect
}

type dialectTable[T any] struct {
	d Dialect
	t *T
}

// of is the table kept for d, made by newTable the first time; nil for a
// dialect that is not a pointer.
func (p *perDialect[T]) of(d Dialect, newTable func() *T) *T {
	if reflect.TypeOf(d).Kind() != reflect.Pointer {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.tables {
		if e.d == d {
			return e.t
		}
	}
	t := newTable()
	p.tables = append(p.tables, dialectTable[T]{d: d, t: t})
	return t
}

// renderShared is renderStatement, for a statement every plan holds alike
// spelled once for d and kept. t is spelledFor(d), nil to keep nothing.
// The parts it returns are shared: their lists are clipped, so that an
// append copies them, and no one changes a part handed out.
func renderShared(t *spelledTable, d Dialect, st *compiler.Statement, types map[compiler.ParamType]compiler.Type) ([]Part, error) {
	key := st.Shared()
	if t == nil || key == nil || typedParams(st, types) {
		return renderStatement(d, st, types)
	}
	t.mu.RLock()
	parts, ok := t.parts[key]
	t.mu.RUnlock()
	if ok {
		return parts, nil
	}
	parts, err := renderStatement(d, st, types)
	if err != nil {
		return nil, err
	}
	// Clipped, so that an append to a list of a part handed out copies it.
	own := slices.Clip(parts)
	for i, p := range own {
		own[i] = Part{SQL: p.SQL, Params: slices.Clip(p.Params), Reads: p.Reads, Meant: Meant{
			Names: slices.Clip(p.Meant.Names), Strings: slices.Clip(p.Meant.Strings),
			Numbers: slices.Clip(p.Meant.Numbers), Queries: slices.Clip(p.Meant.Queries),
		}}
	}
	t.mu.Lock()
	if kept, ok := t.parts[key]; ok {
		own = kept // another Render's, the same
	} else {
		t.parts[key] = own
	}
	t.mu.Unlock()
	return own, nil
}

// typedParams reports whether st declares a parameter whose type types
// gives: its marker may be spelled with the type (ParamTyper), which is
// the plan's own.
func typedParams(st *compiler.Statement, types map[compiler.ParamType]compiler.Type) bool {
	for _, p := range st.Params {
		if _, ok := types[p.Type]; ok {
			return true
		}
	}
	return false
}
