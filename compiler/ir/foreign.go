package ir

// Statements of a files source's bookmark.
const (
	StmtCreateFiles = "create_files"
	StmtReadFiles   = "read_files"
	StmtClearFiles  = "clear_files"
	StmtForgetFile  = "forget_file"
	StmtRecordFile  = "record_file"
)

// StmtProbeFiles reads the bookmark's columns.
const StmtProbeFiles = "probe_files"

func addFilesColumn(name string) string { return "add_files_" + name }

// StmtQuarantineUnfit writes a row a copy held back to the quarantine.
const StmtQuarantineUnfit = "quarantine_unfit"

// RegUnfit counts the rows the copies held back, not yet quarantined.
const RegUnfit = "unfit"

// UnfitParam is the parameter of a held row's value of a column.
func UnfitParam(column string) string { return "unfit_" + column }
