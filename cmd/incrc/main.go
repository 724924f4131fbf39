// Command incrc compiles YAML pipeline specs into reviewable SQL for
// incremental pipelines and runs it against a target database.
package main

import "os"

func main() { os.Exit(run(signalContext(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
