package runner

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/incrc/incrc/dialects/all"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/compiler"
)

// oneTableSpec reads {source} and writes {target}: a full refresh of it
// empties its source when the two are one table.
const oneTableSpec = `
pipeline: one_{name}_{id}
source:
  table: {source}
target:
  table: {target}
columns:
  id: bigint
  note: text
strategy: full_refresh
`

// sameTable is, per engine, a source and a target spelled differently
// that the engine's connection resolves to one table, and the URL that
// makes it so: what only the database knows (its current database, its
// search_path), and for SQLite its schemas flattened into names.
type sameTable struct {
	source, target string // {id}, {db} and {schema} are filled
	create         string // the fixture table, as env.table names it
	url            func(e *env) string
}

func sameTables(eng string) []sameTable {
	switch eng {
	case "duckdb":
		// The database file wh.duckdb is the catalog wh.
		return []sameTable{{source: "app_{id}.src", target: "wh.app_{id}.src", create: "app_{id}.src"}}
	case "sqlite":
		return []sameTable{{source: "app_{id}.src", target: "app_{id}_src", create: "app_{id}.src"}}
	case "postgres":
		// The search_path finds the unqualified target in app_{id}.
		return []sameTable{{source: "app_{id}.src", target: "src", create: "app_{id}.src",
			url: func(e *env) string { return withQuery(e.url, "search_path", "app_"+e.id) }}}
	case "mysql":
		// The connection's database holds the unqualified table.
		return []sameTable{{source: "{db}.src_{id}", target: "src_{id}", create: "{db}.src_{id}"}}
	}
	return nil
}

func withQuery(raw, key, value string) string {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// database is the current database of a MariaDB URL.
func database(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		panic(err)
	}
	return strings.TrimPrefix(u.Path, "/")
}

// TestSourceIsTargetOnTheCatalog: a pipeline whose source and target are
// one table as the target's connection resolves them (issue 22, item 1)
// is refused before anything is created or written, a full refresh too;
// its source is left as it was. On DuckDB the database's own name
// qualifies a name, on PostgreSQL the search_path finds an unqualified
// one, on MariaDB the connection's database, on SQLite a.b is a_b.
func TestSourceIsTargetOnTheCatalog(t *testing.T) {
	cols := []ir.Col{{Name: "id", Type: ir.Type{Kind: ir.Bigint}}, {Name: "note", Type: ir.Type{Kind: ir.Text}}}
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			for _, c := range sameTables(eng.name) {
				fill := strings.NewReplacer("{id}", e.id, "{db}", database(e.url))
				if c.url != nil {
					tg, err := Open(e.ctx, all.Lookup, c.url(e), "")
					if err != nil {
						t.Fatal(err)
					}
					defer tg.Close()
					e.tg = tg
				}
				create := fill.Replace(c.create)
				e.createTable(create, cols)
				if eng.name == "mysql" {
					t.Cleanup(func() {
						e.tg.DB.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+e.tg.Dialect.QuoteIdent(database(e.url))+"."+e.tg.Dialect.QuoteIdent("src_"+e.id))
					})
				}
				e.insert(create, cols, []any{1, "kept"}, []any{2, "kept too"})
				p := e.spec(strings.NewReplacer("{name}", "src", "{source}", fill.Replace(c.source), "{target}", fill.Replace(c.target)).Replace(oneTableSpec))
				for _, full := range []bool{false, true} {
					_, err := e.tg.Run(e.ctx, p, Options{FullRefresh: full})
					if err == nil || !strings.Contains(err.Error(), "are one table on this "+eng.name+" target") {
						t.Fatalf("run (full refresh %v) of %s into %s: %v, want a refusal saying they are one table", full, c.source, c.target, err)
					}
					if want := []string{line(1, "kept"), line(2, "kept too")}; strings.Join(e.rows(create, []string{"id", "note"}), ",") != strings.Join(want, ",") {
						t.Errorf("the source changed: %v", e.rows(create, []string{"id", "note"}))
					}
				}
			}
		})
	}
}

// TestReservedOnTheTarget: a target that is one of incrc's own tables on
// the engine it runs on is refused, though validate passed it for
// another dialect: on SQLite incrc.state is incrc_state.
func TestReservedOnTheTarget(t *testing.T) {
	for _, eng := range engines() {
		if eng.name != "sqlite" {
			continue
		}
		t.Run(eng.name, func(t *testing.T) {
			e := newEnv(t, eng)
			cols := []ir.Col{{Name: "id", Type: ir.Type{Kind: ir.Bigint}}, {Name: "note", Type: ir.Type{Kind: ir.Text}}}
			e.createTable("app_{id}.src", cols)
			p := e.spec(strings.NewReplacer("{name}", "state", "{source}", "app_{id}.src", "{target}", "incrc.state").Replace(oneTableSpec))
			_, err := e.tg.Run(e.ctx, p, Options{})
			if err == nil || !strings.Contains(err.Error(), "is the table incrc_state on this sqlite target: names starting with incrc_ are reserved") {
				t.Fatalf("run into incrc.state: %v, want a refusal", err)
			}
		})
	}
}

// TestTwoPipelinesOneTableOnTheCatalog: CheckTables finds two pipelines
// whose targets the target's connection resolves to one table (issue 22,
// item 2), and leaves alone two that only share a last name.
func TestTwoPipelinesOneTableOnTheCatalog(t *testing.T) {
	for _, eng := range engines() {
		t.Run(eng.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, eng)
			var a, b, other string
			switch eng.name {
			case "duckdb":
				a, b, other = "dw_{id}.dup", "wh.dw_{id}.dup", "app_{id}.dup"
			case "sqlite":
				a, b, other = "dw_{id}.dup", "dw_{id}_dup", "app_{id}.dup"
			case "postgres":
				a, b, other = "dw_{id}.dup", "dup", "app_{id}.dup"
				tg, err := Open(e.ctx, all.Lookup, withQuery(e.url, "search_path", "dw_"+e.id), "")
				if err != nil {
					t.Fatal(err)
				}
				defer tg.Close()
				e.tg = tg
				e.createTable("dw_{id}.other", []ir.Col{{Name: "id", Type: ir.Type{Kind: ir.Bigint}}}) // the schema
			case "mysql":
				a, b, other = "{db}.dup_{id}", "dup_{id}", "app_{id}.dup_{id}"
			}
			fill := strings.NewReplacer("{id}", e.id, "{db}", database(e.url))
			spec := func(name, target string) *compiler.Spec {
				y := strings.NewReplacer("{name}", name, "{source}", "app_{id}.src", "{target}", fill.Replace(target), "{id}", e.id).Replace(oneTableSpec)
				s, err := compiler.Parse(name+".yaml", []byte(y))
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			var uses []ir.TableUse
			for _, s := range []*compiler.Spec{spec("a", a), spec("b", b), spec("c", other)} {
				uses = append(uses, s.Tables()...)
			}
			clashes, err := e.tg.CheckTables(e.ctx, uses)
			if err != nil {
				t.Fatal(err)
			}
			if len(clashes) != 1 || clashes[0].Pipelines != [2]string{"one_a_" + e.id, "one_b_" + e.id} ||
				!strings.Contains(clashes[0].Msg, "two pipelines must not write one table") {
				t.Fatalf("clashes of %s and %s: %+v, want one naming both pipelines", a, b, clashes)
			}
		})
	}
}
