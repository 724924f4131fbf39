package runner

import (
	"io"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/incrc/incrc/compiler/ir"
)

// masked stands for a secret in what incrc prints and records.
const masked = "xxxxx"

// secretKeys are the parameters whose value is a secret, in a URL's query
// (?password=) or a key=value DSN (password=... host=...), matched
// without case. A key that holds a path (sslkey) is masked too: over-
// masking costs nothing.
var secretParam = regexp.MustCompile(`(?i)(^|[?&;\s])((?:ssl)?pass(?:word|wd)?|pwd|[a-z_]*(?:secret|token|apikey|api_key)[a-z_]*|sslkey)(\s*=\s*)('(?:[^'\\]|\\.)*'?|[^&\s]*)`)

// Redact is a database URL (or DSN) for a message: every password masked,
// in every form a driver takes, whether or not the URL parses: the
// userinfo's (postgres://u:PASS@h, with a # or % in it too, and MySQL's
// u:PASS@tcp(h)/db), a query's ?password=, and a key=value DSN's
// password=... (quoted or not).
func Redact(raw string) string {
	out := raw
	if from, to, ok := userPassword(raw); ok {
		out = raw[:from] + masked + raw[to:]
	}
	return secretParam.ReplaceAllString(out, "${1}${2}${3}"+masked)
}

// userPassword finds the password of a URL's userinfo, raw[from:to],
// without parsing the URL, which one holding a #, a % or a / in its
// password may not survive: the userinfo ends at the last @ (a password
// may hold an @ too), and the password starts after the user's colon.
func userPassword(raw string) (from, to int, ok bool) {
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 {
		start = i + 3
	} else if d, _ := ir.DialectOfURL(raw); d == "duckdb" || d == "sqlite" {
		return 0, 0, false // duckdb:a@b.duckdb is a path
	}
	rest := raw[start:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return 0, 0, false
	}
	colon := strings.IndexByte(rest[:at], ':')
	if colon < 0 || start == 0 && strings.Contains(rest[:colon], "/") {
		return 0, 0, false // a user alone; or a path, not a user
	}
	return start + colon + 1, start + at, true
}

// Secrets are the passwords a database URL (or DSN) holds, as written and
// decoded: what Scrub removes from a driver's message, which may quote
// the URL, or the password alone, in either form.
func Secrets(raw string) []string {
	var found []string
	add := func(s string) {
		if q := strings.TrimSuffix(strings.TrimPrefix(s, "'"), "'"); q != s {
			// A quoted key=value: its value unescaped, as the driver reads it.
			s = strings.NewReplacer(`\'`, `'`, `\\`, `\`).Replace(q)
		}
		if len(s) < 3 || s == masked {
			// Shorter is no secret worth the name, and masking every "ab"
			// of a message would garble it.
			return
		}
		found = append(found, s)
		// A parser that stops at a # or a % quotes the part before it:
		// each piece between such characters is a secret too.
		if pieces := strings.FieldsFunc(s, func(r rune) bool { return strings.ContainsRune("#%?/@:&=", r) }); len(pieces) > 1 {
			for _, p := range pieces {
				if len(p) >= 3 {
					found = append(found, p)
				}
			}
		}
		if d, err := url.QueryUnescape(s); err == nil && d != s {
			found = append(found, d)
		}
		if d, err := url.PathUnescape(s); err == nil && d != s {
			found = append(found, d)
		}
	}
	if from, to, ok := userPassword(raw); ok {
		add(raw[from:to])
	}
	for _, m := range secretParam.FindAllStringSubmatch(raw, -1) {
		add(m[4])
	}
	return found
}

// Scrubber removes secrets from text: each one, longest first, becomes
// xxxxx. The zero value removes nothing; it is safe for concurrent use.
type Scrubber struct {
	mu      sync.Mutex
	secrets []string
}

// Add adds the secrets of a database URL.
func (s *Scrubber) Add(rawURL string) {
	found := Secrets(rawURL)
	if len(found) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.secrets = append(s.secrets, found...)
	sort.Slice(s.secrets, func(i, j int) bool { return len(s.secrets[i]) > len(s.secrets[j]) })
}

// Scrub is text without the secrets.
func (s *Scrubber) Scrub(text string) string {
	if s == nil {
		return text
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sec := range s.secrets {
		text = strings.ReplaceAll(text, sec, masked)
	}
	return text
}

// scrubbed is an error whose message went through a Scrubber; errors.As
// and errors.Is still see what it wraps.
type scrubbed struct {
	err error
	msg string
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

// ScrubError is err with the secrets taken out of its message.
func (s *Scrubber) ScrubError(err error) error {
	if err == nil || s == nil {
		return err
	}
	msg := s.Scrub(err.Error())
	if msg == err.Error() {
		return err
	}
	return &scrubbed{err: err, msg: msg}
}

// scrubWriter writes what a driver logs without the secrets s holds: one
// log line per Write, so no secret is split between two.
type scrubWriter struct {
	w io.Writer
	s *Scrubber
}

func (sw scrubWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(sw.w, sw.s.Scrub(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
