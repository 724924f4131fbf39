package mysql

import (
	"strings"
	"testing"

	"github.com/incrc/incrc/compiler/ir"

	"github.com/incrc/incrc/dialects"
)

func typ(t *testing.T, s string) ir.Type {
	t.Helper()
	ty, err := ir.ParseType(s)
	if err != nil {
		t.Fatal(err)
	}
	return ty
}

// TestKeyColumnTypes: a text column of a primary key is a VARCHAR sized to
// what the other key columns leave of InnoDB's 3072 bytes; text outside
// the key, and tables without a key, keep LONGTEXT; a key that cannot fit
// is refused, naming its columns. runner/textkey_test.go runs the same
// tables on MariaDB, where the next larger VARCHAR is refused.
func TestKeyColumnTypes(t *testing.T) {
	tests := []struct {
		name string
		cols string // name:type, ...; the key is the columns marked with *
		temp bool
		want []string // substrings of the CREATE TABLE, in order
		err  string
	}{
		{name: "one text key", cols: "*code:text, note:text", want: []string{"`code` VARCHAR(768) NOT NULL", "`note` LONGTEXT", "PRIMARY KEY (`code`)"}},
		{name: "text and bigint", cols: "*code:text, *id:bigint", want: []string{"`code` VARCHAR(766) NOT NULL", "`id` BIGINT NOT NULL"}},
		{name: "text, date and timestamp", cols: "*code:text, *d:date, *ts:timestamp", want: []string{"`code` VARCHAR(765) NOT NULL"}},
		{name: "two texts share", cols: "*a:text, *b:text", want: []string{"`a` VARCHAR(384) NOT NULL", "`b` VARCHAR(384) NOT NULL"}},
		{name: "text after a long varchar", cols: "*name:varchar(700), *code:text", want: []string{"`name` VARCHAR(700) NOT NULL", "`code` VARCHAR(68) NOT NULL"}},
		{name: "text beside a decimal", cols: "*code:text, *amount:decimal(38,10)", want: []string{"`code` VARCHAR(763) NOT NULL"}},
		{name: "varchar at the limit", cols: "*name:varchar(768)", want: []string{"`name` VARCHAR(768) NOT NULL"}},
		{name: "no key keeps LONGTEXT", cols: "code:text", want: []string{"`code` LONGTEXT NOT NULL"}},
		{name: "staging keeps LONGTEXT", cols: "code:text", temp: true, want: []string{"CREATE TEMPORARY TABLE", "`code` LONGTEXT"}},
		{name: "varchar over the limit", cols: "*name:varchar(769)", err: "the unique key needs up to 3076 bytes (name varchar(769): 3076 bytes), more than the 3072 bytes InnoDB can index"},
		{name: "no room for text", cols: "*name:varchar(768), *code:text", err: "the unique key's text columns get no room: the other key columns take 3072 of the 3072 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op := ir.CreateTable{Table: ir.Table{Parts: []string{"dw", "t"}}, Temporary: tt.temp}
			for _, c := range strings.Split(tt.cols, ", ") {
				name, ty, _ := strings.Cut(c, ":")
				if n, ok := strings.CutPrefix(name, "*"); ok {
					name = n
					op.PrimaryKey = append(op.PrimaryKey, name)
				}
				op.Columns = append(op.Columns, ir.Col{Name: name, Type: typ(t, ty), NotNull: !tt.temp})
			}
			before := append([]ir.Col(nil), op.Columns...)
			parts, err := dialects.RenderStatement(&Dialect{}, &ir.Statement{Name: "create_target", Op: op})
			for i := range before {
				if before[i] != op.Columns[i] {
					t.Fatalf("rendering changed the plan's column %s: %v -> %v", before[i].Name, before[i].Type, op.Columns[i].Type)
				}
			}
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got error %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			sql := parts[0].SQL
			at := 0
			for _, w := range tt.want {
				i := strings.Index(sql[at:], w)
				if i < 0 {
					t.Fatalf("%q not found (in order) in:\n%s", w, sql)
				}
				at += i + len(w)
			}
		})
	}
}

func TestKeyBytes(t *testing.T) {
	// Measured on MariaDB 10.11: the largest latin1 VARCHAR(n) that fits
	// beside the column in one key is 3072 minus these.
	tests := map[string]int{
		"boolean": 1, "smallint": 2, "date": 3, "integer": 4, "bigint": 8, "timestamp": 8, "timestamptz": 8,
		"decimal(12,2)": 6, "decimal(38,10)": 18, "decimal(18,9)": 8, "decimal(5,0)": 3, "varchar(10)": 40,
	}
	for s, want := range tests {
		t.Run(s, func(t *testing.T) {
			if got := keyBytes(typ(t, s)); got != want {
				t.Errorf("keyBytes(%s) = %d, want %d", s, got, want)
			}
		})
	}
}
