package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is set at build time by those who package incrc:
//
//	go build -ldflags "-X main.version=v1.2.3" ./cmd/incrc
//
// Without it, the version is the module's (go install PATH@VERSION) or
// the commit the binary was built from.
var version = ""

// buildInfo is what incrc version prints.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit,omitempty"`
	Modified bool   `json:"modified,omitempty"` // built from a work tree with changes
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func readBuildInfo() buildInfo {
	b := buildInfo{Version: version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		if b.Version == "" {
			b.Version = "unknown"
		}
		return b
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	if b.Version == "" {
		b.Version = info.Main.Version
	}
	if b.Version == "" || b.Version == "(devel)" {
		b.Version = "devel"
	}
	return b
}

func versionCmd() *command {
	c := &command{
		name:    "version",
		summary: "Print incrc's version, the commit it was built from, and the Go version.",
		usage:   "[--json]",
		example: "incrc version\nincrc --version",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		var output outputFlags
		fs := c.flags(e)
		output.register(fs)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		format, ok := output.resolve(c, e)
		if !ok {
			return exitError
		}
		if fs.NArg() > 0 {
			return c.fail(e, "takes no arguments (got %q)", fs.Args())
		}
		show(e.stdout, format, versionView{readBuildInfo()})
		return exitOK
	}
	return c
}

// versionView is what incrc version prints.
type versionView struct{ b buildInfo }

func (v versionView) json() any { return v.b }

func (v versionView) text(w io.Writer) {
	b := v.b
	fmt.Fprintf(w, "incrc %s", b.Version)
	if b.Commit != "" {
		commit := b.Commit
		if len(commit) > 12 {
			commit = commit[:12]
		}
		if b.Modified {
			commit += ", modified"
		}
		fmt.Fprintf(w, " (commit %s)", commit)
	}
	fmt.Fprintf(w, " %s %s\n", b.Go, b.Platform)
}
