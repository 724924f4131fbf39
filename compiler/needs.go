package compiler

import (
	"slices"
	"sort"
)

// Blockers returns the diagnostics that keep the chosen pipelines from
// running, and the broken files they do not need. A pipeline needs its own
// spec, its upstreams' (every pipeline whose target it reads, and theirs)
// and the project's checks that involve one of them. A broken file is
// needed when it may be one of them, or write a table one of them reads
// or writes: when what could be read of it names such a pipeline or
// table, or when nothing could be read of it. names are the pipelines the
// command line named: a broken spec may be one of them.
//
// Any other spec's errors concern other pipelines: a run of a pipeline
// does not wait for a typo in an unrelated one.
//
// waits says, for each broken file that blocks, why the pipelines need it;
// leftOut are the files of the other diagnostics.
func (l *Loaded) Blockers(chosen []*Spec, names []string) (blocking Diagnostics, waits, leftOut []string) {
	byName := make(map[string]*Spec, len(l.Specs))
	for _, s := range l.Specs {
		byName[s.Pipeline.Value] = s
	}
	needed := map[string]bool{} // pipelines
	files := map[string]bool{}  // their spec files
	var visit func(s *Spec)
	visit = func(s *Spec) {
		if needed[s.Pipeline.Value] {
			return
		}
		needed[s.Pipeline.Value] = true
		files[s.File] = true
		for _, u := range s.upstream {
			if up := byName[u.Pipeline]; up != nil {
				visit(up)
			}
		}
	}
	for _, s := range chosen {
		visit(s)
	}
	for _, n := range names {
		needed[n] = true
	}
	// The tables the needed pipelines read and write: a broken spec that
	// writes one may be an upstream, or a second writer of a target.
	tables := map[string]string{} // table key: how a needed pipeline uses it
	for name := range needed {
		s := byName[name]
		if s == nil {
			continue
		}
		tables[tableKey(s.Target.Table.Value)] = "the target of " + name
		if t := s.Source.Table.Value; t != "" && !s.Source.Connection.Set() {
			tables[tableKey(t)] = "the source of " + name
		}
		for _, lk := range s.Lookups {
			tables[tableKey(lk.Table.Value)] = "a lookup of " + name
		}
	}
	blockingFile := map[string]bool{}
	for _, b := range l.Broken {
		s := b.Spec
		why := ""
		switch {
		case s == nil:
			why = "nothing of it could be read, so it may be any pipeline's upstream"
		case needed[s.Pipeline.Value]:
			why = "it is pipeline " + s.Pipeline.Value
		case s.Target.Table.Value != "" && tables[tableKey(s.Target.Table.Value)] != "":
			why = "it writes " + s.Target.Table.Value + ", " + tables[tableKey(s.Target.Table.Value)]
		default:
			continue
		}
		blockingFile[b.File] = true
		waits = append(waits, b.File+": "+why)
	}
	for _, d := range l.Diags {
		involved := files[d.Pos.File] || blockingFile[d.Pos.File] || d.Pos.File == ""
		for _, p := range d.Pipelines {
			involved = involved || needed[p]
		}
		if involved {
			blocking = append(blocking, d)
		} else if !slices.Contains(leftOut, d.Pos.File) {
			leftOut = append(leftOut, d.Pos.File)
		}
	}
	sort.Strings(leftOut)
	return blocking, waits, leftOut
}
