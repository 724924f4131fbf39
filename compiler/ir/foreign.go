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
