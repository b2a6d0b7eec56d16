package ratelimit

import (
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestTake(t *testing.T) {
	p := Policy{Name: "elect", Quota: 3, Window: time.Minute}
	type step struct {
		advance   time.Duration
		subject   string
		allowed   bool
		remaining int
		reset     time.Duration
	}
	for _, test := range []struct {
		name  string
		steps []step
	}{
		{"the quota, then refusals until the window ends", []step{
			{0, "a", true, 2, time.Minute},
			{10 * time.Second, "a", true, 1, 50 * time.Second},
			{10 * time.Second, "a", true, 0, 40 * time.Second},
			{10 * time.Second, "a", false, 0, 30 * time.Second},
			{29 * time.Second, "a", false, 0, time.Second},
			{time.Second, "a", true, 2, time.Minute},
		}},
		{"subjects count apart", []step{
			{0, "a", true, 2, time.Minute},
			{0, "a", true, 1, time.Minute},
			{0, "b", true, 2, time.Minute},
			{0, "a", true, 0, time.Minute},
			{0, "a", false, 0, time.Minute},
			{0, "b", true, 1, time.Minute},
		}},
		{"a refusal is not counted", []step{
			{0, "a", true, 2, time.Minute}, {0, "a", true, 1, time.Minute}, {0, "a", true, 0, time.Minute},
			{0, "a", false, 0, time.Minute}, {0, "a", false, 0, time.Minute},
			{time.Minute, "a", true, 2, time.Minute},
		}},
	} {
		t.Run(test.name, func(t *testing.T) {
			c := &clock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
			l := New(c.now)
			for i, s := range test.steps {
				c.t = c.t.Add(s.advance)
				d := l.Take(s.subject, p)
				if d.Allowed != s.allowed || d.Remaining != s.remaining || d.Reset != s.reset {
					t.Errorf("step %d: allowed %v remaining %d reset %s, want %v %d %s",
						i, d.Allowed, d.Remaining, d.Reset, s.allowed, s.remaining, s.reset)
				}
			}
		})
	}
}

func TestPoliciesCountApart(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	l := New(c.now)
	one := Policy{Name: "one", Quota: 1, Window: time.Minute}
	other := Policy{Name: "other", Quota: 1, Window: time.Minute}
	if !l.Take("a", one).Allowed || l.Take("a", one).Allowed {
		t.Fatal("a quota of one allows one")
	}
	if !l.Take("a", other).Allowed {
		t.Error("a spent policy refused another policy's request")
	}
}

func TestEndedWindowsAreSwept(t *testing.T) {
	c := &clock{t: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC)}
	l := New(c.now)
	p := Policy{Name: "p", Quota: 5, Window: time.Minute}
	for _, s := range []string{"a", "b", "c"} {
		l.Take(s, p)
	}
	if l.Len() != 3 {
		t.Fatalf("%d windows, want 3", l.Len())
	}
	c.t = c.t.Add(2 * time.Minute)
	l.Take("d", p)
	if l.Len() != 1 {
		t.Errorf("%d windows after the others ended, want 1", l.Len())
	}
}
