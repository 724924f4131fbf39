package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"
	"github.com/incrc/incrc/runner/transfer"
)

// listFiles is a ReadNewFiles or ReadAllFiles step: the files of the glob,
// less (for new files) the ones incrc_files says this pipeline loaded. A
// loaded file whose size or time changed was rewritten in place: it is
// reported, and loaded again only when the run asks for it. A file new by
// its path whose size and content are those of a file loaded before
// (renamed, or delivered again under another name) is not loaded again:
// it is recorded under its new path and reported; a full refresh loads
// each content once too. A glob that matches no file fails a run that has
// loaded none before: a folder that is not mounted, or a pattern that
// means something else than its writer thought, must not load nothing,
// forever, with success.
func (m *machine) listFiles(ctx context.Context, q querier, s ir.Step) error {
	f := m.c.plan.From
	files, err := transfer.ListGlob(f.Files)
	if err != nil {
		return err
	}
	m.files, m.rewritten, m.known, m.loadedBefore = nil, nil, nil, 0
	content := map[string]bool{} // size/hash of the files loaded, or to be
	key := func(lf transfer.File) string { return fmt.Sprint(lf.Size) + "/" + lf.Hash }
	hash := func(lf *transfer.File) error {
		if m.readOnly || lf.Hash != "" {
			return nil
		}
		h, err := transfer.HashFile(lf.Full)
		if err != nil {
			return fmt.Errorf("source.files %s: %w", f.Files, err)
		}
		lf.Hash = h
		return nil
	}
	if s.Read == ir.ReadNewFiles {
		rows, err := m.c.query(ctx, q, s.Stmt, m.vals)
		if err != nil && !missingTable(err) {
			return err
		}
		loaded := map[string][2]string{}
		for _, r := range rows {
			p, _ := text(r[0])
			size, _ := text(r[1])
			mtime, _ := text(r[2])
			loaded[p] = [2]string{size, mtime}
			if len(r) > 3 {
				if h, _ := text(r[3]); h != "" {
					content[size+"/"+h] = true
				}
			}
		}
		m.loadedBefore = len(loaded)
		for _, lf := range files {
			was, ok := loaded[lf.Rel]
			switch {
			case !ok:
				if err := hash(&lf); err != nil {
					return err
				}
				if !m.readOnly && content[key(lf)] {
					m.known = append(m.known, lf)
					continue
				}
				content[key(lf)] = true
				m.files = append(m.files, lf)
			case was != [2]string{fmt.Sprint(lf.Size), lf.Mtime}:
				m.rewritten = append(m.rewritten, lf)
				if m.reloadRewritten {
					if err := hash(&lf); err != nil {
						return err
					}
					m.files = append(m.files, lf)
				}
			}
		}
	} else {
		for _, lf := range files {
			if err := hash(&lf); err != nil {
				return err
			}
			if !m.readOnly && content[key(lf)] {
				m.known = append(m.known, lf)
				continue
			}
			content[key(lf)] = true
			m.files = append(m.files, lf)
		}
	}
	if len(files) == 0 && m.loadedBefore == 0 && !m.readOnly {
		return fmt.Errorf("source.files %s matches no file, and this pipeline has loaded none before: check the folder (is it mounted?) and the pattern", f.Files)
	}
	paths := make([]string, len(m.files))
	for i, lf := range m.files {
		if paths[i], err = transfer.ExactPath(lf.Full); err != nil {
			return fmt.Errorf("source.files %s: %w", f.Files, err)
		}
	}
	m.vals[ir.RegFiles] = int64(len(m.files))
	m.vals["file_list"] = paths
	if note := m.filesNote(); note != "" && m.vals["note"] == nil {
		m.vals["note"] = note
		m.filesNoted = note
	}
	for _, r := range s.Into {
		if r != ir.RegFiles {
			m.add(r, int64(len(m.files)))
		}
	}
	return nil
}

// recorded are the files a run records in incrc_files: those it loaded,
// and those it recognised as loaded before under another name.
func (m *machine) recorded() []transfer.File {
	return append(append([]transfer.File(nil), m.files...), m.known...)
}

// filesNote is what a run's summary says of the files it loaded, of the
// rewritten ones and of the ones recognised by their content.
func (m *machine) filesNote() string {
	if m.c.plan.From == nil || !m.c.plan.From.ByFile {
		return ""
	}
	var note string
	if len(m.files) == 0 {
		note = fmt.Sprintf("no new file in %s (%d loaded before)", m.c.plan.From.Files, m.loadedBefore)
	} else {
		note = fmt.Sprintf("%d new file(s) loaded", len(m.files))
	}
	if n := len(m.rewritten); n > 0 {
		if m.reloadRewritten {
			note += fmt.Sprintf("; %d of them rewritten in place since loaded, loaded again (%s)", n, someFiles(m.rewritten))
		} else {
			note += fmt.Sprintf("; %d file(s) rewritten in place since loaded, not loaded again (%s): pass --reload-rewritten to load them again", n, someFiles(m.rewritten))
		}
	}
	if n := len(m.known); n > 0 {
		note += fmt.Sprintf("; %d file(s) with the size and content of a file loaded before (renamed, or delivered again), not loaded again (%s)", n, someFiles(m.known))
	}
	return note
}

// failedFilesNote is what a failed run's summary says instead of
// filesNote: it loaded nothing.
func (m *machine) failedFilesNote() string {
	return fmt.Sprintf("%d new file(s) found, none loaded: the run failed", len(m.files))
}

// someFiles names up to three files.
func someFiles(files []transfer.File) string {
	names := make([]string, 0, 4)
	for i, lf := range files {
		if i == 3 {
			names = append(names, "...")
			break
		}
		names = append(names, lf.Rel)
	}
	return strings.Join(names, ", ")
}

// missingTable reports an error of a table that is not there: a target
// never set up has no incrc_files, and everything is new.
func missingTable(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "does not exist") || strings.Contains(s, "no such table") || strings.Contains(s, "doesn't exist")
}
