package web

import "testing"

func TestUserLimiter(t *testing.T) {
	l := newUserLimiter(2)
	first := l.acquire(1)
	second := l.acquire(1)
	if !first || !second {
		t.Fatal("a user's first two requests were refused")
	}
	if l.acquire(1) {
		t.Error("a third concurrent request was let through")
	}
	if !l.acquire(2) {
		t.Error("another user is held back by the first one's requests")
	}
	l.release(1)
	if !l.acquire(1) {
		t.Error("a slot given back is not reused")
	}
	l.release(1)
	l.release(1)
	l.release(2)
	if len(l.inFlight) != 0 {
		t.Errorf("slots leak: %v", l.inFlight)
	}
}
