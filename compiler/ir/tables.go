package ir

import "strings"

// TableRole is how a pipeline uses a table.
type TableRole string

const (
	RoleSource     TableRole = "source"     // source.table, in the target's database
	RoleLookup     TableRole = "lookup"     // a lookup's table
	RoleTarget     TableRole = "target"     // target.table
	RoleQuarantine TableRole = "quarantine" // the target's quarantine: TARGET_quarantine
	RoleTombstones TableRole = "tombstones" // a change log's deletes: TARGET_tombstones
	RoleTruncated  TableRole = "truncated"  // a change log's newest truncate: TARGET_truncated
	RoleEvents     TableRole = "events"     // a change log's versions, before scd2.tracked merges them: TARGET_events
)

// Writes reports whether a pipeline writes a table of the role.
func (r TableRole) Writes() bool {
	return r == RoleTarget || r == RoleQuarantine || r == RoleTombstones || r == RoleTruncated || r == RoleEvents
}

// TableUse is a table a pipeline reads or writes in its target's database.
type TableUse struct {
	Pipeline string
	Role     TableRole
	Table    Table
	// Name is the spec's scalar that names it: the target's for the
	// tables named after it.
	Name String
}

// What says the table for a message: target.table "dw.orders", the
// quarantine table "dw.orders_quarantine".
func (u TableUse) What() string {
	switch u.Role {
	case RoleQuarantine, RoleTombstones, RoleTruncated, RoleEvents:
		return "the " + string(u.Role) + " table " + quote(strings.Join(u.Table.Parts, "."))
	}
	return string(u.Role) + ".table " + quote(u.Name.Value)
}
