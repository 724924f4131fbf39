package dialects

import (
	"hash/maphash"
	"slices"
	"sync"
	"sync/atomic"
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
// kept; and at most passedMax of them a dialect, ever (a dialect's own,
// so that compiling for one first leaves room for the others).
var passed perDialect[passedTable]

// passedSeed hashes the statements passed remembers.
var passedSeed = maphash.MakeSeed()

const passedMax = 1 << 10

// passedTable is what passed remembers for one dialect.
type passedTable struct {
	mu sync.Mutex
	// once are hashes of statements that passed once, by their low bits
	// (written without the lock, which guards parts); parts the
	// statements remembered, by hash.
	once  [1 << 10]atomic.Uint64
	parts map[uint64]Part
	// kept has the bit of each remembered statement's hash set (keptBit),
	// before the statement is in parts: most statements looked up are not
	// remembered, and a bit not set says so without the lock.
	kept [1 << 8]atomic.Uint64
}

// keptBit is the word of passedTable.kept and the bit in it for hash h.
func keptBit(h uint64) (int, uint64) {
	b := h >> (64 - 14) // 1<<14 bits, from the bits once does not use
	return int(b / 64), 1 << (b % 64)
}

// passedFor is what passed remembers for d, nil when it remembers nothing
// for it (perDialect).
func passedFor(d Dialect) *passedTable {
	return passed.of(d, func() *passedTable { return &passedTable{parts: map[uint64]Part{}} })
}

// remembered reports whether p passed the lex-back for t's dialect
// before, and p's hash for remember.
func (t *passedTable) remembered(p Part) (uint64, bool) {
	if t == nil {
		return 0, false
	}
	h := maphash.String(passedSeed, p.SQL)
	if w, bit := keptBit(h); t.kept[w].Load()&bit == 0 {
		return h, false
	}
	t.mu.Lock()
	q, ok := t.parts[h]
	t.mu.Unlock()
	return h, ok && samePart(p, q)
}

// remember records that p, whose hash is h, passed the lex-back.
func (t *passedTable) remember(h uint64, p Part) {
	if t == nil {
		return
	}
	if slot := &t.once[h%uint64(len(t.once))]; slot.Load() != h {
		slot.Store(h)
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.parts) < passedMax {
		w, bit := keptBit(h)
		t.kept[w].Or(bit)
		// A copy of its own: p's lists are stretches of its Render's
		// slabs, which the memory would keep whole.
		t.parts[h] = Part{SQL: p.SQL, Params: slices.Clone(p.Params), Meant: Meant{
			Names: slices.Clone(p.Meant.Names), Strings: slices.Clone(p.Meant.Strings),
			Numbers: slices.Clone(p.Meant.Numbers), Queries: slices.Clone(p.Meant.Queries),
		}}
	}
}

// samePart says whether two parts are the same statement meaning the same:
// what the lex-back reads.
func samePart(a, b Part) bool {
	return a.SQL == b.SQL && slices.Equal(a.Params, b.Params) &&
		slices.Equal(a.Meant.Names, b.Meant.Names) && slices.Equal(a.Meant.Strings, b.Meant.Strings) &&
		slices.Equal(a.Meant.Numbers, b.Meant.Numbers) && slices.Equal(a.Meant.Queries, b.Meant.Queries)
}
