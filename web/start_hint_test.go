package web_test

import (
	"strings"
	"testing"

	"github.com/airside/airside/internal/store"
)

// TestWhereToStart: after logging in, each role is told where its work
// starts (L1); a filtered list does not repeat it.
func TestWhereToStart(t *testing.T) {
	p := newPortal(t, store.SQLite)
	for _, test := range []struct{ email, want string }{
		{"admin@nebula.example", "Preview a fare"},
		{"member@nebula.example", "File a fare change"},
		{"reviewer@airside.example", "Review queue"},
	} {
		c := p.client()
		c.login(test.email)
		body := c.get("/listings").body
		if !strings.Contains(body, `data-testid="start-hint"`) || !strings.Contains(body, test.want) {
			t.Errorf("%s is not told where to start (%q)", test.email, test.want)
		}
		if strings.Contains(c.get("/listings?q=kimi").body, `data-testid="start-hint"`) {
			t.Errorf("%s: a search repeats the start hint", test.email)
		}
	}
}
