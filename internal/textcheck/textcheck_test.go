package textcheck

import (
	"strings"
	"testing"
)

func TestProblem(t *testing.T) {
	for _, test := range []struct {
		in   string
		max  int
		want bool
	}{
		{"fine", 10, false}, {"<script>alert(1)</script>", 100, false}, {"\u202eevil", 10, false},
		{"a\x00b", 10, true}, {"\xff\xfe", 10, true}, {strings.Repeat("x", 11), 10, true},
	} {
		if got := Problem(test.in, test.max) != ""; got != test.want {
			t.Errorf("Problem(%q) = %v, want %v", test.in, got, test.want)
		}
	}
}
