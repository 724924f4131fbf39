package ir

import (
	"strconv"
	"unicode/utf8"
)

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// quote quotes s for a message, shortened: a message repeats what the
// user wrote, and a line of ten thousand characters helps no one.
func quote(s string) string { return excerpt(s, 60) }

// excerpt quotes at most limit characters of s, escaped as Go escapes
// them: a message never prints more of a value than it needs.
func excerpt(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return strconv.Quote(s)
	}
	r := []rune(s)
	return strconv.Quote(string(r[:limit])) + "..."
}
