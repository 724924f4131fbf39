package transfer

import "database/sql"

// rowSource reads the source's rows, converted, for a sink. A goroutine
// reads and converts them ahead, a batch at a time, into a channel of a
// few batches: the source's decoding and the conversions overlap the
// target's bulk path, and what is held is those few batches, whatever the
// window's size.
type rowSource struct {
	rows *sql.Rows
	conv *Converter
	raw  []any
	out  []any
	n    int64
	err  error
	// held are the rows the reading goroutine held back; read them after
	// finish.
	held []Held

	batches chan rowBatch
	cur     [][]any
	pos     int
	stop    chan struct{}
	stopped chan struct{}
}

type rowBatch struct {
	rows [][]any
	err  error
}

// copyBatchRows is how many rows the reading goroutine hands over at once.
const copyBatchRows = 512

func (r *rowSource) start() {
	r.batches, r.stop, r.stopped = make(chan rowBatch, 4), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(r.stopped)
		defer close(r.batches)
		ptrs := make([]any, len(r.raw))
		for i := range r.raw {
			ptrs[i] = &r.raw[i]
		}
		send := func(b rowBatch) bool {
			select {
			case r.batches <- b:
				return true
			case <-r.stop:
				return false
			}
		}
		var n int64
		batch := make([][]any, 0, copyBatchRows)
		for r.rows.Next() {
			if err := r.rows.Scan(ptrs...); err != nil {
				send(rowBatch{rows: batch, err: err})
				return
			}
			n++
			out, held, err := r.conv.Row(r.raw, n)
			if err != nil {
				send(rowBatch{rows: batch, err: err})
				return
			}
			if held != nil {
				r.held = append(r.held, *held)
				continue
			}
			batch = append(batch, out)
			if len(batch) == copyBatchRows {
				if !send(rowBatch{rows: batch}) {
					return
				}
				batch = make([][]any, 0, copyBatchRows)
			}
		}
		send(rowBatch{rows: batch, err: r.rows.Err()})
	}()
}

// finish stops the reading goroutine and waits for it: the rows are
// closed after it, never while it reads them.
func (r *rowSource) finish() {
	if r.stop == nil {
		return
	}
	close(r.stop)
	<-r.stopped
	r.stop = nil
}

func (r *rowSource) next() bool {
	if r.err != nil {
		return false
	}
	for r.pos >= len(r.cur) {
		b, ok := <-r.batches
		if !ok {
			return false
		}
		r.cur, r.pos = b.rows, 0
		if b.err != nil {
			r.err = b.err
			return false
		}
	}
	r.out = r.cur[r.pos]
	r.cur[r.pos] = nil
	r.pos++
	r.n++
	return true
}

func (r *rowSource) done() error { return r.err }

// pgx.CopyFromSource
func (r *rowSource) Next() bool             { return r.next() }
func (r *rowSource) Values() ([]any, error) { return r.out, nil }
func (r *rowSource) Err() error             { return r.done() }
