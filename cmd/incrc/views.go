package main

import (
	"encoding/json"
	"io"
)

// A view is what one command prints, in every form the command offers
// (--format text|json, plan also markdown): the command computes the
// result and hands it to its view, which alone decides how it reads. As
// terraform keeps each command's output in internal/command/views, the
// forms of one output sit together here and in the command's file, apart
// from the logic, so a new field is added to each form in one place.
type view interface {
	// text is the form for a person at a terminal, the default.
	text(w io.Writer)
	// json is the value --format json encodes, one JSON document; nil for
	// an output that has no JSON form of its own (a line of progress, or a
	// part a command's JSON document carries elsewhere): show prints
	// nothing for it.
	json() any
}

// markdownView is a view that also has a markdown form (a pull-request
// comment).
type markdownView interface {
	view
	markdown(w io.Writer)
}

// indentedView is a view whose JSON is indented, for a person to read
// too (validate's).
type indentedView interface {
	view
	indent() string
}

// show writes v in format, one of the forms outputFlags.resolve accepted.
func show(w io.Writer, format string, v view) {
	switch format {
	case "json":
		doc := v.json()
		if doc == nil {
			return
		}
		enc := json.NewEncoder(w)
		if in, ok := v.(indentedView); ok {
			enc.SetIndent("", in.indent())
		}
		enc.Encode(doc)
	case "markdown":
		v.(markdownView).markdown(w)
	default:
		v.text(w)
	}
}
