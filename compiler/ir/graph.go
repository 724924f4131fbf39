package ir

// Upstream is a pipeline of the project whose target this pipeline reads.
type Upstream struct {
	Pipeline string
	// Via says how the target is read: "source" (source.table) or
	// "lookup" (a lookup's table).
	Via string
	// Bounds: the upstream's saved watermark bounds this pipeline's hi, so
	// that a window only covers what the upstream has finished writing.
	// Set for a source; a lookup only orders the runs.
	Bounds bool
	// Watermark is the type of the upstream's saved watermark (a
	// pipeline without a watermark saves its run's time: a timestamp).
	Watermark Type
}
