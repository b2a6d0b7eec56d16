// Package textcheck is the one rule for free text typed by people: valid
// UTF-8, no NUL bytes (PostgreSQL cannot store them), and a length limit.
// Everything else (HTML, SQL, right-to-left marks, formula-like text) is
// stored as typed and escaped wherever it is shown.
package textcheck

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Problem says what is wrong with s as free text of at most max bytes, or
// "" when it is acceptable.
func Problem(s string, max int) string {
	switch {
	case !utf8.ValidString(s):
		return "The text is not valid UTF-8."
	case strings.ContainsRune(s, 0):
		return "The text contains a NUL character."
	case len(s) > max:
		return fmt.Sprintf("Keep it under %d characters.", max)
	}
	return ""
}
