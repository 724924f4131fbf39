package runner

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/incrc/incrc/compiler"
)

// targetKept refuses a program whose window starts at the saved watermark
// when the target it wrote is gone: dropped or renamed since the last run,
// the setup would create it empty and the run would go on from the
// watermark, leaving out every row before it, without a word. Asked before
// the setup (which would create the table), reading the state and the
// target's columns only.
func targetKept(ctx context.Context, c *compiled, conn *sql.Conn, pr *compiler.Program) error {
	if pr.Lo != compiler.LoWatermark || c.plan.Statement(compiler.StmtCheckTarget) == nil {
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
	if _, err := c.columns(ctx, conn, compiler.StmtCheckTarget, params{}); err == nil || !(missingTable(err) || strings.Contains(strings.ToLower(err.Error()), "unknown database")) {
		return nil
	}
	target := strings.Join(c.plan.Target.Parts, ".")
	return fmt.Errorf("pipeline %s: the target %s does not exist, but the state keeps the watermark %s: the table was dropped or renamed since the last run, and a run from the watermark would leave out every row before it. Rebuild it from the source with incrc run --full-refresh, or move the watermark back with incrc state --rewind (to watermark.start to re-read everything)",
		c.plan.Pipeline, target, st.Watermark)
}
