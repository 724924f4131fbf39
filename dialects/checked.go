package dialects

import (
	"hash/maphash"
	"reflect"
	"slices"
	"sync"
)

// passed remembers statements that passed the lex-back, so that a Writer
// that writes one again, byte for byte and meaning the same, does not lex
// it back a second time: CheckPart is a function of the dialect and the
// part, and its answer for them was yes.
//
// Compiling a project writes the same statements for pipeline after
// pipeline (the state, run log and lease bookkeeping): about half of the
// statements, a third of the bytes. A statement is remembered once it has
// passed twice, so that the ones written once (a pipeline's own) are not
// kept; and at most passedMax of them, ever.
var passed = struct {
	sync.Mutex
	seed  maphash.Seed
	once  [1 << 12]uint64 // hashes of statements that passed once, by their low bits
	parts map[passedKey]Part
}{seed: maphash.MakeSeed(), parts: map[passedKey]Part{}}

const passedMax = 1 << 12

type passedKey struct {
	d    Dialect
	hash uint64
}

// remembered reports whether p passed the lex-back for d before. Only a
// dialect that is a pointer is remembered: one is the same dialect
// whenever it compares equal.
func remembered(d Dialect, p Part) (passedKey, bool) {
	if reflect.TypeOf(d).Kind() != reflect.Pointer {
		return passedKey{}, false
	}
	k := passedKey{d: d, hash: maphash.String(passed.seed, p.SQL)}
	passed.Lock()
	q, ok := passed.parts[k]
	passed.Unlock()
	return k, ok && samePart(p, q)
}

// remember records that p passed the lex-back for d (k, from remembered).
func remember(k passedKey, p Part) {
	if k.d == nil {
		return
	}
	passed.Lock()
	defer passed.Unlock()
	slot := &passed.once[k.hash%uint64(len(passed.once))]
	if *slot != k.hash {
		*slot = k.hash
		return
	}
	if len(passed.parts) < passedMax {
		passed.parts[k] = p
	}
}

// samePart says whether two parts are the same statement meaning the same:
// what the lex-back reads.
func samePart(a, b Part) bool {
	return a.SQL == b.SQL && slices.Equal(a.Params, b.Params) &&
		slices.Equal(a.Meant.Names, b.Meant.Names) && slices.Equal(a.Meant.Strings, b.Meant.Strings) &&
		slices.Equal(a.Meant.Numbers, b.Meant.Numbers) && slices.Equal(a.Meant.Queries, b.Meant.Queries)
}
