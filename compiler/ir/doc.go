// Package ir is the plan the compiler builds and everything after it
// reads: the statements of a pipeline (each an Op of a closed set), the
// programs that say which of them each mode runs, the column types, the
// expression trees and the names of the state tables and registers.
//
// Dialects render it and the runner walks it; neither imports the
// compiler, so neither can reach the spec model behind a plan
// (TestSpecModelOutOfReach keeps it so). This
// package holds data and the small pure functions over it (a type's
// parse, a watermark's canonical text, a program's listing): it never
// reads a file, never opens a database and never imports the compiler.
package ir
