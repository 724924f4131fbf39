package runner

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler/ir"
)

// targetKept refuses a program that goes on from what the state says the
// target holds — the saved watermark, or a files source's bookmark — when
// the target is gone: dropped or renamed since the last run, the setup
// would create it empty and the run would go on from there, leaving out
// every row before it, without a word. Asked before the setup (which would
// create the table), reading the state and the target's columns only. A
// target that is there but emptied, or created again by hand, is the
// program's own check (check_target_kept, after the setup).
func targetKept(ctx context.Context, c *compiled, conn *sql.Conn, pr *ir.Program) error {
	byFile := readsNewFiles(pr)
	if pr.Lo != ir.LoWatermark && !byFile || c.plan.Statement(ir.StmtCheckTarget) == nil {
		return nil
	}
	st, err := readState(ctx, c, conn, c.plan.Pipeline)
	if err != nil {
		// No state yet (a first run), or one the run itself reports when
		// it reads it, after its setup.
		return nil
	}
	if st.Watermark == "" {
		return nil
	}
	if _, err := c.columns(ctx, conn, ir.StmtCheckTarget, params{}); err == nil || !(missingTable(err) || strings.Contains(strings.ToLower(err.Error()), "unknown database")) {
		return nil
	}
	target := strings.Join(c.plan.Target.Parts, ".")
	if byFile {
		return fmt.Errorf("pipeline %s: the target %s does not exist, but the bookmark (incrc_files) still lists the files it loaded, as of its last run at %s: the table was dropped or renamed since, and a run would load only the files not loaded yet, leaving out the rows of every other. Load every file again with incrc run --full-refresh",
			c.plan.Pipeline, target, st.Watermark)
	}
	return fmt.Errorf("pipeline %s: the target %s does not exist, but the state keeps the watermark %s: the table was dropped or renamed since the last run, and a run from the watermark would leave out every row before it. Rebuild it from the source with incrc run --full-refresh, or move the watermark back with incrc state --rewind (to watermark.start to re-read everything)",
		c.plan.Pipeline, target, st.Watermark)
}

// readsNewFiles: the program loads the files its bookmark does not list.
func readsNewFiles(pr *ir.Program) bool {
	for _, s := range pr.Steps {
		if s.Read == ir.ReadNewFiles {
			return true
		}
	}
	return false
}
