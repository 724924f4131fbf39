package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

func completionCmd() *command {
	c := &command{
		name:    "completion",
		summary: "Print the shell completion script of incrc: commands, their flags, pipelines and targets.",
		usage:   "bash|zsh|fish",
		example: "source <(incrc completion bash)                                    # bash, this shell\n" +
			"incrc completion zsh > \"${fpath[1]}/_incrc\"                         # zsh, every new shell\n" +
			"incrc completion fish > ~/.config/fish/completions/incrc.fish       # fish",
	}
	c.run = func(ctx context.Context, e *env, args []string) int {
		fs := c.flags(e)
		if code, ok := c.parse(e, fs, args); !ok {
			return code
		}
		if fs.NArg() != 1 {
			return c.fail(e, "name the shell: incrc completion bash, zsh or fish")
		}
		cmds := completionCommands(ctx, e)
		switch fs.Arg(0) {
		case "bash":
			writeBash(e.stdout, cmds)
		case "zsh":
			// zsh completes with bash's script through bashcompinit: one
			// script to keep right, not two.
			fmt.Fprint(e.stdout, "#compdef incrc\nautoload -U +X bashcompinit && bashcompinit\n")
			writeBash(e.stdout, cmds)
		case "fish":
			writeFish(e.stdout, cmds)
		default:
			return c.fail(e, "unknown shell %q: bash, zsh or fish", fs.Arg(0))
		}
		return exitOK
	}
	return c
}

// completed is one command as a completion script knows it.
type completed struct {
	name, summary string
	flags         []*pflag.Flag
}

// completionCommands are the commands with the flags each defines, read
// from the flag sets the commands build (as docs/cli.md is): a flag added
// to a command completes without a change here.
func completionCommands(ctx context.Context, e *env) []completed {
	var out []completed
	for _, c := range commands() {
		var fs *pflag.FlagSet
		quiet := &env{stdin: strings.NewReader(""), stdout: io.Discard, stderr: io.Discard, getenv: e.getenv, now: e.now,
			flagSet: func(f *pflag.FlagSet) { fs = f }}
		if c.name != "completion" {
			c.run(ctx, quiet, []string{"--help"})
		}
		cc := completed{name: c.name, summary: c.summary}
		if fs != nil {
			fs.VisitAll(func(f *pflag.Flag) {
				if f.Deprecated == "" && !f.Hidden {
					cc.flags = append(cc.flags, f)
				}
			})
		}
		out = append(out, cc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// The pipelines and targets a completion offers come from the project in
// the shell's folder, asked when the user presses tab: incrc validate
// --json's pipelines, and incrc.yaml's targets.
const bashHelpers = `_incrc_pipelines() {
  incrc validate --json 2>/dev/null | sed -n 's/^ *"pipeline": "\([a-z0-9_]*\)",\{0,1\}$/\1/p'
}
_incrc_targets() {
  [ -f incrc.yaml ] && sed -n '/^targets:/,/^[^ #]/s/^  \([A-Za-z0-9_-]*\):.*/\1/p' incrc.yaml
}
`

func writeBash(w io.Writer, cmds []completed) {
	fmt.Fprint(w, "# incrc completion for bash (incrc completion bash).\n")
	fmt.Fprint(w, bashHelpers)
	fmt.Fprint(w, "_incrc() {\n  local cur prev cmd\n  cur=\"${COMP_WORDS[COMP_CWORD]}\"\n  prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n  cmd=\"${COMP_WORDS[1]}\"\n")
	var names []string
	for _, c := range cmds {
		names = append(names, c.name)
	}
	fmt.Fprintf(w, "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n    COMPREPLY=($(compgen -W %q -- \"$cur\"))\n    return\n  fi\n", strings.Join(names, " "))
	fmt.Fprint(w, "  case \"$prev\" in\n    --target) COMPREPLY=($(compgen -W \"$(_incrc_targets)\" -- \"$cur\")); return ;;\n")
	fmt.Fprint(w, "    --select|--exclude) COMPREPLY=($(compgen -W \"$(_incrc_pipelines)\" -- \"$cur\")); return ;;\n")
	fmt.Fprint(w, "    --specs|--config|--out|--rows|--dir) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n  esac\n")
	fmt.Fprint(w, "  case \"$cmd\" in\n")
	for _, c := range cmds {
		var flags []string
		for _, f := range c.flags {
			flags = append(flags, "--"+f.Name)
		}
		words := strings.Join(flags, " ")
		switch c.name {
		case "completion":
			words = "bash zsh fish"
		case "init", "schema", "version", "demo", "new":
		default:
			words += " $(_incrc_pipelines)"
		}
		fmt.Fprintf(w, "    %s) COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")) ;;\n", c.name, words)
	}
	fmt.Fprint(w, "  esac\n}\ncomplete -F _incrc incrc\n")
}

func writeFish(w io.Writer, cmds []completed) {
	fmt.Fprint(w, "# incrc completion for fish (incrc completion fish).\n")
	fmt.Fprint(w, "function __incrc_pipelines\n  incrc validate --json 2>/dev/null | string match -r -g '^\\s*\"pipeline\": \"([a-z0-9_]+)\"'\nend\n")
	fmt.Fprint(w, "function __incrc_targets\n  test -f incrc.yaml; and sed -n '/^targets:/,/^[^ #]/s/^  \\([A-Za-z0-9_-]*\\):.*/\\1/p' incrc.yaml\nend\n")
	fmt.Fprint(w, "complete -c incrc -f\n")
	for _, c := range cmds {
		fmt.Fprintf(w, "complete -c incrc -n __fish_use_subcommand -a %s -d %s\n", c.name, fishQuote(c.summary))
	}
	for _, c := range cmds {
		cond := "__fish_seen_subcommand_from " + c.name
		switch c.name {
		case "completion":
			fmt.Fprintf(w, "complete -c incrc -n %s -a 'bash zsh fish'\n", fishQuote(cond))
			continue
		case "init", "schema", "version", "demo", "new":
		default:
			fmt.Fprintf(w, "complete -c incrc -n %s -a '(__incrc_pipelines)'\n", fishQuote(cond))
		}
		for _, f := range c.flags {
			arg := ""
			switch {
			case f.Name == "target":
				arg = " -x -a '(__incrc_targets)'"
			case f.Name == "select" || f.Name == "exclude":
				arg = " -x -a '(__incrc_pipelines)'"
			case f.Value.Type() != "bool":
				arg = " -r"
			}
			fmt.Fprintf(w, "complete -c incrc -n %s -l %s%s -d %s\n", fishQuote(cond), f.Name, arg, fishQuote(firstClause(f.Usage)))
		}
	}
}

// fishQuote quotes s for fish: single quotes, with \ and ' escaped.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// firstClause is a flag's usage up to its first colon or parenthesis: a
// description short enough for a completion menu.
func firstClause(s string) string {
	if i := strings.IndexAny(s, ":("); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
