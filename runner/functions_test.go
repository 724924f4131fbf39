package runner

import (
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/sqllex"
)

// TestEngineFunctions checks the table of engine-only functions that
// compiling a source query reads (sqllex.OnlyIn) against the engines: each
// engine has exactly the functions the table says it has, by its catalog
// (PostgreSQL's pg_proc, DuckDB's duckdb_functions(), SQLite's function
// and module lists) or, on MariaDB, whose built-ins are in no catalog, by
// calling it.
func TestEngineFunctions(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			rules := e.tg.Dialect.Lexer()
			for _, fn := range sqllex.EngineFunctions() {
				has, err := e.hasFunction(fn)
				if err != nil {
					t.Fatalf("%s: %v", fn, err)
				}
				if want := rules.HasFunction(fn); has != want {
					t.Errorf("%s(): the table says %s has it: %v; the engine: %v", fn, eng.name, want, has)
				}
			}
		})
	}
}

func (e *env) hasFunction(fn string) (bool, error) {
	var n int
	switch e.tg.Dialect.Name() {
	case "postgres":
		err := e.tg.DB.QueryRowContext(e.ctx, "SELECT count(*) FROM pg_proc WHERE proname = $1", fn).Scan(&n)
		return n > 0, err
	case "duckdb":
		err := e.tg.DB.QueryRowContext(e.ctx, "SELECT count(*) FROM duckdb_functions() WHERE function_name = ?", fn).Scan(&n)
		return n > 0, err
	case "sqlite":
		err := e.tg.DB.QueryRowContext(e.ctx, "SELECT (SELECT count(*) FROM pragma_function_list WHERE name = ?1) + (SELECT count(*) FROM pragma_module_list WHERE name = ?1)", fn).Scan(&n)
		return n > 0, err
	}
	probe := "SELECT " + fn + "()"
	if fn == "json_table" { // table syntax, not a call
		probe = "SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS (a INT PATH '$')) AS t"
	}
	_, err := e.tg.DB.ExecContext(e.ctx, probe)
	if err != nil && strings.Contains(err.Error(), "does not exist") {
		return false, nil
	}
	return true, nil
}
