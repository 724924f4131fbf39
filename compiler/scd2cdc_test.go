package compiler

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"
)

const changeDim = `pipeline: dim_account
source: {table: cdc.accounts_log}
target: {table: dw.dim_account}
columns:
  account_id: bigint
  plan: varchar(16)
  op: varchar(1)
  lsn: bigint
  committed_at: timestamptz
  ingested_at: timestamp
strategy: scd2
unique_key: [account_id]
watermark: {column: ingested_at, start: 2026-01-01, lookback: 1h}
cdc: {op: op, sequence: lsn, at: committed_at, exclude: [op, ingested_at]}
`

const accountFacts = `pipeline: fct_usage
source: {table: app.usage}
target: {table: dw.usage}
columns:
  usage_id: bigint
  account_id: bigint
  used_at: timestamptz
  plan: varchar(16)
strategy: merge
unique_key: [usage_id]
watermark: {column: used_at, start: 2026-01-01}
lookups:
  - table: dw.dim_account
    on: {account_id: account_id}
    as_of: used_at
    columns: {plan: {column}}
`

func loadProject(t *testing.T, files map[string]string) ([]*Spec, Diagnostics) {
	t.Helper()
	dir := t.TempDir()
	var paths []string
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, path)
	}
	slices.Sort(paths)
	return LoadSpecs(paths)
}

// TestSCD2FromChangesLookup: a lookup of an scd2 target fed by a change
// log, which has no scd2 block, joins as of its versions (valid_from,
// valid_to, of cdc.at's type), and a column the log excludes from the
// target is not one of its columns.
func TestSCD2FromChangesLookup(t *testing.T) {
	specs, diags := loadProject(t, map[string]string{"a.yaml": changeDim, "b.yaml": strings.ReplaceAll(accountFacts, "{column}", "plan")})
	if len(diags) > 0 {
		t.Fatal(diags.Err())
	}
	var fact *Spec
	for _, s := range specs {
		if s.Pipeline.Value == "fct_usage" {
			fact = s
		}
	}
	p, err := Lower(fact)
	if err != nil {
		t.Fatal(err)
	}
	a := p.Source.Lookups[0].AsOf
	if a == nil || a.ValidFrom != DefaultValidFrom || a.ValidTo != DefaultValidTo || a.Valid.Kind != ir.TimestampTZ || a.OpenEnd != "" {
		t.Errorf("the as-of join: %+v", a)
	}
	if !p.Source.Lookups[0].Trusted {
		t.Error("an scd2 target of the project keeps its versions apart: the lookup needs no overlap check")
	}
	_, diags = loadProject(t, map[string]string{"a.yaml": changeDim, "b.yaml": strings.ReplaceAll(accountFacts, "{column}", "op")})
	if len(diags) != 1 || !strings.Contains(diags[0].Msg, `lookup column "op" is not a column of dw.dim_account`) {
		t.Errorf("a lookup of an excluded column: %v", diags)
	}
}

// TestSCD2FromChangesPrograms: the order the writes of a run must keep on
// engines where each statement commits alone (the tombstones a new event
// replaces go before the versions are applied, new ones come after), a
// full refresh that needs no --force, and the target's and tombstones'
// columns.
func TestSCD2FromChangesPrograms(t *testing.T) {
	s, err := Parse("dim.yaml", []byte(changeDim))
	if err != nil {
		t.Fatal(err)
	}
	if d := Validate(s); len(d) > 0 {
		t.Fatal(d.Err())
	}
	p, err := Lower(s)
	if err != nil {
		t.Fatal(err)
	}
	steps := func(m ir.Mode) []string {
		var out []string
		for _, st := range p.Program(m).Steps {
			out = append(out, st.Stmt)
		}
		return out
	}
	run := steps(ir.ModeRun)
	retract, apply, write := slices.Index(run, ir.StmtRetractTombstones), slices.Index(run, ir.StmtApplyVersions), slices.Index(run, ir.StmtWriteTombstones)
	if retract < 0 || !(retract < apply && apply < write) {
		t.Errorf("run: retract_tombstones %d, apply_versions %d, write_tombstones %d: %v", retract, apply, write, run)
	}
	full := steps(ir.ModeFullRefresh)
	if p.Program(ir.ModeFullRefresh).Force != "" || !slices.Contains(full, ir.StmtClearTombstones) || slices.Contains(full, ir.StmtVersionHistory) {
		t.Errorf("full refresh: force %q, steps %v", p.Program(ir.ModeFullRefresh).Force, full)
	}
	cols := func(stmt string) []string {
		return columnNames(p.Statement(stmt).Op.(ir.CreateTable).Columns)
	}
	if want := []string{"account_id", "plan", "lsn", "committed_at", ir.SequenceColumn, "valid_from", "valid_to"}; !slices.Equal(cols(ir.StmtCreateTarget), want) {
		t.Errorf("target columns %v, want %v", cols(ir.StmtCreateTarget), want)
	}
	if want := []string{"account_id", "valid_from", ir.SequenceColumn}; !slices.Equal(cols(ir.StmtCreateTombstones), want) {
		t.Errorf("tombstones columns %v, want %v", cols(ir.StmtCreateTombstones), want)
	}
	if ct := p.Statement(ir.StmtCreateTarget).Op.(ir.CreateTable); ct.Columns[5].Type.Kind != ir.TimestampTZ || !slices.Equal(ct.PrimaryKey, []string{"account_id", "valid_from"}) {
		t.Errorf("target: %+v", ct)
	}
}
