package runner

import (
	"net/url"
	"testing"
)

// TestStrictMode: the MariaDB/MySQL session is strict whatever the URL
// or the server says, so a value too long for its column fails rather
// than being cut.
func TestStrictMode(t *testing.T) {
	tests := []struct {
		query string
		want  string
	}{
		{"", "CONCAT_WS(',', NULLIF(@@SESSION.sql_mode, ''), 'STRICT_ALL_TABLES')"},
		{"sql_mode=ANSI", "CONCAT_WS(',', NULLIF('ANSI', ''), 'STRICT_ALL_TABLES')"},
		{"sql_mode='NO_ZERO_DATE,ANSI_QUOTES'", "CONCAT_WS(',', NULLIF('NO_ZERO_DATE,ANSI_QUOTES', ''), 'STRICT_ALL_TABLES')"},
		{"sql_mode=a'b", "CONCAT_WS(',', NULLIF('a''b', ''), 'STRICT_ALL_TABLES')"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			if got := strictMode(q); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
